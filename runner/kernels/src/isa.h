/* Which vector instruction sets this build can emit, for the kernels that pick one at run time (cpu.c,
 * memory_loops.c): one definition of the platform tests and of the AArch64 HWCAP bits.
 *
 * HB_X86: x86-64 (or i386), intrinsics from immintrin.h; each function names its own target ISA.
 * HB_ARM: AArch64 with Advanced SIMD (NEON); HB_SVE: SVE where the compiler can target it per function
 * (gcc >= 10: `#pragma GCC target "+sve"` with arm_sve.h). The binary stays armv8-a, and
 * getauxval(AT_HWCAP) & HWCAP_SVE picks the SVE code at run time. */
#ifndef HB_ISA_H
#define HB_ISA_H

#if defined(__x86_64__) || defined(__i386__)
#include <immintrin.h>
#define HB_X86 1
#else
#define HB_X86 0
#endif

#if defined(__aarch64__)
#include <arm_neon.h>
#include <sys/auxv.h>
#define HB_ARM 1
#if !defined(__clang__) && defined(__GNUC__) && __GNUC__ >= 10 && __has_include(<arm_sve.h>)
#define HB_SVE 1
#else
#define HB_SVE 0
#endif
#ifndef HWCAP_ASIMD
#define HWCAP_ASIMD (1UL << 1)
#endif
#ifndef HWCAP_SVE
#define HWCAP_SVE (1UL << 22)
#endif
#else
#define HB_ARM 0
#define HB_SVE 0
#endif

#endif
