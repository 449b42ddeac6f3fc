/* One phase of a thread group: release the workers, sample their counters on absolute
 * CLOCK_MONOTONIC deadlines, stop them, and write the repeat's result line. */
#include <math.h>
#include <stdio.h>

#include "harness_phase.h"

#include "harness_output.h"
#include "harness_signals.h"
#include "harness_sync.h"

static uint64_t sum_units(const group *g)
{
    uint64_t s = 0;
    for (int i = 0; i < g->nthreads; i++)
        s += atomic_load_explicit(&g->w[i].units, memory_order_relaxed);
    return s;
}

static double rate(const run *r, const hb_config *c, uint64_t units, int64_t ns)
{
    return ns > 0 ? (double)units * c->work_per_unit * r->k->unit_scale / ((double)ns / NS) : 0;
}

/* The share of the phase its threads' cgroup was held back by a CPU quota: the throttled time of the
 * level most throttled (the cgroup or an ancestor, each counts its own quota) over the phase's
 * length times the CPUs its workers run on (a cgroup's throttled time is summed over the CPUs
 * where it was held), at most 1; -1 when no level could be read before and after. */
static double throttled_share(const run *r, const group *g, const long long *before,
                              const long long *after, int64_t ns)
{
    long long most = -1;
    for (int i = 0; i < r->cg.n; i++)
        if (before[i] >= 0 && after[i] >= before[i] && after[i] - before[i] > most)
            most = after[i] - before[i];
    int cpus = g->nthreads < r->ncpus ? g->nthreads : r->ncpus;
    if (most < 0 || ns <= 0 || cpus <= 0)
        return -1;
    double share = (double)most / ((double)ns * cpus);
    return share < 1 ? share : 1;
}

static void emit_sample(run *r, group *g, int repeat, int64_t from, int64_t to, uint64_t units)
{
    const hb_config *c = &r->setup.configs[g->config];
    hbi_event(&r->j, "sample");
    hb_json_kint(&r->j, "seq", r->seq++);
    hb_json_key(&r->j, "t");
    hb_json_fixed(&r->j, hb_unix_time(), 6);
    hb_json_key(&r->j, "interval_s");
    hb_json_fixed(&r->j, (double)(to - from) / NS, 6);
    hb_json_kint(&r->j, "threads", g->nthreads);
    hb_json_kint(&r->j, "repeat", repeat);
    hb_json_kbool(&r->j, "warmup", repeat == 0);
    hb_json_knum(&r->j, "value", rate(r, c, units, to - from));
    hb_json_kstr(&r->j, "unit", hbi_unit_of(r, c));
    hbi_config_fields(&r->j, c);
    if (r->k->sample_facts)
        r->k->sample_facts(&r->setup, g->config, g->nthreads, units, (double)(to - from) / NS,
                           &r->j);
    hb_json_obj_end(&r->j);
    hbi_emit(&r->j);
}

/* One phase: release the workers, sample on absolute deadlines, stop them, report. A measured
 * repeat with `work` > 0 (fixed work, strong scaling) gives each worker its share as a quota and
 * ends when the last one finished it; duration_s is then only its cap. */
