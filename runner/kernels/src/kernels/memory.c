/* memory: bandwidth and latency of the memory hierarchy. Block ops (copy, read, write,
 * rand_read, rand_write) do one operation per block on a per-thread buffer sized past the
 * caches; the STREAM-variant ops sweep per-thread slices of STREAM's three arrays with its four
 * kernels and byte counts, with plain or non-temporal stores; latency chases a random cyclic
 * permutation of cache lines. Read sums must equal the fill pattern's closed form, writes and
 * copies are spot-checked, STREAM arrays checked against their closed form, and every chase
 * must close its cycle. Memory is mapped and first touched by the pinned thread using it.
 *
 * This file: the parameters, the plan of each configuration (working sets, stores, levels) and
 * the facts; the loops are memory_loops.c, the per-thread side memory_work.c, the cache sizes
 * hostfacts.c. */
#include "memory_loops.h"
#include "memory_plan.h"
#include "memory_work.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *const store_names[] = {"auto", "plain", "nt", NULL};

/* STREAM's bytes per element (one read per input array, one write per output). */
static const int kind_bytes[] = {16, 16, 24, 24};
static const int kind_arrays[] = {2, 2, 3, 3};

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

static int family_of(int op)
{
    return op <= OP_RAND_WRITE ? FAM_BLOCK : op == OP_LATENCY ? FAM_LATENCY : FAM_STREAM;
}

/* Bytes one thread touches in configuration c with `threads` threads. */
static long long per_thread_bytes(const mem_state *st, const hb_config *c, int threads)
{
    switch (st->family) {
    case FAM_BLOCK:
        return (long long)mem_region_bytes(st, c->block_bytes, threads) *
               (st->op == OP_COPY ? 2 : 1);
    case FAM_STREAM:
        return (long long)mem_stream_slice(st, 0, threads) * 8 * kind_arrays[st->kind];
    default:
        return c->block_bytes;
    }
}

/* ---- parameters ---- */

/* Which ops each of the sizing parameters means anything to (hb_applies: given with another op,
 * it is refused); the runner and the API read the same lists from --describe's "x-applies". */
static const char *const block_ops[] = {"copy", "read", "write", "rand_read", "rand_write", NULL};
static const char *const stream_ops[] = {"stream_copy", "stream_scale", "stream_add", "stream_triad",
                                         "stream_copy_nt", "stream_scale_nt", "stream_add_nt",
                                         "stream_triad_nt", NULL};
static const char *const cached_ops[] = {"copy", "read", "write", "rand_read", "rand_write",
                                         "stream_copy", "stream_scale", "stream_add", "stream_triad",
                                         "stream_copy_nt", "stream_scale_nt", "stream_add_nt",
                                         "stream_triad_nt", NULL};
static const char *const latency_ops[] = {"latency", NULL};
/* stores: the block ops that write (the stream_*_nt ops are the non-temporal STREAM variants) */
static const char *const write_ops[] = {"copy", "write", "rand_write", NULL};
static const hb_applies to_block_ops = {"op", block_ops};
static const hb_applies to_stream_ops = {"op", stream_ops};
static const hb_applies to_cached_ops = {"op", cached_ops};
static const hb_applies to_latency = {"op", latency_ops};
static const hb_applies to_write_ops = {"op", write_ops};

