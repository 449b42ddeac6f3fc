/* What the parts of the harness share (harness.c: a run from parameters to its end line;
 * harness_tables.c: a kernel's parameter, rule and result tables; harness_output.c: every line
 * it prints; harness_signals.c: signals, the parent guard and the workers' stop flag;
 * harness_group.c: the pinned thread group of one configuration and thread count;
 * harness_phase.c: one phase, its sampler and its result line). Never included by a kernel. */
#ifndef HB_HARNESS_INTERNAL_H
#define HB_HARNESS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "harness.h"
#include "host.h"

#define NS 1000000000LL
#define HBK_VERSION "1.0.0"

/* ---- a run: everything from parsed parameters to the end line ---- */

typedef struct run {
    const hb_kernel *k;
    const hb_params *p;
    hb_setup setup;
    int cpus[HB_MAX_CPUS];
    int ncpus;
    int repeats, max_repeats, sampler, sampler_ab;
    double stable_cv;
    double last_rate; /* the rate of the last measured phase */
    /* busy hosts: wait for a quiet CPU before each measured phase (up to quiet_wait_s), and
     * repeat a phase whose workers waited for a CPU more than disturbed_wait of it (up to
     * disturbed_retries more tries); tries, waited_s and quiet describe the current phase */
    double quiet_wait_s, disturbed_wait, waited_s, others_cpus;
    int disturbed_retries, tries, phase_disturbed, quiet;
    int64_t duration_ns, warmup_ns, interval_ns;
    uint64_t work; /* units per measured repeat over all threads; 0: fixed duration */
    long long seq, results;
    int untrusted;
    char reason[300];
    const char *interrupted; /* why the run stopped early, or NULL */
    hb_json j;
} run;

/* ---- a barrier whose size can shrink if a thread fails to start (harness_group.c) ---- */

typedef struct hbi_barrier {
    pthread_mutex_t m;
    pthread_cond_t c;
    int count, waiting;
    unsigned gen;
} hbi_barrier;

void hbi_barrier_wait(hbi_barrier *b);

/* The threads of one (configuration, thread count), kept for its warm-up and repeats. */
typedef struct group {
    run *r;
    int config, nthreads, started;
    hb_worker *w;
    pthread_t *t;
    hbi_barrier ready, go, done;
    int quit;
    pthread_mutex_t err_lock;
    hb_err err; /* the first thread_setup failure */
    /* Workers whose work() returned in this phase, and the condition the last one signals. */
    pthread_mutex_t fin_lock;
    pthread_cond_t fin_cond;
    int finished;
} group;

/* Until every started worker finished its phase, a signal, or the CLOCK_MONOTONIC deadline. */
void hbi_wait_finished(group *g, int64_t deadline);
int hbi_all_finished(group *g);
/* Before releasing a phase, while the workers wait at `go`. */
void hbi_reset_finished(group *g);

/* harness_group.c: starts the group's threads, runs its warm-up and repeats, joins them. */
hb_status hbi_run_group(run *r, int config, int nthreads, hb_err *err);

/* harness_phase.c: one phase (0 = warm-up): release the workers, sample, stop them, report. */
void hbi_run_phase(run *r, group *g, int repeat);

/* ---- harness_signals.c ---- */

/* The stop flag every worker reads after each chunk. */
const _Atomic int *hbi_stop_flag(void);
void hbi_set_stop(int stop);
/* SIGTERM / SIGINT set the stop flag and end the run as interrupted. */
void hbi_catch_signals(void);
/* Non-zero: the signal that arrived. */
int hbi_signal(void);
/* Sleeps until the CLOCK_MONOTONIC deadline or a signal. */
void hbi_sleep_until(int64_t deadline);
/* Waits until the other processes leave this phase's threads their CPUs (from /proc/stat), or
 * budget_s passes; returns the seconds waited and sets r->quiet and r->others_cpus. */
double hbi_wait_quiet(run *r, int nthreads, double budget_s);
/* Why the run must stop (a signal, the parent exited), or NULL. */
const char *hbi_why_interrupted(void);

/* ---- harness_output.c: one JSON object per line, flushed at once ---- */

void hbi_emit(hb_json *j);
/* Starts {"v":1,"type":type */
void hbi_event(hb_json *j, const char *type);
/* "build":{"cc":...,"cflags":...} */
void hbi_build_json(hb_json *j);
/* "op" and "block_bytes" of a configuration, where it has them. */
void hbi_config_fields(hb_json *j, const hb_config *c);

static inline const char *hbi_unit_of(const run *r, const hb_config *c)
{
    return c->unit ? c->unit : r->k->unit;
}

/* ---- harness_tables.c ---- */

/* The name of the thread-count parameter: "threads", or the kernel's own (net: "streams"). */
const char *hbi_threads_name(const hb_kernel *k);

#endif
