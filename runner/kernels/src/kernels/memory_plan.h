/* memory_plan.c: the plan of a configuration (used by memory.c and memory_work.c). */
#ifndef HB_KERNEL_MEMORY_PLAN_H
#define HB_KERNEL_MEMORY_PLAN_H

#include "memory_internal.h"

extern const char *const mem_op_names[]; /* the op parameter's names */

/* Bytes one thread's block-op buffer spans. */
uint64_t mem_region_bytes(const mem_state *st, long long block, int threads);
int mem_block_nt(const mem_state *st, long long block, int threads);
size_t mem_stream_slice(const mem_state *st, int tid, int threads);
void mem_fmt_bytes(char *buf, size_t len, double bytes);

#endif
