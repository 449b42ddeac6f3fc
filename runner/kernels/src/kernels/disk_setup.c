/* disk: setup of a run. Checks the parameters against the file size, memory and free space;
 * finds the work directory's file system and device (hostfacts.h); creates, unlinks and
 * pre-fills the test file; probes and chooses the I/O engine; finds the CPU that takes the
 * device's completion interrupts; and lists the configurations. */
#include "disk_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/statvfs.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/aio_abi.h>

#include "../hostfacts.h"

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

/* ---- the interrupt CPU ---- */

typedef struct irq_probe {
    int fd; /* the test file, O_DIRECT */
    unsigned char *buf;
    uint64_t x, nb;
} irq_probe;

/* 64 random 4-KiB reads; how many, or -1 when one fails. */
static int irq_reads(void *arg)
{
    irq_probe *pr = arg;
    uint64_t x = pr->x;
    const int n = 64;
    for (int i = 0; i < n; i++) {
        x ^= x >> 12, x ^= x << 25, x ^= x >> 27;
        off_t off = (off_t)((x * 0x2545F4914F6CDD1DULL) % pr->nb * 4096);
        if (pread(pr->fd, pr->buf, 4096, off) != 4096)
            return -1;
    }
    return n;
}

/* Reads 64 random 4-KiB blocks with O_DIRECT and sees which interrupt line counted them, on
 * which CPUs. Leaves nirq_cpus 0 when it cannot tell. */
static void find_irq_cpus(disk_state *st)
{
    unsigned char *buf = NULL;
    char path[64];
    snprintf(path, sizeof path, "/proc/self/fd/%d", st->fd);
    int fd = open(path, O_RDONLY | O_DIRECT | O_CLOEXEC);
    if (fd >= 0 && posix_memalign((void **)&buf, 4096, 4096) == 0) {
        irq_probe pr = {fd, buf, st->pat->seed | 1, (uint64_t)st->file_bytes / 4096};
        hb_irq_line line;
        if (hb_find_irq(irq_reads, &pr, &line)) {
            for (int i = 0; i < line.ncpus; i++)
                st->irq_cpus[st->nirq_cpus++] = line.cpus[i];
            snprintf(st->irq_name, sizeof st->irq_name, "%s", line.name);
        }
    }
    if (fd >= 0)
        close(fd);
    free(buf);
}

/* Where the interrupt CPU sits in the affinity mask, or -1 (not found, or not ours to use). */
int disk_irq_slot(const disk_state *st)
{
    for (int k = 0; st->nirq_cpus > 0 && k < st->ncpus; k++)
        if (st->cpus[k] == st->irq_cpus[0])
            return k;
    return -1;
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

/* How one configuration's I/O goes, and why (disk_internal.h MODE_*). With direct asked, a block
 * that direct I/O cannot move (not a multiple of the logical block size), or a filesystem that
 * refuses O_DIRECT, runs buffered with the cache dropped and its writes flushed in the window. */
static int row_mode(const disk_state *st, int op, long long block, char *why, size_t size)
{
    int writes = op != OP_SEQ_READ && op != OP_RAND_READ;
    if (st->memory_backed) {
        snprintf(why, size, "the work directory is on %s: the file lives in memory, there is no "
                 "device under it", st->fstype);
        return MODE_BUFFERED;
    }
    if (st->direct && st->dfd >= 0 && block % st->lbs == 0) {
        snprintf(why, size, "O_DIRECT: the page cache is bypassed (%lld B is a multiple of the "
                 "%d-B logical block size)", block, st->lbs);
        return MODE_DIRECT;
    }
    if (st->direct) {
        if (st->dfd < 0)
            snprintf(why, size, "%s: ran buffered, the file dropped from the page cache before "
                     "the phase and after every pass%s", st->dio_refused,
                     writes ? ", writes flushed (fdatasync) inside the timed window" : "");
        else
            snprintf(why, size, "%lld B is not a multiple of the %d-B logical block size, which "
                     "direct I/O cannot move: ran buffered, the file dropped from the page cache "
                     "before the phase and after every pass%s", block, st->lbs,
                     writes ? ", writes flushed (fdatasync) inside the timed window" : "");
        return MODE_CACHE_DROPPED;
    }
    if (!st->cold_cache) {
        snprintf(why, size, "direct false, cold_cache false: after the first pass the page cache "
                 "serves the file");
        return MODE_BUFFERED;
    }
    if (writes && !st->fsync_writes) {
        snprintf(why, size, "direct false: writes land in the page cache and are counted before "
                 "they reach the device (fsync_writes false)");
        return MODE_BUFFERED;
    }
    snprintf(why, size, "direct false: buffered, the file dropped from the page cache before the "
             "phase and after every pass%s", writes ? ", writes flushed (fdatasync) inside the "
             "timed window" : "");
    return MODE_CACHE_DROPPED;
}

void disk_state_free(disk_state *st)
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
    disk_state_free(st);
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
    case ENG_PSYNC: /* iodepth 1: disk_rules */
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

hb_status disk_setup(const hb_params *p, hb_setup *s, hb_err *err)
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
    /* file_size a multiple of 4096, no block above it: disk_rules */
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
    hb_find_mount(ds.st_dev, st->workdir, st->fstype, sizeof st->fstype, st->mount,
                  sizeof st->mount);
    hb_blockdev dev;
    hb_find_blockdev(ds.st_dev, &dev);
    snprintf(st->device, sizeof st->device, "%s", dev.name);
    st->lbs = dev.lbs;
    st->lbs_source = dev.lbs_source;
    st->rotational = dev.rotational;
    st->hw_queues = dev.hw_queues;
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
    int have = hb_dio_align(st->fd, &offs, &mem);
    if (have == 1) {
        st->lbs = offs;
        st->mem_align = mem;
        st->lbs_source = "statx STATX_DIOALIGN";
    } else if (have < 0) {
        dio_ok = 0;
    }
    if (st->direct) {
        st->dfd = dio_ok ? openat(dirfd, st->file, O_RDWR | O_DIRECT | O_CLOEXEC) : -1;
        if (st->dfd < 0) /* every row then runs buffered, and says why (row_mode) */
            snprintf(st->dio_refused, sizeof st->dio_refused, "the %.20s filesystem of %.120s "
                     "refused O_DIRECT (%.50s)", st->fstype, st->workdir,
                     dio_ok ? strerror(errno) : "statx reports no direct I/O alignment");
    }
    unlinkat(dirfd, st->file, 0);
    close(dirfd);
    if (st->lbs <= 0) {
        st->lbs = 4096;
        st->lbs_source = "default (no sysfs entry, BLKSSZGET or statx answer)";
    }
    if (st->mem_align <= 0)
        st->mem_align = st->lbs;
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
            snprintf(c->op, sizeof c->op, "%s", disk_op_names[ops->i[o]]);
            c->block_bytes = blocks->i[b];
            c->unit = NULL;
            c->work_per_unit = (double)blocks->i[b]; /* a unit is one I/O of one block */
            st->modes[s->nconfigs] = row_mode(st, (int)ops->i[o], blocks->i[b],
                                              st->mode_why[s->nconfigs],
                                              sizeof st->mode_why[0]);
            s->nconfigs++;
        }
    }
    return HB_OK;
}
