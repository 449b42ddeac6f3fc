/* The harness's types and constants (the run, the group, the barrier), shared by its parts and
 * never included by a kernel. Each part declares its functions in its own header and the parts
 * use each other one way only: harness.c (a run from parameters to its end line) ->
 * harness_group.c (the pinned thread group of one configuration and thread count) ->
 * harness_phase.c (one phase, its sampler and its result line) -> harness_sync.c (barriers, the
 * finished count); harness_output.c (every line it prints) -> harness_tables.c (a kernel's
 * parameter, rule and result tables); harness_signals.c (signals, the parent guard, the
 * workers' stop flag). tests/check_layers.py keeps it so. */
#ifndef HB_HARNESS_INTERNAL_H
#define HB_HARNESS_INTERNAL_H

#include <pthread.h>
#include <stdint.h>

#include "harness.h"
#include "host.h"
#include "hostfacts.h"

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
    hb_cg_throttle cg; /* the cpu.stat files that count the run's CFS throttling (its CPU quota) */
    int64_t duration_ns, warmup_ns, interval_ns;
    uint64_t work; /* units per measured repeat over all threads; 0: fixed duration */
    long long seq, results;
    int untrusted;
    char reason[300];
    const char *interrupted; /* why the run stopped early, or NULL */
    hb_json j;
} run;

/* ---- a barrier whose size can shrink if a thread fails to start (harness_sync.c) ---- */

typedef struct hbi_barrier {
    pthread_mutex_t m;
    pthread_cond_t c;
    int count, waiting;
    unsigned gen;
} hbi_barrier;

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

static inline const char *hbi_unit_of(const run *r, const hb_config *c)
{
    return c->unit ? c->unit : r->k->unit;
}

#endif
