/* memory: bandwidth and latency of the memory hierarchy. Block ops (copy, read, write,
 * rand_read, rand_write) do one operation per block on a per-thread buffer sized past the
 * caches; the STREAM-variant ops sweep per-thread slices of STREAM's three arrays with its four
 * kernels and byte counts, with plain or non-temporal stores; latency chases a random cyclic
 * permutation of cache lines. Read sums must equal the fill pattern's closed form, writes and
 * copies are spot-checked, STREAM arrays checked against their closed form, and every chase
 * must close its cycle. Memory is mapped and first touched by the pinned thread using it. */
#include "memory.h"

#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

#include "../harness.h"
#include "../host.h"
#include "../isa.h"

__extension__ typedef unsigned __int128 u128;

#define KiB 1024LL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define HUGE_PAGE (2 * MiB)
#define BLOCK_CHUNK_BYTES (4 * MiB) /* block ops per chunk: about this many bytes, at least 1 */
#define PIECE (1 << 18)             /* STREAM elements per chunk: 2 MiB of each array */
#define CHASE_CHUNK (1 << 16)       /* dependent loads per chunk (whole cycles when shorter) */
#define DRAM_FACTOR 4               /* a DRAM working set is at least this many times L3 */

enum { FAM_BLOCK, FAM_STREAM, FAM_LATENCY };
enum {
    OP_COPY, OP_READ, OP_WRITE, OP_RAND_READ, OP_RAND_WRITE,
    OP_S_COPY, OP_S_SCALE, OP_S_ADD, OP_S_TRIAD,
    OP_S_COPY_NT, OP_S_SCALE_NT, OP_S_ADD_NT, OP_S_TRIAD_NT,
    OP_LATENCY,
};
enum { K_COPY, K_SCALE, K_ADD, K_TRIAD };

static const char *const op_names[] = {
    "copy", "read", "write", "rand_read", "rand_write",
    "stream_copy", "stream_scale", "stream_add", "stream_triad",
    "stream_copy_nt", "stream_scale_nt", "stream_add_nt", "stream_triad_nt",
    "latency", NULL};
static const char *const store_names[] = {"auto", "plain", "nt", NULL};
enum { STORES_AUTO, STORES_PLAIN, STORES_NT };
#if HB_ARM
static const char *const isa_choices[] = {"auto", "sve", "neon", "scalar", NULL};
#else
static const char *const isa_choices[] = {"auto", "avx512", "avx2", "scalar", NULL};
#endif
#define ISA_NAME(isa) (isa_choices[(isa) + 1])

/* STREAM's labels and bytes per element (one read per input array, one write per output). */
static const char *const kind_label[] = {"Copy", "Scale", "Add", "Triad"};
static const int kind_bytes[] = {16, 16, 24, 24};
static const int kind_arrays[] = {2, 2, 3, 3};
/* Initial values of STREAM's arrays a, b, c, and what each kernel leaves in its output with
 * q = 3: copy c = a, scale b = q*c, add c = a + b, triad a = b + q*c. Every output differs from
 * its initial value, so a piece that was never written shows. */
#define A0 1.0
#define B0 2.0
#define C0 4.0
static const double kind_result[] = {A0, 3.0 * C0, A0 + B0, B0 + 3.0 * C0};

static inline uint64_t splitmix64(uint64_t x)
{
    x += 0x9E3779B97F4A7C15ULL;
    x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ULL;
    x = (x ^ (x >> 27)) * 0x94D049BB133111EBULL;
    return x ^ (x >> 31);
}

/* A uniform index in [0, n): one add carries the state, so successive picks are independent
 * and their loads overlap (wyrand's mixer, then a multiply-high range reduction). */
static inline uint64_t pick(uint64_t *s, uint64_t n)
{
    *s += 0xA0761D6478BD642FULL;
    u128 t = (u128)*s * (*s ^ 0xE7037ED1A0B428DBULL);
    uint64_t r = (uint64_t)(t >> 64) ^ (uint64_t)t;
    return (uint64_t)(((u128)r * n) >> 64);
}

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

