/* disk: what a file on this host's storage delivers: MB/s, IOPS and latency percentiles for
 * sequential and random reads and writes and a 50/50 mix, buffered or direct (O_DIRECT), one
 * I/O at a time (pread/pwrite) or many in flight per thread (io_uring or Linux AIO, through
 * raw system calls).
 *
 * The file is the kernel's own: created in the runner's work directory (never one from the job
 * request), sized against the free space minus a reserve, unlinked as soon as it is open (so it
 * disappears even on SIGKILL), written in full before any phase, and its content is a pure
 * function of the offset, so every read is checked and no write changes it. */
#include "disk.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <linux/aio_abi.h>
#include <linux/fs.h>

#include "../harness.h"
#include "../host.h"

#define KiB 1024LL
#define MiB (1024 * KiB)
#define GiB (1024 * MiB)
#define MAX_BLOCK (80 * MiB)
#define FULL_CHECK_EVERY 16 /* reads of >= 4 KiB: every byte of one read in 16 */

/* ---- content ---- */

static uint64_t splitmix64(uint64_t *s)
{
    uint64_t z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

void hb_disk_pattern_init(hb_disk_pattern *p, uint64_t seed)
{
    uint64_t s = seed;
    p->seed = seed;
    for (size_t i = 0; i < HB_DISK_PATTERN; i += 8) {
        uint64_t v = splitmix64(&s);
        memcpy(p->bytes + i, &v, 8);
    }
}

static inline uint64_t stamp_of(uint64_t unit, const hb_disk_pattern *p)
{
    return unit ^ p->seed;
}

uint64_t hb_disk_stamp_offset(const unsigned char *stamp, const hb_disk_pattern *p)
{
    uint64_t v;
    memcpy(&v, stamp, 8);
    return v ^ p->seed;
}

void hb_disk_restamp(unsigned char *dst, uint64_t off, size_t len, const hb_disk_pattern *p)
{
    uint64_t end = off + len;
    for (uint64_t u = off & ~(uint64_t)(HB_DISK_UNIT - 1); u < end; u += HB_DISK_UNIT) {
        uint64_t v = stamp_of(u, p);
        if (u >= off && u + HB_DISK_STAMP <= end) {
            memcpy(dst + (u - off), &v, 8);
            continue;
        }
        unsigned char s[8];
        memcpy(s, &v, 8);
        uint64_t a = u > off ? u : off, b = u + HB_DISK_STAMP < end ? u + HB_DISK_STAMP : end;
        for (uint64_t o = a; o < b; o++)
            dst[o - off] = s[o - u];
    }
}

void hb_disk_fill(unsigned char *dst, uint64_t off, size_t len, const hb_disk_pattern *p)
{
    for (size_t done = 0; done < len;) {
        size_t ph = (size_t)((off + done) & (HB_DISK_PATTERN - 1));
        size_t n = HB_DISK_PATTERN - ph;
        if (n > len - done)
            n = len - done;
        memcpy(dst + done, p->bytes + ph, n);
        done += n;
    }
    hb_disk_restamp(dst, off, len, p);
}

long hb_disk_check(const unsigned char *buf, uint64_t off, size_t len, const hb_disk_pattern *p,
                   int full)
{
    uint64_t end = off + len;
    if (!full) {
        uint64_t u = (off + HB_DISK_UNIT - 1) & ~(uint64_t)(HB_DISK_UNIT - 1);
        for (; u + HB_DISK_STAMP <= end; u += HB_DISK_UNIT) {
            uint64_t v;
            memcpy(&v, buf + (u - off), 8);
            if (v != stamp_of(u, p))
                return (long)(u - off);
        }
        return -1;
    }
    for (uint64_t o = off; o < end;) {
        uint64_t u = o & ~(uint64_t)(HB_DISK_UNIT - 1);
        if (o < u + HB_DISK_STAMP) {
            uint64_t v = stamp_of(u, p), e = u + HB_DISK_STAMP < end ? u + HB_DISK_STAMP : end;
            unsigned char s[8];
            memcpy(s, &v, 8);
            for (; o < e; o++)
                if (buf[o - off] != s[o - u])
                    return (long)(o - off);
        } else {
            uint64_t e = u + HB_DISK_UNIT < end ? u + HB_DISK_UNIT : end;
            const unsigned char *want = p->bytes + (o & (HB_DISK_PATTERN - 1));
            if (memcmp(buf + (o - off), want, e - o) != 0)
                for (uint64_t k = 0; k < e - o; k++)
                    if (buf[o - off + k] != want[k])
                        return (long)(o - off + k);
            o = e;
        }
    }
    return -1;
}

/* ---- histogram ---- */

void hb_hist_reset(hb_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min_ns = UINT64_MAX;
}

void hb_hist_merge(hb_hist *into, const hb_hist *from)
{
    for (int i = 0; i < HB_HIST_BUCKETS; i++)
        into->b[i] += from->b[i];
    into->count += from->count;
    into->sum_ns += from->sum_ns;
    if (from->min_ns < into->min_ns)
        into->min_ns = from->min_ns;
    if (from->max_ns > into->max_ns)
        into->max_ns = from->max_ns;
}

void hb_hist_bucket(int i, uint64_t *low, uint64_t *width)
{
    if (i < HB_HIST_SUB) {
        *low = (uint64_t)i;
        *width = 1;
        return;
    }
    int e = i / HB_HIST_SUB + HB_HIST_SUB_BITS - 1, sub = i % HB_HIST_SUB;
    *low = (uint64_t)(HB_HIST_SUB + sub) << (e - HB_HIST_SUB_BITS);
    *width = 1ULL << (e - HB_HIST_SUB_BITS);
}

double hb_hist_quantile(const hb_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    double rank_d = q * (double)h->count;
    uint64_t rank = (uint64_t)rank_d;
    if ((double)rank < rank_d)
        rank++;
    if (rank < 1)
        rank = 1;
    uint64_t seen = 0;
    for (int i = 0; i < HB_HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            uint64_t low, width;
            hb_hist_bucket(i, &low, &width);
            double v = width == 1 ? (double)low : (double)low + (double)width / 2;
            if (v < (double)h->min_ns)
                v = (double)h->min_ns;
            if (v > (double)h->max_ns)
                v = (double)h->max_ns;
            return v;
        }
    }
    return (double)h->max_ns;
}

/* ---- parameters ---- */

enum { OP_RW, OP_SEQ_READ, OP_SEQ_WRITE, OP_RAND_READ, OP_RAND_WRITE };
static const char *const op_names[] = {"rw", "seq_read", "seq_write", "rand_read", "rand_write",
                                       NULL};
enum { ENG_AUTO, ENG_URING, ENG_AIO, ENG_PSYNC };
static const char *const engine_names[] = {"auto", "io_uring", "libaio", "psync", NULL};
enum { PLACE_AUTO, PLACE_SPREAD, PLACE_UNPINNED };
static const char *const placement_names[] = {"auto", "spread", "unpinned", NULL};

