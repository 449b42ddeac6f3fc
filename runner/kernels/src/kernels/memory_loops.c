/* memory: the loops, one set per ISA (x86: AVX-512, AVX2, scalar; aarch64: SVE, NEON, scalar),
 * each a sum, fill, copy, random block read and write and the four STREAM kernels, with plain
 * and non-temporal stores; the table the kernel picks a set from at run time, what each ISA
 * needs of the CPU, the closed forms the work is checked against, and the check of every loop
 * against plain C for tests/test_memory.c. Keep the #if structure per ISA: tests/check_memory.py
 * and tests/check_arm64.py read these loops in objdump of memory_loops.o. */
#include "memory_loops.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#if HB_ARM
const char *const mem_isa_choices[] = {"auto", "sve", "neon", "scalar", NULL};
#else
const char *const mem_isa_choices[] = {"auto", "avx512", "avx2", "scalar", NULL};
#endif
const char *const mem_kind_label[] = {"Copy", "Scale", "Add", "Triad"};

static inline void nt_store64(uint64_t *p, uint64_t v)
{
#if HB_X86
    _mm_stream_si64((long long *)(void *)p, (long long)v);
#else
    *p = v;
#endif
}

static inline void nt_store_double(double *p, double v)
{
    uint64_t bits;
    memcpy(&bits, &v, sizeof bits);
    nt_store64((uint64_t *)(void *)p, bits);
}

/* ---- the loops, one set per ISA ----
 * Each ISA defines: V (register of 64-bit words), VW (words per register), LD / ST / NT
 * (aligned load, store, non-temporal store), ADD, SET1, ZERO, HSUM (sum of the lanes), and the
 * same for doubles: VD, LDD, STD, NTD, ADDD, MULD, SET1D. The macros below are then one
 * definition of each loop; every loop moves four registers per iteration. n is a multiple
 * of VW. */

/* The block is read as four sequential streams, one per quarter, a register of each per
 * iteration: one stream keeps fewer misses in flight than the core can (docs/methodology/memory.md,
 * "Sequential read"). The sum is the same in any order. */
#define SUM_FN(NAME, ATTR)                                                                     \
    ATTR static uint64_t NAME(const uint64_t *p, size_t n)                                    \
    {                                                                                          \
        V s0 = ZERO(), s1 = ZERO(), s2 = ZERO(), s3 = ZERO();                                  \
        size_t q = n / (4 * VW) * VW, i = 0; /* words per stream */                            \
        const uint64_t *p1 = p + q, *p2 = p + 2 * q, *p3 = p + 3 * q;                          \
        for (; i < q; i += VW) {                                                               \
            s0 = ADD(s0, LD(p + i));                                                           \
            s1 = ADD(s1, LD(p1 + i));                                                          \
            s2 = ADD(s2, LD(p2 + i));                                                          \
            s3 = ADD(s3, LD(p3 + i));                                                          \
        }                                                                                      \
        for (i = 4 * q; i < n; i += VW)                                                        \
            s0 = ADD(s0, LD(p + i));                                                           \
        return HSUM(ADD(ADD(s0, s1), ADD(s2, s3)));                                            \
    }

#define FILL_FN(NAME, ATTR, STORE)                                                             \
    ATTR static void NAME(uint64_t *p, size_t n, uint64_t x)                                   \
    {                                                                                          \
        const V v = SET1(x);                                                                   \
        size_t i = 0;                                                                          \
        for (; i + 4 * VW <= n; i += 4 * VW) {                                                 \
            STORE(p + i, v);                                                                   \
            STORE(p + i + VW, v);                                                              \
            STORE(p + i + 2 * VW, v);                                                          \
            STORE(p + i + 3 * VW, v);                                                          \
        }                                                                                      \
        for (; i < n; i += VW)                                                                 \
            STORE(p + i, v);                                                                   \
    }

#define COPY_FN(NAME, ATTR, STORE)                                                             \
    ATTR static void NAME(uint64_t *restrict d, const uint64_t *restrict s, size_t n)         \
    {                                                                                          \
        size_t i = 0;                                                                          \
        for (; i + 4 * VW <= n; i += 4 * VW) {                                                 \
            V v0 = LD(s + i), v1 = LD(s + i + VW), v2 = LD(s + i + 2 * VW),                    \
              v3 = LD(s + i + 3 * VW);                                                         \
            STORE(d + i, v0);                                                                  \
            STORE(d + i + VW, v1);                                                             \
            STORE(d + i + 2 * VW, v2);                                                         \
            STORE(d + i + 3 * VW, v3);                                                         \
        }                                                                                      \
        for (; i < n; i += VW)                                                                 \
            STORE(d + i, LD(s + i));                                                           \
    }