static inline void nt_fence(void)
{
#if HB_X86
    _mm_sfence();
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
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

typedef void (*stream_fn)(double *, const double *, const double *, double, size_t);
typedef void (*fill_fn)(uint64_t *, size_t, uint64_t);
typedef void (*copy_fn)(uint64_t *, const uint64_t *, size_t);
typedef void (*rand_write_fn)(uint64_t *, uint64_t, size_t, size_t, uint64_t *, uint64_t,
                              uint64_t[2]);

typedef struct kernels {
    int isa, vw, vector_bits;
    const char *insn[2]; /* store instruction: plain, non-temporal */
    uint64_t (*sum)(const uint64_t *, size_t);
    fill_fn fill[2];     /* [nt] */
    copy_fn copy[2];
    uint64_t (*rand_read)(const uint64_t *, uint64_t, size_t, size_t, uint64_t *, uint64_t *);
    rand_write_fn rand_write[2];
    stream_fn stream[4][2]; /* [kind][nt] */
} kernels;

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

static const kernels *kernels_of(int isa)
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
static const char *lacks(int isa)
{
    if (!kernels_of(isa))
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
    return lacks(isa) == NULL;
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
static uint64_t rand_sum(uint64_t seed, uint64_t bw, uint64_t count, uint64_t idx_sum)
{
    return bw * bw * idx_sum + count * (bw * seed + bw * (bw - 1) / 2);
}

/* ---- the host's caches, from sysfs ---- */

typedef struct caches {
    long long l1d, l2, l3, l3_total, line;
    int l3_instances;
    const char *source;
} caches;

static const char *sysfs_root(void)
{
#ifdef HBK_TEST_HOOKS
    const char *root = getenv("HBK_TEST_SYSFS_CPU"); /* a fixture tree in tests */
    if (root)
        return root;
#endif
    return "/sys/devices/system/cpu";
}

static int read_text(const char *path, char *buf, size_t len)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    size_t n = fread(buf, 1, len - 1, f);
    fclose(f);
    buf[n] = '\0';
    while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
        buf[--n] = '\0';
    return 0;
}

long long hb_mem_parse_size(const char *text)
{
    char *end;
    errno = 0;
    long long v = strtoll(text, &end, 10);
    if (errno || end == text || v < 0)
        return -1;
    long long mult = 1;
    if (*end == 'K' || *end == 'k')
        mult = KiB;
    else if (*end == 'M')
        mult = MiB;
    else if (*end == 'G')
        mult = GiB;
    if (mult != 1)
        end++;
    if (*end || v > LLONG_MAX / mult)
        return -1;
    return v * mult;
}

static int cache_field(int cpu, int index, const char *field, char *buf, size_t len)
{
    char path[512];
    snprintf(path, sizeof path, "%s/cpu%d/cache/index%d/%s", sysfs_root(), cpu, index, field);
    return read_text(path, buf, len);
}

static void detect_caches(caches *c, const int *cpus, int ncpus)
{
    char buf[256], seen[16][256];
    int nseen = 0;
    memset(c, 0, sizeof *c);
    for (int i = 0; i < 16; i++) {
        char level[16], type[32];
        if (cache_field(cpus[0], i, "level", level, sizeof level) ||
            cache_field(cpus[0], i, "type", type, sizeof type) ||
            cache_field(cpus[0], i, "size", buf, sizeof buf))
            continue;
        long long size = hb_mem_parse_size(buf);
        if (size <= 0)
            continue;
        if (!strcmp(level, "1") && !strcmp(type, "Data"))
            c->l1d = size;
        else if (!strcmp(level, "2") && strcmp(type, "Instruction"))
            c->l2 = size;
        else if (!strcmp(level, "3") && strcmp(type, "Instruction"))
            c->l3 = size;
        if (!c->line && !cache_field(cpus[0], i, "coherency_line_size", buf, sizeof buf))
            c->line = hb_mem_parse_size(buf);
    }
    /* L3 over the CPUs we may run on: one per distinct shared_cpu_list */
    for (int k = 0; k < ncpus && c->l3; k++) {
        for (int i = 0; i < 16; i++) {
            char level[16];
            if (cache_field(cpus[k], i, "level", level, sizeof level) || strcmp(level, "3") ||
                cache_field(cpus[k], i, "shared_cpu_list", buf, sizeof buf))
                continue;
            int dup = 0;
            for (int s = 0; s < nseen && !dup; s++)
                dup = !strcmp(seen[s], buf);
            if (!dup && nseen < 16) {
                snprintf(seen[nseen++], sizeof seen[0], "%s", buf);
                char sz[64];
                long long size = cache_field(cpus[k], i, "size", sz, sizeof sz)
                                     ? c->l3 : hb_mem_parse_size(sz);
                c->l3_total += size > 0 ? size : c->l3;
            }
            break;
        }
    }
    c->l3_instances = nseen;
    c->source = "sysfs";
    if (!c->l3) { /* no L3 reported: the largest cache stands in for it */
        c->l3 = c->l2 ? c->l2 : 32 * MiB;
        c->source = c->l2 ? "sysfs (no L3: the L2 stands in for it)"
                          : "assumed (no cache sizes in sysfs): L3 32 MiB";
    }
    if (!c->l3_total) {
        c->l3_total = c->l3;
        c->l3_instances = 1;
    }
    if (!c->l1d)
        c->l1d = 32 * KiB;
    if (!c->l2)
        c->l2 = c->l1d;
    if (c->line <= 0)
        c->line = 64;
}

const char *hb_mem_level(long long per_thread, int threads, long long l1d, long long l2,
                         long long l3_total)
{
    if (per_thread <= l1d)
        return "L1";
    if (per_thread <= l2)
        return "L2";
    if (per_thread * (threads > 0 ? threads : 1) <= l3_total)
        return "L3";
    return "DRAM";
}

static void fmt_bytes(char *buf, size_t len, double bytes)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    int u = 0;
    while (bytes >= 1024 && u < 4) {
        bytes /= 1024;
        u++;
    }
    if (bytes == (double)(long long)bytes)
        snprintf(buf, len, "%lld %s", (long long)bytes, units[u]);
    else
        snprintf(buf, len, "%.1f %s", bytes, units[u]);
}

static long long mem_available(void)
{
    FILE *f = fopen("/proc/meminfo", "r");
    char line[256];
    long long kb = -1;
    if (!f)
        return -1;
    while (fgets(line, sizeof line, f))
        if (sscanf(line, "MemAvailable: %lld kB", &kb) == 1)
            break;
    fclose(f);
    return kb < 0 ? -1 : kb * KiB;
}

/* ---- memory: anonymous mappings, 2 MiB aligned, transparent huge pages on request ---- */

typedef struct mapping {
    void *base;
    size_t len;
} mapping;

static size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