static const hb_param_def disk_params[] = {
    {"op", HB_P_ENUM_LIST, "rw,seq_read,seq_write,rand_read,rand_write", 0, 0, op_names,
     "Operations, each run at every block size: rw (a sequential stream, each I/O a read or a "
     "write at random, 50/50, like fio rw=rw), seq_read, seq_write (each thread streams through "
     "its own slice of the file), rand_read, rand_write (uniform block-aligned offsets over the "
     "whole file)."},
    {"blocks", HB_P_INT_LIST, "8,8192,8388608,83886080", 1, (double)MAX_BLOCK, NULL,
     "Block sizes in bytes, 1 B to 80 MiB (e.g. 1,1024,4096,1048576). With direct I/O every "
     "block must be a multiple of the device's logical block size (512 or 4096)."},
    {"direct", HB_P_BOOL, "false", 0, 1, NULL,
     "true: O_DIRECT, the page cache is bypassed and the device is measured (aligned buffers, "
     "blocks a multiple of the logical block size). false: buffered I/O through the page cache; "
     "every phase starts with the file flushed and dropped from the cache, but reads may still "
     "be served by readahead and writes by the cache (see fsync_writes)."},
    {"iodepth", HB_P_INT, "1", 1, 256, NULL,
     "I/Os in flight per thread. 1: one at a time. More needs an asynchronous engine (io_uring, "
     "or Linux AIO which is only asynchronous with direct I/O)."},
    {"submit_batch", HB_P_INT, "1", 1, 256, NULL,
     "Most completions reaped, and I/Os handed to the kernel, per group (io_uring, libaio). 1: "
     "each completion is taken and its slot resubmitted at once, like fio's default "
     "(iodepth_batch_submit = iodepth_batch_complete_max = 1), so the queue stays at iodepth and "
     "the average latency is iodepth / IOPS. Larger batches save system calls, but the block "
     "layer then holds the batch back (plugging) and the first I/O waits for the last."},
    {"engine", HB_P_ENUM, "auto", 0, 0, engine_names,
     "How I/O is issued. auto: pread/pwrite at iodepth 1; io_uring when this kernel allows it, "
     "else libaio (Linux native AIO) for deeper queues. The start event says which ran and why."},
    {"file_size", HB_P_INT, "1073741824", (double)MiB, (double)(64 * GiB), NULL,
     "Size of the test file in bytes (a multiple of 4096), 1 MiB to 64 GiB. It must fit in the "
     "free space of the work directory's filesystem minus a reserve of max(1 GiB, 5 %). Make it "
     "larger than RAM to defeat the page cache with buffered I/O."},
    {"cold_cache", HB_P_BOOL, "true", 0, 1, NULL,
     "Buffered I/O only. true: each thread drops the file's pages from the page cache every "
     "time it has moved its share of the file (its slice, or file_size / threads for random "
     "ops), so every pass goes to the device through readahead and the cache (fio does the same "
     "at each loop over its file). false: only before each phase; later passes over a file "
     "smaller than RAM then measure the page cache."},
    {"fsync_writes", HB_P_BOOL, "false", 0, 1, NULL,
     "true: every thread of a phase that writes ends with fdatasync(), inside the timed window, "
     "so buffered writes are counted only once they are on the device."},
    {"hugepages", HB_P_BOOL, "true", 0, 1, NULL,
     "true: a thread's I/O buffers, once they add up to 2 MiB or more, are 2 MiB-aligned and "
     "advised onto transparent huge pages, so a large direct I/O is a few physically contiguous "
     "memory segments. false: 4 KiB pages (MADV_NOHUGEPAGE), as a program's malloc'd buffers "
     "usually are (fio's default): a 1 MiB direct I/O is then 256 segments, and a device that "
     "takes fewer per request (queue/max_segments) gets it split. The result's huge_page_buffers "
     "says whether the buffers were advised onto huge pages (the kernel accepted the advice)."},
    {"placement", HB_P_ENUM, "auto", 0, 0, placement_names,
     "Where the threads run. auto: when the device has one queue, the first thread on the CPU "
     "that takes its completion interrupts (found by watching /proc/interrupts during a short "
     "burst of reads), the others round-robin from there; else spread. spread: pinned "
     "round-robin from the first CPU of the affinity mask. unpinned: anywhere in the mask (the "
     "scheduler follows the interrupts; what fio does by default)."},
    {"workdir", HB_P_STRING, ".", 1, 4096, NULL,
     "Directory for the test file, set by the runner (its own work directory), never by a job. "
     "It must exist and belong to this process's user."},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL},
};

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

typedef struct slot {
    unsigned char *buf;
    uint64_t off;
    int64_t t0;
    int write, filled;
    size_t phase; /* buf holds a block whose offset is this modulo HB_DISK_PATTERN */
} slot;

typedef struct disk_thread {
    const disk_state *st;
    int fd, op, depth, engine, dead, batch;
    size_t block;
    uint64_t rng;
    uint64_t region_start, region_len, pos, nblocks;
    uint64_t moved, pass_bytes; /* cold_cache: bytes since the last drop, and the share */
    int cold;
    slot *slots;
    int *free_idx, nfree;
    unsigned char *mem;
    size_t slot_bytes;
    hb_uring ring;
    int uring_ready, fixed_file, fixed_bufs, thp;
    hb_aio_ctx aio;
    int aio_ready;
    struct iocb *iocbs;
    struct iocb **pending;
    int npending;
    struct io_event *events;
    hb_hist *hist;
    uint64_t reads, writes, full_checks, reads_seen;
} disk_thread;

/* ---- the host: work directory, filesystem, device ---- */

static void read_sysfs(const char *path, char *buf, size_t size)
{
    buf[0] = '\0';
    FILE *f = fopen(path, "r");
    if (!f)
        return;
    if (!fgets(buf, (int)size, f))
        buf[0] = '\0';
    fclose(f);
    buf[strcspn(buf, "\n")] = '\0';
}

/* Filesystem type and mount point of dev (the longest mount point that prefixes path). */
static void find_mount(dev_t dev, const char *path, disk_state *st)
{
    char line[4096], want[32];
    size_t best = 0;
    snprintf(want, sizeof want, "%u:%u", major(dev), minor(dev));
    snprintf(st->fstype, sizeof st->fstype, "unknown");
    FILE *f = fopen("/proc/self/mountinfo", "r");
    if (!f)
        return;
    while (fgets(line, sizeof line, f)) {
        char devs[32], mnt[1024], type[64];
        const char *dash = strstr(line, " - ");
        if (!dash || sscanf(line, "%*s %*s %31s %*s %1023s", devs, mnt) != 2 ||
            sscanf(dash + 3, "%63s", type) != 1 || strcmp(devs, want) != 0)
            continue;
        size_t n = strlen(mnt);
        if ((n == 1 || (strncmp(path, mnt, n) == 0 && (path[n] == '/' || path[n] == '\0'))) &&
            n >= best) {
            best = n;
            snprintf(st->fstype, sizeof st->fstype, "%.31s", type);
            snprintf(st->mount, sizeof st->mount, "%s", mnt);
        }
    }
    fclose(f);
}

/* Block device name, rotational flag and logical block size from sysfs (or BLKSSZGET). */
static void find_device(dev_t dev, disk_state *st)
{
    char link[PATH_MAX], real[PATH_MAX], q[PATH_MAX + 64], v[64];
    st->rotational = -1;
    snprintf(link, sizeof link, "/sys/dev/block/%u:%u", major(dev), minor(dev));
    if (major(dev) == 0 || !realpath(link, real))
        return;
    const char *name = strrchr(real, '/');
    snprintf(st->device, sizeof st->device, "%.63s", name ? name + 1 : real);
    snprintf(q, sizeof q, "%s/partition", real);
    int part = access(q, F_OK) == 0;
    snprintf(q, sizeof q, "%s%s/queue/logical_block_size", real, part ? "/.." : "");
    read_sysfs(q, v, sizeof v);
    if (atoi(v) >= 512) {
        st->lbs = atoi(v);
        st->lbs_source = "sysfs queue/logical_block_size";
    } else {
        snprintf(q, sizeof q, "/dev/%s", st->device);
        int fd = open(q, O_RDONLY | O_CLOEXEC);
        int ss = 0;
        if (fd >= 0 && ioctl(fd, BLKSSZGET, &ss) == 0 && ss >= 512) {
            st->lbs = ss;
            st->lbs_source = "ioctl BLKSSZGET";
        }
        if (fd >= 0)
            close(fd);
    }
    snprintf(q, sizeof q, "%s%s/queue/rotational", real, part ? "/.." : "");
    read_sysfs(q, v, sizeof v);
    if (v[0])
        st->rotational = atoi(v);
    snprintf(q, sizeof q, "%s%s/mq", real, part ? "/.." : "");
    DIR *d = opendir(q);
    if (d) {
        struct dirent *e;
        while ((e = readdir(d)))
            st->hw_queues += e->d_name[0] >= '0' && e->d_name[0] <= '9';
        closedir(d);
    }
}

/* ---- which CPU takes the device's completion interrupts ---- */

