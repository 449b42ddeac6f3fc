/* The disk kernel's types and constants, shared by its files and by no other kernel. Each part
 * declares its functions in its own header, and the parts use each other one way only: disk.c
 * (the kernel: parameters, facts) -> disk_io.c (per-thread buffers and the I/O loops) ->
 * disk_setup.c (the test file, the engine, the interrupt CPU) -> disk_content.c and
 * disk_uring.c (disk.h). tests/check_layers.py keeps it so. */
#ifndef HB_KERNEL_DISK_INTERNAL_H
#define HB_KERNEL_DISK_INTERNAL_H

#include <limits.h>

#include "../harness.h"
#include "../host.h"
#include "disk.h"

#define KiB 1024LL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define MAX_BLOCK (80 * MiB)
#define FULL_CHECK_EVERY 16 /* reads of >= 4 KiB: every byte of one read in 16 */

enum { OP_RW, OP_SEQ_READ, OP_SEQ_WRITE, OP_RAND_READ, OP_RAND_WRITE };
/* The op parameter's names. */
static const char *const disk_op_names[] = {"rw", "seq_read", "seq_write", "rand_read",
                                            "rand_write", NULL};
enum { ENG_AUTO, ENG_URING, ENG_AIO, ENG_PSYNC };
enum { PLACE_AUTO, PLACE_SPREAD, PLACE_UNPINNED };
/* How a configuration's I/O goes (its results' io_mode): O_DIRECT; buffered with the file dropped
 * from the cache before the phase and after every pass and writes flushed inside the window; or
 * buffered with the page cache in the figure. */
enum { MODE_DIRECT, MODE_CACHE_DROPPED, MODE_BUFFERED };
static const char *const disk_mode_names[] = {"direct", "cache_dropped", "buffered", NULL};

/* ---- state ---- */

typedef struct disk_state {
    int fd;     /* buffered, read-write: pre-fill source, flushes, cache drops, reopening */
    int dfd;    /* O_DIRECT, or -1 */
    int direct, depth, batch, engine, fsync_writes, corrupt, placement, cold_cache, hugepages;
    long long file_bytes;
    int cpus[HB_MAX_CPUS], ncpus; /* the affinity mask, ascending */
    int irq_cpus[8], nirq_cpus, hw_queues;
    char irq_name[64];
    int ops[HB_MAX_CONFIGS];
    long long blocks[HB_MAX_CONFIGS];
    int modes[HB_MAX_CONFIGS];         /* MODE_*, per configuration */
    char mode_why[HB_MAX_CONFIGS][400]; /* why that mode */
    char dio_refused[256];              /* direct asked, but the filesystem refused O_DIRECT: why */
    hb_disk_pattern *pat;
    /* facts */
    char workdir[PATH_MAX], file[64], fstype[32], mount[256], device[64];
    const char *lbs_source;
    int lbs, mem_align, rotational, memory_backed;
    unsigned long long fs_free, fs_reserve, io_buffers;
    char engine_why[320];
    unsigned uring_flags;
    double prefill_s;
} disk_state;

#endif
