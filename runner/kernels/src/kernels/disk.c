/* disk: what a file on this host's storage delivers: MB/s, IOPS and latency percentiles for
 * sequential and random reads and writes and a 50/50 mix, buffered or direct (O_DIRECT), one
 * I/O at a time (pread/pwrite) or many in flight per thread (io_uring or Linux AIO, through
 * raw system calls).
 *
 * The file is the kernel's own: created in the runner's work directory (never one from the job
 * request), sized against the free space minus a reserve, unlinked as soon as it is open (so it
 * disappears even on SIGKILL), written in full before any phase, and its content is a pure
 * function of the offset, so every read is checked and no write changes it.
 *
 * This file: the parameters, the facts and the descriptor; setup is disk_setup.c, the I/O loops
 * disk_io.c, the content and histogram disk_content.c, the raw engines disk_uring.c. */
#include "disk_io.h"
#include "disk_setup.h"

#include <fcntl.h>
#include <unistd.h>

/* ---- parameters ---- */

static const char *const engine_names[] = {"auto", "io_uring", "libaio", "psync", NULL};
static const char *const placement_names[] = {"auto", "spread", "unpinned", NULL};

static const hb_param_def disk_params[] = {
    {"op", HB_P_ENUM_LIST, "rw,seq_read,seq_write,rand_read,rand_write", 0, 0, disk_op_names,
     "Operations, each run at every block size: rw (a sequential stream, each I/O a read or a "
     "write at random, 50/50, like fio rw=rw), seq_read, seq_write (each thread streams through "
     "its own slice of the file), rand_read, rand_write (uniform block-aligned offsets over the "
     "whole file).", NULL, NULL},
    {"blocks", HB_P_INT_LIST, "8,8192,8388608,83886080", 1, (double)MAX_BLOCK, NULL,
     "Block sizes in bytes, 1 B to 80 MiB (e.g. 1,1024,4096,1048576). Direct I/O moves whole "
     "blocks of the device's logical block size (512 or 4096): any other block runs buffered "
     "with the page cache dropped (see direct).", "B", NULL},
    {"direct", HB_P_BOOL, "true", 0, 1, NULL,
     "true (default): O_DIRECT, the page cache is bypassed and the device is measured (aligned "
     "buffers) for every block that is a multiple of the device's logical block size; a block "
     "that is not (1 B, 8 B, 1000 B) cannot be moved by direct I/O and runs buffered with the "
     "cache dropped: the file is dropped from the page cache before the phase and after every "
     "pass, and writes end with fdatasync inside the timed window. false: buffered I/O through "
     "the page cache for every block (see cold_cache and fsync_writes). Each result says which "
     "ran (io_mode) and why (io_mode_why).", NULL, NULL},
    {"iodepth", HB_P_INT, "1", 1, 256, NULL,
     "I/Os in flight per thread. 1: one at a time. More needs an asynchronous engine (io_uring, "
     "or Linux AIO which is only asynchronous with direct I/O).", NULL, NULL},
    {"submit_batch", HB_P_INT, "1", 1, 256, NULL,
     "Most completions reaped, and I/Os handed to the kernel, per group (io_uring, libaio). 1: "
     "each completion is taken and its slot resubmitted at once, like fio's default "
     "(iodepth_batch_submit = iodepth_batch_complete_max = 1), so the queue stays at iodepth and "
     "the average latency is iodepth / IOPS. Larger batches save system calls, but the block "
     "layer then holds the batch back (plugging) and the first I/O waits for the last.", NULL, NULL},
    {"engine", HB_P_ENUM, "auto", 0, 0, engine_names,
     "How I/O is issued. auto: pread/pwrite at iodepth 1; io_uring when this kernel allows it, "
     "else libaio (Linux native AIO) for deeper queues. The start event says which ran and why.", NULL, NULL},
    {"file_size", HB_P_INT, "1073741824", (double)MiB, (double)(64 * GiB), NULL,
     "Size of the test file in bytes (a multiple of 4096), 1 MiB to 64 GiB. It must fit in the "
     "free space of the work directory's filesystem minus a reserve of max(1 GiB, 5 %). Make it "
     "larger than RAM to defeat the page cache with buffered I/O.", "B", NULL},
    {"cold_cache", HB_P_BOOL, "true", 0, 1, NULL,
     "Buffered I/O only. true: each thread drops the file's pages from the page cache every "
     "time it has moved its share of the file (its slice, or file_size / threads for random "
     "ops), so every pass goes to the device through readahead and the cache (fio does the same "
     "at each loop over its file). false: only before each phase; later passes over a file "
     "smaller than RAM then measure the page cache.", NULL, NULL},
    {"fsync_writes", HB_P_BOOL, "false", 0, 1, NULL,
     "true: every thread of a phase that writes ends with fdatasync(), inside the timed window, "
     "so buffered writes are counted only once they are on the device.", NULL, NULL},
    {"hugepages", HB_P_BOOL, "true", 0, 1, NULL,
     "true: a thread's I/O buffers, once they add up to 2 MiB or more, are 2 MiB-aligned and "
     "advised onto transparent huge pages, so a large direct I/O is a few physically contiguous "
     "memory segments. false: 4 KiB pages (MADV_NOHUGEPAGE), as a program's malloc'd buffers "
     "usually are (fio's default): a 1 MiB direct I/O is then 256 segments, and a device that "
     "takes fewer per request (queue/max_segments) gets it split. The result's huge_page_buffers "
     "says whether the buffers were advised onto huge pages (the kernel accepted the advice).", NULL, NULL},
    {"placement", HB_P_ENUM, "auto", 0, 0, placement_names,
     "Where the threads run. auto: when the device has one queue, the first thread on the CPU "
     "that takes its completion interrupts (found by watching /proc/interrupts during a short "
     "burst of reads), the others round-robin from there; else spread. spread: pinned "
     "round-robin from the first CPU of the affinity mask. unpinned: anywhere in the mask (the "
     "scheduler follows the interrupts; what fio does by default).", NULL, NULL},
    {"workdir", HB_P_STRING, ".", 1, 4096, NULL,
     "Directory for the test file, set by the runner (its own work directory), never by a job. "
     "It must exist and belong to this process's user.", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

static const char *const psync_only[] = {"psync", NULL};

static const hb_rule disk_rules[] = {
    {"file_size", HB_RULE_MULTIPLE_OF, 4096, NULL, NULL, {{NULL, NULL, 0}},
     "the file is written and read in whole 4 KiB pages; give e.g. 1073741824 (1 GiB)"},
    {"blocks", HB_RULE_MAXIMUM_PARAM, 0, NULL, "file_size", {{NULL, NULL, 0}},
     "every block lies inside the test file: raise file_size"},
    {"iodepth", HB_RULE_MAXIMUM, 1, NULL, NULL, {{"engine", psync_only, 0}},
     "engine psync does one I/O at a time per thread (pread/pwrite); use --engine io_uring or "
     "libaio, or --iodepth 1 with more --threads"},
    {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
};

/* What disk_result_facts (disk_io.c) adds to each result line. Latency: per I/O, from just before
 * the system call that submits it to the return of the one that reaps it. */
static const hb_result disk_results[] = {
    {"iops", HB_R_NUMBER, "IOPS", 0, "I/Os of one block per second over the repeat.", NULL,
     .range = HB_NONNEG},
    {"lat_avg_us", HB_R_NUMBER, "µs", 1, "Mean latency of an I/O.", NULL, .range = HB_NONNEG},
    {"lat_p50_us", HB_R_NUMBER, "µs", 1, "Median latency of an I/O (within 0.4 %).", NULL,
     .range = HB_NONNEG},
    {"lat_p99_us", HB_R_NUMBER, "µs", 1, "99th percentile latency of an I/O (within 0.4 %).",
     NULL, .range = HB_NONNEG},
    {"lat_p999_us", HB_R_NUMBER, "µs", 1, "99.9th percentile latency of an I/O (within 0.4 %).",
     NULL, .range = HB_NONNEG},
    {"lat_min_us", HB_R_NUMBER, "µs", 1, "Shortest latency of an I/O.", NULL, .range = HB_NONNEG},
    {"lat_max_us", HB_R_NUMBER, "µs", 1, "Longest latency of an I/O.", NULL, .range = HB_NONNEG},
    {"lat_samples", HB_R_INT, "", 0, "I/Os whose latency was recorded.", NULL, .range = HB_NONNEG},
    {"reads", HB_R_INT, "", 0, "Read I/Os done.", NULL, .range = HB_NONNEG},
    {"writes", HB_R_INT, "", 0, "Write I/Os done.", NULL, .range = HB_NONNEG},
    {"reads_checked_fully", HB_R_INT, "", 0,
     "Reads whose every byte was checked (the others: the offset stamps of their units).", NULL,
     .range = HB_NONNEG},
    {"huge_page_buffers", HB_R_BOOL, NULL, 0,
     "The I/O buffers were advised onto transparent huge pages.", NULL, .range = HB_ANY},
    {"io_uring_fixed_buffers", HB_R_BOOL, NULL, 0,
     "io_uring only: the buffers were registered (fixed buffers).", NULL, .range = HB_ANY},
    {"io_mode", HB_R_TEXT, NULL, 0,
     "How this row's I/O went: direct (O_DIRECT: the device's figure); cache_dropped (buffered, "
     "the file dropped from the page cache before the phase and after every pass, writes "
     "flushed with fdatasync inside the timed window: every byte counted went to or came from "
     "the device, through the cache); buffered (the page cache is part of the figure: warm "
     "cache, unflushed writes, or a memory-backed filesystem).", NULL, .range = HB_ANY},
    {"io_mode_why", HB_R_TEXT, NULL, 0, "Why this row ran in its io_mode.", NULL, .range = HB_ANY},
    {NULL},
};

/* ---- facts, phases, the descriptor ---- */

static void disk_facts(const hb_setup *s, hb_json *j)
{
    const disk_state *st = s->state;
    hb_json_kstr(j, "engine", engine_names[st->engine]);
    hb_json_kstr(j, "engine_why", st->engine_why);
    if (st->engine == ENG_URING) {
        static const struct {
            unsigned bit;
            const char *name;
        } names[] = {{1U << 4, "CLAMP"}, {1U << 7, "SUBMIT_ALL"}, {1U << 8, "COOP_TASKRUN"},
                     {1U << 12, "SINGLE_ISSUER"}, {1U << 13, "DEFER_TASKRUN"}};
        hb_json_key(j, "io_uring_setup_flags");
        hb_json_arr(j);
        for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
            if (st->uring_flags & names[i].bit)
                hb_json_str(j, names[i].name);
        hb_json_arr_end(j);
        hb_json_kstr(j, "io_uring_registered", "the file and, up to 256 slots of at most 1 GiB, "
                     "the buffers (READ_FIXED/WRITE_FIXED), when the kernel allows it");
    }
    hb_json_kbool(j, "direct", st->direct);
    hb_json_kint(j, "iodepth", st->depth);
    hb_json_kint(j, "submit_batch", st->batch < st->depth ? st->batch : st->depth);
    hb_json_kstr(j, "placement", placement_names[st->placement]);
    hb_json_kstr(j, "placement_used",
                 st->placement == PLACE_UNPINNED ? "unpinned: any CPU of the affinity mask"
                 : st->placement == PLACE_AUTO && disk_irq_slot(st) >= 0
                     ? "first thread on the CPU that takes the completion interrupts, the others "
                       "round-robin from there"
                 : st->placement == PLACE_AUTO && st->nirq_cpus > 0
                     ? "spread: the CPU that takes the completion interrupts is outside the "
                       "affinity mask"
                 : st->placement == PLACE_AUTO && st->hw_queues > 1
                     ? "spread: the device has a queue per CPU group, each with its own interrupt"
                 : st->placement == PLACE_AUTO
                     ? "spread: the interrupt CPU could not be found"
                     : "spread: pinned round-robin from the first CPU of the affinity mask");
    if (st->hw_queues > 0)
        hb_json_kint(j, "hw_queues", st->hw_queues);
    else
        hb_json_knull(j, "hw_queues");
    hb_json_key(j, "completion_irq_cpus");
    hb_json_arr(j);
    for (int i = 0; i < st->nirq_cpus; i++)
        hb_json_int(j, st->irq_cpus[i]);
    hb_json_arr_end(j);
    hb_json_kstr(j, "completion_irq", st->irq_name[0] ? st->irq_name : NULL);
    hb_json_kint(j, "logical_block_bytes", st->lbs);
    hb_json_kstr(j, "logical_block_source", st->lbs_source);
    hb_json_kint(j, "dio_mem_align", st->mem_align);
    hb_json_kstr(j, "workdir", st->workdir);
    hb_json_kstr(j, "file", st->file);
    hb_json_kint(j, "file_bytes", st->file_bytes);
    hb_json_kstr(j, "file_lifetime", "unlinked right after it was opened: it disappears when "
                 "the kernel exits, however it exits");
    hb_json_kstr(j, "filesystem", st->fstype);
    hb_json_kstr(j, "mount_point", st->mount[0] ? st->mount : NULL);
    hb_json_kstr(j, "device", st->device[0] ? st->device : NULL);
    if (st->rotational >= 0)
        hb_json_kbool(j, "rotational", st->rotational);
    else
        hb_json_knull(j, "rotational");
    hb_json_kbool(j, "memory_backed", st->memory_backed);
    hb_json_kint(j, "fs_free_bytes", (long long)st->fs_free);
    hb_json_kint(j, "fs_reserve_bytes", (long long)st->fs_reserve);
    hb_json_kint(j, "io_buffer_bytes_max", (long long)st->io_buffers);
    hb_json_knum(j, "prefill_s", st->prefill_s);
    hb_json_knum(j, "prefill_mb_s", st->prefill_s > 0 ? st->file_bytes / st->prefill_s / 1e6 : 0);
    hb_json_kstr(j, "cache", st->direct
                     ? "O_DIRECT for every block that is a multiple of the logical block size: "
                       "the page cache is bypassed, every phase starts after fdatasync; any "
                       "other block (or every block, when the filesystem refuses O_DIRECT: "
                       "direct_refused) runs buffered, the file dropped from the cache before "
                       "the phase and after every pass, writes flushed inside the timed window; "
                       "each result's io_mode says which"
                     : st->cold_cache
                     ? "buffered: every phase starts after fdatasync and posix_fadvise(DONTNEED) "
                       "of the whole file, and each thread drops its share again after every "
                       "pass over it: reads come from the device through readahead; writes land "
                       "in the page cache (written back at the drops) unless fsync_writes"
                     : "buffered, warm: the file is dropped from the cache only before each "
                       "phase; a second pass over a file smaller than free RAM is served by the "
                       "page cache");
    hb_json_kstr(j, "direct_refused", st->dio_refused[0] ? st->dio_refused : NULL);
    hb_json_kbool(j, "fsync_writes", st->fsync_writes);
    hb_json_kbool(j, "cold_cache", st->direct || st->cold_cache); /* rows not direct */
    hb_json_kbool(j, "hugepages", st->hugepages);
    hb_json_kstr(j, "verify", "the file holds a pure function of the offset (each 512-B unit "
                 "starts with its offset XOR a per-run seed, the rest is 64 KiB of seeded random "
                 "bytes repeated); every read checks the offset stamps of its units, and every "
                 "16th read (every read of less than 4 KiB) every byte; writes store the same "
                 "content, so the file never changes");
    hb_json_kstr(j, "latency", "per I/O: from just before the system call that submits it to "
                 "the moment it is reaped (what fio calls lat, not clat); completions are reaped "
                 "submit_batch at a time, each slot resubmitted before the next group is taken; "
                 "per-thread log-linear histograms, 128 buckets per power of two, merged per "
                 "repeat");
}

/* Every phase starts alike: nothing dirty, nothing of the file cached. */
static void disk_before_phase(hb_setup *s, int config_index, int nthreads, int repeat)
{
    const disk_state *st = s->state;
    (void)config_index, (void)nthreads, (void)repeat;
    fdatasync(st->fd);
    posix_fadvise(st->fd, 0, 0, POSIX_FADV_DONTNEED);
}

static void disk_teardown(hb_setup *s)
{
    disk_state_free(s->state);
    s->state = NULL;
}

static const char *const disk_checks[] = {"storage", NULL};

const hb_kernel hb_kernel_disk = {
    .name = "disk",
    .title = "Disk throughput, IOPS and latency",
    .description = "Sequential and random reads and writes and a 50/50 mix on a test file of "
                   "the runner's work directory, buffered or direct, at a queue depth per "
                   "thread (pread/pwrite, io_uring or Linux AIO): MB/s, IOPS and latency "
                   "avg/p50/p99/p99.9; every read is checked against the file's known content.",
    .unit = "MB/s",
    .unit_scale = 1e-6,
    .params = disk_params,
    .rules = disk_rules,
    .results = disk_results,
    .checks = disk_checks,
    .setup = disk_setup,
    .facts = disk_facts,
    .thread_setup = disk_thread_setup,
    .work = disk_work,
    .thread_teardown = disk_thread_teardown,
    .teardown = disk_teardown,
    .before_phase = disk_before_phase,
    .result_facts = disk_result_facts,
};