typedef struct irq_table {
    int ncols, nlines;
    int col_cpu[1024];
    char label[512][16], name[512][48];
    uint64_t *count; /* [line][col] */
} irq_table;

static int irq_read(irq_table *t)
{
    FILE *f = fopen("/proc/interrupts", "r");
    char *line = NULL;
    size_t cap = 0;
    t->ncols = t->nlines = 0;
    if (!f)
        return 0;
    if (getline(&line, &cap, f) > 0) {
        for (char *tok = strtok(line, " \t\n"); tok && t->ncols < 1024; tok = strtok(NULL, " \t\n"))
            if (!strncmp(tok, "CPU", 3))
                t->col_cpu[t->ncols++] = atoi(tok + 3);
    }
    while (t->ncols && t->nlines < 512 && getline(&line, &cap, f) > 0) {
        char *colon = strchr(line, ':');
        if (!colon)
            continue;
        *colon = '\0';
        char *lab = line;
        while (*lab == ' ')
            lab++;
        snprintf(t->label[t->nlines], sizeof t->label[0], "%.15s", lab);
        char *p = colon + 1, *end;
        uint64_t *row = t->count + (size_t)t->nlines * (size_t)t->ncols;
        int c;
        for (c = 0; c < t->ncols; c++) {
            row[c] = strtoull(p, &end, 10);
            if (end == p)
                break;
            p = end;
        }
        for (; c < t->ncols; c++)
            row[c] = 0;
        char *last = NULL;
        for (char *tok = strtok(p, " \t\n"); tok; tok = strtok(NULL, " \t\n"))
            last = tok;
        snprintf(t->name[t->nlines], sizeof t->name[0], "%.47s", last ? last : "");
        t->nlines++;
    }
    free(line);
    fclose(f);
    return t->nlines;
}

/* Reads 64 random 4-KiB blocks with O_DIRECT and sees which interrupt line counted them, on
 * which CPUs. Leaves nirq_cpus 0 when it cannot tell. */
static void find_irq_cpus(disk_state *st)
{
    irq_table *a = calloc(2, sizeof *a);
    unsigned char *buf = NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", st->fd);
    int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (!a || fd < 0 || posix_memalign((void **)&buf, 4096, 4096) != 0)
        goto out;
    a[0].count = calloc(512 * 1024, sizeof(uint64_t));
    a[1].count = calloc(512 * 1024, sizeof(uint64_t));
    if (!a[0].count || !a[1].count || !irq_read(&a[0]))
        goto out;
    uint64_t x = st->pat->seed | 1, nb = (uint64_t)st->file_bytes / 4096;
    const int n = 64;
    for (int i = 0; i < n; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        if (pread(fd, buf, 4096, (off_t)((x * 0x2545F4914F6CDD1DULL) % nb * 4096)) != 4096)
            goto out;
    }
    if (!irq_read(&a[1]) || a[1].ncols != a[0].ncols)
        goto out;
    int best = -1;
    uint64_t best_delta = 0;
    for (int l = 0; l < a[1].nlines && l < a[0].nlines; l++) {
        if (strcmp(a[0].label[l], a[1].label[l]) || a[1].label[l][0] < '0' ||
            a[1].label[l][0] > '9') /* only numbered IRQs: not the timer, IPIs ... */
            continue;
        uint64_t d = 0;
        for (int c = 0; c < a[1].ncols; c++)
            d += a[1].count[(size_t)l * a[1].ncols + c] - a[0].count[(size_t)l * a[0].ncols + c];
        if (d > best_delta) {
            best_delta = d;
            best = l;
        }
    }
    if (best < 0 || best_delta < (uint64_t)n / 2)
        goto out;
    for (int c = 0; c < a[1].ncols && st->nirq_cpus < 8; c++) {
        uint64_t d = a[1].count[(size_t)best * a[1].ncols + c] -
                     a[0].count[(size_t)best * a[0].ncols + c];
        if (d * 4 >= best_delta)
            st->irq_cpus[st->nirq_cpus++] = a[1].col_cpu[c];
    }
    snprintf(st->irq_name, sizeof st->irq_name, "%s %s", a[1].label[best], a[1].name[best]);
out:
    if (fd >= 0)
        close(fd);
    free(buf);
    if (a) {
        free(a[0].count);
        free(a[1].count);
    }
    free(a);
}

/* Where the interrupt CPU sits in the affinity mask, or -1 (not found, or not ours to use). */
static int irq_slot(const disk_state *st)
{
    for (int k = 0; st->nirq_cpus > 0 && k < st->ncpus; k++)
        if (st->cpus[k] == st->irq_cpus[0])
            return k;
    return -1;
}

/* statx(STATX_DIOALIGN) (Linux 6.1+): the alignment O_DIRECT needs on this very file.
 * 1: found; 0: the kernel does not say; -1: the filesystem does not support O_DIRECT. */
static int dio_align(int fd, int *offset_align, int *mem_align)
{
#ifdef SYS_statx
    unsigned char b[256];
    memset(b, 0, sizeof b);
    if (syscall(SYS_statx, fd, "", AT_EMPTY_PATH, 0x2000U /* STATX_DIOALIGN */, b) != 0)
        return 0;
    uint32_t mask, mem, offs;
    memcpy(&mask, b, 4);
    memcpy(&mem, b + 0x98, 4); /* stx_dio_mem_align */
    memcpy(&offs, b + 0x9c, 4); /* stx_dio_offset_align */
    if (!(mask & 0x2000U))
        return 0;
    if (offs == 0)
        return -1;
    *offset_align = (int)offs;
    *mem_align = (int)mem;
    return 1;
#else
    (void)fd, (void)offset_align, (void)mem_align;
    return 0;
#endif
}

static const char *bytes_text(double b, char *buf, size_t size)
{
    if (b >= GiB)
        snprintf(buf, size, "%.3g GiB", b / GiB);
    else if (b >= MiB)
        snprintf(buf, size, "%.3g MiB", b / MiB);
    else if (b >= KiB)
        snprintf(buf, size, "%.3g KiB", b / KiB);
    else
        snprintf(buf, size, "%.0f B", b);
    return buf;
}

/* ---- engines: probing ---- */

static int probe_uring(int fd, unsigned char *buf, size_t len, const hb_disk_pattern *pat,
                       char *why, size_t size, unsigned *flags)
{
    hb_uring r;
    int e = hb_uring_init(&r, 4);
    if (e < 0) {
        snprintf(why, size, "io_uring_setup: %s%s", strerror(-e),
                 e == -EPERM ? " (disabled by kernel.io_uring_disabled or a seccomp filter)" : "");
        return 0;
    }
    *flags = r.flags;
    hb_sqe *q = hb_uring_get_sqe(&r);
    q->opcode = HB_URING_OP_READ;
    q->fd = fd;
    q->addr = (uintptr_t)buf;
    q->len = (uint32_t)len;
    q->off = 0;
    q->user_data = 7;
    e = hb_uring_submit(&r, 1);
    hb_cqe *c = e >= 0 ? hb_uring_peek(&r) : NULL;
    int ok = c && c->user_data == 7 && c->res == (int32_t)len &&
             hb_disk_check(buf, 0, len, pat, 1) < 0;
    if (!ok)
        snprintf(why, size, "io_uring read test failed: %s",
                 e < 0 ? strerror(-e) : !c ? "no completion" :
                 c->res < 0 ? strerror(-c->res) : "wrong data");
    hb_uring_free(&r);
    return ok;
}

