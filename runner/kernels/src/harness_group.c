/* The thread group of one (configuration, thread count): its workers, created once, pinned
 * round-robin over the affinity mask, set up, then released phase by phase through barriers. */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "harness_group.h"

#include "harness_phase.h"
#include "harness_signals.h"
#include "harness_sync.h"

static void *worker_main(void *arg)
{
    hb_worker *w = arg;
    group *g = w->group;
    const hb_kernel *k = g->r->k;
    hb_err err;
    int ok = 1;
    if (k->thread_setup && k->thread_setup(w, &err) != HB_OK) {
        ok = 0;
        pthread_mutex_lock(&g->err_lock);
        if (g->err.code == HB_OK)
            g->err = err;
        pthread_mutex_unlock(&g->err_lock);
    }
    hbi_barrier_wait(&g->ready);
    for (;;) {
        hbi_barrier_wait(&g->go);
        if (g->quit)
            break;
        struct rusage ru0, ru1;
        getrusage(RUSAGE_THREAD, &ru0);
        int64_t cpu0 = hb_thread_cpu_ns(), wait0 = hb_thread_wait_ns();
        k->work(w);
        if (w->end_ns == 0) /* work() may have set it */
            w->end_ns = hb_now_ns();
        w->cpu_ns = hb_thread_cpu_ns() - cpu0;
        int64_t wait1 = hb_thread_wait_ns();
        w->wait_ns = wait0 >= 0 && wait1 >= wait0 ? wait1 - wait0 : -1;
        getrusage(RUSAGE_THREAD, &ru1);
        w->preemptions = ru1.ru_nivcsw - ru0.ru_nivcsw;
        /* after its timed window: a fixed-work phase's controller waits for the last one */
        pthread_mutex_lock(&g->fin_lock);
        if (++g->finished >= g->started)
            pthread_cond_broadcast(&g->fin_cond);
        pthread_mutex_unlock(&g->fin_lock);
        hbi_barrier_wait(&g->done);
    }
    if (ok && k->thread_teardown)
        k->thread_teardown(w);
    return NULL;
}

