/* Signals, the parent-death guard, and the one stop flag every worker reads. */
#include <errno.h>
#include <signal.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#ifdef __linux__
#include <sys/prctl.h>
#endif

#include "harness_signals.h"

static volatile sig_atomic_t g_signal;
static pid_t g_ppid;
/* The stop flag every worker reads after each chunk: alone on its lines, written per phase. */
static struct {
    _Alignas(HB_CACHE_LINE) _Atomic int stop;
    char pad[HB_CACHE_LINE - sizeof(_Atomic int)];
} g_flag;

int hb_interrupted(void)
{
    return g_signal != 0;
}

int hbi_signal(void)
{
    return g_signal;
}

const _Atomic int *hbi_stop_flag(void)
{
    return &g_flag.stop;
}

void hbi_set_stop(int stop)
{
    atomic_store(&g_flag.stop, stop);
}

static void on_signal(int sig)
{
    g_signal = sig;
    atomic_store_explicit(&g_flag.stop, 1, memory_order_relaxed);
}

void hbi_catch_signals(void)
{
    struct sigaction sa;
    memset(&sa, 0, sizeof sa);
    sa.sa_handler = on_signal;
    sigemptyset(&sa.sa_mask);
    sigaction(SIGTERM, &sa, NULL);
    sigaction(SIGINT, &sa, NULL);
}

hb_status hb_guard_parent(hb_err *err)
{
    g_ppid = getppid();
#ifdef __linux__
    if (prctl(PR_SET_PDEATHSIG, SIGTERM) != 0)
        return hb_errorf(err, HB_INTERNAL, "prctl(PR_SET_PDEATHSIG): %s", strerror(errno));
    if (getppid() != g_ppid) /* it died between the two calls */
        return hb_errorf(err, HB_INTERNAL, "interrupted: the parent process exited");
#endif
    (void)err;
    return HB_OK;
}

/* Sleeps until the CLOCK_MONOTONIC deadline or a signal. (A signal landing between the
 * check and the call is seen at the next deadline, at most interval_s later.) */
void hbi_sleep_until(int64_t deadline)
{
    struct timespec ts = {(time_t)(deadline / NS), (long)(deadline % NS)};
    while (!g_signal && clock_nanosleep(CLOCK_MONOTONIC, TIMER_ABSTIME, &ts, NULL) == EINTR)
        ;
}

const char *hbi_why_interrupted(void)
{
    if (g_signal == SIGTERM)
        return "interrupted by SIGTERM";
    if (g_signal)
        return "interrupted by SIGINT";
    if (getppid() != g_ppid)
        return "interrupted: the parent process exited";
    return NULL;
}

const char *hb_stop_reason(void)
{
    return hbi_why_interrupted();
}