static int probe_aio(int fd, unsigned char *buf, size_t len, const hb_disk_pattern *pat,
                     char *why, size_t size)
{
    hb_aio_ctx ctx;
    int e = hb_aio_setup(4, &ctx);
    if (e < 0) {
        snprintf(why, size, "io_setup: %s", strerror(-e));
        return 0;
    }
    struct iocb cb, *cbp = &cb;
    struct io_event ev;
    memset(&cb, 0, sizeof cb);
    cb.aio_lio_opcode = IOCB_CMD_PREAD;
    cb.aio_fildes = (uint32_t)fd;
    cb.aio_buf = (uintptr_t)buf;
    cb.aio_nbytes = len;
    cb.aio_data = 7;
    e = hb_aio_submit(ctx, 1, &cbp);
    int n = e == 1 ? hb_aio_getevents(ctx, 1, 1, &ev) : 0;
    int ok = n == 1 && ev.data == 7 && ev.res == (int64_t)len &&
             hb_disk_check(buf, 0, len, pat, 1) < 0;
    if (!ok)
        snprintf(why, size, "Linux AIO read test failed: %s",
                 e < 0 ? strerror(-e) : n < 0 ? strerror(-n) :
                 n == 1 && ev.res < 0 ? strerror((int)-ev.res) : "wrong data");
    hb_aio_destroy(ctx);
    return ok;
}

/* ---- setup ---- */

static void state_free(disk_state *st)
{
    if (!st)
        return;
    if (st->fd >= 0)
        close(st->fd);
    if (st->dfd >= 0)
        close(st->dfd);
    free(st->pat);
    free(st);
}

static hb_status fail_setup(disk_state *st, hb_err *err)
{
    state_free(st);
    return err->code;
}

/* Writes the whole file (its content is what every read will check), then flushes it. */
static hb_status prefill(disk_state *st, hb_err *err)
{
    int fd = st->dfd >= 0 ? st->dfd : st->fd;
    /* The file is written the way fio lays its file out (4 KiB writes through the page cache
     * land on the device as 4 KiB pieces): each call is a pwritev of 4 KiB pieces, and the
     * pieces sit on every other page of the buffer so that no two are physically adjacent and
     * merged into one larger segment. On this VM a file written in large segments (huge-page
     * buffers, or 8 MiB writes through the page cache) took 10-40 % longer for every 4 KiB
     * random write afterwards: the host keeps data in the units it was handed. */
    size_t piece = (size_t)(st->lbs > 4096 ? st->lbs : 4096);
    size_t npieces = (size_t)(4 * MiB) / piece;
    if ((long long)(npieces * piece) > st->file_bytes)
        npieces = (size_t)st->file_bytes / piece;
    unsigned char *buf = NULL;
    struct iovec *iov = calloc(npieces, sizeof *iov);
    if (!iov || posix_memalign((void **)&buf, piece, 2 * piece * npieces) != 0) {
        free(iov);
        return hb_errorf(err, HB_INTERNAL, "out of memory for the pre-fill buffer");
    }
    int64_t t0 = hb_now_ns();
    for (long long off = 0; off < st->file_bytes;) {
        if (hb_interrupted()) {
            free(buf);
            free(iov);
            return hb_errorf(err, HB_INTERNAL, "interrupted while writing the test file (%lld "
                             "of %lld bytes written)", off, st->file_bytes);
        }
        size_t n = 0, bytes = 0;
        for (; n < npieces && off + (long long)(bytes + piece) <= st->file_bytes; n++) {
            iov[n].iov_base = buf + 2 * piece * n;
            iov[n].iov_len = piece;
            hb_disk_fill(iov[n].iov_base, (uint64_t)off + bytes, piece, st->pat);
            bytes += piece;
        }
        ssize_t w = pwritev(fd, iov, (int)n, off);
        if (w != (ssize_t)bytes) {
            int e = w < 0 ? errno : ENOSPC;
            free(buf);
            free(iov);
            return hb_errorf(err, e == ENOSPC ? HB_UNSUPPORTED : HB_INTERNAL,
                             "writing the test file at offset %lld: %s", off,
                             w < 0 ? strerror(e) : "short write (is the filesystem full?)");
        }
        off += w;
    }
    free(buf);
    free(iov);
    if (fdatasync(st->fd) != 0)
        return hb_errorf(err, HB_INTERNAL, "fdatasync of the test file: %s", strerror(errno));
    posix_fadvise(st->fd, 0, 0, POSIX_FADV_DONTNEED);
    st->prefill_s = (double)(hb_now_ns() - t0) / 1e9;
    return HB_OK;
}

static hb_status choose_engine(const hb_params *p, disk_state *st, hb_err *err)
{
    int want = hb_param_choice(p, "engine");
    int fd = st->dfd >= 0 ? st->dfd : st->fd;
    size_t len = (size_t)(st->lbs > 4096 ? st->lbs : 4096);
    char why_uring[160] = "", why_aio[160] = "";
    unsigned char *buf = NULL;
    if (posix_memalign((void **)&buf, 4096, len) != 0)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    int uring = 0, aio = 0;
    if (want == ENG_URING || (want == ENG_AUTO && st->depth > 1))
        uring = probe_uring(fd, buf, len, st->pat, why_uring, sizeof why_uring, &st->uring_flags);
    if (want == ENG_AIO || (want == ENG_AUTO && st->depth > 1 && !uring))
        aio = probe_aio(fd, buf, len, st->pat, why_aio, sizeof why_aio);
    free(buf);

    switch (want) {
    case ENG_PSYNC:
        if (st->depth > 1)
            return hb_errorf(err, HB_BAD_PARAM, "engine psync does one I/O at a time per "
                             "thread (pread/pwrite), so iodepth %d cannot be kept; use --engine "
                             "io_uring or libaio, or --iodepth 1 with more --threads", st->depth);
        st->engine = ENG_PSYNC;
        snprintf(st->engine_why, sizeof st->engine_why, "psync: asked for");
        return HB_OK;
    case ENG_URING:
        if (!uring)
            return hb_errorf(err, HB_UNSUPPORTED, "engine io_uring is not usable here: %s; "
                             "use --engine auto or libaio", why_uring);
        st->engine = ENG_URING;
        snprintf(st->engine_why, sizeof st->engine_why, "io_uring: asked for");
        return HB_OK;
    case ENG_AIO:
        if (!aio)
            return hb_errorf(err, HB_UNSUPPORTED, "engine libaio is not usable here: %s; use "
                             "--engine auto or io_uring", why_aio);
        st->engine = ENG_AIO;
        snprintf(st->engine_why, sizeof st->engine_why, "libaio: asked for%s",
                 st->direct ? "" : "; with buffered I/O Linux AIO completes every I/O inside "
                 "io_submit, so it runs at an effective depth of 1");
        return HB_OK;
    }
    if (st->depth == 1) {
        st->engine = ENG_PSYNC;
        snprintf(st->engine_why, sizeof st->engine_why, "auto: iodepth 1, so pread/pwrite, one "
                 "system call per I/O");
    } else if (uring) {
        st->engine = ENG_URING;
        snprintf(st->engine_why, sizeof st->engine_why, "auto: io_uring works here");
    } else if (aio) {
        st->engine = ENG_AIO;
        snprintf(st->engine_why, sizeof st->engine_why, "auto: io_uring is not usable (%s), so "
                 "Linux AIO%s", why_uring, st->direct ? "" : "; with buffered I/O it completes "
                 "every I/O inside io_submit: an effective depth of 1");
    } else {
        return hb_errorf(err, HB_UNSUPPORTED, "iodepth %d needs an asynchronous engine and "
                         "neither works here (%s; %s); use --iodepth 1 with more --threads",
                         st->depth, why_uring, why_aio);
    }
    return HB_OK;
}

