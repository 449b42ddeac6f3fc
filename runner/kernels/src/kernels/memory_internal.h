/* The memory kernel's types and constants, shared by its files and by no other kernel. Each part
 * declares its functions in its own header, and the parts use each other one way only:
 * memory.c (the kernel: parameters, checks, facts) -> memory_work.c (per-thread buffers, the
 * chunks, checks) -> memory_plan.c (the plan of a configuration) -> memory_loops.c (the loops per
 * ISA, their table and closed forms). tests/check_layers.py keeps it so. */
#ifndef HB_KERNEL_MEMORY_INTERNAL_H
#define HB_KERNEL_MEMORY_INTERNAL_H

#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "../harness.h"
#include "../host.h"
#include "../hostfacts.h"
#include "../isa.h"
#include "memory.h"

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
enum { STORES_AUTO, STORES_PLAIN, STORES_NT };


/* Initial values of STREAM's arrays a, b, c, and what each kernel leaves in its output with
 * q = 3: copy c = a, scale b = q*c, add c = a + b, triad a = b + q*c. Every output differs from
 * its initial value, so a piece that was never written shows. */
#define A0 1.0
#define B0 2.0
#define C0 4.0

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

static inline void nt_fence(void)
{
#if HB_X86
    _mm_sfence();
#else
    atomic_thread_fence(memory_order_seq_cst);
#endif
}

static inline size_t align_up(size_t x, size_t a)
{
    return (x + a - 1) / a * a;
}

/* ---- the loops' table (filled by memory_loops.c) ---- */

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


/* ---- the kernel's state ---- */

typedef struct mem_state {
    int op, family, kind, isa;
    int nt;     /* STREAM-variant ops: the _nt ones */
    int stores; /* block ops: STORES_AUTO, _PLAIN or _NT */
    int hugepages, allow_cache;
    long long buffer_bytes, array_size;
    int max_threads, nthreads, threads[HB_LIST_MAX]; /* the thread counts of the run */
    hb_caches c;
    double q;       /* STREAM's scalar, 3.0, read at run time */
    uint64_t seed0; /* from the clock: the fill pattern differs from run to run */
    char thp[64];   /* /sys/kernel/mm/transparent_hugepage/enabled */
    int corrupt;    /* test builds only: each thread corrupts its second chunk */
    long long avail; /* MemAvailable at setup (bytes), or -1: what a row may use (mem_refuse) */
} mem_state;



#endif
