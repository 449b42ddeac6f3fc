/* harness_sync.c: the barriers and the finished count of a group. */
#ifndef HB_HARNESS_SYNC_H
#define HB_HARNESS_SYNC_H

#include "harness_internal.h"

void hbi_barrier_init(hbi_barrier *b, int count);
void hbi_barrier_destroy(hbi_barrier *b);
void hbi_barrier_wait(hbi_barrier *b);
/* The threads that started: the barrier waits for count from now on. */
void hbi_barrier_resize(hbi_barrier *b, int count);

/* Until every started worker finished its phase, a signal, or the CLOCK_MONOTONIC deadline. */
void hbi_wait_finished(group *g, int64_t deadline);
int hbi_all_finished(group *g);
/* Before releasing a phase, while the workers wait at `go`. */
void hbi_reset_finished(group *g);

#endif
