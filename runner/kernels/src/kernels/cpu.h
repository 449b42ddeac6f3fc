/* The cpu kernel's chunk runner, exposed for tests/test_cpu.c. */
#ifndef HB_KERNEL_CPU_H
#define HB_KERNEL_CPU_H

enum hb_cpu_op { HB_CPU_FP64, HB_CPU_FP32, HB_CPU_INT32, HB_CPU_OPS };
/* Widest first: `--isa auto` takes the first one the CPU has. Each architecture has its own list. */
#if defined(__aarch64__)
enum hb_cpu_isa { HB_ISA_SVE, HB_ISA_NEON, HB_ISA_SCALAR, HB_ISAS };
#else
enum hb_cpu_isa { HB_ISA_AVX512, HB_ISA_AVX2, HB_ISA_SSE2, HB_ISA_SCALAR, HB_ISAS };
#endif

/* Whether this CPU can run (op, isa). */
int hb_cpu_available(int op, int isa);

/* Runs one chunk of n steps of (op, isa) with addend c, then checks every accumulator against
 * the closed form for addend c_claimed. 1: all match; 0: a mismatch; -1: isa not available. */
int hb_cpu_check_chunk(int op, int isa, long n, unsigned c, unsigned c_claimed);

#endif