static void *map_memory(mapping *m, size_t bytes, int huge)
{
    size_t body = align_up(bytes, HUGE_PAGE);
    m->len = body + HUGE_PAGE;
    m->base = mmap(NULL, m->len, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (m->base == MAP_FAILED) {
        m->base = NULL;
        return NULL;
    }
    char *p = (char *)align_up((size_t)m->base, HUGE_PAGE);
#ifdef MADV_HUGEPAGE
    madvise(p, body, huge ? MADV_HUGEPAGE : MADV_NOHUGEPAGE); /* advice: failure is harmless */
#else
    (void)huge;
#endif
    return p;
}

static void unmap_memory(mapping *m)
{
    if (m->base)
        munmap(m->base, m->len);
    m->base = NULL;
}

/* ---- the kernel's state ---- */

typedef struct mem_state {
    int op, family, kind, isa;
    int nt;     /* STREAM-variant ops: the _nt ones */
    int stores; /* block ops: STORES_AUTO, _PLAIN or _NT */
    int hugepages, allow_cache;
    long long buffer_bytes, array_size;
    int max_threads, nthreads, threads[HB_LIST_MAX]; /* the thread counts of the run */
    caches c;
    double q;       /* STREAM's scalar, 3.0, read at run time */
    uint64_t seed0; /* from the clock: the fill pattern differs from run to run */
    char thp[64];   /* /sys/kernel/mm/transparent_hugepage/enabled */
    int corrupt;    /* test builds only: each thread corrupts its second chunk */
} mem_state;

typedef struct tstate {
    mapping map;
    const kernels *k; /* the ISA's loops, or scalar words for blocks that are not vectors */
    uint64_t seed, rng, values, chunk_no;
    /* block ops */
    uint64_t *src, *dst, nblocks, bw, pos, ops_per_chunk;
    int nt; /* non-temporal stores */
    /* STREAM */
    double *a, *b, *c;
    size_t n, spos, swept; /* elements of the output written at least once: [0, swept) */
    /* latency */
    const void *start, *p;
    uint64_t nodes, left, sum, cycle_sum;
    char why[200];
} tstate;

static int family_of(int op)
{
    return op <= OP_RAND_WRITE ? FAM_BLOCK : op == OP_LATENCY ? FAM_LATENCY : FAM_STREAM;
}

/* Bytes one thread's block-op buffer spans: the DRAM working set split over the threads (or
 * buffer_bytes), at least one block, a whole number of blocks. */
static uint64_t region_bytes(const mem_state *st, long long block, int threads)
{
    long long want = st->buffer_bytes ? st->buffer_bytes : DRAM_FACTOR * st->c.l3_total;
    uint64_t per = (uint64_t)((want + threads - 1) / threads);
    if (per < (uint64_t)block)
        per = (uint64_t)block;
    return align_up(per, (size_t)block);
}

/* Block ops: non-temporal stores? auto: when the working set is larger than the L3 (nothing to
 * keep in cache) and the writes cover whole lines (a partial line written non-temporally makes
 * the memory controller read it anyway): sequential ops, or random blocks of a line or more. */
static int block_nt(const mem_state *st, long long block, int threads)
{
    if (st->op == OP_READ || st->op == OP_RAND_READ)
        return 0;
#if HB_ARM /* only SVE has a non-temporal store, and only blocks of whole SVE vectors use it */
    if (st->isa != HB_MEM_SVE || block % (8LL * kernels_of(HB_MEM_SVE)->vw))
        return 0;
#elif !HB_X86
    return 0; /* no non-temporal store in this build */
#endif
    if (st->stores != STORES_AUTO)
        return st->stores == STORES_NT;
    long long ws = (long long)region_bytes(st, block, threads) * threads;
    return ws > st->c.l3_total && (st->op != OP_RAND_WRITE || block >= st->c.line);
}

static size_t stream_slice(const mem_state *st, int tid, int threads)
{
    size_t n = (size_t)st->array_size;
    return n / (size_t)threads + ((size_t)tid < n % (size_t)threads);
}

/* Array stagger: STREAM's arrays sit at different offsets modulo 4 KiB, so that a load and an
 * older store to another array never look alike in their low 12 address bits. */
static size_t stagger(int array)
{
    return (size_t)array * 1088; /* 17 lines */
}

/* Bytes one thread touches in configuration c with `threads` threads. */
static long long per_thread_bytes(const mem_state *st, const hb_config *c, int threads)
{
    switch (st->family) {
    case FAM_BLOCK:
        return (long long)region_bytes(st, c->block_bytes, threads) * (st->op == OP_COPY ? 2 : 1);
    case FAM_STREAM:
        return (long long)stream_slice(st, 0, threads) * 8 * kind_arrays[st->kind];
    default:
        return c->block_bytes;
    }
}

/* ---- parameters ---- */

static const hb_param_def mem_params[] = {
    {"op", HB_P_ENUM, "copy", 0, 0, op_names,
     "copy (read+write), read, write, rand_read, rand_write: one operation per block "
     "(--blocks) over a buffer past the caches. stream_copy/_scale/_add/_triad: STREAM-variant "
     "kernels with STREAM's byte counting (16/16/24/24 bytes per element), plain stores; the "
     "_nt ones use non-temporal stores. latency: dependent loads, a random cycle through "
     "--sizes working sets. Rates in MB/s = 10^6 bytes/s (latency: Mload/s, plus ns_per_load)."},
    {"blocks", HB_P_INT_LIST, "8,8192,8388608,83886080", 8, 1073741824, NULL,
     "Block sizes in bytes for copy/read/write/rand_read/rand_write, multiples of 8. One "
     "operation moves one block (blocks of whole vectors in vector registers, others in 8-byte "
     "words); each thread walks its own buffer of max(block, buffer_bytes / threads) bytes, "
     "sequentially or at random block indexes. Each op also reports ns_per_op."},
    {"buffer_bytes", HB_P_INT, "0", 0, 8589934592.0, NULL,
     "Block ops: bytes of buffer over all threads (copy: of the source; the destination is as "
     "large). 0: 4x the L3 of the CPUs in use, so the data comes from DRAM. Smaller than that "
     "is refused unless allow_cache."},
    {"stores", HB_P_ENUM, "auto", 0, 0, store_names,
     "copy, write, rand_write: plain stores (each line is read into the cache before it is "
     "written; that read is not counted), nt (non-temporal: written straight to memory, no "
     "read), or auto: nt when the working set is larger than the L3 and the writes cover whole "
     "lines (sequential ops, or random blocks of at least a line), as glibc's memcpy does for "
     "large copies; plain otherwise. Results say which was used."},
    {"array_size", HB_P_INT, "0", 0, 536870912, NULL, /* 4 GiB per array: 4 x an L3 of up to 1 GiB */
     "STREAM-variant ops: elements (8-byte doubles) per array, over all threads, as STREAM's "
     "STREAM_ARRAY_SIZE; each thread sweeps its own contiguous slice. 0: 4x the L3 of the CPUs "
     "in use per array (STREAM's rule). Smaller than that is refused unless allow_cache."},
    {"sizes", HB_P_INT_LIST,
     "4096,16384,65536,262144,1048576,2097152,4194304,16777216,33554432,67108864,268435456,"
     "1073741824",
     4096, 1073741824, NULL,
     "latency: working sets in bytes per thread, multiples of the cache line; one node per "
     "line in one random cycle. Each is labelled with the cache it fits in (level L1, L2, L3, "
     "DRAM)."},
    {"allow_cache", HB_P_BOOL, "false", 0, 1, NULL,
     "Block and STREAM-variant ops: run even when the working set is smaller than 4x L3, to "
     "measure a cache on purpose; results carry the level they fit in."},
    {"hugepages", HB_P_BOOL, "true", 0, 1, NULL,
     "Ask for transparent huge pages (madvise MADV_HUGEPAGE) so that TLB misses do not add "
     "to the memory time; false asks for 4 KiB pages."},
    {"isa", HB_P_ENUM, "auto", 0, 0, isa_choices,
     "Vector instructions of the loops. auto takes the widest this CPU supports; naming one "
     "it lacks ends with error code unsupported."},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL},
};

static int chosen_isa(const hb_params *p)
{
    int isa = hb_param_choice(p, "isa") - 1; /* choice 0 is auto */
    if (isa >= 0)
        return isa;
    for (isa = 0; isa < HB_MEM_ISAS; isa++)
        if (!lacks(isa))
            return isa;
    return HB_MEM_SCALAR;
}

static const char *mem_supported(const hb_params *p)
{
    static char why[256];
    int isa = chosen_isa(p);
    const char *no = lacks(isa);
    if (no) {
        size_t len = (size_t)snprintf(why, sizeof why, "isa %s is not available: %s; use --isa "
                                      "auto, or one of:", ISA_NAME(isa), no);
        for (int i = 0; i < HB_MEM_ISAS && len < sizeof why; i++)
            if (!lacks(i))
                len += (size_t)snprintf(why + len, sizeof why - len, " %s", ISA_NAME(i));
        return why;
    }
#if HB_ARM
    int op = hb_param_choice(p, "op");
    int nt = (op >= OP_S_COPY_NT && op <= OP_S_TRIAD_NT) || hb_param_choice(p, "stores") == STORES_NT;
    if (isa != HB_MEM_SVE && nt) {
        snprintf(why, sizeof why, "%snon-temporal stores on ARM need SVE (stnt1d); isa %s (%s) "
                 "has none", op >= OP_S_COPY_NT && op <= OP_S_TRIAD_NT ? "" : "--stores nt: ",
                 ISA_NAME(isa), hb_param_choice(p, "isa") ? "asked for" : "the widest this CPU has");
        return why;
    }
#elif !HB_X86
    int op = hb_param_choice(p, "op");
    if (op >= OP_S_COPY_NT && op <= OP_S_TRIAD_NT)
        return "non-temporal stores are built only for x86 in this version";
    if (hb_param_choice(p, "stores") == STORES_NT)
        return "--stores nt: non-temporal stores are built only for x86 in this version";
#endif
    return NULL;
}

