/* harness_signals.c: signals, the parent guard, the workers' stop flag. */
#ifndef HB_HARNESS_SIGNALS_H
#define HB_HARNESS_SIGNALS_H

#include "harness_internal.h"

/* The stop flag every worker reads after each chunk. */
const _Atomic int *hbi_stop_flag(void);
void hbi_set_stop(int stop);
/* SIGTERM / SIGINT set the stop flag and end the run as interrupted. */
void hbi_catch_signals(void);
/* Non-zero: the signal that arrived. */
int hbi_signal(void);
/* Sleeps until the CLOCK_MONOTONIC deadline or a signal. */
void hbi_sleep_until(int64_t deadline);
/* Why the run must stop (a signal, the parent exited), or NULL. */
const char *hbi_why_interrupted(void);

#endif
