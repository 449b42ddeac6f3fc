/* disk: the per-thread side. Each thread places itself (the interrupt CPU first, spread, or
 * unpinned), opens the file again, takes its aligned buffers and its io_uring ring or AIO
 * context; then the hot path: psync, io_uring or Linux AIO loops that issue the I/O, time it
 * into the thread's histogram and check every read. Also the results' extra keys. */
#include "disk_io.h"

#include "disk_setup.h"

#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include <linux/aio_abi.h>

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
    int cold, direct, fsync;
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

/* ---- per thread ---- */

static hb_status thread_setup(hb_worker *w, hb_err *err);

/* The harness calls thread_teardown only after a thread_setup that succeeded. */
hb_status disk_thread_setup(hb_worker *w, hb_err *err)
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
    int mode = st->modes[w->config_index];
    t->direct = mode == MODE_DIRECT;
    /* a row that direct I/O could not move runs cold, its writes flushed (row_mode, disk_setup.c) */
    t->cold = !t->direct && (st->cold_cache || st->direct);
    t->fsync = st->fsync_writes || mode == MODE_CACHE_DROPPED;
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
        int k = disk_irq_slot(st);
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
    t->fd = open(path, O_RDWR | O_CLOEXEC | (t->direct ? O_DIRECT : 0));
    if (t->fd < 0)
        t->fd = dup(t->direct ? st->dfd : st->fd);
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

void disk_thread_teardown(hb_worker *w)
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

void disk_work(hb_worker *w)
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
    if (t->fsync && t->op != OP_SEQ_READ && t->op != OP_RAND_READ &&
        fdatasync(t->fd) != 0)
        hb_fail(w, "fdatasync: %s", strerror(errno));
}

void disk_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                       hb_json *j)
{
    const disk_state *st = s->state;
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
    if (nthreads > 0) {
        hb_json_kstr(j, "io_mode", disk_mode_names[st->modes[w[0].config_index]]);
        hb_json_kstr(j, "io_mode_why", st->mode_why[w[0].config_index]);
    }
}
