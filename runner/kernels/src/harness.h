/* The harness: kernel descriptors, and the one loop that runs them. It owns threads (pinned
 * round-robin over the affinity mask), timing (CLOCK_MONOTONIC), the sampler and all output;
 * a kernel does units of work, publishes a count, verifies, and never prints. */
#ifndef HB_HARNESS_H
#define HB_HARNESS_H

#include <stdarg.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "error.h"
#include "json.h"
#include "params.h"
#include "results.h"
#include "rules.h"

#define HB_CACHE_LINE 128 /* two 64-byte lines: adjacent-line prefetchers pair them */
#define HB_MAX_CONFIGS 64

/* One configuration the harness loops over (op x block size ...), each at every thread count. */
typedef struct hb_config {
    char op[24];           /* "" when the kernel has no op; else shown as "op" */
    long long block_bytes; /* < 0 when the kernel has no block size */
    const char *unit;      /* NULL: the kernel's unit */
    double work_per_unit;  /* FLOP, integer ops, bytes ... per counted unit */
} hb_config;

typedef struct hb_setup {
    void *state; /* the kernel's, passed back in every hb_worker */
    int nconfigs;
    hb_config configs[HB_MAX_CONFIGS];
    /* Set by a setup that serves instead of measuring (net --role serve): after the start
     * event the harness calls the kernel's serve() instead of running phases. */
    int serving;
    double expected_s; /* the start event's expected_duration_s when serving */
} hb_setup;

/* One per thread. The first line is written by its worker only and read by the sampler. */
typedef struct hb_worker {
    _Alignas(HB_CACHE_LINE) _Atomic uint64_t units; /* units done so far in this phase */
    _Atomic uint64_t failures;                      /* failed verifications in this phase */
    _Alignas(HB_CACHE_LINE) const _Atomic int *stop;
    /* Units this worker does in a fixed-work repeat (`work` > 0: its share of the total), then
     * it stops; HB_NO_QUOTA in a fixed-duration phase. Read it through hb_next_units. */
    uint64_t quota;
    void *state;             /* hb_setup.state */
    void *tstate;            /* the kernel's per-thread state, from thread_setup */
    const hb_config *config;
    int config_index, tid, nthreads, cpu;
    int64_t end_ns;          /* when this worker stopped: set by the harness after work(),
                                unless work() set it (its timed work ended before its
                                bookkeeping, e.g. a network kernel collecting the receiver's count) */
    int64_t cpu_ns;          /* its CPU time in the phase (set by the harness) */
    long preemptions;        /* involuntary context switches in the phase (set by the harness) */
    int64_t wait_ns;         /* runnable but waiting for a CPU in the phase; -1 unknown (harness) */
    char reason[160];        /* first verification failure of the phase */
    void *group;             /* the harness's */
} hb_worker;

#define HB_NO_QUOTA UINT64_MAX

static inline int hb_should_stop(const hb_worker *w)
{
    return atomic_load_explicit(w->stop, memory_order_relaxed);
}

/* Thread i's share of `work` units over n threads: work / n, one more for the first work % n. */
static inline uint64_t hb_share(uint64_t work, int n, int i)
{
    return work / (uint64_t)n + ((uint64_t)i < work % (uint64_t)n);
}

/* The units to do next, having done `done` in this phase: 0 when the phase is over for this
 * worker (the stop flag, or its quota of a fixed-work repeat is done), else `chunk`, or fewer
 * so that a fixed-work share ends exactly on its quota. A kernel with fixed_work loops on it. */
static inline uint64_t hb_next_units(const hb_worker *w, uint64_t done, uint64_t chunk)
{
    if (hb_should_stop(w) || done >= w->quota)
        return 0;
    return w->quota - done < chunk ? w->quota - done : chunk;
}

/* A plain store: one writer, so no read-modify-write and no lock in the hot loop. */
static inline void hb_publish(hb_worker *w, uint64_t units)
{
    atomic_store_explicit(&w->units, units, memory_order_relaxed);
}

