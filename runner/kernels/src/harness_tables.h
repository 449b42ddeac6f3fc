/* harness_tables.c: a kernel's parameter, rule and result tables joined with the harness's. */
#ifndef HB_HARNESS_TABLES_H
#define HB_HARNESS_TABLES_H

#include "harness_internal.h"

/* The name of the thread-count parameter: "threads", or the kernel's own (net: "streams"). */
const char *hbi_threads_name(const hb_kernel *k);

#endif