static hb_status disk_setup(const hb_params *p, hb_setup *s, hb_err *err)
{
    char t1[32], t2[32], t3[32];
    disk_state *st = calloc(1, sizeof *st);
    if (!st)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    st->fd = st->dfd = -1;
    st->direct = hb_param_bool(p, "direct");
    st->depth = (int)hb_param_int(p, "iodepth");
    st->batch = (int)hb_param_int(p, "submit_batch");
    st->fsync_writes = hb_param_bool(p, "fsync_writes");
    st->cold_cache = hb_param_bool(p, "cold_cache");
    st->hugepages = hb_param_bool(p, "hugepages");
    st->file_bytes = hb_param_int(p, "file_size");
    st->placement = hb_param_choice(p, "placement");
    st->ncpus = hb_affinity_cpus(st->cpus, HB_MAX_CPUS);
#ifdef HBK_TEST_HOOKS
    const char *env = getenv("HBK_TEST_CORRUPT");
    st->corrupt = env && env[0] == '1';
#endif
    const hb_value *ops = hb_param(p, "op"), *blocks = hb_param(p, "blocks"),
                   *threads = hb_param(p, "threads");
    long long max_block = 0, max_threads = 0;
    int seq = 0;
    for (int i = 0; i < blocks->n; i++)
        if (blocks->i[i] > max_block)
            max_block = blocks->i[i];
    for (int i = 0; i < threads->n; i++)
        if (threads->i[i] > max_threads)
            max_threads = threads->i[i];
    for (int i = 0; i < ops->n; i++)
        seq |= ops->i[i] == OP_RW || ops->i[i] == OP_SEQ_READ || ops->i[i] == OP_SEQ_WRITE;

    if (ops->n * blocks->n > HB_MAX_CONFIGS) {
        hb_errorf(err, HB_BAD_PARAM, "%d ops x %d blocks = %d configurations; one run does at "
                  "most %d: split it", ops->n, blocks->n, ops->n * blocks->n, HB_MAX_CONFIGS);
        return fail_setup(st, err);
    }
    if (st->file_bytes % 4096) {
        hb_errorf(err, HB_BAD_PARAM, "file_size %lld is not a multiple of 4096; give e.g. %lld",
                  st->file_bytes, st->file_bytes / MiB * MiB);
        return fail_setup(st, err);
    }
    if (max_block > st->file_bytes) {
        hb_errorf(err, HB_BAD_PARAM, "block %s is larger than file_size %s; raise file_size",
                  bytes_text((double)max_block, t1, sizeof t1),
                  bytes_text((double)st->file_bytes, t2, sizeof t2));
        return fail_setup(st, err);
    }
    if (seq && st->file_bytes / max_threads < max_block) {
        hb_errorf(err, HB_BAD_PARAM, "sequential ops give each of %lld threads its own slice of "
                  "the file: %s / %lld = %s, less than one block of %s; raise file_size to at "
                  "least %lld or use fewer threads", max_threads,
                  bytes_text((double)st->file_bytes, t1, sizeof t1), max_threads,
                  bytes_text((double)(st->file_bytes / max_threads), t2, sizeof t2),
                  bytes_text((double)max_block, t3, sizeof t3),
                  (max_block * max_threads + 4095) / 4096 * 4096);
        return fail_setup(st, err);
    }
    st->io_buffers = (unsigned long long)max_threads * (unsigned long long)st->depth *
                     (unsigned long long)((max_block + 4095) / 4096 * 4096);
    double ram = (double)sysconf(_SC_PHYS_PAGES) * (double)sysconf(_SC_PAGESIZE);
    if (ram > 0 && (double)st->io_buffers > ram / 4) {
        hb_errorf(err, HB_BAD_PARAM, "%lld threads x iodepth %d x block %s = %s of I/O buffers, "
                  "more than a quarter of this host's %s of memory; lower iodepth or threads for "
                  "large blocks (a deep queue matters for small ones)", max_threads, st->depth,
                  bytes_text((double)max_block, t1, sizeof t1),
                  bytes_text((double)st->io_buffers, t2, sizeof t2),
                  bytes_text(ram, t3, sizeof t3));
        return fail_setup(st, err);
    }

    /* the work directory: an existing directory this user owns */
    const char *workdir = hb_param_str(p, "workdir");
    int dirfd = open(workdir, O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    struct stat ds;
    if (dirfd < 0) {
        int e = errno;
        hb_errorf(err, HB_BAD_PARAM, "workdir \"%.200s\" %s; the runner passes its own work "
                  "directory, which must exist", workdir,
                  e == ENOENT ? "does not exist" : e == ENOTDIR ? "is not a directory"
                                                                : strerror(e));
        return fail_setup(st, err);
    }
    if (fstat(dirfd, &ds) != 0 || ds.st_uid != geteuid()) {
        hb_errorf(err, HB_BAD_PARAM, "workdir \"%.200s\" belongs to uid %u, not to this "
                  "process (uid %u); the kernel writes only into a directory its own user owns",
                  workdir, (unsigned)ds.st_uid, (unsigned)geteuid());
        close(dirfd);
        return fail_setup(st, err);
    }
    if (!realpath(workdir, st->workdir))
        snprintf(st->workdir, sizeof st->workdir, "%s", workdir);
    find_mount(ds.st_dev, st->workdir, st);
    find_device(ds.st_dev, st);
    st->memory_backed = !strcmp(st->fstype, "tmpfs") || !strcmp(st->fstype, "ramfs");

    /* free space minus the reserve */
    struct statvfs vs;
    if (fstatvfs(dirfd, &vs) == 0) {
        double total = (double)vs.f_blocks * vs.f_frsize, avail = (double)vs.f_bavail * vs.f_frsize;
#ifdef HBK_TEST_HOOKS
        const char *fake = getenv("HBK_TEST_FREE_BYTES"); /* tests: pretend the disk is this full */
        if (fake && atof(fake) > 0)
            avail = atof(fake);
#endif
        double reserve = total / 20 > GiB ? total / 20 : (double)GiB;
        st->fs_free = (unsigned long long)avail;
        st->fs_reserve = (unsigned long long)reserve;
        if ((double)st->file_bytes > avail - reserve) {
            char t4[32];
            hb_errorf(err, HB_UNSUPPORTED, "file_size %s does not fit: %s (%s) at %s has %s "
                      "free and keeps a reserve of %s (the larger of 1 GiB and 5 %% of %s); "
                      "give --file_size at most %lld or free space",
                      bytes_text((double)st->file_bytes, t1, sizeof t1), st->fstype,
                      st->device[0] ? st->device : "no device", st->mount[0] ? st->mount : "?",
                      bytes_text(avail, t2, sizeof t2), bytes_text(reserve, t3, sizeof t3),
                      bytes_text(total, t4, sizeof t4),
                      avail > reserve ? (long long)((avail - reserve) / 4096) * 4096 : 0LL);
            close(dirfd);
            return fail_setup(st, err);
        }
    }

    /* the file: created here, opened, and unlinked at once: nothing is left behind, even if
     * the kernel is killed with SIGKILL (the space is freed when the last descriptor closes) */
    snprintf(st->file, sizeof st->file, "hbk-disk-%ld.dat", (long)getpid());
    int flags = O_RDWR | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC;
    st->fd = openat(dirfd, st->file, flags, 0600);
    if (st->fd < 0 && errno == EEXIST) { /* a dead kernel's with our pid: ours to remove */
        unlinkat(dirfd, st->file, 0);
        st->fd = openat(dirfd, st->file, flags, 0600);
    }
    if (st->fd < 0) {
        hb_errorf(err, HB_INTERNAL, "cannot create %s/%s: %s", st->workdir, st->file,
                  strerror(errno));
        close(dirfd);
        return fail_setup(st, err);
    }
    int dio_ok = 1, offs = 0, mem = 0;
    int have = dio_align(st->fd, &offs, &mem);
    if (have == 1) {
        st->lbs = offs;
        st->mem_align = mem;
        st->lbs_source = "statx STATX_DIOALIGN";
    } else if (have < 0) {
        dio_ok = 0;
    }
    if (st->direct) {
        st->dfd = dio_ok ? openat(dirfd, st->file, O_RDWR | O_DIRECT | O_CLOEXEC) : -1;
        if (st->dfd < 0) {
            hb_errorf(err, HB_UNSUPPORTED, "the %s filesystem of %s does not support O_DIRECT "
                      "(%s)%s; use --direct false, or give the runner a work directory on a "
                      "block device", st->fstype, st->workdir, dio_ok ? strerror(errno) :
                      "statx reports no direct I/O alignment",
                      st->memory_backed ? ": it lives in memory, there is no device to measure"
                                        : "");
            unlinkat(dirfd, st->file, 0);
            close(dirfd);
            return fail_setup(st, err);
        }
    }
    unlinkat(dirfd, st->file, 0);
    close(dirfd);
    if (st->lbs <= 0) {
        st->lbs = 4096;
        st->lbs_source = "default (no sysfs entry, BLKSSZGET or statx answer)";
    }
    if (st->mem_align <= 0)
        st->mem_align = st->lbs;
    if (st->direct) {
        for (int i = 0; i < blocks->n; i++) {
            if (blocks->i[i] % st->lbs) {
                hb_errorf(err, HB_BAD_PARAM, "block %lld B is not a multiple of %d B, the "
                          "logical block size of %s (%s): direct I/O moves whole blocks of the "
                          "device. Use blocks like %d,4096,1048576, or --direct false for "
                          "smaller or odd sizes (through the page cache)", blocks->i[i],
                          st->lbs, st->device[0] ? st->device : st->fstype, st->lbs_source,
                          st->lbs);
                return fail_setup(st, err);
            }
        }
    }
    if (fallocate(st->fd, 0, 0, st->file_bytes) != 0 && errno == ENOSPC) {
        hb_errorf(err, HB_UNSUPPORTED, "no space for a %s test file in %s",
                  bytes_text((double)st->file_bytes, t1, sizeof t1), st->workdir);
        return fail_setup(st, err);
    }

    st->pat = aligned_alloc(64, sizeof *st->pat);
    if (!st->pat) {
        hb_errorf(err, HB_INTERNAL, "out of memory");
        return fail_setup(st, err);
    }
    uint64_t seed = (uint64_t)hb_now_ns() * 0x9E3779B97F4A7C15ULL ^ (uint64_t)getpid() << 32;
    hb_disk_pattern_init(st->pat, seed);
    if (prefill(st, err) != HB_OK)
        return fail_setup(st, err);
    if (choose_engine(p, st, err) != HB_OK)
        return fail_setup(st, err);
    if (st->placement == PLACE_AUTO && st->hw_queues == 1)
        find_irq_cpus(st);

    s->state = st;
    s->nconfigs = 0;
    for (int o = 0; o < ops->n; o++) {
        for (int b = 0; b < blocks->n; b++) {
            hb_config *c = &s->configs[s->nconfigs];
            st->ops[s->nconfigs] = (int)ops->i[o];
            st->blocks[s->nconfigs] = blocks->i[b];
            snprintf(c->op, sizeof c->op, "%s", op_names[ops->i[o]]);
            c->block_bytes = blocks->i[b];
            c->unit = NULL;
            c->work_per_unit = (double)blocks->i[b]; /* a unit is one I/O of one block */
            s->nconfigs++;
        }
    }
    return HB_OK;
}

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
                 : st->placement == PLACE_AUTO && irq_slot(st) >= 0
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
                     ? "O_DIRECT: the page cache is bypassed; every phase starts after "
                       "fdatasync (the device's write cache flushed)"
                     : st->cold_cache
                     ? "buffered: every phase starts after fdatasync and posix_fadvise(DONTNEED) "
                       "of the whole file, and each thread drops its share again after every "
                       "pass over it: reads come from the device through readahead; writes land "
                       "in the page cache (written back at the drops) unless fsync_writes"
                     : "buffered, warm: the file is dropped from the cache only before each "
                       "phase; a second pass over a file smaller than free RAM is served by the "
                       "page cache");
    hb_json_kbool(j, "fsync_writes", st->fsync_writes);
    hb_json_kbool(j, "cold_cache", !st->direct && st->cold_cache);
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

