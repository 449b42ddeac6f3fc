/* harness_phase.c: one phase of a group. */
#ifndef HB_HARNESS_PHASE_H
#define HB_HARNESS_PHASE_H

#include "harness_internal.h"

/* One phase (0 = warm-up): release the workers, sample, stop them, report. */
void hbi_run_phase(run *r, group *g, int repeat);

#endif