void hbi_run_phase(run *r, group *g, int repeat)
{
    const hb_config *c = &r->setup.configs[g->config];
    int64_t len = repeat == 0 ? r->warmup_ns : r->duration_ns;
    int fixed = repeat > 0 && r->work > 0;
    /* sampler_ab: measured phases 2p+1 and 2p+2 are pair p; the first of them samples when p is even */
    int pair = (repeat - 1) / 2, second = (repeat - 1) % 2;
    int sampling = r->sampler && !(r->sampler_ab && repeat > 0 && second != pair % 2);
    for (int i = 0; i < g->nthreads; i++) {
        atomic_store(&g->w[i].units, 0);
        atomic_store(&g->w[i].failures, 0);
        g->w[i].reason[0] = '\0';
        g->w[i].end_ns = 0;
        g->w[i].quota = fixed ? hb_share(r->work, g->nthreads, i) : HB_NO_QUOTA;
    }
    hbi_reset_finished(g);
    if (r->k->before_phase)
        r->k->before_phase(&r->setup, g->config, g->nthreads, repeat);
    hbi_set_stop(0);
    if (hbi_signal()) /* a signal that came before the reset must still stop this phase */
        hbi_set_stop(1);

    long long cg0[HB_CG_LEVELS], cg1[HB_CG_LEVELS];
    hb_cg_throttled_ns(&r->cg, cg0);
    int64_t t0 = hb_now_ns(); /* no worker can start before this: it is the last to arrive */
    hbi_barrier_wait(&g->go);
    int64_t end = t0 + len, last = t0, next = t0 + r->interval_ns;
    uint64_t last_units = 0;
    for (;;) {
        int64_t deadline = sampling && next < end ? next : end;
        if (fixed)
            hbi_wait_finished(g, deadline); /* or the last worker finishing its share */
        else
            hbi_sleep_until(deadline);
        if ((r->interrupted = hbi_why_interrupted()))
            break;
        int64_t now = hb_now_ns();
        if (now >= end || (fixed && hbi_all_finished(g)))
            break;
        if (sampling && now >= next) {
            uint64_t u = sum_units(g);
            emit_sample(r, g, repeat, last, now, u - last_units);
            last = now;
            last_units = u;
            while (next <= now) /* keep the schedule even after a late wake-up */
                next += r->interval_ns;
        }
    }
    if (sampling && !r->interrupted) { /* the tail: if >= half an interval, or the only one */
        int64_t now = hb_now_ns();
        if (now - last >= r->interval_ns / 2 || last == t0)
            emit_sample(r, g, repeat, last, now, sum_units(g) - last_units);
    }
    hbi_set_stop(1);
    hbi_barrier_wait(&g->done);
    hb_cg_throttled_ns(&r->cg, cg1);

    int64_t t1 = t0, t1_min = INT64_MAX, cpu_ns = 0, wait_ns = 0;
    long preemptions = 0;
    uint64_t units = 0, failures = 0;
    const char *reason = NULL;
    for (int i = 0; i < g->nthreads; i++) {
        hb_worker *w = &g->w[i];
        uint64_t f = atomic_load(&w->failures);
        const char *why = r->k->verify ? r->k->verify(w) : NULL;
        if (w->end_ns > t1)
            t1 = w->end_ns;
        if (w->end_ns < t1_min)
            t1_min = w->end_ns;
        units += atomic_load(&w->units);
        cpu_ns += w->cpu_ns;
        preemptions += w->preemptions;
        wait_ns = wait_ns < 0 || w->wait_ns < 0 ? -1 : wait_ns + w->wait_ns;
        failures += f + (why != NULL);
        if (!reason)
            reason = f ? w->reason : why;
    }
    /* A fixed-work repeat the cap cut short has no elapsed time to report: it is not verified. */
    char short_reason[160];
    int cut = fixed && units != r->work;
    if (cut) {
        snprintf(short_reason, sizeof short_reason,
                 "unfinished: %llu of %llu units of work when the duration_s cap (%.6g s) ran "
                 "out; raise duration_s or lower work", (unsigned long long)units,
                 (unsigned long long)r->work, (double)r->duration_ns / NS);
        failures++;
        if (!reason)
            reason = short_reason;
    }
    if (failures && !r->untrusted) {
        r->untrusted = 1;
        char checks[48] = ""; /* an unfinished repeat is not a failed check */
        if (failures > (uint64_t)cut)
            snprintf(checks, sizeof checks, " (%llu failed checks)",
                     (unsigned long long)(failures - (uint64_t)cut));
        snprintf(r->reason, sizeof r->reason, "%s%s%lld threads, %s %d: %s%s",
                 c->op[0] ? c->op : "", c->op[0] ? ", " : "", (long long)g->nthreads,
                 repeat ? "repeat" : "warm-up", repeat, reason ? reason : "?", checks);
    }
    if (repeat == 0 || r->interrupted)
        return;
    /* a disturbed try that may be repeated gives no result line (its samples stay: they happened).
     * More threads than CPUs wait for one another 1 - cpus/threads of the phase by themselves: that wait is
     * theirs (the row says oversubscribed), not another process's, and no retry can take it away; only the
     * wait beyond it is a disturbance (as the server judges the CPU share: against cpus/threads). */
    double own_wait = g->nthreads > r->ncpus ? 1.0 - (double)r->ncpus / (double)g->nthreads : 0.0;
    /* so is the time the host's own CPU quota held them (throttled_share): the host's capacity, which a retry
     * cannot change either (the kernel counts a throttled thread's time as run-queue wait) */
    double throttled = throttled_share(r, g, cg0, cg1, t1 - t0);
    if (throttled > 0)
        own_wait += throttled;
    r->phase_disturbed = wait_ns >= 0 &&
                         (double)wait_ns / ((double)(t1 - t0) * g->nthreads) - own_wait > r->disturbed_wait;
    if (r->phase_disturbed && r->tries <= r->disturbed_retries)
        return;
    hbi_event(&r->j, "result");
    hb_json_kint(&r->j, "threads", g->nthreads);
    hb_json_kint(&r->j, "repeat", repeat);
    r->last_rate = rate(r, c, units, t1 - t0);
    hb_json_knum(&r->j, "value", r->last_rate);
    hb_json_kstr(&r->j, "unit", hbi_unit_of(r, c));
    hb_json_kint(&r->j, "work", (long long)units);
    hb_json_key(&r->j, "seconds");
    hb_json_fixed(&r->j, (double)(t1 - t0) / NS, 6);
    hb_json_kbool(&r->j, "verified", failures == 0);
    if (failures)
        hb_json_kstr(&r->j, "reason", reason);
    hb_json_kbool(&r->j, "oversubscribed", g->nthreads > r->ncpus);
    /* 1.0: every worker was on a CPU the whole phase; less: something else ran there */
    hb_json_knum(&r->j, "cpu_share",
                 hb_result_share((double)cpu_ns, (double)(t1 - t0) * g->nthreads));
    hb_json_kint(&r->j, "preemptions", preemptions);
    /* the share of the phase the workers spent runnable but waiting for a CPU (others ran there):
     * the time they lost, which holds for threads that sleep by design (sockets, I/O) too */
    if (wait_ns >= 0)
        hb_json_knum(&r->j, "wait_share",
                     hb_result_share((double)wait_ns, (double)(t1 - t0) * g->nthreads));
    if (throttled >= 0)
        hb_json_knum(&r->j, "throttled_share", throttled);
    if (r->disturbed_retries > 0 || r->quiet_wait_s > 0) {
        hb_json_kint(&r->j, "tries", r->tries);
        hb_json_knum(&r->j, "quiet_waited_s", r->waited_s);
    }
    if (r->quiet_wait_s > 0) {
        hb_json_kbool(&r->j, "quiet", r->quiet);
        /* -1: /proc/stat could not be read: not known */
        hb_json_knum(&r->j, "others_cpus", r->others_cpus >= 0 ? r->others_cpus : NAN);
    }
    if (r->sampler_ab)
        hb_json_kbool(&r->j, "sampler", sampling);
    if (fixed) {
        hb_json_kint(&r->j, "work_target", (long long)r->work);
        hb_json_key(&r->j, "elapsed_s");
        if (cut)
            hb_json_null(&r->j);
        else
            hb_json_fixed(&r->j, (double)(t1 - t0) / NS, 6);
        hb_json_key(&r->j, "elapsed_min_s");
        if (cut)
            hb_json_null(&r->j);
        else
            hb_json_fixed(&r->j, (double)(t1_min - t0) / NS, 6);
    }
    hbi_config_fields(&r->j, c);
    if (r->k->result_facts)
        r->k->result_facts(&r->setup, g->w, g->nthreads, (double)(t1 - t0) / NS, &r->j);
    hb_json_key(&r->j, "t");
    hb_json_fixed(&r->j, hb_unix_time(), 6);
    hb_json_obj_end(&r->j);
    hbi_emit(&r->j);
    r->results++;
}