/* ---- per thread ---- */


static void disk_thread_teardown(hb_worker *w);
static hb_status thread_setup(hb_worker *w, hb_err *err);

/* The harness calls thread_teardown only after a thread_setup that succeeded. */
static hb_status disk_thread_setup(hb_worker *w, hb_err *err)
{
    hb_status st = thread_setup(w, err);
    if (st != HB_OK)
        disk_thread_teardown(w);
    return st;
}

static hb_status thread_setup(hb_worker *w, hb_err *err)
{
    const disk_state *st = w->state;
    disk_thread *t = calloc(1, sizeof *t);
    if (!t)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    w->tstate = t;
    t->st = st;
    t->fd = -1;
    t->op = st->ops[w->config_index];
    t->block = (size_t)st->blocks[w->config_index];
    t->depth = st->depth;
    t->engine = st->engine;
    t->batch = st->batch < st->depth ? st->batch : st->depth;
    t->rng = st->pat->seed ^ (0xD1B54A32D192ED03ULL * (uint64_t)(w->tid + 1)) ^
             (uint64_t)w->config_index << 48;
    uint64_t fb = (uint64_t)st->file_bytes;
    t->nblocks = fb / t->block;
    t->region_len = fb / (uint64_t)w->nthreads / t->block * t->block;
    t->region_start = (uint64_t)w->tid * t->region_len;
    t->cold = !st->direct && st->cold_cache;
    t->pass_bytes = t->op == OP_RAND_READ || t->op == OP_RAND_WRITE ? fb / (uint64_t)w->nthreads
                                                                      : t->region_len;

    /* placement: the harness pinned us round-robin from the first CPU of the mask */
    if (st->placement == PLACE_UNPINNED && st->ncpus > 0) {
        cpu_set_t set;
        CPU_ZERO(&set);
        for (int i = 0; i < st->ncpus; i++)
            CPU_SET(st->cpus[i], &set);
        sched_setaffinity(0, sizeof set, &set);
        w->cpu = -1;
    } else if (st->placement == PLACE_AUTO) {
        int k = irq_slot(st);
        if (k >= 0) {
            cpu_set_t set;
            CPU_ZERO(&set);
            w->cpu = st->cpus[(k + w->tid) % st->ncpus];
            CPU_SET(w->cpu, &set);
            sched_setaffinity(0, sizeof set, &set);
        }
    }

    /* our own open file description (own offset/readahead state), flags as the run asks */
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", st->fd);
    t->fd = open(path, O_RDWR | O_CLOEXEC | (st->direct ? O_DIRECT : 0));
    if (t->fd < 0)
        t->fd = dup(st->direct ? st->dfd : st->fd);
    if (t->fd < 0)
        return hb_errorf(err, HB_INTERNAL, "cannot open the test file again: %s",
                         strerror(errno));

    size_t align = (size_t)(st->mem_align > 4096 ? st->mem_align : 4096);
    t->slot_bytes = (t->block + align - 1) / align * align;
    t->slots = calloc((size_t)t->depth, sizeof *t->slots);
    t->free_idx = calloc((size_t)t->depth, sizeof *t->free_idx);
    t->hist = malloc(sizeof *t->hist);
    /* Buffers of 2 MiB and more on transparent huge pages: an I/O's buffer is then a few
     * physically contiguous segments instead of one per 4 KiB page, and a 1 MiB I/O is not split
     * by the device's segment limit (254 here) into two requests. */
    size_t total = t->slot_bytes * (size_t)t->depth, huge = 2 * (size_t)MiB;
    if (total >= huge && st->hugepages) {
        align = huge;
        total = (total + huge - 1) / huge * huge;
    }
    if (!t->slots || !t->free_idx || !t->hist ||
        posix_memalign((void **)&t->mem, align, total) != 0)
        return hb_errorf(err, HB_INTERNAL, "out of memory for %d buffers of %zu bytes",
                         t->depth, t->slot_bytes);
#ifdef MADV_HUGEPAGE
    if (align == huge)
        t->thp = madvise(t->mem, total, MADV_HUGEPAGE) == 0;
#endif
#ifdef MADV_NOHUGEPAGE
    if (!st->hugepages) /* THP "always" would otherwise still back a large buffer with them */
        madvise(t->mem, total, MADV_NOHUGEPAGE);
#endif
    memset(t->mem, 0, total); /* first touch: this thread's node */
    for (int i = 0; i < t->depth; i++) {
        t->slots[i].buf = t->mem + (size_t)i * t->slot_bytes;
        t->free_idx[i] = t->depth - 1 - i;
    }
    t->nfree = t->depth;

    if (t->engine == ENG_URING) {
        int e = hb_uring_init(&t->ring, (unsigned)t->depth);
        if (e < 0)
            return hb_errorf(err, HB_INTERNAL, "io_uring_setup on thread %d: %s", w->tid,
                             strerror(-e));
        t->uring_ready = 1;
        t->fixed_file = hb_uring_register_file(&t->ring, t->fd) == 0;
        t->fixed_bufs = t->depth <= 256 && t->slot_bytes <= (size_t)GiB &&
                        hb_uring_register_buffers(&t->ring, t->mem, t->slot_bytes,
                                                  (unsigned)t->depth) == 0;
    } else if (t->engine == ENG_AIO) {
        int e = hb_aio_setup((unsigned)t->depth, &t->aio);
        if (e < 0)
            return hb_errorf(err, HB_INTERNAL, "io_setup on thread %d: %s", w->tid,
                             strerror(-e));
        t->aio_ready = 1;
        t->iocbs = calloc((size_t)t->depth, sizeof *t->iocbs);
        t->pending = calloc((size_t)t->depth, sizeof *t->pending);
        t->events = calloc((size_t)t->depth, sizeof *t->events);
        if (!t->iocbs || !t->pending || !t->events)
            return hb_errorf(err, HB_INTERNAL, "out of memory");
    }
    return HB_OK;
}

