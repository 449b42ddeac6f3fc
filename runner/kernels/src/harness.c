/* The run: parameters to the start line, every configuration at every thread count (thread
 * groups, harness_group.c), the end line. The harness's files share harness_internal.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "harness_group.h"
#include "harness_output.h"
#include "harness_signals.h"
#include "harness_tables.h"

void hb_fail(hb_worker *w, const char *fmt, ...)
{
    if (atomic_load_explicit(&w->failures, memory_order_relaxed) == 0) {
        va_list ap;
        va_start(ap, fmt);
        vsnprintf(w->reason, sizeof w->reason, fmt, ap);
        va_end(ap);
    }
    atomic_store_explicit(&w->failures, atomic_load_explicit(&w->failures, memory_order_relaxed) + 1,
                          memory_order_relaxed);
}

/* Why the row (configuration c, nthreads) is refused on this host (the kernel's refuse), or NULL. */
static const char *refused(run *r, int c, int nthreads, char *buf, size_t size)
{
    return r->k->refuse ? r->k->refuse(&r->setup, c, nthreads, buf, size) : NULL;
}

/* The rows that run; `first` gets the first refusal's reason (when there is one). */
static int rows_that_run(run *r, const hb_value *threads, char *first, size_t size)
{
    char why[512];
    int n = 0;
    first[0] = 0;
    for (int c = 0; c < r->setup.nconfigs; c++)
        for (int t = 0; t < threads->n; t++) {
            if (!refused(r, c, (int)threads->i[t], why, sizeof why))
                n++;
            else if (!first[0])
                snprintf(first, size, "%s", why);
        }
    return n;
}

static void emit_refused(run *r, const hb_value *threads)
{
    hb_json *j = &r->j;
    char why[512];
    int any = 0;
    for (int c = 0; c < r->setup.nconfigs; c++)
        for (int t = 0; t < threads->n; t++) {
            if (!refused(r, c, (int)threads->i[t], why, sizeof why))
                continue;
            if (!any++) {
                hb_json_key(j, "refused");
                hb_json_arr(j);
            }
            hb_json_obj(j);
            hbi_config_fields(j, &r->setup.configs[c]);
            hb_json_kint(j, "threads", threads->i[t]);
            hb_json_kstr(j, "reason", why);
            hb_json_obj_end(j);
        }
    if (any)
        hb_json_arr_end(j);
}

static void emit_start(run *r, const hb_value *threads, int64_t res_ns, int64_t delta_ns)
{
    hb_json *j = &r->j;
    int over = 0;
    char first[512];
    for (int i = 0; i < threads->n; i++)
        over |= threads->i[i] > r->ncpus;
    double per_group = (double)(r->warmup_ns + r->repeats * r->duration_ns) / NS;
    int rows = r->setup.serving ? 0 : rows_that_run(r, threads, first, sizeof first);

    hbi_event(j, "start");
    hb_json_kstr(j, "kernel", r->k->name);
    hb_json_key(j, "params");
    hb_params_json(j, r->p);
    hb_json_kstr(j, "unit", hbi_unit_of(r, &r->setup.configs[0]));
    hb_json_key(j, "configs");
    hb_json_arr(j);
    for (int c = 0; c < r->setup.nconfigs; c++) {
        hb_json_obj(j);
        hbi_config_fields(j, &r->setup.configs[c]);
        hb_json_kstr(j, "unit", hbi_unit_of(r, &r->setup.configs[c]));
        hb_json_knum(j, "work_per_unit", r->setup.configs[c].work_per_unit);
        hb_json_obj_end(j);
    }
    hb_json_arr_end(j);
    if (r->k->facts)
        r->k->facts(&r->setup, j);
    if (!r->setup.serving)
        emit_refused(r, threads);
    hb_json_kint(j, "cpus_online", hb_cpus_online());
    hb_json_key(j, "affinity_cpus");
    hb_json_arr(j);
    for (int i = 0; i < r->ncpus; i++)
        hb_json_int(j, r->cpus[i]);
    hb_json_arr_end(j);
    hb_json_kbool(j, "oversubscribed", over);
    hb_json_kint(j, "timer_resolution_ns", res_ns);
    hb_json_kint(j, "timer_min_delta_ns", delta_ns);
    hb_json_knum(j, "expected_duration_s", r->setup.serving ? r->setup.expected_s
                                           : per_group * rows);
    hbi_build_json(j);
    hb_json_kint(j, "pid", (long long)getpid());
    hb_json_key(j, "t");
    hb_json_fixed(j, hb_unix_time(), 6);
    hb_json_obj_end(j);
    hbi_emit(j);
}

