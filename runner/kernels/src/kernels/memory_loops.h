/* memory_loops.c: the loops per ISA and their table, the fill pattern's closed forms. */
#ifndef HB_KERNEL_MEMORY_LOOPS_H
#define HB_KERNEL_MEMORY_LOOPS_H

#include "memory_internal.h"

extern const char *const mem_isa_choices[]; /* "auto", then the ISAs */
#define ISA_NAME(isa) (mem_isa_choices[(isa) + 1])
extern const char *const mem_kind_label[];  /* STREAM's labels */

/* The loops of isa on this CPU (SVE: its vector length filled in), or NULL. */
const kernels *mem_kernels_of(int isa);
/* NULL when this CPU can run isa, else what it lacks. */
const char *mem_lacks(int isa);
/* Word i = i + seed: what the read ops sum and copy checks. */
void mem_fill_pattern(uint64_t *p, uint64_t n, uint64_t seed);
/* Sum of random block reads: block idx holds words idx*bw .. idx*bw + bw - 1. */
uint64_t mem_rand_sum(uint64_t seed, uint64_t bw, uint64_t count, uint64_t idx_sum);

#endif