/* A parameter given for an op it does not apply to is refused: it would silently not act. */
static hb_status only_for(const hb_params *p, const char *name, int applies, const char *ops,
                          hb_err *err)
{
    if (hb_param(p, name)->given && !applies)
        return hb_errorf(err, HB_BAD_PARAM, "--%s applies to %s only, not to --op %s", name, ops,
                         op_names[hb_param_choice(p, "op")]);
    return HB_OK;
}

static hb_status too_small(hb_err *err, const mem_state *st, const char *what, double bytes,
                           const char *fix)
{
    char ws[32], l3[32], four[32];
    fmt_bytes(ws, sizeof ws, bytes);
    fmt_bytes(l3, sizeof l3, (double)st->c.l3_total);
    fmt_bytes(four, sizeof four, (double)(DRAM_FACTOR * st->c.l3_total));
    return hb_errorf(err, HB_BAD_PARAM, "%s: working set %s is smaller than 4x L3 (4 x %s = %s); "
                     "this would measure cache, not DRAM. %s, or --allow_cache true to measure "
                     "the cache on purpose", what, ws, l3, four, fix);
}

static hb_status check_params(const hb_params *p, mem_state *st, hb_err *err)
{
    int block = st->family == FAM_BLOCK, stream = st->family == FAM_STREAM;
    int writes = st->op == OP_COPY || st->op == OP_WRITE || st->op == OP_RAND_WRITE;
    hb_status s;
    if ((s = only_for(p, "blocks", block, "copy, read, write, rand_read, rand_write", err)) ||
        (s = only_for(p, "buffer_bytes", block, "copy, read, write, rand_read, rand_write",
                      err)) ||
        (s = only_for(p, "stores", writes, "copy, write, rand_write (the stream_*_nt ops are "
                      "the non-temporal STREAM variants)", err)) ||
        (s = only_for(p, "array_size", stream, "the stream_* ops", err)) ||
        (s = only_for(p, "sizes", st->family == FAM_LATENCY, "latency", err)) ||
        (s = only_for(p, "allow_cache", block || stream, "block and stream_* ops (latency "
                      "measures every level on purpose)", err)))
        return s;
    const hb_value *blocks = hb_param(p, "blocks"), *sizes = hb_param(p, "sizes");
    if (block)
        for (int i = 0; i < blocks->n; i++)
            if (blocks->i[i] % 8)
                return hb_errorf(err, HB_BAD_PARAM, "blocks: %lld is not a multiple of 8 bytes "
                                 "(one 64-bit word, the smallest access of an op)",
                                 blocks->i[i]);
    if (st->family == FAM_LATENCY)
        for (int i = 0; i < sizes->n; i++)
            if (sizes->i[i] % st->c.line)
                return hb_errorf(err, HB_BAD_PARAM, "sizes: %lld is not a multiple of the "
                                 "cache line (%lld bytes): the chase has one node per line",
                                 sizes->i[i], st->c.line);
    if (stream && st->array_size < 1024LL * st->max_threads)
        return hb_errorf(err, HB_BAD_PARAM, "array_size: %lld elements leave less than 1024 per "
                         "thread at %d threads", st->array_size, st->max_threads);
    if (st->allow_cache)
        return HB_OK;
    long long dram = DRAM_FACTOR * st->c.l3_total;
    if (stream && st->array_size * 8 < dram) {
        char fix[96];
        snprintf(fix, sizeof fix, "Use --array_size 0 (auto: %lld elements) or more",
                 (dram + 7) / 8);
        char what[64];
        snprintf(what, sizeof what, "%s, one array of %lld elements", op_names[st->op],
                 st->array_size);
        return too_small(err, st, what, (double)st->array_size * 8, fix);
    }
    if (block && st->buffer_bytes)
        for (int i = 0; i < blocks->n; i++)
            for (int t = 0; t < hb_param(p, "threads")->n; t++) {
                int threads = (int)hb_param(p, "threads")->i[t];
                long long ws = (long long)region_bytes(st, blocks->i[i], threads) * threads;
                if (ws < dram) {
                    char what[96];
                    snprintf(what, sizeof what, "%s, block %lld at %d thread%s (the %s buffer)",
                             op_names[st->op], blocks->i[i], threads, threads == 1 ? "" : "s",
                             st->op == OP_COPY ? "source" : "whole");
                    return too_small(err, st, what, (double)ws,
                                     "Use --buffer_bytes 0 (auto) or more");
                }
            }
    return HB_OK;
}

static hb_status check_memory(const mem_state *st, const hb_setup *s, hb_err *err)
{
    long long avail = mem_available(), worst = 0;
    if (avail < 0)
        return HB_OK;
    for (int c = 0; c < s->nconfigs; c++) {
        long long need = per_thread_bytes(st, &s->configs[c], st->max_threads) * st->max_threads;
        if (st->family == FAM_STREAM) /* all three arrays are mapped */
            need = need / kind_arrays[st->kind] * 3;
        if (st->family == FAM_LATENCY) /* the permutation, while the cycle is built */
            need += need / st->c.line * 4;
        if (need > worst)
            worst = need;
    }
    if (worst > avail / 10 * 9) {
        char need[32], have[32];
        fmt_bytes(need, sizeof need, (double)worst);
        fmt_bytes(have, sizeof have, (double)avail);
        return hb_errorf(err, HB_UNSUPPORTED, "the largest configuration needs %s at %d threads "
                         "but this host has %s available (MemAvailable); use fewer threads or "
                         "smaller sizes", need, st->max_threads, have);
    }
    return HB_OK;
}