/* count blocks of bw words at random block indexes; adds the indexes to *idx_sum */
#define RAND_READ_FN(NAME, ATTR, SUM)                                                          \
    ATTR static uint64_t NAME(const uint64_t *base, uint64_t nblocks, size_t bw, size_t count, \
                              uint64_t *rng, uint64_t *idx_sum)                                \
    {                                                                                          \
        uint64_t s = *rng, isum = 0, total = 0;                                                \
        V acc = ZERO();                                                                        \
        if (bw == VW) {                                                                        \
            for (size_t k = 0; k < count; k++) {                                               \
                uint64_t idx = pick(&s, nblocks);                                              \
                isum += idx;                                                                   \
                acc = ADD(acc, LD(base + idx * VW));                                           \
            }                                                                                  \
        } else {                                                                               \
            for (size_t k = 0; k < count; k++) {                                               \
                uint64_t idx = pick(&s, nblocks);                                              \
                isum += idx;                                                                   \
                total += SUM(base + idx * bw, bw);                                             \
            }                                                                                  \
        }                                                                                      \
        *rng = s;                                                                              \
        *idx_sum += isum;                                                                      \
        return total + HSUM(acc);                                                              \
    }

/* count blocks at random indexes filled with x; ends[0], ends[1]: the first and last index */
#define RAND_WRITE_FN(NAME, ATTR, FILL)                                                        \
    ATTR static void NAME(uint64_t *base, uint64_t nblocks, size_t bw, size_t count,           \
                          uint64_t *rng, uint64_t x, uint64_t ends[2])                         \
    {                                                                                          \
        uint64_t s = *rng, idx = pick(&s, nblocks);                                            \
        ends[0] = idx;                                                                         \
        FILL(base + idx * bw, bw, x);                                                          \
        for (size_t k = 1; k < count; k++) {                                                   \
            idx = pick(&s, nblocks);                                                           \
            FILL(base + idx * bw, bw, x);                                                      \
        }                                                                                      \
        ends[1] = idx;                                                                         \
        *rng = s;                                                                              \
    }

/* x[j] = EXPR(j) for j in [0, n): the STREAM kernels, with x, y, z in STREAM's roles */
#define STREAM_FN(NAME, ATTR, STORE, EXPR)                                                     \
    ATTR static void NAME(double *restrict x, const double *restrict y,                        \
                          const double *restrict z, double q, size_t n)                        \
    {                                                                                          \
        const VD s = SET1D(q);                                                                 \
        size_t i = 0, j;                                                                       \
        (void)s;                                                                               \
        (void)z;                                                                               \
        for (; i + 4 * VW <= n; i += 4 * VW) {                                                 \
            j = i;                                                                             \
            STORE(x + j, EXPR);                                                                \
            j = i + VW;                                                                        \
            STORE(x + j, EXPR);                                                                \
            j = i + 2 * VW;                                                                    \
            STORE(x + j, EXPR);                                                                \
            j = i + 3 * VW;                                                                    \
            STORE(x + j, EXPR);                                                                \
        }                                                                                      \
        for (; i < n; i += VW) {                                                               \
            j = i;                                                                             \
            STORE(x + j, EXPR);                                                                \
        }                                                                                      \
    }

#define E_COPY LDD(y + j)
#define E_SCALE MULD(s, LDD(y + j))
#define E_ADD ADDD(LDD(y + j), LDD(z + j))
#define E_TRIAD ADDD(LDD(y + j), MULD(s, LDD(z + j)))

