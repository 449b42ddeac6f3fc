/* disk_setup.c: the test file, the engine, the interrupt CPU. */
#ifndef HB_KERNEL_DISK_SETUP_H
#define HB_KERNEL_DISK_SETUP_H

#include "disk_internal.h"

hb_status disk_setup(const hb_params *p, hb_setup *s, hb_err *err);
void disk_state_free(disk_state *st);
/* Where the interrupt CPU sits in the affinity mask, or -1 (not found, or not ours to use). */
int disk_irq_slot(const disk_state *st);

#endif
