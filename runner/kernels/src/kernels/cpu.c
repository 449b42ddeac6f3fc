/* cpu: peak arithmetic throughput of the cores. Each thread runs `accumulators` independent
 * chains x <- x*m + c (fp64/fp32: one FMA, or mul+add without FMA) or x <- x + c (int32) in
 * vector registers of the widest ISA, enough chains to hide the latency of every pipe. m = 1 and
 * c are read at run time, so nothing can be folded, and each chunk's accumulators must equal
 * the closed form x0 + n*c exactly (integers below 2^24 stay exact in fp32) before it counts. */
#include "cpu.h"

#include <math.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../harness.h"
#include "../host.h"
#include "../isa.h"

/* Steps per chunk: ~0.6 ms at peak. Keeps fp32 exact: x0 + CHUNK * c < 2^24 for c <= 3. */
#define CHUNK (1L << 18)
#define MAX_ACC 16
#if HB_ARM
#define MAX_ELEMS (MAX_ACC * 64) /* SVE: up to 2048-bit vectors, 64 fp32 lanes */
#else
#define MAX_ELEMS (MAX_ACC * 16)
#endif

typedef struct coeffs {
    double m64, c64;
    float m32, c32;
    uint32_t ci;
} coeffs;

typedef void (*chain_fn)(void *acc, long n, const coeffs *k);

typedef struct variant {
    int op, isa;
    int acc, lanes, vector_bits, fma; /* lanes, vector_bits 0: SVE, known at run time */
    const char *mix;
    chain_fn fn;
} variant;

#define REP8(X) X(0) X(1) X(2) X(3) X(4) X(5) X(6) X(7)
#define REP12(X) REP8(X) X(8) X(9) X(10) X(11)
#define REP16(X) REP12(X) X(12) X(13) X(14) X(15)

/* One chain kernel: load the accumulators, n steps of STEP on each, store them back. V, LOAD,
 * STORE and STEP are defined just before each use. BARRIER (or nothing) hides the accumulators
 * from the optimiser once per step, which stops an integer chain being folded into x + n*c; it
 * emits no instruction. */
#define CHAIN(NAME, ATTR, T, REP, SETM, SETC, BARRIER)                                         \
    ATTR static void NAME(void *p, long n, const coeffs *k)                                   \
    {                                                                                          \
        T *a = p;                                                                              \
        const V m = SETM, c = SETC;                                                            \
        (void)m;                                                                               \
        REP(CHAIN_LOAD_)                                                                       \
        for (long i = 0; i < n; i++) {                                                         \
            REP(CHAIN_STEP_)                                                                   \
            BARRIER;                                                                           \
        }                                                                                      \
        REP(CHAIN_STORE_)                                                                      \
    }
#define CHAIN_LOAD_(i) V x##i = LOAD(i);
#define CHAIN_STEP_(i) x##i = STEP(x##i);
#define CHAIN_STORE_(i) STORE(i, x##i);

#define NOVEC __attribute__((optimize("no-tree-loop-vectorize", "no-tree-slp-vectorize")))

/* ---- scalar: every target ---- */
#define V double
#define LOAD(i) a[i]
#define STORE(i, x) a[i] = (x)
#define STEP(x) ((x) * m + c)
CHAIN(fp64_scalar, NOVEC, double, REP12, k->m64, k->c64, (void)0)
#undef V
#define V float
CHAIN(fp32_scalar, NOVEC, float, REP12, k->m32, k->c32, (void)0)
#undef V
#undef STEP
#define V uint32_t
#define STEP(x) ((x) + c)
#define BARRIER8 __asm__("" : "+r"(x0), "+r"(x1), "+r"(x2), "+r"(x3), "+r"(x4), "+r"(x5),     \
                         "+r"(x6), "+r"(x7))
CHAIN(int32_scalar, NOVEC, uint32_t, REP8, 0, k->ci, BARRIER8)
#undef V
#undef STEP
#undef LOAD
#undef STORE

/* ---- the vector-loaded clock (docs/methodology/cpu.md, "The clock"): the loop's time is set by
 * HB_CHAIN_ADDS dependent scalar adds per iteration, as in host.c's chain (1 cycle each on every
 * x86-64 and AArch64 core), while 50 vector FP ops of the run's width ride along on 8 independent
 * accumulators: 25 blocks of 4 chain adds + 2 vector ops, one vector op every 2 cycles. That is half
 * or less of the FMA (or mul and add) issue rate of any core with that width, and each accumulator
 * waits >= 4 cycles between its ops (16 on average), so they never hold the chain up; but the core
 * executes them, so it runs at the clock it grants that vector work (Intel's AVX-512 licence).
 * FMAs are FP64 whatever the run's op: a core's clock for vector work depends on the width and the
 * kind of instruction (FMA), not the element type. Inline asm, so the compiler can neither reorder
 * nor shorten the chain nor drop the vector ops; check.py reads them back with objdump. ---- */