#define DEF_ISA(SFX, ATTR)                                                                     \
    SUM_FN(sum_##SFX, ATTR)                                                                    \
    FILL_FN(fill_##SFX, ATTR, ST)                                                              \
    FILL_FN(fill_nt_##SFX, ATTR, NT)                                                           \
    COPY_FN(copy_##SFX, ATTR, ST)                                                              \
    COPY_FN(copy_nt_##SFX, ATTR, NT)                                                           \
    RAND_READ_FN(rand_read_##SFX, ATTR, sum_##SFX)                                             \
    RAND_WRITE_FN(rand_write_##SFX, ATTR, fill_##SFX)                                          \
    RAND_WRITE_FN(rand_write_nt_##SFX, ATTR, fill_nt_##SFX)                                   \
    STREAM_FN(copy_d_##SFX, ATTR, STD, E_COPY)                                                 \
    STREAM_FN(scale_d_##SFX, ATTR, STD, E_SCALE)                                               \
    STREAM_FN(add_d_##SFX, ATTR, STD, E_ADD)                                                   \
    STREAM_FN(triad_d_##SFX, ATTR, STD, E_TRIAD)                                               \
    STREAM_FN(copy_d_nt_##SFX, ATTR, NTD, E_COPY)                                              \
    STREAM_FN(scale_d_nt_##SFX, ATTR, NTD, E_SCALE)                                            \
    STREAM_FN(add_d_nt_##SFX, ATTR, NTD, E_ADD)                                                \
    STREAM_FN(triad_d_nt_##SFX, ATTR, NTD, E_TRIAD)

/* ---- scalar: 8-byte words; also the path for blocks that are not whole vectors. Not
 * vectorised and not turned into memcpy calls, so an 8-byte op stays one 8-byte access. ---- */
#define SCALAR                                                                                 \
    __attribute__((optimize("no-tree-loop-vectorize", "no-tree-slp-vectorize",                \
                            "no-tree-loop-distribute-patterns")))
#define V uint64_t
#define VW 1
#define LD(p) (*(p))
#define ST(p, v) (*(p) = (v))
#define NT(p, v) nt_store64((p), (v))
#define ADD(a, b) ((a) + (b))
#define SET1(x) (x)
#define ZERO() ((uint64_t)0)
#define HSUM(v) (v)
#define VD double
#define LDD(p) (*(p))
#define STD(p, v) (*(p) = (v))
#define NTD(p, v) nt_store_double((p), (v))
#define ADDD(a, b) ((a) + (b))
#define MULD(a, b) ((a) * (b))
#define SET1D(x) (x)
DEF_ISA(scalar, SCALAR)
#undef V
#undef VW
#undef LD
#undef ST
#undef NT
#undef ADD
#undef SET1
#undef ZERO
#undef HSUM
#undef VD
#undef LDD
#undef STD
#undef NTD
#undef ADDD
#undef MULD
#undef SET1D

#if HB_X86
/* ---- AVX2: 256-bit ---- */
#define AVX2 __attribute__((target("avx2")))
AVX2 static inline uint64_t hsum256(__m256i v)
{
    __m128i s = _mm_add_epi64(_mm256_castsi256_si128(v), _mm256_extracti128_si256(v, 1));
    return (uint64_t)_mm_cvtsi128_si64(s) + (uint64_t)_mm_extract_epi64(s, 1);
}
#define V __m256i
#define VW 4
#define LD(p) _mm256_load_si256((const __m256i *)(const void *)(p))
#define ST(p, v) _mm256_store_si256((__m256i *)(void *)(p), (v))
#define NT(p, v) _mm256_stream_si256((__m256i *)(void *)(p), (v))
#define ADD(a, b) _mm256_add_epi64((a), (b))
#define SET1(x) _mm256_set1_epi64x((long long)(x))
#define ZERO() _mm256_setzero_si256()
#define HSUM(v) hsum256(v)
#define VD __m256d
#define LDD(p) _mm256_load_pd(p)
#define STD(p, v) _mm256_store_pd((p), (v))
#define NTD(p, v) _mm256_stream_pd((p), (v))
#define ADDD(a, b) _mm256_add_pd((a), (b))
#define MULD(a, b) _mm256_mul_pd((a), (b))
#define SET1D(x) _mm256_set1_pd(x)
DEF_ISA(avx2, AVX2)
#undef V
#undef VW
#undef LD
#undef ST
#undef NT
#undef ADD
#undef SET1
#undef ZERO
#undef HSUM
#undef VD
#undef LDD
#undef STD
#undef NTD
#undef ADDD
#undef MULD
#undef SET1D

/* ---- AVX-512F: 512-bit, one cache line per register ---- */
#define AVX512 __attribute__((target("avx512f")))
#define V __m512i
#define VW 8
#define LD(p) _mm512_load_si512((const void *)(p))
#define ST(p, v) _mm512_store_si512((void *)(p), (v))
#define NT(p, v) _mm512_stream_si512((__m512i *)(void *)(p), (v))
#define ADD(a, b) _mm512_add_epi64((a), (b))
#define SET1(x) _mm512_set1_epi64((long long)(x))
#define ZERO() _mm512_setzero_si512()
#define HSUM(v) ((uint64_t)_mm512_reduce_add_epi64(v))
#define VD __m512d
#define LDD(p) _mm512_load_pd(p)
#define STD(p, v) _mm512_store_pd((p), (v))
#define NTD(p, v) _mm512_stream_pd((p), (v))
#define ADDD(a, b) _mm512_add_pd((a), (b))
#define MULD(a, b) _mm512_mul_pd((a), (b))
#define SET1D(x) _mm512_set1_pd(x)
DEF_ISA(avx512, AVX512)
#undef V
#undef VW
#undef LD
#undef ST
#undef NT
#undef ADD
#undef SET1
#undef ZERO
#undef HSUM
#undef VD
#undef LDD
#undef STD
#undef NTD
#undef ADDD
#undef MULD
#undef SET1D
#endif /* HB_X86 */

#if HB_ARM
/* ---- NEON: 128-bit. NEON has no non-temporal store of one register (STNP stores pairs), so
 * NT is a plain store here and the kernel never reports non-temporal stores for this set. ---- */
#define V uint64x2_t
#define VW 2
#define LD(p) vld1q_u64(p)
#define ST(p, v) vst1q_u64((p), (v))
#define NT(p, v) vst1q_u64((p), (v))
#define ADD(a, b) vaddq_u64((a), (b))
#define SET1(x) vdupq_n_u64(x)
#define ZERO() vdupq_n_u64(0)
#define HSUM(v) vaddvq_u64(v)
#define VD float64x2_t
#define LDD(p) vld1q_f64(p)
#define STD(p, v) vst1q_f64((p), (v))
#define NTD(p, v) vst1q_f64((p), (v))
#define ADDD(a, b) vaddq_f64((a), (b))
#define MULD(a, b) vmulq_f64((a), (b))
#define SET1D(x) vdupq_n_f64(x)
DEF_ISA(neon, )
#undef V
#undef VW
#undef LD
#undef ST
#undef NT
#undef ADD
#undef SET1
#undef ZERO
#undef HSUM
#undef VD
#undef LDD
#undef STD
#undef NTD
#undef ADDD
#undef MULD
#undef SET1D

#if HB_SVE
/* ---- SVE: the CPU's vector length (VW = svcntd() words), all lanes active; non-temporal stores
 * are STNT1D. Compiled for +sve here only, run only when HWCAP_SVE says the CPU has it. ---- */
#pragma GCC push_options
#pragma GCC target("+sve")
#include <arm_sve.h>
#define V svuint64_t
#define VW svcntd()
#define LD(p) svld1_u64(svptrue_b64(), (p))
#define ST(p, v) svst1_u64(svptrue_b64(), (p), (v))
#define NT(p, v) svstnt1_u64(svptrue_b64(), (p), (v))
#define ADD(a, b) svadd_u64_x(svptrue_b64(), (a), (b))
#define SET1(x) svdup_n_u64(x)
#define ZERO() svdup_n_u64(0)
#define HSUM(v) svaddv_u64(svptrue_b64(), (v))
#define VD svfloat64_t
#define LDD(p) svld1_f64(svptrue_b64(), (p))
#define STD(p, v) svst1_f64(svptrue_b64(), (p), (v))
#define NTD(p, v) svstnt1_f64(svptrue_b64(), (p), (v))
#define ADDD(a, b) svadd_f64_x(svptrue_b64(), (a), (b))
#define MULD(a, b) svmul_f64_x(svptrue_b64(), (a), (b))
#define SET1D(x) svdup_n_f64(x)
DEF_ISA(sve, )
static int sve_words(void)
{
    return (int)svcntd();
}
#pragma GCC pop_options
#undef V
#undef VW
#undef LD
#undef ST
#undef NT
#undef ADD
#undef SET1
#undef ZERO
#undef HSUM
#undef VD
#undef LDD
#undef STD
#undef NTD
#undef ADDD
#undef MULD
#undef SET1D
#endif /* HB_SVE */
#endif /* HB_ARM */

#define KERNELS(SFX, ISA, VWORDS, BITS, PLAIN, NTI)                                            \
    {ISA, VWORDS, BITS, {PLAIN, NTI}, sum_##SFX, {fill_##SFX, fill_nt_##SFX},                  \
     {copy_##SFX, copy_nt_##SFX}, rand_read_##SFX, {rand_write_##SFX, rand_write_nt_##SFX},    \
     {{copy_d_##SFX, copy_d_nt_##SFX}, {scale_d_##SFX, scale_d_nt_##SFX},                      \
      {add_d_##SFX, add_d_nt_##SFX}, {triad_d_##SFX, triad_d_nt_##SFX}}}

/* The store instructions are what objdump shows for these loops with gcc 12 -O2
 * (tests/check_memory.py checks them; tests/check_arm64.py the ARM ones). */
#if HB_ARM
static kernels kernel_sets[] = { /* SVE's vw and vector_bits are filled in at run time */
#if HB_SVE
    KERNELS(sve, HB_MEM_SVE, 0, 0, "st1d z", "stnt1d z"),
#endif
    KERNELS(neon, HB_MEM_NEON, 2, 128, "str q", "str q (NEON has no non-temporal store)"),
    KERNELS(scalar, HB_MEM_SCALAR, 1, 64, "str x", "str x (no non-temporal)"),
};
#else
static const kernels kernel_sets[] = {
#if HB_X86
    KERNELS(avx512, HB_MEM_AVX512, 8, 512, "vmovapd/vmovdqa64 zmm", "vmovntpd/vmovntdq zmm"),
    KERNELS(avx2, HB_MEM_AVX2, 4, 256, "vmovapd/vmovdqa ymm", "vmovntpd/vmovntdq ymm"),
    KERNELS(scalar, HB_MEM_SCALAR, 1, 64, "mov r64", "movnti r64"),
#else
    KERNELS(scalar, HB_MEM_SCALAR, 1, 64, "64-bit store", "64-bit store (no non-temporal)"),
#endif
};
#endif

const kernels *mem_kernels_of(int isa)
{
#if HB_SVE
    if (kernel_sets[0].vw == 0 && (getauxval(AT_HWCAP) & HWCAP_SVE)) {
        kernel_sets[0].vw = sve_words();
        kernel_sets[0].vector_bits = 64 * kernel_sets[0].vw;
    }
#endif
    for (size_t i = 0; i < sizeof kernel_sets / sizeof kernel_sets[0]; i++)
        if (kernel_sets[i].isa == isa)
            return &kernel_sets[i];
    return NULL;
}

/* NULL when this CPU can run isa, else what it lacks. */
const char *mem_lacks(int isa)
{
    if (!mem_kernels_of(isa))
        return "this build has no code for it on this architecture";
#ifdef HBK_TEST_HOOKS
    const char *hide = getenv("HBK_TEST_HIDE_ISA");
    if (hide && !strcmp(hide, ISA_NAME(isa)))
        return "hidden by HBK_TEST_HIDE_ISA in this test build";
#endif
#if HB_X86
    __builtin_cpu_init();
    if (isa == HB_MEM_AVX512 && !__builtin_cpu_supports("avx512f"))
        return "the CPU (or OS) lacks AVX-512F";
    if (isa == HB_MEM_AVX2 && !__builtin_cpu_supports("avx2"))
        return "the CPU (or OS) lacks AVX2";
#elif HB_ARM
    if (isa == HB_MEM_SVE)
        return getauxval(AT_HWCAP) & HWCAP_SVE ? NULL : "the CPU (or OS) lacks SVE (HWCAP_SVE)";
    if (isa == HB_MEM_NEON)
        return getauxval(AT_HWCAP) & HWCAP_ASIMD ? NULL : "the CPU lacks Advanced SIMD (HWCAP_ASIMD)";
#endif
    return NULL;
}

int hb_mem_isa_available(int isa)
{
    return mem_lacks(isa) == NULL;
}

/* ---- closed forms ---- */

uint64_t hb_mem_pattern_sum(uint64_t seed, uint64_t w0, uint64_t n)
{
    /* sum of (i + seed) for i in [w0, w0 + n): n*seed + n*(2*w0 + n - 1)/2, halving the even
     * factor so the product stays exact mod 2^64 */
    uint64_t odd = 2 * w0 + n - 1;
    uint64_t tri = n % 2 == 0 ? (n / 2) * odd : n * (odd / 2);
    return n * seed + tri;
}

/* Sum of random block reads: block idx holds words idx*bw .. idx*bw + bw - 1. */
uint64_t mem_rand_sum(uint64_t seed, uint64_t bw, uint64_t count, uint64_t idx_sum)
{
    return bw * bw * idx_sum + count * (bw * seed + bw * (bw - 1) / 2);
}

void mem_fill_pattern(uint64_t *p, uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < n; i++)
        p[i] = i + seed;
}

/* ---- for tests/test_memory.c ---- */

int hb_mem_check_kernels(int isa, char *why, size_t len)
{
    enum { N = 4096 };
    const kernels *k = mem_kernels_of(isa);
    if (!k || mem_lacks(isa))
        return -1;
    static _Alignas(64) uint64_t s[N], d[N];
    static _Alignas(64) double x[N], y[N], z[N];
    uint64_t seed = 12345;
    mem_fill_pattern(s, N, seed);
    for (size_t n = 0; n <= N; n += (size_t)k->vw * 5) {
        if (k->sum(s, n) != hb_mem_pattern_sum(seed, 0, n))
            return snprintf(why, len, "sum of %zu words", n), 0;
        for (int nt = 0; nt < 2; nt++) {
            memset(d, 0, sizeof d);
            k->fill[nt](d, n, 77);
            nt_fence();
            for (size_t i = 0; i < N; i++)
                if (d[i] != (i < n ? 77u : 0u))
                    return snprintf(why, len, "fill nt=%d of %zu words, word %zu", nt, n, i), 0;
            memset(d, 0, sizeof d);
            k->copy[nt](d, s, n);
            nt_fence();
            for (size_t i = 0; i < N; i++)
                if (d[i] != (i < n ? s[i] : 0u))
                    return snprintf(why, len, "copy nt=%d of %zu words, word %zu", nt, n, i), 0;
        }
    }
    for (size_t bw = (size_t)k->vw; bw <= 64; bw *= 2) {
        uint64_t rng = 99, ref = 99, isum = 0, nblocks = N / bw, ends[2];
        uint64_t got = k->rand_read(s, nblocks, bw, 1000, &rng, &isum), want = 0, isum2 = 0;
        for (int i = 0; i < 1000; i++) {
            uint64_t idx = pick(&ref, nblocks);
            isum2 += idx;
            for (size_t j = 0; j < bw; j++)
                want += s[idx * bw + j];
        }
        if (got != want || isum != isum2 || rng != ref ||
            want != mem_rand_sum(seed, bw, 1000, isum))
            return snprintf(why, len, "rand_read of %zu-word blocks", bw), 0;
        for (int nt = 0; nt < 2; nt++) {
            memset(d, 0, sizeof d);
            rng = ref = 7;
            k->rand_write[nt](d, nblocks, bw, 100, &rng, 5, ends);
            nt_fence();
            uint64_t first = pick(&ref, nblocks), lastidx = first;
            for (int i = 1; i < 100; i++)
                lastidx = pick(&ref, nblocks);
            if (ends[0] != first || ends[1] != lastidx || d[first * bw] != 5 ||
                d[lastidx * bw + bw - 1] != 5)
                return snprintf(why, len, "rand_write nt=%d of %zu-word blocks", nt, bw), 0;
        }
    }
    for (int kind = 0; kind < 4; kind++)
        for (int nt = 0; nt < 2; nt++) {
            size_t n = N - (size_t)k->vw * 3;
            for (size_t i = 0; i < N; i++) {
                x[i] = -1;
                y[i] = (double)i;
                z[i] = (double)(i % 7);
            }
            k->stream[kind][nt](x, y, z, 3.0, n);
            nt_fence();
            for (size_t i = 0; i < N; i++) {
                double e = i >= n ? -1 : kind == K_COPY ? y[i] : kind == K_SCALE ? 3.0 * y[i]
                           : kind == K_ADD ? y[i] + z[i] : y[i] + 3.0 * z[i];
                if (x[i] != e)
                    return snprintf(why, len, "stream %s nt=%d, element %zu",
                                    mem_kind_label[kind], nt, i), 0;
            }
        }
    return 1;
}
