/* disk_io.c: the kernel's per-thread side and its results' extra keys. */
#ifndef HB_KERNEL_DISK_IO_H
#define HB_KERNEL_DISK_IO_H

#include "disk_internal.h"

hb_status disk_thread_setup(hb_worker *w, hb_err *err);
void disk_thread_teardown(hb_worker *w);
void disk_work(hb_worker *w);
void disk_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                       hb_json *j);

#endif