static volatile double g_vc_m = 1.0, g_vc_c = 1.0; /* read at run time: nothing folds */
static volatile double g_vc_sink;
#define VC_ADD4(A) A A A A
#define VC_BODY(ADD, OP)                                                                       \
    ".rept 6\n\t" VC_ADD4(ADD) OP(0, 1) VC_ADD4(ADD) OP(2, 3) VC_ADD4(ADD) OP(4, 5)             \
        VC_ADD4(ADD) OP(6, 7) ".endr\n\t" VC_ADD4(ADD) OP(0, 1)
/* "&": written before m and c are last read, so never in their registers */
#define VC_ACC(C)                                                                              \
    [a0] "+&" C(a0), [a1] "+&" C(a1), [a2] "+&" C(a2), [a3] "+&" C(a3), [a4] "+&" C(a4),       \
        [a5] "+&" C(a5), [a6] "+&" C(a6), [a7] "+&" C(a7)
#define VC_DECL(T, INIT) T a0 = INIT, a1 = INIT, a2 = INIT, a3 = INIT, a4 = INIT, a5 = INIT,    \
                         a6 = INIT, a7 = INIT

#if HB_X86
#define BARRIER12(C) __asm__("" : "+" C(x0), "+" C(x1), "+" C(x2), "+" C(x3), "+" C(x4),       \
                             "+" C(x5), "+" C(x6), "+" C(x7), "+" C(x8), "+" C(x9), "+" C(x10), \
                             "+" C(x11))
/* "+" operands count twice against asm's limit of 30: two statements for 16 */
#define BARRIER16(C)                                                                           \
    __asm__("" : "+" C(x0), "+" C(x1), "+" C(x2), "+" C(x3), "+" C(x4), "+" C(x5), "+" C(x6),  \
            "+" C(x7));                                                                        \
    __asm__("" : "+" C(x8), "+" C(x9), "+" C(x10), "+" C(x11), "+" C(x12), "+" C(x13),         \
            "+" C(x14), "+" C(x15))