static const hb_param_def mem_params[] = {
    {"op", HB_P_ENUM, "copy", 0, 0, mem_op_names,
     "copy (read+write), read, write, rand_read, rand_write: one operation per block "
     "(--blocks) over a buffer past the caches. stream_copy/_scale/_add/_triad: STREAM-variant "
     "kernels with STREAM's byte counting (16/16/24/24 bytes per element), plain stores; the "
     "_nt ones use non-temporal stores. latency: dependent loads, a random cycle through "
     "--sizes working sets. Rates in MB/s = 10^6 bytes/s (latency: Mload/s, plus ns_per_load).", NULL, NULL},
    {"blocks", HB_P_INT_LIST, "8,8192,8388608,83886080", 8, 1073741824, NULL,
     "Block sizes in bytes for copy/read/write/rand_read/rand_write, multiples of 8. One "
     "operation moves one block (blocks of whole vectors in vector registers, others in 8-byte "
     "words); each thread walks its own buffer of max(block, buffer_bytes / threads) bytes, "
     "sequentially or at random block indexes. Each op also reports ns_per_op.", "B", &to_block_ops},
    {"buffer_bytes", HB_P_INT, "0", 0, 8589934592.0, NULL,
     "Block ops: bytes of buffer over all threads (copy: of the source; the destination is as "
     "large). 0: 4x the L3 of the CPUs in use, so the data comes from DRAM. Smaller than that "
     "is refused unless allow_cache.", "B", &to_block_ops},
    {"stores", HB_P_ENUM, "auto", 0, 0, store_names,
     "copy, write, rand_write: plain stores (each line is read into the cache before it is "
     "written; that read is not counted), nt (non-temporal: written straight to memory, no "
     "read), or auto: nt when the working set is larger than the L3 and the writes cover whole "
     "lines (sequential ops, or random blocks of at least a line), as glibc's memcpy does for "
     "large copies; plain otherwise. Results say which was used.", NULL, &to_write_ops},
    {"array_size", HB_P_INT, "0", 0, 536870912, NULL, /* 4 GiB per array: 4 x an L3 of up to 1 GiB */
     "STREAM-variant ops: elements (8-byte doubles) per array, over all threads, as STREAM's "
     "STREAM_ARRAY_SIZE; each thread sweeps its own contiguous slice. 0: 4x the L3 of the CPUs "
     "in use per array (STREAM's rule). Smaller than that is refused unless allow_cache.", NULL, &to_stream_ops},
    {"sizes", HB_P_INT_LIST,
     "4096,16384,65536,262144,1048576,2097152,4194304,16777216,33554432,67108864,268435456,"
     "1073741824",
     4096, 1073741824, NULL,
     "latency: working sets in bytes per thread, multiples of the cache line; one node per "
     "line in one random cycle. Each is labelled with the cache it fits in (level L1, L2, L3, "
     "DRAM).", "B", &to_latency},
    {"allow_cache", HB_P_BOOL, "false", 0, 1, NULL,
     "Block and STREAM-variant ops: run even when the working set is smaller than 4x L3, to "
     "measure a cache on purpose; results carry the level they fit in.", NULL, &to_cached_ops},
    {"hugepages", HB_P_BOOL, "true", 0, 1, NULL,
     "Ask for transparent huge pages (madvise MADV_HUGEPAGE) so that TLB misses do not add "
     "to the memory time; false asks for 4 KiB pages.", NULL, NULL},
    {"isa", HB_P_ENUM, "auto", 0, 0, mem_isa_choices,
     "Vector instructions of the loops. auto takes the widest this CPU supports; naming one "
     "it lacks ends with error code unsupported.", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

/* What line_facts adds to each result line (the sample lines carry the same, less the _on_cpu
 * figures). A block op's time per op is its rate (MB/s) turned over, not the latency of an access:
 * only the latency op's time per load is lower_is_better. */
static const hb_result mem_results[] = {
    {"working_set_bytes", HB_R_INT, "B", 0, "Bytes the configuration touches, all threads.", NULL,
     .range = HB_NONNEG},
    {"level", HB_R_TEXT, NULL, 0, "The cache the working set fits in: L1, L2, L3 or DRAM.", NULL,
     .range = HB_ANY},
    {"stores", HB_R_TEXT, NULL, 0, "Block ops that write: the stores used, nt or plain.", NULL,
     .range = HB_ANY},
    {"nodes", HB_R_INT, "", 0, "latency: cache lines in the cycle, per thread.", NULL,
     .range = HB_NONNEG},
    {"ns_per_op", HB_R_NUMBER, "ns", 0,
     "Block ops: one thread's mean time per op (threads x seconds / ops).", NULL,
     .range = HB_NONNEG},
    {"ns_per_op_on_cpu", HB_R_NUMBER, "ns", 0,
     "Block ops: the workers' CPU time / ops, without the time other processes held the CPUs.",
     NULL, .range = HB_NONNEG},
    {"ns_per_load", HB_R_NUMBER, "ns", 1,
     "latency: one thread's mean time per dependent load (threads x seconds / loads).", NULL,
     .range = HB_NONNEG},
    {"ns_per_load_on_cpu", HB_R_NUMBER, "ns", 1,
     "latency: the workers' CPU time / loads, without the time other processes held the CPUs.",
     NULL, .range = HB_NONNEG},
    {NULL},
};

static int chosen_isa(const hb_params *p)
{
    int isa = hb_param_choice(p, "isa") - 1; /* choice 0 is auto */
    if (isa >= 0)
        return isa;
    for (isa = 0; isa < HB_MEM_ISAS; isa++)
        if (!mem_lacks(isa))
            return isa;
    return HB_MEM_SCALAR;
}

static const char *mem_supported(const hb_params *p)
{
    static char why[256];
    int isa = chosen_isa(p);
    const char *no = mem_lacks(isa);
    if (no) {
        size_t len = (size_t)snprintf(why, sizeof why, "isa %s is not available: %s; use --isa "
                                      "auto, or one of:", ISA_NAME(isa), no);
        for (int i = 0; i < HB_MEM_ISAS && len < sizeof why; i++)
            if (!mem_lacks(i))
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

static hb_status too_small(hb_err *err, const mem_state *st, const char *what, double bytes,
                           const char *fix)
{
    char ws[32], l3[32], four[32];
    mem_fmt_bytes(ws, sizeof ws, bytes);
    mem_fmt_bytes(l3, sizeof l3, (double)st->c.l3_total);
    mem_fmt_bytes(four, sizeof four, (double)(DRAM_FACTOR * st->c.l3_total));
    return hb_errorf(err, HB_BAD_PARAM, "%s: working set %s is smaller than 4x L3 (4 x %s = %s); "
                     "this would measure cache, not DRAM. %s, or --allow_cache true to measure "
                     "the cache on purpose", what, ws, l3, four, fix);
}

static hb_status check_params(const hb_params *p, mem_state *st, hb_err *err)
{
    int block = st->family == FAM_BLOCK, stream = st->family == FAM_STREAM;
    /* a parameter given for an op it does not apply to was refused when parsing (hb_applies) */
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
        snprintf(what, sizeof what, "%s, one array of %lld elements",
                 mem_op_names[st->op], st->array_size);
        return too_small(err, st, what, (double)st->array_size * 8, fix);
    }
    if (block && st->buffer_bytes)
        for (int i = 0; i < blocks->n; i++)
            for (int t = 0; t < hb_param(p, "threads")->n; t++) {
                int threads = (int)hb_param(p, "threads")->i[t];
                long long ws = (long long)mem_region_bytes(st, blocks->i[i], threads) * threads;
                if (ws < dram) {
                    char what[96];
                    snprintf(what, sizeof what, "%s, block %lld at %d thread%s (the %s buffer)",
                             mem_op_names[st->op], blocks->i[i], threads, threads == 1 ? "" : "s",
                             st->op == OP_COPY ? "source" : "whole");
                    return too_small(err, st, what, (double)ws,
                                     "Use --buffer_bytes 0 (auto) or more");
                }
            }
    return HB_OK;
}

/* Bytes a row (configuration c at `threads` threads) maps: every thread's working set, all three
 * STREAM arrays, and for latency the permutation that exists while the cycle is built. */
static long long row_need(const mem_state *st, const hb_config *c, int threads)
{
    long long need = per_thread_bytes(st, c, threads) * threads;
    if (st->family == FAM_STREAM) /* all three arrays are mapped */
        need = need / kind_arrays[st->kind] * 3;
    if (st->family == FAM_LATENCY) /* the permutation, while the cycle is built */
        need += need / st->c.line * 4;
    return need;
}

/* A row that does not fit in 90 % of MemAvailable is refused alone, with the numbers; the others
 * run. For latency the reason names the largest working set per thread that fits at that thread
 * count (a power of two, as the default sizes are): the DRAM point scales with the host. */
static const char *mem_refuse(const hb_setup *s, int config, int nthreads, char *buf, size_t size)
{
    const mem_state *st = s->state;
    long long budget = st->avail / 10 * 9, need = row_need(st, &s->configs[config], nthreads);
    if (st->avail < 0 || need <= budget)
        return NULL;
    char n[32], have[32], per[32], fits[32];
    mem_fmt_bytes(n, sizeof n, (double)need);
    mem_fmt_bytes(have, sizeof have, (double)st->avail);
    if (st->family == FAM_LATENCY) {
        long long f = st->c.line;
        while (f * 2 <= 1073741824LL && (f * 2 + f * 2 / st->c.line * 4) * nthreads <= budget)
            f *= 2;
        mem_fmt_bytes(per, sizeof per, (double)s->configs[config].block_bytes);
        mem_fmt_bytes(fits, sizeof fits, (double)f);
        snprintf(buf, size, "latency, %s per thread at %d thread%s: needs %s (the cycles and, "
                 "while they are built, their permutations), more than 90 %% of the %s this host "
                 "has available (MemAvailable); at %d thread%s up to %s per thread fits",
                 per, nthreads, nthreads == 1 ? "" : "s", n, have, nthreads,
                 nthreads == 1 ? "" : "s", fits);
    } else {
        snprintf(buf, size, "%s%s at %d thread%s: needs %s, more than 90 %% of the %s this host has "
                 "available (MemAvailable); use fewer threads or smaller blocks",
                 mem_op_names[st->op], st->family == FAM_BLOCK ? " block" : "", nthreads,
                 nthreads == 1 ? "" : "s", n, have);
    }
    return buf;
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
    hb_detect_caches(&st->c, cpus, ncpus);
    st->array_size = hb_param_int(p, "array_size");
    if (!st->array_size) /* STREAM's rule, rounded up to whole pieces */
        st->array_size = (long long)align_up((size_t)(DRAM_FACTOR * st->c.l3_total / 8), PIECE);
    hb_thp_mode(st->thp, sizeof st->thp);
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
        snprintf(c->op, sizeof c->op, "%s", mem_op_names[st->op]);
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
    st->avail = hb_mem_available();
#ifdef HBK_TEST_HOOKS
    const char *fake = getenv("HBK_TEST_MEM_AVAILABLE"); /* tests: pretend this much is free */
    if (fake && atoll(fake) > 0)
        st->avail = atoll(fake);
#endif
    return HB_OK; /* rows that do not fit: mem_refuse */
}


static void level_fields(const mem_state *st, const hb_config *c, int threads, hb_json *j)
{
    long long per = per_thread_bytes(st, c, threads);
    hb_json_kint(j, "working_set_bytes", per * threads);
    hb_json_kstr(j, "level", hb_mem_level(per, threads, st->c.l1d, st->c.l2, st->c.l3_total));
}

static void mem_facts(const hb_setup *s, hb_json *j)
{
    const mem_state *st = s->state;
    const kernels *k = mem_kernels_of(st->isa);
    hb_json_kstr(j, "isa", ISA_NAME(st->isa));
    hb_json_key(j, "isa_available");
    hb_json_arr(j);
    for (int i = 0; i < HB_MEM_ISAS; i++)
        if (!mem_lacks(i))
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
        snprintf(label, sizeof label, "STREAM-variant %s, %s stores",
                 mem_kind_label[st->kind], st->nt ? "non-temporal" : "plain");
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
        hb_json_kstr(j, "stores", mem_block_nt(st, c->block_bytes, nthreads) ? "nt" : "plain");
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

static void mem_teardown(hb_setup *s)
{
    free(s->state);
    s->state = NULL;
}

static const char *const memory_checks[] = {"cache_levels", NULL};

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
    .results = mem_results,
    .checks = memory_checks,
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
    .refuse = mem_refuse,
};
