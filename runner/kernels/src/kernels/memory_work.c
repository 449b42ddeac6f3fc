/* memory: the per-thread side. Each pinned thread maps and first-touches its own buffer (block
 * ops), slices of STREAM's arrays, or the lines of its pointer-chase cycle; then runs chunks of
 * the chosen loops, checking each chunk against its closed form, and STREAM's arrays after the
 * phase. Also the cycle check for tests/test_memory.c. */
#include "memory_work.h"

#include "memory_loops.h"
#include "memory_plan.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>

/* What each STREAM kernel leaves in its output (memory_internal.h: A0, B0, C0). */
static const double kind_result[] = {A0, 3.0 * C0, A0 + B0, B0 + 3.0 * C0};

/* ---- memory: anonymous mappings, 2 MiB aligned, transparent huge pages on request ---- */

typedef struct mapping {
    void *base;
    size_t len;
} mapping;

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

/* Array stagger: STREAM's arrays sit at different offsets modulo 4 KiB, so that a load and an
 * older store to another array never look alike in their low 12 address bits. */
static size_t stagger(int array)
{
    return (size_t)array * 1088; /* 17 lines */
}

/* ---- per-thread setup: map, first touch, build ---- */

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
    mem_fmt_bytes(b, sizeof b, (double)bytes);
    return hb_errorf(err, HB_INTERNAL, "cannot map %s: %s", b, strerror(errno));
}

hb_status mem_thread_setup(hb_worker *w, hb_err *err)
{
    const mem_state *st = w->state;
    const hb_config *c = w->config;
    tstate *t = calloc(1, sizeof *t);
    if (!t)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    w->tstate = t;
    t->seed = splitmix64(st->seed0 + (uint64_t)w->tid);
    t->rng = splitmix64(t->seed);
    t->k = mem_kernels_of(st->isa);

    if (st->family == FAM_BLOCK) {
        uint64_t region = mem_region_bytes(st, c->block_bytes, w->nthreads);
        size_t gap = st->op == OP_COPY ? align_up(region, HUGE_PAGE) + stagger(1) : 0;
        char *m = map_memory(&t->map, gap + region, st->hugepages);
        if (!m)
            return map_fail(err, gap + region);
        t->bw = (uint64_t)c->block_bytes / 8;
        t->nt = mem_block_nt(st, c->block_bytes, w->nthreads);
        t->nblocks = region / (uint64_t)c->block_bytes;
        t->ops_per_chunk = (uint64_t)c->block_bytes >= BLOCK_CHUNK_BYTES
                               ? 1 : BLOCK_CHUNK_BYTES / (uint64_t)c->block_bytes;
        if (t->bw % (uint64_t)t->k->vw)
            t->k = mem_kernels_of(HB_MEM_SCALAR);
        uint64_t words = region / 8;
        if (st->op == OP_WRITE || st->op == OP_RAND_WRITE) {
            t->dst = (uint64_t *)(void *)m;
            memset(t->dst, 0, region);
        } else {
            t->src = (uint64_t *)(void *)m;
            mem_fill_pattern(t->src, words, t->seed);
            if (st->op == OP_COPY) {
                t->dst = (uint64_t *)(void *)(m + gap);
                memset(t->dst, 0, region);
            }
        }
    } else if (st->family == FAM_STREAM) {
        t->n = mem_stream_slice(st, w->tid, w->nthreads);
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

void mem_thread_teardown(hb_worker *w)
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
        uint64_t want = mem_rand_sum(t->seed, bw, n, isum);
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
        mem_kernels_of(HB_MEM_SCALAR)->stream[st->kind][st->nt](x + i0 + nv, y + i0 + nv,
                                                               z ? z + i0 + nv : NULL, st->q,
                                                               n - nv);
    if (st->nt)
        nt_fence();
    if (st->corrupt && t->chunk_no == 1)
        x[i0 + n - 1] = -want;
    if (x[i0] != want || x[i0 + n - 1] != want)
        hb_fail(w, "%s: elements %zu..%zu of the output are not %g", mem_op_names[st->op],
                i0, i0 + n - 1, want);
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

void mem_work(hb_worker *w)
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
const char *mem_verify(hb_worker *w)
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
                     "closed form (first at %zu: %g, want %g)", mem_op_names[st->op], bad,
                     "abc"[a], first, arr[a][first],
                     first < swept ? kind_result[st->kind] : init[a]);
            return t->why;
        }
    }
    return NULL;
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
