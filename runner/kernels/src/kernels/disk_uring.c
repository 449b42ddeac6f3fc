/* io_uring and Linux native AIO through raw system calls: no liburing or libaio to install.
 * The ABI structures are declared in disk.h and checked against the kernel headers when the
 * build host has them. */
#include "disk.h"

#include <errno.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <sys/uio.h>
#include <unistd.h>

#include <linux/aio_abi.h>

#ifndef SYS_io_uring_setup /* one number on every architecture since Linux 5.1 */
#define SYS_io_uring_setup 425
#define SYS_io_uring_enter 426
#define SYS_io_uring_register 427
#endif

#define OFF_SQ_RING 0ULL
#define OFF_CQ_RING 0x8000000ULL
#define OFF_SQES 0x10000000ULL
#define FEAT_SINGLE_MMAP (1U << 0)
#define ENTER_GETEVENTS (1U << 0)
#define SETUP_CLAMP (1U << 4)
#define SETUP_SUBMIT_ALL (1U << 7)
#define SETUP_COOP_TASKRUN (1U << 8)
#define SETUP_SINGLE_ISSUER (1U << 12)
#define SETUP_DEFER_TASKRUN (1U << 13)
#define REGISTER_BUFFERS 0
#define REGISTER_FILES 2

struct sq_offsets {
    uint32_t head, tail, ring_mask, ring_entries, flags, dropped, array, resv1;
    uint64_t user_addr;
};
struct cq_offsets {
    uint32_t head, tail, ring_mask, ring_entries, overflow, cqes, flags, resv1;
    uint64_t user_addr;
};
struct uring_params {
    uint32_t sq_entries, cq_entries, flags, sq_thread_cpu, sq_thread_idle, features, wq_fd,
        resv[3];
    struct sq_offsets sq_off;
    struct cq_offsets cq_off;
};

_Static_assert(sizeof(hb_sqe) == 64, "io_uring SQE is 64 bytes");
_Static_assert(sizeof(hb_cqe) == 16, "io_uring CQE is 16 bytes");
_Static_assert(sizeof(struct uring_params) == 120, "io_uring_params is 120 bytes");

#if defined(__has_include)
#if __has_include(<linux/io_uring.h>)
#include <linux/io_uring.h>
_Static_assert(sizeof(struct io_uring_params) == sizeof(struct uring_params), "params");
_Static_assert((int)IORING_OP_READ == (int)HB_URING_OP_READ &&
                   (int)IORING_OP_WRITE == (int)HB_URING_OP_WRITE &&
                   (int)IORING_OP_READ_FIXED == (int)HB_URING_OP_READ_FIXED &&
                   (int)IORING_OP_WRITE_FIXED == (int)HB_URING_OP_WRITE_FIXED,
               "opcodes");
_Static_assert(IORING_OFF_CQ_RING == OFF_CQ_RING && IORING_OFF_SQES == OFF_SQES, "offsets");
_Static_assert(IOSQE_FIXED_FILE == HB_URING_SQE_FIXED_FILE, "fixed file flag");
_Static_assert(__builtin_offsetof(struct io_uring_sqe, user_data) ==
                   __builtin_offsetof(hb_sqe, user_data),
               "sqe layout");
#endif
#endif

static int sys_ret(long r)
{
    return r < 0 ? -errno : (int)r;
}