static hb_status mem_setup(const hb_params *p, hb_setup *s, hb_err *err)
{
    static int cpus[HB_MAX_CPUS];
    static volatile double three = 3.0;
    mem_state *st = calloc(1, sizeof *st);
    if (!st)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    st->op = hb_param_choice(p, "op");
    st->family = family_of(st->op);
    st->kind = st->family == FAM_STREAM ? (st->op - OP_S_COPY) % 4 : 0;
    st->nt = st->family == FAM_STREAM && st->op >= OP_S_COPY_NT;
    st->stores = hb_param_choice(p, "stores");
    st->isa = chosen_isa(p);
    st->hugepages = hb_param_bool(p, "hugepages");
    st->allow_cache = hb_param_bool(p, "allow_cache");
    st->buffer_bytes = hb_param_int(p, "buffer_bytes");
    st->q = three;
    st->seed0 = splitmix64((uint64_t)hb_now_ns());
    const hb_value *threads = hb_param(p, "threads");
    st->nthreads = threads->n;
    for (int i = 0; i < threads->n; i++) {
        st->threads[i] = (int)threads->i[i];
        if (st->threads[i] > st->max_threads)
            st->max_threads = st->threads[i];
    }
    int ncpus = hb_affinity_cpus(cpus, HB_MAX_CPUS);
    if (ncpus < 1) {
        cpus[0] = 0;
        ncpus = 1;
    }
    detect_caches(&st->c, cpus, ncpus);
    st->array_size = hb_param_int(p, "array_size");
    if (!st->array_size) /* STREAM's rule, rounded up to whole pieces */
        st->array_size = (long long)align_up((size_t)(DRAM_FACTOR * st->c.l3_total / 8), PIECE);
    if (read_text("/sys/kernel/mm/transparent_hugepage/enabled", st->thp, sizeof st->thp))
        snprintf(st->thp, sizeof st->thp, "unknown");
#ifdef HBK_TEST_HOOKS
    const char *env = getenv("HBK_TEST_CORRUPT");
    st->corrupt = env && env[0] == '1';
#endif
    s->state = st;
    hb_status rc = check_params(p, st, err);
    if (rc != HB_OK)
        return rc;

    const hb_value *list = st->family == FAM_BLOCK     ? hb_param(p, "blocks")
                           : st->family == FAM_LATENCY ? hb_param(p, "sizes")
                                                       : NULL;
    s->nconfigs = list ? list->n : 1;
    for (int i = 0; i < s->nconfigs; i++) {
        hb_config *c = &s->configs[i];
        snprintf(c->op, sizeof c->op, "%s", op_names[st->op]);
        c->block_bytes = list ? list->i[i] : -1;
        c->unit = NULL;
        if (st->family == FAM_BLOCK) /* copy counts the bytes read and the bytes written */
            c->work_per_unit = (double)c->block_bytes * (st->op == OP_COPY ? 2 : 1);
        else if (st->family == FAM_STREAM)
            c->work_per_unit = kind_bytes[st->kind];
        else {
            c->unit = "Mload/s";
            c->work_per_unit = 1;
        }
    }
    return check_memory(st, s, err);
}

/* The working set and the cache it fits in, for configuration c at `threads` threads. */
static void level_fields(const mem_state *st, const hb_config *c, int threads, hb_json *j)
{
    long long per = per_thread_bytes(st, c, threads);
    hb_json_kint(j, "working_set_bytes", per * threads);
    hb_json_kstr(j, "level", hb_mem_level(per, threads, st->c.l1d, st->c.l2, st->c.l3_total));
}

static void mem_facts(const hb_setup *s, hb_json *j)
{
    const mem_state *st = s->state;
    const kernels *k = kernels_of(st->isa);
    hb_json_kstr(j, "isa", ISA_NAME(st->isa));
    hb_json_key(j, "isa_available");
    hb_json_arr(j);
    for (int i = 0; i < HB_MEM_ISAS; i++)
        if (!lacks(i))
            hb_json_str(j, ISA_NAME(i));
    hb_json_arr_end(j);
    hb_json_kint(j, "vector_bits", k->vector_bits);
    hb_json_kstr(j, "mb", "MB/s = 10^6 bytes per second");
    hb_json_key(j, "caches");
    hb_json_obj(j);
    hb_json_kint(j, "l1d", st->c.l1d);
    hb_json_kint(j, "l2", st->c.l2);
    hb_json_kint(j, "l3", st->c.l3);
    hb_json_kint(j, "l3_total", st->c.l3_total);
    hb_json_kint(j, "l3_instances", st->c.l3_instances);
    hb_json_kint(j, "line", st->c.line);
    hb_json_kstr(j, "source", st->c.source);
    hb_json_obj_end(j);
    hb_json_kbool(j, "hugepages", st->hugepages);
    hb_json_kstr(j, "thp_mode", st->thp);
    if (st->family == FAM_BLOCK) {
        int writes = st->op == OP_COPY || st->op == OP_WRITE || st->op == OP_RAND_WRITE;
        hb_json_kstr(j, "stores", writes ? store_names[st->stores] : NULL);
        hb_json_key(j, "store_insn");
        hb_json_arr(j);
        for (int nt = 0; writes && nt < 2; nt++)
            if (st->stores == STORES_AUTO || st->stores == (nt ? STORES_NT : STORES_PLAIN))
                hb_json_str(j, k->insn[nt]);
        hb_json_arr_end(j);
        hb_json_kstr(j, "bytes_per_op", st->op == OP_COPY ? "2 x block (read + write)"
                                                          : "block");
        hb_json_kint(j, "buffer_bytes", st->buffer_bytes ? st->buffer_bytes
                                                         : DRAM_FACTOR * st->c.l3_total);
        hb_json_kstr(j, "access", "blocks of whole vectors in vector registers (aligned), "
                     "others in 8-byte words; rand_*: uniform random block index per op");
        hb_json_kstr(j, "verify", st->op == OP_READ || st->op == OP_RAND_READ
                     ? "every chunk: sum of the words read = closed form of the fill pattern"
                     : st->op == OP_COPY ? "every chunk: destination words poisoned, then "
                       "spot-checked against the source pattern"
                     : "every chunk: a new value; first/last words of the blocks written "
                       "spot-checked");
    } else if (st->family == FAM_STREAM) {
        char label[96];
        snprintf(label, sizeof label, "STREAM-variant %s, %s stores", kind_label[st->kind],
                 st->nt ? "non-temporal" : "plain");
        hb_json_kstr(j, "label", label);
        hb_json_kstr(j, "stores", st->nt ? "nt" : "plain");
        hb_json_key(j, "store_insn");
        hb_json_arr(j);
        hb_json_str(j, k->insn[st->nt]);
        hb_json_arr_end(j);
        hb_json_kint(j, "array_size", st->array_size);
        hb_json_kint(j, "array_bytes", st->array_size * 8);
        hb_json_kint(j, "bytes_per_element", kind_bytes[st->kind]);
        hb_json_knum(j, "scalar", st->q);
        hb_json_kstr(j, "verify", "every chunk: first element of the output poisoned and "
                     "checked; after every phase: all touched elements of a, b, c against "
                     "the closed form");
    } else {
        hb_json_kint(j, "line_bytes", st->c.line);
        hb_json_kstr(j, "chase", "one node per cache line, next pointers in one random cycle "
                     "(Sattolo) through every line of the working set; ns_per_load = "
                     "threads x seconds / loads");
        hb_json_kstr(j, "verify", "every cycle: back at the start after exactly `nodes` loads, "
                     "sum of the addresses visited = closed form");
    }
    /* per configuration, the cache its working set fits in at each thread count of the run */
    hb_json_key(j, "levels");
    hb_json_arr(j);
    for (int c = 0; c < s->nconfigs; c++) {
        hb_json_obj(j);
        if (s->configs[c].block_bytes >= 0)
            hb_json_kint(j, "block_bytes", s->configs[c].block_bytes);
        hb_json_key(j, "level");
        hb_json_arr(j);
        for (int t = 0; t < st->nthreads; t++) {
            long long per = per_thread_bytes(st, &s->configs[c], st->threads[t]);
            hb_json_str(j, hb_mem_level(per, st->threads[t], st->c.l1d, st->c.l2,
                                        st->c.l3_total));
        }
        hb_json_arr_end(j);
        hb_json_obj_end(j);
    }
    hb_json_arr_end(j);
}

