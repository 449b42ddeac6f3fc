/* harness_group.c: the thread group of one configuration and thread count. */
#ifndef HB_HARNESS_GROUP_H
#define HB_HARNESS_GROUP_H

#include "harness_internal.h"

/* Starts the group's threads, runs its warm-up and repeats, joins them. */
hb_status hbi_run_group(run *r, int config, int nthreads, hb_err *err);

/* Waits until the other processes leave this phase's threads their CPUs (from /proc/stat), or
 * budget_s passes; returns the seconds waited and sets r->quiet and r->others_cpus. */
double hbi_wait_quiet(run *r, int nthreads, double budget_s);

#endif