/* ---- SSE2: 128-bit, no FMA: mul + add ---- */
#define SSE __attribute__((target("sse2")))
#define V __m128d
#define LOAD(i) _mm_load_pd(a + 2 * (i))
#define STORE(i, x) _mm_store_pd(a + 2 * (i), x)
#define STEP(x) _mm_add_pd(_mm_mul_pd(x, m), c)
CHAIN(fp64_sse2, SSE, double, REP12, _mm_set1_pd(k->m64), _mm_set1_pd(k->c64), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V __m128
#define LOAD(i) _mm_load_ps(a + 4 * (i))
#define STORE(i, x) _mm_store_ps(a + 4 * (i), x)
#define STEP(x) _mm_add_ps(_mm_mul_ps(x, m), c)
CHAIN(fp32_sse2, SSE, float, REP12, _mm_set1_ps(k->m32), _mm_set1_ps(k->c32), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V __m128i
#define LOAD(i) _mm_load_si128((const __m128i *)a + (i))
#define STORE(i, x) _mm_store_si128((__m128i *)a + (i), x)
#define STEP(x) _mm_add_epi32(x, c)
CHAIN(int32_sse2, SSE, uint32_t, REP12, _mm_setzero_si128(),
      _mm_set1_epi32((int)k->ci), BARRIER12("x"))
#undef V
#undef LOAD
#undef STORE
#undef STEP

/* ---- AVX2 + FMA: 256-bit; 12 chains leave registers for m and c (16 ymm) ---- */
#define AVX2 __attribute__((target("avx2,fma")))
#define V __m256d
#define LOAD(i) _mm256_load_pd(a + 4 * (i))
#define STORE(i, x) _mm256_store_pd(a + 4 * (i), x)
#define STEP(x) _mm256_fmadd_pd(x, m, c)
CHAIN(fp64_avx2, AVX2, double, REP12, _mm256_set1_pd(k->m64), _mm256_set1_pd(k->c64), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V __m256
#define LOAD(i) _mm256_load_ps(a + 8 * (i))
#define STORE(i, x) _mm256_store_ps(a + 8 * (i), x)
#define STEP(x) _mm256_fmadd_ps(x, m, c)
CHAIN(fp32_avx2, AVX2, float, REP12, _mm256_set1_ps(k->m32), _mm256_set1_ps(k->c32), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V __m256i
#define LOAD(i) _mm256_load_si256((const __m256i *)a + (i))
#define STORE(i, x) _mm256_store_si256((__m256i *)a + (i), x)
#define STEP(x) _mm256_add_epi32(x, c)
CHAIN(int32_avx2, AVX2, uint32_t, REP12, _mm256_setzero_si256(),
      _mm256_set1_epi32((int)k->ci), BARRIER12("x"))
#undef V
#undef LOAD
#undef STORE
#undef STEP

/* ---- AVX-512F: 512-bit, 16 chains (of 32 zmm) ---- */
#define AVX512 __attribute__((target("avx512f")))
#define V __m512d
#define LOAD(i) _mm512_load_pd(a + 8 * (i))
#define STORE(i, x) _mm512_store_pd(a + 8 * (i), x)
#define STEP(x) _mm512_fmadd_pd(x, m, c)
CHAIN(fp64_avx512, AVX512, double, REP16, _mm512_set1_pd(k->m64), _mm512_set1_pd(k->c64), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V __m512
#define LOAD(i) _mm512_load_ps(a + 16 * (i))
#define STORE(i, x) _mm512_store_ps(a + 16 * (i), x)
#define STEP(x) _mm512_fmadd_ps(x, m, c)
CHAIN(fp32_avx512, AVX512, float, REP16, _mm512_set1_ps(k->m32), _mm512_set1_ps(k->c32), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V __m512i
#define LOAD(i) _mm512_load_si512((const __m512i *)a + (i))
#define STORE(i, x) _mm512_store_si512((__m512i *)a + (i), x)
#define STEP(x) _mm512_add_epi32(x, c)
CHAIN(int32_avx512, AVX512, uint32_t, REP16, _mm512_setzero_si512(),
      _mm512_set1_epi32((int)k->ci), BARRIER16("v"))
#undef V
#undef LOAD
#undef STORE
#undef STEP

#define VC_X86_ADD "add %[one], %[x]\n\t"
#define VC_FMA(i, j) "vfmadd231pd %[m], %[c], %[a" #i "]\n\t" \
                     "vfmadd231pd %[m], %[c], %[a" #j "]\n\t"
#define VC_MULADD(i, j) "mulpd %[m], %[a" #i "]\n\t" \
                        "addpd %[c], %[a" #j "]\n\t"
/* T: the vector type; C: its register constraint; OP: the two vector ops of a block */
#define VCLOCK_X86(NAME, ATTR, T, SET1, C, OP)                                                 \
    ATTR static uint64_t NAME(uint64_t iters, uint64_t one)                                    \
    {                                                                                          \
        uint64_t x = 0;                                                                        \
        const T m = SET1(g_vc_m), c = SET1(g_vc_c);                                            \
        VC_DECL(T, m);                                                                         \
        __asm__ volatile("1:\n\t" VC_BODY(VC_X86_ADD, OP) "dec %[n]\n\t"                       \
                         "jnz 1b"                                                              \
                         : [x] "+r"(x), [n] "+r"(iters), VC_ACC(C)                             \
                         : [one] "r"(one), [m] C(m), [c] C(c)                                  \
                         : "cc");                                                              \
        T sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;                                         \
        g_vc_sink = sum[0];                                                                    \
        return x;                                                                              \
    }
VCLOCK_X86(vclock_avx512, AVX512, __m512d, _mm512_set1_pd, "v", VC_FMA)
VCLOCK_X86(vclock_avx2, AVX2, __m256d, _mm256_set1_pd, "x", VC_FMA)
VCLOCK_X86(vclock_sse2, SSE, __m128d, _mm_set1_pd, "x", VC_MULADD)
#endif /* HB_X86 */

#if HB_ARM
/* "+w": the accumulators stay in SIMD registers; "+" operands count twice against asm's limit */
#define BARRIER16W                                                                             \
    __asm__("" : "+w"(x0), "+w"(x1), "+w"(x2), "+w"(x3), "+w"(x4), "+w"(x5), "+w"(x6),         \
            "+w"(x7));                                                                         \
    __asm__("" : "+w"(x8), "+w"(x9), "+w"(x10), "+w"(x11), "+w"(x12), "+w"(x13), "+w"(x14),    \
            "+w"(x15))

/* ---- NEON (Advanced SIMD): 128-bit, fused multiply-add (fmla); 16 chains of 32 v registers,
 * enough for 4 FMA pipes of 4 cycles' latency (Neoverse V1/V2) ---- */
#define V float64x2_t
#define LOAD(i) vld1q_f64(a + 2 * (i))
#define STORE(i, x) vst1q_f64(a + 2 * (i), x)
#define STEP(x) vfmaq_f64(c, x, m)
CHAIN(fp64_neon, , double, REP16, vdupq_n_f64(k->m64), vdupq_n_f64(k->c64), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V float32x4_t
#define LOAD(i) vld1q_f32(a + 4 * (i))
#define STORE(i, x) vst1q_f32(a + 4 * (i), x)
#define STEP(x) vfmaq_f32(c, x, m)
CHAIN(fp32_neon, , float, REP16, vdupq_n_f32(k->m32), vdupq_n_f32(k->c32), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V uint32x4_t
#define LOAD(i) vld1q_u32(a + 4 * (i))
#define STORE(i, x) vst1q_u32(a + 4 * (i), x)
#define STEP(x) vaddq_u32(x, c)
CHAIN(int32_neon, , uint32_t, REP16, vdupq_n_u32(0), vdupq_n_u32(k->ci), BARRIER16W)
#undef V
#undef LOAD
#undef STORE
#undef STEP

#define VC_ARM_ADD "add %[x], %[x], %[one]\n\t"
#define VC_NEON(i, j) "fmla %[a" #i "].2d, %[m].2d, %[c].2d\n\t" \
                      "fmla %[a" #j "].2d, %[m].2d, %[c].2d\n\t"
static uint64_t vclock_neon(uint64_t iters, uint64_t one)
{
    uint64_t x = 0;
    const float64x2_t m = vdupq_n_f64(g_vc_m), c = vdupq_n_f64(g_vc_c);
    VC_DECL(float64x2_t, m);
    __asm__ volatile("1:\n\t" VC_BODY(VC_ARM_ADD, VC_NEON) "subs %[n], %[n], #1\n\t"
                     "b.ne 1b"
                     : [x] "+r"(x), [n] "+r"(iters), VC_ACC("w")
                     : [one] "r"(one), [m] "w"(m), [c] "w"(c)
                     : "cc");
    float64x2_t sum = a0 + a1 + a2 + a3 + a4 + a5 + a6 + a7;
    g_vc_sink = sum[0];
    return x;
}

#if HB_SVE
/* ---- SVE: vectors of the length the CPU has (128 to 2048 bits), all lanes active; compiled for
 * +sve here only, run only when HWCAP_SVE says the CPU has it ---- */
#pragma GCC push_options
#pragma GCC target("+sve")
#include <arm_sve.h>
#define V svfloat64_t
#define LOAD(i) svld1_f64(svptrue_b64(), a + (i) * svcntd())
#define STORE(i, x) svst1_f64(svptrue_b64(), a + (i) * svcntd(), x)
#define STEP(x) svmad_f64_x(svptrue_b64(), x, m, c)
CHAIN(fp64_sve, , double, REP16, svdup_n_f64(k->m64), svdup_n_f64(k->c64), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V svfloat32_t
#define LOAD(i) svld1_f32(svptrue_b32(), a + (i) * svcntw())
#define STORE(i, x) svst1_f32(svptrue_b32(), a + (i) * svcntw(), x)
#define STEP(x) svmad_f32_x(svptrue_b32(), x, m, c)
CHAIN(fp32_sve, , float, REP16, svdup_n_f32(k->m32), svdup_n_f32(k->c32), (void)0)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define V svuint32_t
#define LOAD(i) svld1_u32(svptrue_b32(), a + (i) * svcntw())
#define STORE(i, x) svst1_u32(svptrue_b32(), a + (i) * svcntw(), x)
#define STEP(x) svadd_u32_x(svptrue_b32(), x, c)
CHAIN(int32_sve, , uint32_t, REP16, svdup_n_u32(0), svdup_n_u32(k->ci), BARRIER16W)
#undef V
#undef LOAD
#undef STORE
#undef STEP
#define VC_SVE(i, j) "fmla %[a" #i "].d, %[p]/m, %[m].d, %[c].d\n\t" \
                     "fmla %[a" #j "].d, %[p]/m, %[m].d, %[c].d\n\t"
static uint64_t vclock_sve(uint64_t iters, uint64_t one)
{
    uint64_t x = 0;
    const svbool_t p = svptrue_b64();
    const svfloat64_t m = svdup_n_f64(g_vc_m), c = svdup_n_f64(g_vc_c);
    VC_DECL(svfloat64_t, m);
    __asm__ volatile("1:\n\t" VC_BODY(VC_ARM_ADD, VC_SVE) "subs %[n], %[n], #1\n\t"
                     "b.ne 1b"
                     : [x] "+r"(x), [n] "+r"(iters), VC_ACC("w")
                     : [one] "r"(one), [m] "w"(m), [c] "w"(c), [p] "Upl"(p)
                     : "cc");
    svfloat64_t sum = svadd_f64_x(p, svadd_f64_x(p, svadd_f64_x(p, a0, a1), svadd_f64_x(p, a2, a3)),
                                  svadd_f64_x(p, svadd_f64_x(p, a4, a5), svadd_f64_x(p, a6, a7)));
    g_vc_sink = svaddv_f64(p, sum);
    return x;
}

static int sve_bits(void)
{
    return (int)svcntb() * 8;
}
#pragma GCC pop_options
#endif /* HB_SVE */
#endif /* HB_ARM */

static const char *const op_names[] = {"fp64", "fp32", "int32", NULL};
#if HB_ARM
static const char *const isa_choices[] = {"auto", "sve", "neon", "scalar", NULL};
#else
static const char *const isa_choices[] = {"auto", "avx512", "avx2", "sse2", "scalar", NULL};
#endif
#define ISA_NAME(isa) (isa_choices[(isa) + 1])

/* The instruction mixes below are what objdump shows for these loops with gcc 12 -O2
 * (docs/methodology/cpu.md). */
static const variant variants[] = {
#if HB_X86
    {HB_CPU_FP64, HB_ISA_AVX512, 16, 8, 512, 1, "vfmadd132pd zmm", fp64_avx512},
    {HB_CPU_FP32, HB_ISA_AVX512, 16, 16, 512, 1, "vfmadd132ps zmm", fp32_avx512},
    {HB_CPU_INT32, HB_ISA_AVX512, 16, 16, 512, 0, "vpaddd zmm", int32_avx512},
    {HB_CPU_FP64, HB_ISA_AVX2, 12, 4, 256, 1, "vfmadd132pd ymm", fp64_avx2},
    {HB_CPU_FP32, HB_ISA_AVX2, 12, 8, 256, 1, "vfmadd132ps ymm", fp32_avx2},
    {HB_CPU_INT32, HB_ISA_AVX2, 12, 8, 256, 0, "vpaddd ymm", int32_avx2},
    {HB_CPU_FP64, HB_ISA_SSE2, 12, 2, 128, 0, "mulpd+addpd xmm", fp64_sse2},
    {HB_CPU_FP32, HB_ISA_SSE2, 12, 4, 128, 0, "mulps+addps xmm", fp32_sse2},
    {HB_CPU_INT32, HB_ISA_SSE2, 12, 4, 128, 0, "paddd xmm", int32_sse2},
    {HB_CPU_FP64, HB_ISA_SCALAR, 12, 1, 64, 0, "mulsd+addsd", fp64_scalar},
    {HB_CPU_FP32, HB_ISA_SCALAR, 12, 1, 32, 0, "mulss+addss", fp32_scalar},
    {HB_CPU_INT32, HB_ISA_SCALAR, 8, 1, 32, 0, "add r32", int32_scalar},
#elif HB_ARM
#if HB_SVE
    {HB_CPU_FP64, HB_ISA_SVE, 16, 0, 0, 1, "fmad z.d", fp64_sve},
    {HB_CPU_FP32, HB_ISA_SVE, 16, 0, 0, 1, "fmad z.s", fp32_sve},
    {HB_CPU_INT32, HB_ISA_SVE, 16, 0, 0, 0, "add z.s", int32_sve},
#endif
    {HB_CPU_FP64, HB_ISA_NEON, 16, 2, 128, 1, "fmla v.2d", fp64_neon},
    {HB_CPU_FP32, HB_ISA_NEON, 16, 4, 128, 1, "fmla v.4s", fp32_neon},
    {HB_CPU_INT32, HB_ISA_NEON, 16, 4, 128, 0, "add v.4s", int32_neon},
    {HB_CPU_FP64, HB_ISA_SCALAR, 12, 1, 64, 0, "fmul d + fadd d", fp64_scalar},
    {HB_CPU_FP32, HB_ISA_SCALAR, 12, 1, 32, 0, "fmul s + fadd s", fp32_scalar},
    {HB_CPU_INT32, HB_ISA_SCALAR, 8, 1, 32, 0, "add w", int32_scalar},
#else
    {HB_CPU_FP64, HB_ISA_SCALAR, 12, 1, 64, 0, "scalar fp64 mul+add", fp64_scalar},
    {HB_CPU_FP32, HB_ISA_SCALAR, 12, 1, 32, 0, "scalar fp32 mul+add", fp32_scalar},
    {HB_CPU_INT32, HB_ISA_SCALAR, 8, 1, 32, 0, "scalar int32 add", int32_scalar},
#endif
};

/* Vector width and lanes: fixed, or for SVE the CPU's vector length. */
static int bits_of(const variant *v)
{
#if HB_SVE
    if (v->vector_bits == 0)
        return sve_bits();
#endif
    return v->vector_bits;
}

static int lanes_of(const variant *v)
{
#if HB_SVE
    if (v->lanes == 0)
        return bits_of(v) / (v->op == HB_CPU_FP64 ? 64 : 32);
#endif
    return v->lanes;
}

static const variant *find_variant(int op, int isa)
{
    for (size_t i = 0; i < sizeof variants / sizeof variants[0]; i++)
        if (variants[i].op == op && variants[i].isa == isa)
            return &variants[i];
    return NULL;
}

/* NULL when the CPU can run (op, isa), else what it lacks. */
static const char *lacks(int op, int isa)
{
    if (!find_variant(op, isa))
        return "this build has no code for it on this architecture";
#ifdef HBK_TEST_HOOKS
    const char *hide = getenv("HBK_TEST_HIDE_ISA"); /* lets tests reach the unsupported path */
    if (hide && !strcmp(hide, ISA_NAME(isa)))
        return "hidden by HBK_TEST_HIDE_ISA in this test build";
#endif
#if HB_X86
    __builtin_cpu_init();
    switch (isa) {
    case HB_ISA_AVX512:
        return __builtin_cpu_supports("avx512f") ? NULL : "the CPU (or OS) lacks AVX-512F";
    case HB_ISA_AVX2:
        if (!__builtin_cpu_supports("avx2"))
            return "the CPU (or OS) lacks AVX2";
        return op == HB_CPU_INT32 || __builtin_cpu_supports("fma") ? NULL
                                                                    : "the CPU has AVX2 but no FMA";
    case HB_ISA_SSE2:
        return __builtin_cpu_supports("sse2") ? NULL : "the CPU lacks SSE2";
    }
#elif HB_ARM
    if (isa == HB_ISA_SVE)
        return getauxval(AT_HWCAP) & HWCAP_SVE ? NULL : "the CPU (or OS) lacks SVE (HWCAP_SVE)";
    if (isa == HB_ISA_NEON)
        return getauxval(AT_HWCAP) & HWCAP_ASIMD ? NULL : "the CPU lacks Advanced SIMD (HWCAP_ASIMD)";
#endif
    return NULL;
}

int hb_cpu_available(int op, int isa)
{
    return lacks(op, isa) == NULL;
}

typedef union acc_buf {
    double d[MAX_ELEMS / 2];
    float f[MAX_ELEMS];
    uint32_t u[MAX_ELEMS];
} acc_buf;

static coeffs make_coeffs(unsigned c)
{
    static volatile double one = 1.0; /* the multiplier is read at run time */
    coeffs k;
    k.m64 = one;
    k.m32 = (float)one;
    k.c64 = c;
    k.c32 = (float)c;
    k.ci = c;
    return k;
}

/* Element e starts at e + 1; after n steps it must be e + 1 + n*c (mod 2^32 for int32). */
static void init_acc(const variant *v, acc_buf *b)
{
    int elems = v->acc * lanes_of(v);
    for (int e = 0; e < elems; e++) {
        if (v->op == HB_CPU_FP64)
            b->d[e] = e + 1;
        else if (v->op == HB_CPU_FP32)
            b->f[e] = (float)(e + 1);
        else
            b->u[e] = (uint32_t)e + 1;
    }
}

/* Index of the first element that differs from the closed form, or -1. */
static int check_acc(const variant *v, const acc_buf *b, long n, unsigned c)
{
    int elems = v->acc * lanes_of(v);
    for (int e = 0; e < elems; e++) {
        int ok;
        if (v->op == HB_CPU_FP64)
            ok = b->d[e] == (double)(e + 1) + (double)n * c;
        else if (v->op == HB_CPU_FP32)
            ok = b->f[e] == (float)((double)(e + 1) + (double)n * c);
        else
            ok = b->u[e] == (uint32_t)((uint32_t)e + 1 + (uint32_t)n * c);
        if (!ok)
            return e;
    }
    return -1;
}

int hb_cpu_check_chunk(int op, int isa, long n, unsigned c, unsigned c_claimed)
{
    const variant *v = find_variant(op, isa);
    _Alignas(64) acc_buf b;
    coeffs k = make_coeffs(c);
    if (!v || lacks(op, isa))
        return -1;
    init_acc(v, &b);
    v->fn(&b, n, &k);
    return check_acc(v, &b, n, c_claimed) < 0;
}

/* ---- the kernel ---- */

/* The vector-loaded clock's chain for a run: FP ops at a vector width only (int32 runs and scalar
 * ones get none: the scalar chain is their clock). */
typedef struct vclock {
    int isa;
    hb_chain_fn chain;
    const char *ops; /* what rides along with the adds, as objdump shows it */
} vclock;

static const vclock vclocks[] = {
#if HB_X86
    {HB_ISA_AVX512, vclock_avx512, "vfmadd231pd zmm"},
    {HB_ISA_AVX2, vclock_avx2, "vfmadd231pd ymm"},
    {HB_ISA_SSE2, vclock_sse2, "mulpd+addpd xmm"},
#elif HB_ARM
#if HB_SVE
    {HB_ISA_SVE, vclock_sve, "fmla z.d"},
#endif
    {HB_ISA_NEON, vclock_neon, "fmla v.2d"},
#endif
    {-1, NULL, NULL},
};

static const vclock *vclock_of(const variant *v)
{
    if (v->op == HB_CPU_INT32)
        return NULL;
    for (const vclock *c = vclocks; c->chain; c++)
        if (c->isa == v->isa)
            return c;
    return NULL;
}

/* Short: the licence switch it waits for takes well under a millisecond. */
static const hb_clock_plan vclock_plan_before = {NULL, 4, 10000000, 10000000};
static const hb_clock_plan vclock_plan_after = {NULL, 3, 10000000, 10000000};

/* 0 when there is no vector clock for this run, or it could not be measured. */
static double vector_clock(const vclock *vc, hb_clock_plan plan, int all, int cpu, const int *cpus,
                           int ncpus)
{
    if (!vc)
        return 0;
    plan.chain = vc->chain;
    return all ? hb_clock_ghz_all_chain(cpus, ncpus, &plan) : hb_clock_ghz_chain(cpu, &plan);
}

typedef struct cpu_state {
    const variant *v;
    unsigned c;
    double clock_ghz, clock_ghz_all;
    const vclock *vc;                 /* NULL: no vector-loaded clock for this run */
    double vclock_ghz, vclock_ghz_all; /* the vector-loaded clock, on one CPU and on all */
    int clock_cpu, ncpus;
    const int *cpus; /* the affinity mask, for the clock after each phase */
    int corrupt; /* test builds only: one chunk computes with a wrong addend */
} cpu_state;

static const hb_param_def cpu_params[] = {
    {"op", HB_P_ENUM, "fp64", 0, 0, op_names,
     "fp64 / fp32: fused multiply-add chains (x <- x*m + c; mul+add without FMA), in GFLOP/s; "
     "int32: vector integer add chains, in GIOP/s.", NULL, NULL},
    {"isa", HB_P_ENUM, "auto", 0, 0, isa_choices,
     "Instruction set. auto takes the widest this CPU supports; naming one it lacks ends with "
     "error code unsupported.", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

/* What cpu_result_facts adds to each result line. */
static const hb_result cpu_results[] = {
    {"clock_after_ghz", HB_R_NUMBER, "GHz", 0,
     "The clock measured again right after the repeat, under load (one pinned thread for one "
     "thread, every affinity CPU at once for more); null when it could not be measured.", NULL,
     .range = HB_POSITIVE},
    {"clock_after_vector_ghz", HB_R_NUMBER, "GHz", 0,
     "The vector-loaded clock (clock_vector_ghz of the start line) measured again right after "
     "the repeat, before clock_after_ghz, on the same CPUs; null for runs without one (int32, "
     "scalar) and when it could not be measured.", NULL, .range = HB_POSITIVE},
    {NULL},
};

static int chosen_isa(const hb_params *p, int op)
{
    int isa = hb_param_choice(p, "isa") - 1; /* choice 0 is auto */
    if (isa >= 0)
        return isa;
    for (isa = 0; isa < HB_ISAS; isa++)
        if (!lacks(op, isa))
            return isa;
    return HB_ISA_SCALAR;
}

static const char *cpu_supported(const hb_params *p)
{
    static char why[256];
    int op = hb_param_choice(p, "op"), isa = chosen_isa(p, op);
    const char *no = lacks(op, isa);
    if (!no)
        return NULL;
    size_t len = (size_t)snprintf(why, sizeof why, "isa %s is not available for op %s: %s; "
                                  "use --isa auto, or one of:", ISA_NAME(isa), op_names[op], no);
    for (int i = 0; i < HB_ISAS && len < sizeof why; i++)
        if (!lacks(op, i))
            len += (size_t)snprintf(why + len, sizeof why - len, " %s", ISA_NAME(i));
    return why;
}

static hb_status cpu_setup(const hb_params *p, hb_setup *s, hb_err *err)
{
    static int cpus[HB_MAX_CPUS];
    cpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    int op = hb_param_choice(p, "op");
    st->v = find_variant(op, chosen_isa(p, op));
    st->c = 1 + (unsigned)(hb_now_ns() / 1000 % 3); /* 1..3: the addend comes from run time */
    if (op == HB_CPU_INT32)
        st->c = 0x9E3779B1u ^ (unsigned)hb_now_ns(); /* wraps mod 2^32: closed form still exact */
#ifdef HBK_TEST_HOOKS
    const char *env = getenv("HBK_TEST_CORRUPT");
    st->corrupt = env && env[0] == '1';
#endif
    st->ncpus = hb_affinity_cpus(cpus, HB_MAX_CPUS);
    st->clock_cpu = st->ncpus > 0 ? cpus[0] : -1;
    st->cpus = cpus;
    st->clock_ghz = hb_clock_ghz(st->clock_cpu, 5);
    st->clock_ghz_all = st->ncpus > 1 ? hb_clock_ghz_all(cpus, st->ncpus, 3) : st->clock_ghz;
    st->vc = vclock_of(st->v);
    st->vclock_ghz = vector_clock(st->vc, vclock_plan_before, 0, st->clock_cpu, cpus, st->ncpus);
    st->vclock_ghz_all = st->ncpus > 1 ? vector_clock(st->vc, vclock_plan_before, 1, st->clock_cpu,
                                                      cpus, st->ncpus)
                                       : st->vclock_ghz;

    s->state = st;
    s->nconfigs = 1;
    hb_config *c = &s->configs[0];
    snprintf(c->op, sizeof c->op, "%s", op_names[op]);
    c->block_bytes = -1;
    c->unit = op == HB_CPU_INT32 ? "GIOP/s" : "GFLOP/s";
    /* a unit is one step of every chain */
    c->work_per_unit = (double)st->v->acc * lanes_of(st->v) * (op == HB_CPU_INT32 ? 1 : 2);
    return HB_OK;
}

static void cpu_facts(const hb_setup *s, hb_json *j)
{
    const cpu_state *st = s->state;
    const variant *v = st->v;
    int fp = v->op != HB_CPU_INT32;
    hb_json_kstr(j, "isa", ISA_NAME(v->isa));
    hb_json_key(j, "isa_available");
    hb_json_arr(j);
    for (int i = 0; i < HB_ISAS; i++)
        if (!lacks(v->op, i))
            hb_json_str(j, ISA_NAME(i));
    hb_json_arr_end(j);
    hb_json_kint(j, "vector_bits", bits_of(v));
    hb_json_kint(j, "lanes", lanes_of(v));
    hb_json_kbool(j, "fma", v->fma);
    hb_json_kstr(j, "mix", v->mix);
    hb_json_kint(j, "accumulators", v->acc);
    if (fp) {
        hb_json_kint(j, "flops_per_instruction", lanes_of(v) * (v->fma ? 2 : 1));
        hb_json_knum(j, "flops_per_unit", s->configs[0].work_per_unit);
        hb_json_knull(j, "flops_per_cycle"); /* pipes per core: a hardware fact, see the doc */
    } else {
        hb_json_kint(j, "int_ops_per_instruction", lanes_of(v));
        hb_json_knum(j, "int_ops_per_unit", s->configs[0].work_per_unit);
    }
    hb_json_kint(j, "chunk_units", CHUNK);
    /* 0: the measuring thread could not start; say unknown rather than 0 GHz */
    hb_json_knum(j, "clock_ghz", st->clock_ghz > 0 ? st->clock_ghz : NAN);
    hb_json_knum(j, "clock_ghz_all_cpus", st->clock_ghz_all > 0 ? st->clock_ghz_all : NAN);
    hb_json_kstr(j, "clock_method", "dependent register-register 64-bit adds (1 cycle each) "
                 "per second of the pinned thread's CPU time (CLOCK_THREAD_CPUTIME_ID), best "
                 "of 5 runs of >= 50 ms after a 50 ms warm-up; clock_ghz_all_cpus: the same on "
                 "every affinity CPU at once (best of 3 each), mean");
    hb_json_kint(j, "clock_cpu", st->clock_cpu);
    /* null for runs without one; NAN when the thread could not start */
    hb_json_knum(j, "clock_vector_ghz", st->vclock_ghz > 0 ? st->vclock_ghz : NAN);
    hb_json_knum(j, "clock_vector_ghz_all_cpus", st->vclock_ghz_all > 0 ? st->vclock_ghz_all : NAN);
    if (st->vc) {
        char how[400];
        snprintf(how, sizeof how, "the same dependent adds (%d per loop iteration, which set its "
                 "time) with %d x %s beside them on 8 independent accumulators (one every 2 "
                 "cycles, below any FMA pipe's rate), so the core runs at its clock for this "
                 "run's vector work; best of %d runs of >= 10 ms after a 10 ms warm-up, right "
                 "after the scalar clock; _all_cpus: every affinity CPU at once, mean",
                 HB_CHAIN_ADDS, HB_CHAIN_ADDS / 2, st->vc->ops, vclock_plan_before.trials);
        hb_json_kstr(j, "clock_vector_method", how);
    } else {
        hb_json_knull(j, "clock_vector_method");
    }
    hb_json_kstr(j, "verify", fp ? "every chunk: x0 + n*c exactly (m = 1)"
                                 : "every chunk: x0 + n*c mod 2^32");
}

/* The clock again right after each measured phase. The host's boost moves with its own load (one VM
 * measured 3.3 and 3.9 GHz minutes apart), so a clock taken only before the run can be below the one
 * the run had; the backend takes the higher of the two for the peak, so a peak is never set below
 * what the core actually ran at. */
static void cpu_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                             hb_json *j)
{
    (void)w;
    (void)seconds;
    const cpu_state *st = s->state;
    int all = nthreads > 1 && st->ncpus > 1;
    /* the vector clock first: it is the shorter, and the core still runs the phase's vector work */
    double vghz = vector_clock(st->vc, vclock_plan_after, all, st->clock_cpu, st->cpus, st->ncpus);
    double ghz = all ? hb_clock_ghz_all(st->cpus, st->ncpus, 2) : hb_clock_ghz(st->clock_cpu, 3);
    hb_json_knum(j, "clock_after_ghz", ghz > 0 ? ghz : NAN);
    hb_json_knum(j, "clock_after_vector_ghz", vghz > 0 ? vghz : NAN);
}

static void cpu_work(hb_worker *w)
{
    const cpu_state *st = w->state;
    const variant *v = st->v;
    _Alignas(64) acc_buf b;
    uint64_t units = 0, n;
    /* n = CHUNK, except the last chunk of a fixed-work share (the closed form holds for any n) */
    for (uint64_t chunk = 0; (n = hb_next_units(w, units, CHUNK)) > 0; chunk++) {
        coeffs k = make_coeffs(st->c);
        if (st->corrupt && chunk == 1)
            k = make_coeffs(st->c + 1);
        init_acc(v, &b);
        v->fn(&b, (long)n, &k);
        int bad = check_acc(v, &b, (long)n, st->c);
        if (bad >= 0)
            hb_fail(w, "chunk %llu, element %d differs from the closed form x0 + n*c",
                    (unsigned long long)chunk, bad);
        units += n;
        hb_publish(w, units);
    }
}

static void cpu_teardown(hb_setup *s)
{
    free(s->state);
    s->state = NULL;
}

static const char *const cpu_checks[] = {"strong_scaling", NULL};

const hb_kernel hb_kernel_cpu = {
    .name = "cpu",
    .title = "CPU arithmetic throughput",
    .description = "Peak FP64/FP32 FLOP/s (fused multiply-add chains) or int32 vector add "
                   "ops/s per thread count, on the widest vector ISA of the CPU; every chunk "
                   "of work is checked against its closed form.",
    .unit = "GFLOP/s",
    .unit_scale = 1e-9,
    .params = cpu_params,
    .results = cpu_results,
    .checks = cpu_checks,
    .supported = cpu_supported,
    .setup = cpu_setup,
    .facts = cpu_facts,
    .result_facts = cpu_result_facts,
    .work = cpu_work,
    .teardown = cpu_teardown,
    .fixed_work = 1,
};