/* Keys of every sample and result line: working_set_bytes, level, the stores a block op used,
 * and the time one thread spent per op (per load), over the wall clock and over its CPU time
 * (cpu_ns < 0: not known, as in samples). */
static void line_facts(const mem_state *st, const hb_config *c, int nthreads, uint64_t units,
                       double seconds, int64_t cpu_ns, hb_json *j)
{
    level_fields(st, c, nthreads, j);
    if (st->family == FAM_BLOCK && st->op != OP_READ && st->op != OP_RAND_READ)
        hb_json_kstr(j, "stores", block_nt(st, c->block_bytes, nthreads) ? "nt" : "plain");
    if (st->family == FAM_LATENCY)
        hb_json_kint(j, "nodes", c->block_bytes / st->c.line);
    if (units == 0 || seconds <= 0 || st->family == FAM_STREAM)
        return;
    int lat = st->family == FAM_LATENCY;
    hb_json_knum(j, lat ? "ns_per_load" : "ns_per_op", seconds * nthreads / (double)units * 1e9);
    /* the same over the threads' CPU time: on a shared host, the time the ops really took */
    if (cpu_ns >= 0)
        hb_json_knum(j, lat ? "ns_per_load_on_cpu" : "ns_per_op_on_cpu",
                     (double)cpu_ns / (double)units);
}

static void mem_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                             hb_json *j)
{
    uint64_t units = 0;
    int64_t cpu_ns = 0;
    for (int i = 0; i < nthreads; i++) {
        units += atomic_load_explicit(&w[i].units, memory_order_relaxed);
        cpu_ns += w[i].cpu_ns;
    }
    line_facts(s->state, w[0].config, nthreads, units, seconds, cpu_ns, j);
}

static void mem_sample_facts(const hb_setup *s, int config, int nthreads, uint64_t units,
                             double seconds, hb_json *j)
{
    line_facts(s->state, &s->configs[config], nthreads, units, seconds, -1, j);
}

/* ---- per-thread setup: map, first touch, build ---- */

static void fill_pattern(uint64_t *p, uint64_t n, uint64_t seed)
{
    for (uint64_t i = 0; i < n; i++)
        p[i] = i + seed;
}

/* next(k) = perm[k]: Sattolo's shuffle makes one cycle through all n nodes. */
static void build_cycle(uint32_t *perm, uint64_t n, uint64_t seed)
{
    uint64_t s = seed;
    for (uint64_t i = 0; i < n; i++)
        perm[i] = (uint32_t)i;
    for (uint64_t i = n - 1; i > 0; i--) {
        uint64_t j = pick(&s, i); /* j < i: never a fixed point */
        uint32_t t = perm[i];
        perm[i] = perm[j];
        perm[j] = t;
    }
}

/* Lays the cycle into the lines at base; returns the sum of all node addresses. */
static uint64_t link_cycle(char *base, const uint32_t *perm, uint64_t n, long long line)
{
    for (uint64_t k = 0; k < n; k++)
        *(void **)(void *)(base + k * (uint64_t)line) = base + (uint64_t)perm[k] * (uint64_t)line;
    return n * (uint64_t)(uintptr_t)base + (uint64_t)line * (n * (n - 1) / 2);
}

static hb_status map_fail(hb_err *err, size_t bytes)
{
    char b[32];
    fmt_bytes(b, sizeof b, (double)bytes);
    return hb_errorf(err, HB_INTERNAL, "cannot map %s: %s", b, strerror(errno));
}

static hb_status mem_thread_setup(hb_worker *w, hb_err *err)
{
    const mem_state *st = w->state;
    const hb_config *c = w->config;
    tstate *t = calloc(1, sizeof *t);
    if (!t)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    w->tstate = t;
    t->seed = splitmix64(st->seed0 + (uint64_t)w->tid);
    t->rng = splitmix64(t->seed);
    t->k = kernels_of(st->isa);

    if (st->family == FAM_BLOCK) {
        uint64_t region = region_bytes(st, c->block_bytes, w->nthreads);
        size_t gap = st->op == OP_COPY ? align_up(region, HUGE_PAGE) + stagger(1) : 0;
        char *m = map_memory(&t->map, gap + region, st->hugepages);
        if (!m)
            return map_fail(err, gap + region);
        t->bw = (uint64_t)c->block_bytes / 8;
        t->nt = block_nt(st, c->block_bytes, w->nthreads);
        t->nblocks = region / (uint64_t)c->block_bytes;
        t->ops_per_chunk = (uint64_t)c->block_bytes >= BLOCK_CHUNK_BYTES
                               ? 1 : BLOCK_CHUNK_BYTES / (uint64_t)c->block_bytes;
        if (t->bw % (uint64_t)t->k->vw)
            t->k = kernels_of(HB_MEM_SCALAR);
        uint64_t words = region / 8;
        if (st->op == OP_WRITE || st->op == OP_RAND_WRITE) {
            t->dst = (uint64_t *)(void *)m;
            memset(t->dst, 0, region);
        } else {
            t->src = (uint64_t *)(void *)m;
            fill_pattern(t->src, words, t->seed);
            if (st->op == OP_COPY) {
                t->dst = (uint64_t *)(void *)(m + gap);
                memset(t->dst, 0, region);
            }
        }
    } else if (st->family == FAM_STREAM) {
        t->n = stream_slice(st, w->tid, w->nthreads);
        size_t arr = align_up(t->n * 8, HUGE_PAGE);
        char *m = map_memory(&t->map, 3 * arr + stagger(2) + 64, st->hugepages);
        if (!m)
            return map_fail(err, 3 * arr);
        t->a = (double *)(void *)m;
        t->b = (double *)(void *)(m + arr + stagger(1));
        t->c = (double *)(void *)(m + 2 * arr + stagger(2));
        for (size_t i = 0; i < t->n; i++) {
            t->a[i] = A0;
            t->b[i] = B0;
            t->c[i] = C0;
        }
    } else {
        uint64_t n = (uint64_t)c->block_bytes / (uint64_t)st->c.line;
        uint32_t *perm = malloc(n * sizeof *perm);
        char *m = map_memory(&t->map, (size_t)c->block_bytes, st->hugepages);
        if (!perm || !m) {
            free(perm);
            return map_fail(err, (size_t)c->block_bytes);
        }
        build_cycle(perm, n, t->seed);
        t->cycle_sum = link_cycle(m, perm, n, st->c.line);
        free(perm);
        t->nodes = t->left = n;
        t->start = t->p = m;
    }
    return HB_OK;
}

