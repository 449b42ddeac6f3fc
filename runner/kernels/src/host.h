/* Host facts the harness and kernels share: the CPUs we may run on, pinned threads, timers,
 * and the core clock measured with a dependent integer-add chain. */
#ifndef HB_HOST_H
#define HB_HOST_H

#include <pthread.h>
#include <stdint.h>

#define HB_MAX_CPUS 4096

int64_t hb_now_ns(void);      /* CLOCK_MONOTONIC */
double hb_unix_time(void);    /* CLOCK_REALTIME, seconds */
int64_t hb_thread_cpu_ns(void); /* CLOCK_THREAD_CPUTIME_ID */
/* This thread's time runnable but waiting for a CPU (/proc/thread-self/schedstat, second
 * field: the scheduler's run delay), ns; -1 where the kernel does not expose it. */
int64_t hb_thread_wait_ns(void);

/* CPUs in the process affinity mask, ascending; returns how many (0 on failure). */
int hb_affinity_cpus(int *cpus, int max);
int hb_cpus_online(void);

/* Starts fn(arg) on a thread pinned to cpu (cpu < 0: not pinned), with SIGINT and SIGTERM
 * blocked so that only the controlling thread sees them. Returns 0 or an errno value. */
int hb_thread_start(pthread_t *t, int cpu, void *(*fn)(void *), void *arg);

/* clock_getres and the smallest non-zero difference of consecutive clock_gettime calls. */
void hb_timer_resolution(int64_t *res_ns, int64_t *min_delta_ns);

/* Core clock in GHz, measured on a thread pinned to cpu by timing a chain of dependent
 * register-register adds (1 cycle each) against the thread's CPU time: best of `trials` runs
 * of >= 50 ms each after a 50 ms warm-up. */
double hb_clock_ghz(int cpu, int trials);
/* The same on every listed CPU at once (all cores loaded); the mean of their best values. */
double hb_clock_ghz_all(const int *cpus, int n, int trials);

/* A timed loop: `iters` x HB_CHAIN_ADDS dependent register-register adds of `one` (a runtime 1), so
 * that its time is HB_CHAIN_ADDS cycles per iteration. Other work may ride along with the chain (the
 * cpu kernel's vector-loaded clock issues vector FMAs beside it) provided it never holds the chain up. */
#define HB_CHAIN_ADDS 100
typedef uint64_t (*hb_chain_fn)(uint64_t iters, uint64_t one);

typedef struct hb_clock_plan {
    hb_chain_fn chain;
    int trials;                 /* the best of this many runs */
    int64_t warmup_ns, trial_ns; /* of the thread's CPU time; a run may overshoot by one 2 ms block */
} hb_clock_plan;
/* hb_clock_ghz and hb_clock_ghz_all with another chain and other durations. */
double hb_clock_ghz_chain(int cpu, const hb_clock_plan *plan);
double hb_clock_ghz_all_chain(const int *cpus, int n, const hb_clock_plan *plan);

#endif