/* Threads for one (configuration, thread count), kept for its warm-up and repeats. */
hb_status hbi_run_group(run *r, int config, int nthreads, hb_err *err)
{
    group g;
    hb_status st = HB_OK;
    memset(&g, 0, sizeof g);
    g.r = r;
    g.config = config;
    g.nthreads = nthreads;
    g.w = aligned_alloc(HB_CACHE_LINE, sizeof(hb_worker) * (size_t)nthreads);
    g.t = calloc((size_t)nthreads, sizeof *g.t);
    if (!g.w || !g.t) {
        free(g.w);
        free(g.t);
        return hb_errorf(err, HB_INTERNAL, "out of memory for %d threads", nthreads);
    }
    memset(g.w, 0, sizeof(hb_worker) * (size_t)nthreads);
    pthread_mutex_init(&g.err_lock, NULL);
    pthread_mutex_init(&g.fin_lock, NULL);
    pthread_condattr_t ca;
    pthread_condattr_init(&ca);
    pthread_condattr_setclock(&ca, CLOCK_MONOTONIC); /* deadlines are hb_now_ns() */
    pthread_cond_init(&g.fin_cond, &ca);
    pthread_condattr_destroy(&ca);
    hbi_barrier_init(&g.ready, nthreads + 1);
    hbi_barrier_init(&g.go, nthreads + 1);
    hbi_barrier_init(&g.done, nthreads + 1);
    for (int i = 0; i < nthreads; i++) {
        hb_worker *w = &g.w[i];
        w->stop = hbi_stop_flag();
        w->state = r->setup.state;
        w->config = &r->setup.configs[config];
        w->config_index = config;
        w->tid = i;
        w->nthreads = nthreads;
        w->cpu = r->cpus[i % r->ncpus];
        w->group = &g;
        int rc = hb_thread_start(&g.t[i], w->cpu, worker_main, w);
        if (rc) {
            st = hb_errorf(err, HB_INTERNAL, "cannot start thread %d of %d on CPU %d: %s", i + 1,
                           nthreads, w->cpu, strerror(rc));
            break;
        }
        g.started++;
    }
    if (g.started < nthreads) {
        hbi_barrier_resize(&g.ready, g.started + 1);
        hbi_barrier_resize(&g.go, g.started + 1);
        hbi_barrier_resize(&g.done, g.started + 1);
    }
    hbi_barrier_wait(&g.ready);
    if (st == HB_OK && g.err.code != HB_OK) {
        *err = g.err;
        st = g.err.code;
    }
    /* Welford's running mean and variance of the phases' rates, for repeat-until-stable. */
    double mean = 0, m2 = 0;
    for (int ph = r->warmup_ns > 0 ? 0 : 1; st == HB_OK; ph++) {
        if (ph > r->repeats && !(r->stable_cv > 0 && ph <= r->max_repeats &&
                                 !(mean > 0 && sqrt(m2 / (ph - 2)) / mean <= r->stable_cv)))
            break;
        r->tries = 0;
        r->waited_s = 0;
        r->phase_disturbed = 0;
        do {
            if (ph > 0 && r->quiet_wait_s > r->waited_s)
                r->waited_s += hbi_wait_quiet(r, nthreads, r->quiet_wait_s - r->waited_s);
            r->tries++;
            hbi_run_phase(r, &g, ph);
        } while (ph > 0 && !r->interrupted && r->phase_disturbed && r->tries <= r->disturbed_retries);
        if (r->interrupted)
            break;
        if (ph > 0) {
            double d = r->last_rate - mean;
            mean += d / ph;
            m2 += d * (r->last_rate - mean);
        }
    }
    g.quit = 1;
    hbi_barrier_wait(&g.go);
    for (int i = 0; i < g.started; i++)
        pthread_join(g.t[i], NULL);
    hbi_barrier_destroy(&g.ready);
    hbi_barrier_destroy(&g.go);
    hbi_barrier_destroy(&g.done);
    pthread_mutex_destroy(&g.err_lock);
    pthread_mutex_destroy(&g.fin_lock);
    pthread_cond_destroy(&g.fin_cond);
    free(g.w);
    free(g.t);
    return st;
}

/* The machine's busy and total CPU time since boot, in clock ticks (/proc/stat's first line; guest
 * time is part of user time there). */
static int machine_ticks(unsigned long long *busy, unsigned long long *total)
{
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return -1;
    unsigned long long v[8] = {0};
    int n = fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0], &v[1], &v[2], &v[3],
                   &v[4], &v[5], &v[6], &v[7]);
    fclose(f);
    if (n < 5)
        return -1;
    *total = 0;
    for (int i = 0; i < 8; i++)
        *total += v[i];
    *busy = *total - v[3] - v[4]; /* less idle and iowait */
    return 0;
}

double hbi_wait_quiet(run *r, int nthreads, double budget_s)
{
    long hz = sysconf(_SC_CLK_TCK);
    int online = hb_cpus_online();
    int want = nthreads < r->ncpus ? nthreads : r->ncpus;
    /* the CPUs the others may keep busy and still leave the threads 1 - disturbed_wait of theirs */
    double allowed = online - want * (1 - r->disturbed_wait);
    int64_t start = hb_now_ns(), end = start + (int64_t)(budget_s * NS);
    r->quiet = 0;
    r->others_cpus = -1;
    for (;;) {
        unsigned long long b0, t0, b1, t1;
        int64_t w0 = hb_now_ns();
        if (hz <= 0 || online <= 0 || machine_ticks(&b0, &t0))
            break;
        int64_t until = w0 + NS / 5 < end ? w0 + NS / 5 : end;
        hbi_sleep_until(until);
        int64_t w1 = hb_now_ns();
        if (hbi_signal() || machine_ticks(&b1, &t1) || w1 <= w0)
            break;
        r->others_cpus = (double)(b1 - b0) / (double)hz / ((double)(w1 - w0) / NS);
        if (r->others_cpus <= allowed) {
            r->quiet = 1;
            break;
        }
        if (w1 >= end)
            break;
    }
    return (double)(hb_now_ns() - start) / NS;
}