static void mem_thread_teardown(hb_worker *w)
{
    tstate *t = w->tstate;
    if (!t)
        return;
    unmap_memory(&t->map);
    free(t);
    w->tstate = NULL;
}

/* ---- the work ---- */

static uint64_t block_chunk(hb_worker *w, const mem_state *st, tstate *t)
{
    const kernels *k = t->k;
    int corrupt = st->corrupt && t->chunk_no == 1;
    uint64_t bw = t->bw, n;
    if (st->op == OP_RAND_READ) {
        n = t->ops_per_chunk;
        if (corrupt) { /* the first block this chunk will read */
            uint64_t s = t->rng;
            t->src[pick(&s, t->nblocks) * bw] ^= 1;
        }
        uint64_t isum = 0, got = k->rand_read(t->src, t->nblocks, bw, n, &t->rng, &isum);
        uint64_t want = rand_sum(t->seed, bw, n, isum);
        if (got != want)
            hb_fail(w, "rand_read: sum of %llu random blocks is %#llx, the fill pattern gives "
                    "%#llx", (unsigned long long)n, (unsigned long long)got,
                    (unsigned long long)want);
        return n;
    }
    if (st->op == OP_RAND_WRITE) {
        uint64_t v = splitmix64(t->seed + ++t->values), ends[2];
        n = t->ops_per_chunk;
        k->rand_write[t->nt](t->dst, t->nblocks, bw, n, &t->rng, v, ends);
        if (t->nt)
            nt_fence();
        if (corrupt)
            t->dst[ends[1] * bw + bw - 1] ^= 1;
        for (int e = 0; e < 2; e++)
            if (t->dst[ends[e] * bw] != v || t->dst[ends[e] * bw + bw - 1] != v)
                hb_fail(w, "rand_write: block %llu does not hold the value just written",
                        (unsigned long long)ends[e]);
        return n;
    }
    n = t->nblocks - t->pos < t->ops_per_chunk ? t->nblocks - t->pos : t->ops_per_chunk;
    uint64_t w0 = t->pos * bw, nw = n * bw, last = w0 + nw - 1, mid = w0 + nw / 2;
    if (st->op == OP_READ) {
        if (corrupt)
            t->src[mid] ^= 1;
        uint64_t got = k->sum(t->src + w0, nw), want = hb_mem_pattern_sum(t->seed, w0, nw);
        if (got != want)
            hb_fail(w, "read: sum of words %llu..%llu is %#llx, the fill pattern gives %#llx",
                    (unsigned long long)w0, (unsigned long long)last, (unsigned long long)got,
                    (unsigned long long)want);
    } else if (st->op == OP_WRITE) {
        uint64_t v = splitmix64(t->seed + ++t->values);
        k->fill[t->nt](t->dst + w0, nw, v);
        if (t->nt)
            nt_fence();
        if (corrupt)
            t->dst[mid] ^= 1;
        if (t->dst[w0] != v || t->dst[mid] != v || t->dst[last] != v)
            hb_fail(w, "write: words %llu..%llu do not all hold the value just written",
                    (unsigned long long)w0, (unsigned long long)last);
    } else { /* copy: poison the spots, copy, then each must hold its source word */
        t->dst[w0] = ~(w0 + t->seed);
        t->dst[last] = ~(last + t->seed);
        k->copy[t->nt](t->dst + w0, t->src + w0, nw);
        if (t->nt)
            nt_fence();
        if (corrupt)
            t->dst[mid] ^= 1;
        if (t->dst[w0] != w0 + t->seed || t->dst[mid] != mid + t->seed ||
            t->dst[last] != last + t->seed)
            hb_fail(w, "copy: words %llu..%llu of the destination differ from the source",
                    (unsigned long long)w0, (unsigned long long)last);
    }
    t->pos += n;
    if (t->pos == t->nblocks)
        t->pos = 0;
    return n;
}

static uint64_t stream_chunk(hb_worker *w, const mem_state *st, tstate *t)
{
    size_t i0 = t->spos, n = t->n - i0 < PIECE ? t->n - i0 : PIECE;
    size_t nv = n / (size_t)t->k->vw * (size_t)t->k->vw; /* the vector part; a tail in words */
    double *x;
    const double *y, *z = NULL;
    switch (st->kind) { /* STREAM's roles: c = a; b = q*c; c = a + b; a = b + q*c */
    case K_COPY: x = t->c, y = t->a; break;
    case K_SCALE: x = t->b, y = t->c; break;
    case K_ADD: x = t->c, y = t->a, z = t->b; break;
    default: x = t->a, y = t->b, z = t->c; break;
    }
    double want = kind_result[st->kind];
    x[i0] = -want;
    t->k->stream[st->kind][st->nt](x + i0, y + i0, z ? z + i0 : NULL, st->q, nv);
    if (nv < n)
        kernels_of(HB_MEM_SCALAR)->stream[st->kind][st->nt](x + i0 + nv, y + i0 + nv,
                                                           z ? z + i0 + nv : NULL, st->q,
                                                           n - nv);
    if (st->nt)
        nt_fence();
    if (st->corrupt && t->chunk_no == 1)
        x[i0 + n - 1] = -want;
    if (x[i0] != want || x[i0 + n - 1] != want)
        hb_fail(w, "%s: elements %zu..%zu of the output are not %g", op_names[st->op], i0,
                i0 + n - 1, want);
    t->spos += n;
    if (t->spos > t->swept)
        t->swept = t->spos;
    if (t->spos == t->n)
        t->spos = 0;
    return n;
}