static hb_status run_all(run *r, hb_err *err)
{
    const hb_params *p = r->p;
    int64_t res_ns, delta_ns;
    hb_status st;
    static char why_row[512];

    r->repeats = (int)hb_param_int(p, "repeats");
    r->stable_cv = hb_param_double(p, "stable_cv");
    r->max_repeats = (int)hb_param_int(p, "max_repeats"); /* >= repeats: hb_run_rules */
    r->duration_ns = (int64_t)(hb_param_double(p, "duration_s") * NS + 0.5);
    r->warmup_ns = (int64_t)(hb_param_double(p, "warmup_s") * NS + 0.5);
    r->interval_ns = (int64_t)(hb_param_double(p, "interval_s") * NS + 0.5);
    r->sampler = !hb_param_bool(p, "no_sampler");
    r->sampler_ab = hb_param_bool(p, "sampler_ab"); /* sampler on, even repeats: hb_run_rules */
    r->work = (uint64_t)hb_param_int(p, "work"); /* >= every thread count: hb_fixed_work_rules */
    r->quiet_wait_s = hb_param_double(p, "quiet_wait_s");
    r->disturbed_retries = (int)hb_param_int(p, "disturbed_retries");
    r->disturbed_wait = hb_param_double(p, "disturbed_wait");
    const hb_value *threads = hb_param(p, hbi_threads_name(r->k));

    const char *why = r->k->supported ? r->k->supported(p) : NULL;
    if (why)
        return hb_errorf(err, HB_UNSUPPORTED, "%s", why);
    r->ncpus = hb_affinity_cpus(r->cpus, HB_MAX_CPUS);
    if (r->ncpus == 0)
        return hb_errorf(err, HB_INTERNAL, "sched_getaffinity: %s", strerror(errno));
    hb_cg_throttle_find(&r->cg, "/proc/self/cgroup", "/proc/self/mountinfo");
    hb_timer_resolution(&res_ns, &delta_ns);
    if (delta_ns < 0 || delta_ns > 1000000)
        return hb_errorf(err, HB_UNSUPPORTED, "CLOCK_MONOTONIC advances in steps of %lld ns; "
                         "timing phases needs steps of 1 ms or finer", (long long)delta_ns);

    hbi_catch_signals();

    if ((st = r->k->setup(p, &r->setup, err)) != HB_OK)
        return st;
    if (r->setup.nconfigs < 1 || r->setup.nconfigs > HB_MAX_CONFIGS) {
        st = hb_errorf(err, HB_INTERNAL, "kernel %s set up %d configurations", r->k->name,
                       r->setup.nconfigs);
    } else if ((r->interrupted = hbi_why_interrupted())) {
        st = hb_errorf(err, HB_INTERNAL, "%s", r->interrupted);
    } else if (r->setup.serving) {
        emit_start(r, threads, res_ns, delta_ns);
        st = r->k->serve ? r->k->serve(&r->setup, err)
                         : hb_errorf(err, HB_INTERNAL, "kernel %s cannot serve", r->k->name);
        if (st == HB_UNTRUSTED) { /* served, but what it received failed its checks */
            r->untrusted = 1;
            snprintf(r->reason, sizeof r->reason, "%.290s", err->message);
            st = HB_OK;
        }
    } else if (rows_that_run(r, threads, why_row, sizeof why_row) == 0) {
        st = hb_errorf(err, HB_UNSUPPORTED, "%s", why_row); /* every row refused: nothing to run */
    } else {
        emit_start(r, threads, res_ns, delta_ns);
        for (int c = 0; st == HB_OK && c < r->setup.nconfigs && !r->interrupted; c++)
            for (int t = 0; st == HB_OK && t < threads->n && !r->interrupted; t++)
                if (!refused(r, c, (int)threads->i[t], why_row, sizeof why_row))
                    st = hbi_run_group(r, c, (int)threads->i[t], err);
        if (st == HB_OK && r->interrupted)
            st = hb_errorf(err, HB_INTERNAL, "%s", r->interrupted);
    }
    if (r->k->teardown)
        r->k->teardown(&r->setup);
    if (st != HB_OK)
        return st;

    hbi_event(&r->j, "end");
    hb_json_kstr(&r->j, "status", r->untrusted ? "untrusted" : "ok");
    hb_json_kstr(&r->j, "reason", r->untrusted ? r->reason : NULL);
    hb_json_kint(&r->j, "samples", r->seq);
    hb_json_kint(&r->j, "results", r->results);
    hb_json_key(&r->j, "t");
    hb_json_fixed(&r->j, hb_unix_time(), 6);
    hb_json_obj_end(&r->j);
    hbi_emit(&r->j);
    if (r->untrusted)
        return hb_errorf(err, HB_UNTRUSTED, "%s", r->reason);
    return HB_OK;
}

hb_status hb_run(const hb_kernel *k, int argc, char *const *argv, hb_err *err)
{
    static hb_params params;
    static run r; /* large (CPU list): not on the stack */
    hb_status st;

    if ((st = hb_kernel_params(k, &params, argc, argv, err)) != HB_OK)
        return st;
    memset(&r, 0, sizeof r);
    r.k = k;
    r.p = &params;
    hb_json_init(&r.j);
    st = run_all(&r, err);
    hb_json_free(&r.j);
    return st;
}