static void disk_thread_teardown(hb_worker *w)
{
    disk_thread *t = w->tstate;
    if (!t)
        return;
    if (t->uring_ready)
        hb_uring_free(&t->ring);
    if (t->aio_ready)
        hb_aio_destroy(t->aio);
    if (t->fd >= 0)
        close(t->fd);
    free(t->iocbs);
    free(t->pending);
    free(t->events);
    free(t->mem);
    free(t->slots);
    free(t->free_idx);
    free(t->hist);
    free(t);
    w->tstate = NULL;
}

/* ---- the hot path ---- */

__extension__ typedef unsigned __int128 u128;

static inline uint64_t next_rand(disk_thread *t)
{
    uint64_t x = t->rng; /* xorshift64* */
    x ^= x >> 12;
    x ^= x << 25;
    x ^= x >> 27;
    t->rng = x;
    return x * 0x2545F4914F6CDD1DULL;
}

/* The next I/O's offset and direction. */
static inline uint64_t next_io(disk_thread *t, int *write)
{
    uint64_t off;
    if (t->cold && (t->moved += t->block) > t->pass_bytes) { /* a pass done: start cold again */
        t->moved = t->block;
        if (t->op == OP_RAND_READ || t->op == OP_RAND_WRITE)
            posix_fadvise(t->fd, 0, 0, POSIX_FADV_DONTNEED);
        else
            posix_fadvise(t->fd, (off_t)t->region_start, (off_t)t->region_len,
                          POSIX_FADV_DONTNEED);
    }
    switch (t->op) {
    case OP_RAND_READ:
    case OP_RAND_WRITE:
        *write = t->op == OP_RAND_WRITE;
        return (uint64_t)(((u128)next_rand(t) * t->nblocks) >> 64) * t->block;
    default:
        *write = t->op == OP_SEQ_WRITE || (t->op == OP_RW && (next_rand(t) >> 63));
        off = t->region_start + t->pos;
        t->pos += t->block;
        if (t->pos + t->block > t->region_len)
            t->pos = 0;
        return off;
    }
}

/* A write's buffer: the content of its block; only the stamps change when the slot already
 * holds a block at the same position in the pattern (always, for blocks of 64 KiB multiples). */
static inline void prep_write(disk_thread *t, slot *s)
{
    size_t ph = (size_t)(s->off & (HB_DISK_PATTERN - 1));
    if (s->filled && s->phase == ph) {
        hb_disk_restamp(s->buf, s->off, t->block, t->st->pat);
    } else {
        hb_disk_fill(s->buf, s->off, t->block, t->st->pat);
        s->filled = 1;
        s->phase = ph;
    }
}

/* One finished I/O: 1 when it counts, 0 when it failed (the phase is then untrusted). */
static int complete(hb_worker *w, disk_thread *t, slot *s, long long res)
{
    const disk_state *st = t->st;
    if (res != (long long)t->block) {
        if (res < 0)
            hb_fail(w, "%s of %zu B at offset %llu: %s", s->write ? "write" : "read", t->block,
                    (unsigned long long)s->off, strerror((int)-res));
        else
            hb_fail(w, "short %s at offset %llu: %lld of %zu B", s->write ? "write" : "read",
                    (unsigned long long)s->off, res, t->block);
        t->dead = 1;
        s->filled = 0;
        return 0;
    }
    if (s->write) {
        t->writes++;
        return 1;
    }
    t->reads++;
    int full = t->block < 4096 || ++t->reads_seen % FULL_CHECK_EVERY == 0;
    if (st->corrupt && t->reads == 3)
        s->buf[0] ^= 0x5a; /* test builds: one read comes back wrong (a stamp byte) */
    long bad = hb_disk_check(s->buf, s->off, t->block, st->pat, full);
    t->full_checks += (uint64_t)full;
    s->phase = (size_t)(s->off & (HB_DISK_PATTERN - 1));
    s->filled = bad < 0;
    if (bad >= 0) {
        uint64_t unit = (s->off + (uint64_t)bad) & ~(uint64_t)(HB_DISK_UNIT - 1);
        if (unit >= s->off && unit + 8 <= s->off + t->block)
            hb_fail(w, "read of %zu B at offset %llu: byte %ld is wrong; the stamp of its "
                    "512-B unit says offset %llu", t->block, (unsigned long long)s->off, bad,
                    (unsigned long long)hb_disk_stamp_offset(s->buf + (unit - s->off), st->pat));
        else
            hb_fail(w, "read of %zu B at offset %llu: byte %ld is wrong", t->block,
                    (unsigned long long)s->off, bad);
    }
    return 1;
}

static void work_psync(hb_worker *w, disk_thread *t)
{
    uint64_t units = 0;
    slot *s = &t->slots[0];
    while (!hb_should_stop(w) && !t->dead) {
        s->off = next_io(t, &s->write);
        if (s->write)
            prep_write(t, s);
        int64_t t0 = hb_now_ns();
        ssize_t n = s->write ? pwrite(t->fd, s->buf, t->block, (off_t)s->off)
                             : pread(t->fd, s->buf, t->block, (off_t)s->off);
        int64_t t1 = hb_now_ns();
        hb_hist_add(t->hist, (uint64_t)(t1 - t0));
        units += (uint64_t)complete(w, t, s, n < 0 ? -(long long)errno : (long long)n);
        hb_publish(w, units);
    }
}

static void work_uring(hb_worker *w, disk_thread *t)
{
    /* fio's default order: reap up to submit_batch completions (each timestamped as it is taken
     * from the completion ring), then hand their slots straight back to the kernel in one call.
     * Reaping a whole burst at one timestamp and then resubmitting it slot by slot would book the
     * resubmission time as idle instead of as latency: the queue would hold fewer than iodepth
     * I/Os on average and the latencies would not add up to iodepth / IOPS (Little's law). */
    uint64_t units = 0;
    int inflight = 0, stopping = 0, group[256];
    for (;;) {
        if (hb_should_stop(w) || t->dead)
            stopping = 1;
        while (!stopping && inflight < t->depth) {
            int n = 0;
            while (n < t->batch && inflight + n < t->depth) {
                int idx = t->free_idx[--t->nfree];
                slot *s = &t->slots[idx];
                s->off = next_io(t, &s->write);
                if (s->write)
                    prep_write(t, s);
                hb_sqe *e = hb_uring_get_sqe(&t->ring);
                e->opcode = t->fixed_bufs
                                ? (s->write ? HB_URING_OP_WRITE_FIXED : HB_URING_OP_READ_FIXED)
                                : (s->write ? HB_URING_OP_WRITE : HB_URING_OP_READ);
                e->flags = t->fixed_file ? HB_URING_SQE_FIXED_FILE : 0;
                e->fd = t->fixed_file ? 0 : t->fd;
                e->addr = (uintptr_t)s->buf;
                e->len = (uint32_t)t->block;
                e->off = s->off;
                if (t->fixed_bufs)
                    e->buf_index = (uint16_t)idx;
                e->user_data = (uint64_t)idx;
                group[n++] = idx;
            }
            int64_t ts = hb_now_ns();
            for (int i = 0; i < n; i++)
                t->slots[group[i]].t0 = ts;
            inflight += n;
            int ret = hb_uring_submit(&t->ring, 0);
            if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
                hb_fail(w, "io_uring_enter: %s", strerror(-ret));
                t->dead = 1;
                return; /* the ring is unusable; teardown closes it, cancelling the rest */
            }
        }
        if (inflight == 0)
            break;
        if (!hb_uring_peek(&t->ring)) {
            /* nothing completed yet: wait for one (and push out any SQE a busy kernel left) */
            int ret = hb_uring_submit(&t->ring, 1);
            if (ret < 0 && ret != -EINTR && ret != -EAGAIN && ret != -EBUSY) {
                hb_fail(w, "io_uring_enter: %s", strerror(-ret));
                t->dead = 1;
                return;
            }
        }
        hb_cqe *c;
        for (int got = 0; got < t->batch && (c = hb_uring_peek(&t->ring)); got++) {
            int64_t tc = hb_now_ns();
            int idx = (int)c->user_data;
            long long res = c->res;
            hb_uring_seen(&t->ring);
            slot *s = &t->slots[idx];
            hb_hist_add(t->hist, (uint64_t)(tc - s->t0));
            inflight--;
            t->free_idx[t->nfree++] = idx;
            units += (uint64_t)complete(w, t, s, res);
        }
        hb_publish(w, units);
        if (stopping && inflight == 0)
            break;
    }
}