/* Records a failed verification; the phase's result says verified:false, the run untrusted. */
void hb_fail(hb_worker *w, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

typedef struct hb_kernel {
    const char *name;        /* argv[1] */
    const char *title;
    const char *description;
    const char *unit;        /* e.g. "GFLOP/s" */
    double unit_scale;       /* rate = units x work_per_unit / seconds x unit_scale */
    const hb_param_def *params; /* the kernel's own; the harness adds hb_run_params */
    /* Cross-field rules on the parameters (rules.h), checked before any work and printed by
     * --describe; the harness adds hb_run_rules. Optional. */
    const hb_rule *rules;
    /* The figures its result_facts writes (results.h): key, type, unit, lower_is_better, help;
     * --describe prints them with the harness's hb_run_results. Every key it writes must be
     * declared (tests/check_results.py). Optional: NULL for a kernel without result_facts. */
    const hb_result *results;
    /* What the server judges in its result lines beyond what it judges in every kernel's (verification,
     * spread, CPU share, the peak): the names of those judgements, NULL-terminated; --describe prints
     * them as "checks" beside "results" (docs/kernel-protocol.md), and the server applies a judgement to
     * the kernels that name it, never by the kernel's name. "storage": how the I/O went (io_mode), the page
     * cache, the device's bus; "network": loss, the receiver's run-queue wait, loopback; "cache_levels":
     * the host's caches beside the rows' levels; "strong_scaling": fixed work over the thread counts.
     * Optional: NULL for none. */
    const char *const *checks;

    /* NULL when this host can run the kernel with these parameters, else why not. */
    const char *(*supported)(const hb_params *p);
    /* Fills s (state, configurations) and may measure the host; runs before the start event. */
    hb_status (*setup)(const hb_params *p, hb_setup *s, hb_err *err);
    /* Kernel-specific facts, written as keys into the start event. Optional. */
    void (*facts)(const hb_setup *s, hb_json *j);
    /* On the pinned worker thread, before its first phase; may set w->tstate. Optional. */
    hb_status (*thread_setup)(hb_worker *w, hb_err *err);
    /* Does units of work until hb_should_stop(w), publishing the count after each chunk. */
    void (*work)(hb_worker *w);
    /* After each phase, per worker: NULL or why its work cannot be trusted. Optional. */
    const char *(*verify)(hb_worker *w);
    void (*thread_teardown)(hb_worker *w); /* optional */
    void (*teardown)(hb_setup *s);         /* optional; also after an interrupted run */
    /* Before every phase (warm-up and repeats), outside its timed window, on the controlling
     * thread while the workers wait: e.g. flush and drop a file's cached pages. Optional. */
    void (*before_phase)(hb_setup *s, int config_index, int nthreads, int repeat);
    /* Extra keys for a repeat's result event (e.g. latency percentiles), from its workers
     * after they all stopped; seconds is the repeat's timed length. Optional. */
    void (*result_facts)(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                         hb_json *j);
    /* Replaces the harness's `threads` row (its name, bounds, default and help), e.g. net's
     * `streams` 1..8. Optional; the events still say "threads". */
    const hb_param_def *threads_def;
    /* When setup set s->serving: runs on the controlling thread after the start event until
     * hb_stop_reason() is non-NULL or its own deadline; may emit events with hb_event(). The
     * harness then writes the end event (status ok, or untrusted when it returns HB_UNTRUSTED
     * with the reason in err). */
    hb_status (*serve)(hb_setup *s, hb_err *err);
    /* Extra keys for a sample line of configuration `config`: `units` done by its nthreads
     * workers in the sample's `seconds` (e.g. memory's cache level and time per op). Optional. */
    void (*sample_facts)(const hb_setup *s, int config, int nthreads, uint64_t units,
                         double seconds, hb_json *j);
    /* NULL when configuration `config` can run at `nthreads` threads on this host, else why not
     * (written into buf, of size bytes, and returned): that row alone is refused. The start event
     * lists it under "refused" ({op, block_bytes, threads, reason}), the run goes on without it;
     * when every row is refused the run is refused (unsupported) with the first reason. Called
     * after setup, more than once for a row: it must give the same answer each time. Optional. */
    const char *(*refuse)(const hb_setup *s, int config, int nthreads, char *buf, size_t size);
    /* Non-zero: work() takes its units from hb_next_units, so a repeat can be a fixed amount of
     * work split over the threads (the harness's `work` > 0: strong scaling). Without it the
     * harness refuses `work` > 0 (hb_fixed_duration_rules). */
    int fixed_work;
} hb_kernel;

/* Why the run must stop (SIGTERM, SIGINT, the parent exited), or NULL. */
const char *hb_stop_reason(void);

/* A kernel-specific event line {"v":1,"type":type, <fields>, "t":...}, e.g. net's `listening`.
 * Only from the controlling thread (setup, serve, facts). */
void hb_event(const char *type, void (*fields)(hb_json *j, void *arg), void *arg);

/* Non-zero once SIGTERM or SIGINT arrived: a long setup (writing a file) polls it and stops. */
int hb_interrupted(void);

/* threads, repeats, duration_s, warmup_s, interval_s, no_sampler, work: every kernel has them, and
 * the rules between them (run_params.c). */
extern const hb_param_def hb_run_params[];
extern const hb_rule hb_run_rules[];
/* The rules of `work` for a kernel with fixed_work (threads at most work), and for one without
 * (work must be 0). */
extern const hb_rule hb_fixed_work_rules[];
extern const hb_rule hb_fixed_duration_rules[];
/* The keys the harness writes into every result line (threads, value, seconds, cpu_share ...). */
extern const hb_result hb_run_results[];

/* The registry (registry.c): every kernel, NULL-terminated. */
extern const hb_kernel *const hb_kernels[];
const hb_kernel *hb_kernel_find(const char *name);

/* {k->params, hb_run_params, NULL} */
void hb_kernel_tables(const hb_kernel *k, const hb_param_def *tables[3]);
/* {k->rules, hb_run_rules, hb_fixed_work_rules or hb_fixed_duration_rules, NULL} (without
 * k->rules when it has none) */
void hb_kernel_rules(const hb_kernel *k, const hb_rule *rules[4]);
/* {k->results, hb_run_results, NULL} (without k->results when it has none) */
void hb_kernel_results(const hb_kernel *k, const hb_result *results[3]);
/* Parses argv (the `--name value` part) into p and checks every rule: what a run accepts. */
hb_status hb_kernel_params(const hb_kernel *k, hb_params *p, int argc, char *const *argv,
                           hb_err *err);

/* Parent-death guard: SIGTERM when the parent exits; fails if it already has. */
hb_status hb_guard_parent(hb_err *err);

hb_status hb_list(void);
/* {"v":1,"version":...,"build":{"cc":...,"cflags":...}} */
hb_status hb_version(void);
hb_status hb_describe(const hb_kernel *k, hb_err *err);
/* --check: hb_kernel_params, then one "check" line with the parameters; measures nothing. */
hb_status hb_check(const hb_kernel *k, int argc, char *const *argv, hb_err *err);
/* Parses argv (the `--name value` part), checks, runs every phase; prints start ... end. */
hb_status hb_run(const hb_kernel *k, int argc, char *const *argv, hb_err *err);
/* The error event. */
void hb_emit_error(const hb_err *err);

#endif
