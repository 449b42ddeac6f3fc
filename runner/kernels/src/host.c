#include "host.h"

#include <errno.h>
#include <sched.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>
#include <unistd.h>

int64_t hb_now_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t hb_thread_cpu_ns(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

int64_t hb_thread_wait_ns(void)
{
    FILE *f = fopen("/proc/thread-self/schedstat", "r");
    if (!f)
        return -1;
    unsigned long long run_ns, wait_ns;
    int n = fscanf(f, "%llu %llu", &run_ns, &wait_ns);
    fclose(f);
    return n == 2 ? (int64_t)wait_ns : -1;
}

double hb_unix_time(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int hb_affinity_cpus(int *cpus, int max)
{
    for (int ncpu = 1024; ncpu <= 65536; ncpu *= 2) {
        cpu_set_t *set = CPU_ALLOC(ncpu);
        size_t size = CPU_ALLOC_SIZE(ncpu);
        if (!set)
            return 0;
        CPU_ZERO_S(size, set);
        if (sched_getaffinity(0, size, set) == 0) {
            int n = 0;
            for (int c = 0; c < ncpu && n < max; c++)
                if (CPU_ISSET_S(c, size, set))
                    cpus[n++] = c;
            CPU_FREE(set);
            return n;
        }
        CPU_FREE(set);
        if (errno != EINVAL)
            return 0;
    }
    return 0;
}

int hb_cpus_online(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    return n > 0 ? (int)n : 1;
}

int hb_thread_start(pthread_t *t, int cpu, void *(*fn)(void *), void *arg)
{
    pthread_attr_t attr;
    sigset_t block, old;
    cpu_set_t *set = NULL;
    int rc = pthread_attr_init(&attr);
    if (rc)
        return rc;
    pthread_attr_setstacksize(&attr, 1 << 20);
    if (cpu >= 0) {
        set = CPU_ALLOC(cpu + 1);
        if (!set) {
            pthread_attr_destroy(&attr);
            return ENOMEM;
        }
        CPU_ZERO_S(CPU_ALLOC_SIZE(cpu + 1), set);
        CPU_SET_S(cpu, CPU_ALLOC_SIZE(cpu + 1), set);
        rc = pthread_attr_setaffinity_np(&attr, CPU_ALLOC_SIZE(cpu + 1), set);
    }
    if (!rc) {
        sigemptyset(&block);
        sigaddset(&block, SIGINT);
        sigaddset(&block, SIGTERM);
        pthread_sigmask(SIG_BLOCK, &block, &old); /* the new thread inherits the mask */
        rc = pthread_create(t, &attr, fn, arg);
        pthread_sigmask(SIG_SETMASK, &old, NULL);
    }
    if (set)
        CPU_FREE(set);
    pthread_attr_destroy(&attr);
    return rc;
}

void hb_timer_resolution(int64_t *res_ns, int64_t *min_delta_ns)
{
    struct timespec res;
    clock_getres(CLOCK_MONOTONIC, &res);
    *res_ns = (int64_t)res.tv_sec * 1000000000 + res.tv_nsec;
    int64_t best = INT64_MAX, prev = hb_now_ns();
    for (int i = 0; i < 100000 && (best == INT64_MAX || i < 1000); i++) {
        int64_t now = hb_now_ns();
        if (now > prev && now - prev < best)
            best = now - prev;
        prev = now;
    }
    *min_delta_ns = best == INT64_MAX ? -1 : best;
}

/* `iters` x 100 (HB_CHAIN_ADDS) dependent adds. A register operand, not an immediate: some cores (Intel
 * Golden Cove and later) fold chains of add-immediate at rename, faster than 1 per cycle. */
static uint64_t add_chain(uint64_t iters, uint64_t one)
{
    uint64_t x = 0;
#if defined(__x86_64__)
    __asm__ volatile("1:\n\t"
                     ".rept 100\n\t"
                     "add %[one], %[x]\n\t"
                     ".endr\n\t"
                     "dec %[n]\n\t"
                     "jnz 1b"
                     : [x] "+r"(x), [n] "+r"(iters)
                     : [one] "r"(one)
                     : "cc");
#elif defined(__aarch64__)
    __asm__ volatile("1:\n\t"
                     ".rept 100\n\t"
                     "add %[x], %[x], %[one]\n\t"
                     ".endr\n\t"
                     "subs %[n], %[n], #1\n\t"
                     "b.ne 1b"
                     : [x] "+r"(x), [n] "+r"(iters)
                     : [one] "r"(one)
                     : "cc");
#else
    /* Portable fallback: the empty asm keeps each add in order and unfolded; a compiler may
     * still add a move per step, so this can read low on such targets. */
    for (; iters; iters--)
        for (int k = 0; k < HB_CHAIN_ADDS; k++) {
            x += one;
            __asm__ volatile("" : "+r"(x));
        }
#endif
    return x;
}

static volatile uint64_t g_one = 1; /* runtime value: the chain cannot be folded */

/* Cycles per nanosecond of this thread's CPU time: time the thread spent preempted (other
 * processes, or the hypervisor where steal time is accounted) does not count against it. */
static double chain_ghz(hb_chain_fn chain, int64_t min_cpu_ns)
{
    const uint64_t block = 1 << 16; /* 6.5 M cycles, ~2 ms at 3.5 GHz */
    uint64_t iters = 0;
    int64_t t0 = hb_thread_cpu_ns(), t1;
    do {
        chain(block, g_one);
        iters += block;
        t1 = hb_thread_cpu_ns();
    } while (t1 - t0 < min_cpu_ns);
    return (double)iters * HB_CHAIN_ADDS / (double)(t1 - t0);
}

typedef struct clock_job {
    hb_chain_fn chain;
    int trials;
    int64_t warmup_ns, trial_ns;
    double ghz;
    _Atomic int *go; /* NULL: start at once */
} clock_job;

static void *clock_thread(void *arg)
{
    clock_job *job = arg;
    while (job->go && !atomic_load(job->go))
        ; /* each job has a CPU of its own: spinning costs nobody */
    chain_ghz(job->chain, job->warmup_ns); /* warm-up: leave idle clocks, enter the load's licence */
    job->ghz = 0;
    for (int i = 0; i < job->trials; i++) {
        double g = chain_ghz(job->chain, job->trial_ns);
        if (g > job->ghz) /* interruptions only slow a run down, so the best is the truth */
            job->ghz = g;
    }
    return NULL;
}

double hb_clock_ghz_chain(int cpu, const hb_clock_plan *plan)
{
    clock_job job = {plan->chain, plan->trials, plan->warmup_ns, plan->trial_ns, 0, NULL};
    pthread_t t;
    if (hb_thread_start(&t, cpu, clock_thread, &job))
        return 0;
    pthread_join(t, NULL);
    return job.ghz;
}

double hb_clock_ghz_all_chain(const int *cpus, int n, const hb_clock_plan *plan)
{
    _Atomic int go = 0;
    clock_job *jobs = calloc((size_t)n, sizeof *jobs);
    pthread_t *ts = calloc((size_t)n, sizeof *ts);
    double sum = 0;
    int started = 0;
    if (!jobs || !ts) {
        free(jobs);
        free(ts);
        return 0;
    }
    for (int i = 0; i < n; i++) {
        jobs[started] = (clock_job){plan->chain, plan->trials, plan->warmup_ns, plan->trial_ns, 0, &go};
        if (hb_thread_start(&ts[started], cpus[i], clock_thread, &jobs[started]) == 0)
            started++;
    }
    atomic_store(&go, 1);
    for (int i = 0; i < started; i++) {
        pthread_join(ts[i], NULL);
        sum += jobs[i].ghz;
    }
    free(jobs);
    free(ts);
    return started ? sum / started : 0;
}

double hb_clock_ghz(int cpu, int trials)
{
    hb_clock_plan plan = {add_chain, trials, 50000000, 50000000};
    return hb_clock_ghz_chain(cpu, &plan);
}

double hb_clock_ghz_all(const int *cpus, int n, int trials)
{
    hb_clock_plan plan = {add_chain, trials, 50000000, 50000000};
    return hb_clock_ghz_all_chain(cpus, n, &plan);
}