int hb_uring_init(hb_uring *r, unsigned entries)
{
    /* single issuer + deferred task work: completions run when we wait, on our thread, with no
     * interrupting task work (6.1+); coop task work (5.19+); then nothing. */
    static const unsigned tries[] = {
        SETUP_CLAMP | SETUP_SUBMIT_ALL | SETUP_SINGLE_ISSUER | SETUP_DEFER_TASKRUN,
        SETUP_CLAMP | SETUP_SUBMIT_ALL | SETUP_COOP_TASKRUN,
        SETUP_CLAMP,
        0,
    };
    struct uring_params p;
    int fd = -1;
    memset(r, 0, sizeof *r);
    r->fd = -1;
    for (size_t t = 0; t < sizeof tries / sizeof tries[0]; t++) {
        memset(&p, 0, sizeof p);
        p.flags = tries[t];
        fd = sys_ret(syscall(SYS_io_uring_setup, entries, &p));
        if (fd >= 0 || fd != -EINVAL)
            break;
    }
    if (fd < 0)
        return fd;
    r->fd = fd;
    r->flags = p.flags;
    r->features = p.features;
    r->sq_ring_bytes = p.sq_off.array + p.sq_entries * sizeof(unsigned);
    r->cq_ring_bytes = p.cq_off.cqes + p.cq_entries * sizeof(hb_cqe);
    if (p.features & FEAT_SINGLE_MMAP) {
        if (r->cq_ring_bytes > r->sq_ring_bytes)
            r->sq_ring_bytes = r->cq_ring_bytes;
        r->cq_ring_bytes = r->sq_ring_bytes;
    }
    r->sq_ring = mmap(NULL, r->sq_ring_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE,
                      fd, OFF_SQ_RING);
    if (r->sq_ring == MAP_FAILED) {
        int e = -errno;
        r->sq_ring = NULL;
        hb_uring_free(r);
        return e;
    }
    if (p.features & FEAT_SINGLE_MMAP) {
        r->cq_ring = r->sq_ring;
    } else {
        r->cq_ring = mmap(NULL, r->cq_ring_bytes, PROT_READ | PROT_WRITE,
                          MAP_SHARED | MAP_POPULATE, fd, OFF_CQ_RING);
        if (r->cq_ring == MAP_FAILED) {
            int e = -errno;
            r->cq_ring = NULL;
            hb_uring_free(r);
            return e;
        }
    }
    r->sqes_bytes = p.sq_entries * sizeof(hb_sqe);
    r->sqes = mmap(NULL, r->sqes_bytes, PROT_READ | PROT_WRITE, MAP_SHARED | MAP_POPULATE, fd,
                   OFF_SQES);
    if (r->sqes == MAP_FAILED) {
        int e = -errno;
        r->sqes = NULL;
        hb_uring_free(r);
        return e;
    }
    char *sq = r->sq_ring, *cq = r->cq_ring;
    r->sq_head = (unsigned *)(sq + p.sq_off.head);
    r->sq_tail = (unsigned *)(sq + p.sq_off.tail);
    r->sq_mask = (unsigned *)(sq + p.sq_off.ring_mask);
    r->sq_array = (unsigned *)(sq + p.sq_off.array);
    r->sq_entries = p.sq_entries;
    r->cq_head = (unsigned *)(cq + p.cq_off.head);
    r->cq_tail = (unsigned *)(cq + p.cq_off.tail);
    r->cq_mask = (unsigned *)(cq + p.cq_off.ring_mask);
    r->cq_entries = p.cq_entries;
    r->cqes = (hb_cqe *)(cq + p.cq_off.cqes);
    for (unsigned i = 0; i < p.sq_entries; i++) /* SQE i always sits in array slot i */
        r->sq_array[i] = i;
    r->sq_local = *r->sq_tail;
    return 0;
}

void hb_uring_free(hb_uring *r)
{
    if (r->sqes)
        munmap(r->sqes, r->sqes_bytes);
    if (r->cq_ring && r->cq_ring != r->sq_ring)
        munmap(r->cq_ring, r->cq_ring_bytes);
    if (r->sq_ring)
        munmap(r->sq_ring, r->sq_ring_bytes);
    if (r->fd >= 0)
        close(r->fd);
    memset(r, 0, sizeof *r);
    r->fd = -1;
}

hb_sqe *hb_uring_get_sqe(hb_uring *r)
{
    unsigned head = __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
    if (r->sq_local - head >= r->sq_entries)
        return NULL;
    hb_sqe *e = &r->sqes[r->sq_local & *r->sq_mask];
    r->sq_local++;
    memset(e, 0, sizeof *e);
    return e;
}

int hb_uring_submit(hb_uring *r, unsigned min_complete)
{
    /* everything the kernel has not consumed yet, also what a failed call left behind */
    unsigned n = r->sq_local - __atomic_load_n(r->sq_head, __ATOMIC_ACQUIRE);
    if (*r->sq_tail != r->sq_local)
        __atomic_store_n(r->sq_tail, r->sq_local, __ATOMIC_RELEASE);
    if (!n && !min_complete)
        return 0;
    long ret = syscall(SYS_io_uring_enter, r->fd, n, min_complete,
                       min_complete ? ENTER_GETEVENTS : 0, NULL, 0);
    return sys_ret(ret);
}

int hb_uring_register_file(hb_uring *r, int fd)
{
    return sys_ret(syscall(SYS_io_uring_register, r->fd, REGISTER_FILES, &fd, 1));
}

int hb_uring_register_buffers(hb_uring *r, void *base, size_t len, unsigned n)
{
    struct iovec iov[256];
    if (n > 256)
        return -EINVAL;
    for (unsigned i = 0; i < n; i++) {
        iov[i].iov_base = (char *)base + (size_t)i * len;
        iov[i].iov_len = len;
    }
    return sys_ret(syscall(SYS_io_uring_register, r->fd, REGISTER_BUFFERS, iov, n));
}

int hb_aio_setup(unsigned nr, hb_aio_ctx *ctx)
{
    aio_context_t c = 0;
    int ret = sys_ret(syscall(SYS_io_setup, nr, &c));
    *ctx = (hb_aio_ctx)c;
    return ret < 0 ? ret : 0;
}

int hb_aio_destroy(hb_aio_ctx ctx)
{
    return sys_ret(syscall(SYS_io_destroy, (aio_context_t)ctx));
}

int hb_aio_submit(hb_aio_ctx ctx, long n, struct iocb **iocbs)
{
    return sys_ret(syscall(SYS_io_submit, (aio_context_t)ctx, n, iocbs));
}

int hb_aio_getevents(hb_aio_ctx ctx, long min, long max, struct io_event *ev)
{
    return sys_ret(syscall(SYS_io_getevents, (aio_context_t)ctx, min, max, ev, NULL));
}