static void work_aio(hb_worker *w, disk_thread *t)
{
    uint64_t units = 0;
    int inflight = 0, stopping = 0;
    t->npending = 0;
    for (;;) {
        if (hb_should_stop(w) || t->dead)
            stopping = 1;
        int fresh = t->npending;
        while (!stopping && inflight + t->npending < t->depth) {
            int idx = t->free_idx[--t->nfree];
            slot *s = &t->slots[idx];
            s->off = next_io(t, &s->write);
            if (s->write)
                prep_write(t, s);
            struct iocb *cb = &t->iocbs[idx];
            memset(cb, 0, sizeof *cb);
            cb->aio_data = (uint64_t)idx;
            cb->aio_lio_opcode = s->write ? IOCB_CMD_PWRITE : IOCB_CMD_PREAD;
            cb->aio_fildes = (uint32_t)t->fd;
            cb->aio_buf = (uintptr_t)s->buf;
            cb->aio_nbytes = t->block;
            cb->aio_offset = (int64_t)s->off;
            t->pending[t->npending++] = cb;
        }
        if (inflight + t->npending == 0)
            break;
        /* groups of up to submit_batch iocbs per io_submit; what the kernel does not take now
         * (EAGAIN) waits in pending for the next round */
        while (t->npending) {
            int g = t->npending < t->batch ? t->npending : t->batch;
            int64_t ts = hb_now_ns();
            for (int i = fresh; i < g; i++) /* the first `fresh` waited since an EAGAIN: */
                t->slots[t->pending[i]->aio_data].t0 = ts; /* they keep their earlier t0 */
            int n = hb_aio_submit(t->aio, g, t->pending);
            if (n < 0 && n != -EAGAIN && n != -EINTR) {
                hb_fail(w, "io_submit: %s", strerror(-n));
                t->dead = 1;
                for (int i = 0; i < t->npending; i++) /* never submitted: back to the pool */
                    t->free_idx[t->nfree++] = (int)t->pending[i]->aio_data;
                t->npending = 0;
                break;
            }
            if (n <= 0)
                break;
            inflight += n;
            memmove(t->pending, t->pending + n, (size_t)(t->npending - n) * sizeof *t->pending);
            t->npending -= n;
            fresh = fresh > n ? fresh - n : 0;
        }
        if (t->dead && inflight == 0)
            break;
        if (inflight == 0)
            continue;
        int n = hb_aio_getevents(t->aio, 1, t->batch, t->events);
        int64_t tc = hb_now_ns();
        if (n < 0 && n != -EINTR) {
            hb_fail(w, "io_getevents: %s", strerror(-n));
            t->dead = 1;
            break;
        }
        for (int i = 0; i < n; i++) {
            int idx = (int)t->events[i].data;
            slot *s = &t->slots[idx];
            hb_hist_add(t->hist, (uint64_t)(tc - s->t0));
            inflight--;
            t->free_idx[t->nfree++] = idx;
            units += (uint64_t)complete(w, t, s, (long long)t->events[i].res);
        }
        hb_publish(w, units);
        if (stopping && inflight == 0 && t->npending == 0)
            break;
    }
}

static void disk_work(hb_worker *w)
{
    disk_thread *t = w->tstate;
    hb_hist_reset(t->hist);
    t->reads = t->writes = t->full_checks = 0;
    t->dead = 0;
    switch (t->engine) {
    case ENG_URING: work_uring(w, t); break;
    case ENG_AIO: work_aio(w, t); break;
    default: work_psync(w, t); break;
    }
    if (t->st->fsync_writes && t->op != OP_SEQ_READ && t->op != OP_RAND_READ &&
        fdatasync(t->fd) != 0)
        hb_fail(w, "fdatasync: %s", strerror(errno));
}

/* Every phase starts alike: nothing dirty, nothing of the file cached. */
static void disk_before_phase(hb_setup *s, int config_index, int nthreads, int repeat)
{
    const disk_state *st = s->state;
    (void)config_index, (void)nthreads, (void)repeat;
    fdatasync(st->fd);
    posix_fadvise(st->fd, 0, 0, POSIX_FADV_DONTNEED);
}

static void disk_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                              hb_json *j)
{
    (void)s;
    static hb_hist all; /* only the controlling thread writes results */
    uint64_t units = 0, reads = 0, writes = 0, full = 0;
    hb_hist_reset(&all);
    for (int i = 0; i < nthreads; i++) {
        const disk_thread *t = w[i].tstate;
        units += atomic_load_explicit(&w[i].units, memory_order_relaxed);
        if (!t)
            continue;
        hb_hist_merge(&all, t->hist);
        reads += t->reads;
        writes += t->writes;
        full += t->full_checks;
    }
    hb_json_knum(j, "iops", seconds > 0 ? (double)units / seconds : 0);
    hb_json_knum(j, "lat_avg_us", all.count ? (double)all.sum_ns / (double)all.count / 1e3 : 0);
    hb_json_knum(j, "lat_p50_us", hb_hist_quantile(&all, 0.50) / 1e3);
    hb_json_knum(j, "lat_p99_us", hb_hist_quantile(&all, 0.99) / 1e3);
    hb_json_knum(j, "lat_p999_us", hb_hist_quantile(&all, 0.999) / 1e3);
    hb_json_knum(j, "lat_min_us", all.count ? (double)all.min_ns / 1e3 : 0);
    hb_json_knum(j, "lat_max_us", (double)all.max_ns / 1e3);
    hb_json_kint(j, "lat_samples", (long long)all.count);
    hb_json_kint(j, "reads", (long long)reads);
    hb_json_kint(j, "writes", (long long)writes);
    hb_json_kint(j, "reads_checked_fully", (long long)full);
    if (nthreads > 0 && w[0].tstate)
        hb_json_kbool(j, "huge_page_buffers", ((const disk_thread *)w[0].tstate)->thp);
    if (nthreads > 0 && w[0].tstate && ((const disk_thread *)w[0].tstate)->uring_ready)
        hb_json_kbool(j, "io_uring_fixed_buffers", ((const disk_thread *)w[0].tstate)->fixed_bufs);
}

static void disk_teardown(hb_setup *s)
{
    state_free(s->state);
    s->state = NULL;
}

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
    .setup = disk_setup,
    .facts = disk_facts,
    .thread_setup = disk_thread_setup,
    .work = disk_work,
    .thread_teardown = disk_thread_teardown,
    .teardown = disk_teardown,
    .before_phase = disk_before_phase,
    .result_facts = disk_result_facts,
};
