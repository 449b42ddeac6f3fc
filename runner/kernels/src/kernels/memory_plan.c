/* The memory kernel's plan of a configuration, shared by the kernel (memory.c) and its per-thread
 * side (memory_work.c): the op names, how many bytes one thread's region spans, whether a block op
 * stores non-temporally, one thread's STREAM slice, and the byte counts in messages. */
#include "memory_plan.h"

#include <stdio.h>

#include "memory_loops.h"

const char *const mem_op_names[] = {
    "copy", "read", "write", "rand_read", "rand_write",
    "stream_copy", "stream_scale", "stream_add", "stream_triad",
    "stream_copy_nt", "stream_scale_nt", "stream_add_nt", "stream_triad_nt",
    "latency", NULL};

void mem_fmt_bytes(char *buf, size_t len, double bytes)
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

/* Bytes one thread's block-op buffer spans: the DRAM working set split over the threads (or
 * buffer_bytes), at least one block, a whole number of blocks. */
uint64_t mem_region_bytes(const mem_state *st, long long block, int threads)
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
int mem_block_nt(const mem_state *st, long long block, int threads)
{
    if (st->op == OP_READ || st->op == OP_RAND_READ)
        return 0;
#if HB_ARM /* only SVE has a non-temporal store, and only blocks of whole SVE vectors use it */
    if (st->isa != HB_MEM_SVE || block % (8LL * mem_kernels_of(HB_MEM_SVE)->vw))
        return 0;
#elif !HB_X86
    return 0; /* no non-temporal store in this build */
#endif
    if (st->stores != STORES_AUTO)
        return st->stores == STORES_NT;
    long long ws = (long long)mem_region_bytes(st, block, threads) * threads;
    return ws > st->c.l3_total && (st->op != OP_RAND_WRITE || block >= st->c.line);
}

size_t mem_stream_slice(const mem_state *st, int tid, int threads)
{
    size_t n = (size_t)st->array_size;
    return n / (size_t)threads + ((size_t)tid < n % (size_t)threads);
}