/* n dependent loads from p; adds every address loaded to *sum. Not inlined: objdump shows it. */
__attribute__((noinline)) static const void *chase(const void *p, uint64_t n, uint64_t *sum)
{
    uint64_t s = *sum;
    for (; n >= 8; n -= 8) {
#define STEP p = *(const void *const *)p, s += (uint64_t)(uintptr_t)p;
        STEP STEP STEP STEP STEP STEP STEP STEP
    }
    for (; n > 0; n--) {
        STEP
#undef STEP
    }
    *sum = s;
    return p;
}

static uint64_t latency_chunk(hb_worker *w, const mem_state *st, tstate *t)
{
    if (st->corrupt && t->chunk_no == 1) /* skip a node: the cycle cannot close */
        t->p = *(const void *const *)t->p;
    if (t->nodes <= CHASE_CHUNK) { /* whole cycles */
        uint64_t m = CHASE_CHUNK / t->nodes, s = 0;
        t->p = chase(t->p, m * t->nodes, &s);
        if (t->p != t->start || s != m * t->cycle_sum)
            hb_fail(w, "latency: %llu cycles of %llu loads did not end where they began",
                    (unsigned long long)m, (unsigned long long)t->nodes);
        t->p = t->start;
        return m * t->nodes;
    }
    uint64_t n = t->left < CHASE_CHUNK ? t->left : CHASE_CHUNK;
    t->p = chase(t->p, n, &t->sum);
    t->left -= n;
    if (t->left == 0) {
        if (t->p != t->start || t->sum != t->cycle_sum)
            hb_fail(w, "latency: the cycle of %llu loads did not end where it began, or missed "
                    "nodes", (unsigned long long)t->nodes);
        t->p = t->start;
        t->sum = 0;
        t->left = t->nodes;
    }
    return n;
}

static void mem_work(hb_worker *w)
{
    const mem_state *st = w->state;
    tstate *t = w->tstate;
    uint64_t units = 0;
    while (!hb_should_stop(w)) {
        if (st->family == FAM_BLOCK)
            units += block_chunk(w, st, t);
        else if (st->family == FAM_STREAM)
            units += stream_chunk(w, st, t);
        else
            units += latency_chunk(w, st, t);
        t->chunk_no++;
        hb_publish(w, units);
    }
}

/* STREAM's check after the timed part: every element of the three arrays. The output holds the
 * kernel's value where the first sweep has been, its initial value beyond (a short phase on a
 * busy host may end before the first sweep does). */
static const char *mem_verify(hb_worker *w)
{
    const mem_state *st = w->state;
    tstate *t = w->tstate;
    if (st->family != FAM_STREAM || !t)
        return NULL;
    const double *arr[3] = {t->a, t->b, t->c};
    const double init[3] = {A0, B0, C0};
    int out = st->kind == K_COPY || st->kind == K_ADD ? 2 : st->kind == K_SCALE ? 1 : 0;
    for (int a = 0; a < 3; a++) {
        size_t bad = 0, first = 0, swept = a == out ? t->swept : 0;
        for (size_t i = 0; i < t->n; i++)
            if (arr[a][i] != (i < swept ? kind_result[st->kind] : init[a]) && !bad++)
                first = i;
        if (bad) {
            snprintf(t->why, sizeof t->why, "%s: %zu elements of array %c differ from STREAM's "
                     "closed form (first at %zu: %g, want %g)", op_names[st->op], bad, "abc"[a],
                     first, arr[a][first], first < swept ? kind_result[st->kind] : init[a]);
            return t->why;
        }
    }
    return NULL;
}

static void mem_teardown(hb_setup *s)
{
    free(s->state);
    s->state = NULL;
}

const hb_kernel hb_kernel_memory = {
    .name = "memory",
    .title = "Memory bandwidth and latency",
    .description =
        "Block ops copy (read+write), read, write, rand_read, rand_write: one operation per "
        "block (8 B .. 1 GiB), each thread on its own buffer of at least 4x L3 over all "
        "threads, so the bytes come from DRAM; MB/s (10^6 bytes/s) and ns_per_op. "
        "STREAM-variant Copy/Scale/Add/Triad with STREAM's byte counting, plain or "
        "non-temporal stores, arrays of at least 4x L3 each (smaller is refused unless "
        "allow_cache). latency: ns per dependent load through a random cycle of cache lines, "
        "4 KiB to 1 GiB, each size labelled L1/L2/L3/DRAM. Memory is first touched by the "
        "pinned thread that uses it; every chunk is verified.",
    .unit = "MB/s",
    .unit_scale = 1e-6,
    .params = mem_params,
    .supported = mem_supported,
    .setup = mem_setup,
    .facts = mem_facts,
    .thread_setup = mem_thread_setup,
    .work = mem_work,
    .verify = mem_verify,
    .thread_teardown = mem_thread_teardown,
    .teardown = mem_teardown,
    .result_facts = mem_result_facts,
    .sample_facts = mem_sample_facts,
};

/* ---- for tests/test_memory.c ---- */

int hb_mem_check_kernels(int isa, char *why, size_t len)
{
    enum { N = 4096 };
    const kernels *k = kernels_of(isa);
    if (!k || lacks(isa))
        return -1;
    static _Alignas(64) uint64_t s[N], d[N];
    static _Alignas(64) double x[N], y[N], z[N];
    uint64_t seed = 12345;
    fill_pattern(s, N, seed);
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
        if (got != want || isum != isum2 || rng != ref || want != rand_sum(seed, bw, 1000, isum))
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
                    return snprintf(why, len, "stream %s nt=%d, element %zu", kind_label[kind],
                                    nt, i), 0;
            }
        }
    return 1;
}

int hb_mem_check_cycle(uint64_t nodes, int line_bytes, uint64_t seed)
{
    uint32_t *perm = malloc(nodes * sizeof *perm);
    char *base = aligned_alloc(64, nodes * (size_t)line_bytes);
    unsigned char *seen = calloc(nodes, 1);
    int ok = perm && base && seen;
    if (ok) {
        build_cycle(perm, nodes, seed);
        uint64_t want = link_cycle(base, perm, nodes, line_bytes), sum = 0;
        const void *p = base;
        for (uint64_t i = 0; i < nodes && ok; i++) { /* every node once, back at the start */
            uint64_t k = (uint64_t)((const char *)p - base) / (uint64_t)line_bytes;
            ok = !seen[k];
            seen[k] = 1;
            p = *(const void *const *)p;
        }
        ok = ok && p == base;
        p = chase(base, nodes, &sum); /* the kernel's own check agrees */
        ok = ok && p == base && sum == want;
        sum = 0;
        p = chase(base, nodes - 1, &sum);
        ok = ok && (nodes == 1 || p != base);
    }
    free(perm);
    free(base);
    free(seen);
    return ok;
}
