/* The memory kernel's building blocks, exposed for tests/test_memory.c. */
#ifndef HB_KERNEL_MEMORY_H
#define HB_KERNEL_MEMORY_H

#include <stddef.h>
#include <stdint.h>

#if defined(__aarch64__)
enum hb_mem_isa { HB_MEM_SVE, HB_MEM_NEON, HB_MEM_SCALAR, HB_MEM_ISAS };
#else
enum hb_mem_isa { HB_MEM_AVX512, HB_MEM_AVX2, HB_MEM_SCALAR, HB_MEM_ISAS };
#endif

/* Whether this CPU can run the kernels of isa. */
int hb_mem_isa_available(int isa);

/* Sum of the fill pattern (word i holds i + seed) over words [w0, w0 + n), mod 2^64. */
uint64_t hb_mem_pattern_sum(uint64_t seed, uint64_t w0, uint64_t n);

/* Runs every kernel of isa (sum, fill, copy, random read and write, the four STREAM-variant
 * kernels; plain and non-temporal stores) on small buffers and compares each with a plain C
 * reference. 1: all agree; 0: one differs (why says which); -1: isa not available. */
int hb_mem_check_kernels(int isa, char *why, size_t len);

/* Builds the pointer-chase cycle over `nodes` lines of line_bytes and walks it: 1 when it is
 * one cycle through every node, and the kernel's own check (back at the start after `nodes`
 * loads, the sum of the addresses visited equal to its closed form) agrees. */
int hb_mem_check_cycle(uint64_t nodes, int line_bytes, uint64_t seed);

/* The cache a working set fits in: "L1", "L2", "L3" or "DRAM"; per_thread bytes on each of
 * threads threads, with private L1d and L2 and an L3 of l3_total bytes shared by all. */
const char *hb_mem_level(long long per_thread, int threads, long long l1d, long long l2,
                         long long l3_total);

#endif
