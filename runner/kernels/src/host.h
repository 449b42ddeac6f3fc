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

#endif
