/* memory_work.c: the kernel's per-thread side. */
#ifndef HB_KERNEL_MEMORY_WORK_H
#define HB_KERNEL_MEMORY_WORK_H

#include "memory_internal.h"

hb_status mem_thread_setup(hb_worker *w, hb_err *err);
void mem_thread_teardown(hb_worker *w);
void mem_work(hb_worker *w);
const char *mem_verify(hb_worker *w);

#endif
