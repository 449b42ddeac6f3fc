/* The disk kernel's parts, exposed for tests/test_disk.c: the file's content (a pure function
 * of the byte offset), its check, the latency histogram, and the raw io_uring / libaio engines
 * (disk_uring.c: system calls only, no liburing). */
#ifndef HB_KERNEL_DISK_H
#define HB_KERNEL_DISK_H

#include <stddef.h>
#include <stdint.h>

/* ---- content: every 512-byte unit starts with its own file offset XOR the run's seed (8 bytes,
 * little-endian); every other byte is pattern[offset mod 64 KiB], 64 KiB of random bytes made
 * from the seed. Writes store exactly this, so the file's content never changes and any read
 * can be checked: a misplaced read shows the offset it really came from. ---- */

#define HB_DISK_UNIT 512
#define HB_DISK_STAMP 8
#define HB_DISK_PATTERN (64 * 1024)

typedef struct hb_disk_pattern {
    uint64_t seed;
    _Alignas(64) unsigned char bytes[HB_DISK_PATTERN];
} hb_disk_pattern;

void hb_disk_pattern_init(hb_disk_pattern *p, uint64_t seed);
/* dst = content of [off, off + len). */
void hb_disk_fill(unsigned char *dst, uint64_t off, size_t len, const hb_disk_pattern *p);
/* Rewrites only the stamps: dst already holds the content of a block at an offset that is
 * congruent to off modulo HB_DISK_PATTERN, with the same length. */
void hb_disk_restamp(unsigned char *dst, uint64_t off, size_t len, const hb_disk_pattern *p);
/* -1 when buf holds the content of [off, off + len), else the index of the first wrong byte.
 * full = 0 checks only the stamps (8 bytes per 512), full = 1 every byte. */
long hb_disk_check(const unsigned char *buf, uint64_t off, size_t len, const hb_disk_pattern *p,
                   int full);
/* The file offset a stamp at buf says it came from (for messages). */
uint64_t hb_disk_stamp_offset(const unsigned char *stamp, const hb_disk_pattern *p);

/* ---- latency histogram: log-linear like HdrHistogram, 128 sub-buckets per power of two
 * (<= 0.4 % from the bucket's middle), exact below 128 ns, up to 2^41 ns (~36 min). One per
 * thread, no locks; merged after the phase. ---- */

#define HB_HIST_SUB_BITS 7
#define HB_HIST_SUB (1 << HB_HIST_SUB_BITS)
#define HB_HIST_MAX_EXP 40
#define HB_HIST_BUCKETS ((HB_HIST_MAX_EXP - HB_HIST_SUB_BITS + 2) * HB_HIST_SUB)

typedef struct hb_hist {
    uint64_t count, sum_ns, min_ns, max_ns;
    uint64_t b[HB_HIST_BUCKETS];
} hb_hist;

static inline int hb_hist_index(uint64_t v)
{
    if (v < HB_HIST_SUB)
        return (int)v;
    if (v >> (HB_HIST_MAX_EXP + 1))
        v = (1ULL << (HB_HIST_MAX_EXP + 1)) - 1;
    int e = 63 - __builtin_clzll(v);
    return (e - HB_HIST_SUB_BITS + 1) * HB_HIST_SUB +
           (int)((v >> (e - HB_HIST_SUB_BITS)) & (HB_HIST_SUB - 1));
}

static inline void hb_hist_add(hb_hist *h, uint64_t ns)
{
    h->b[hb_hist_index(ns)]++;
    h->count++;
    h->sum_ns += ns;
    if (ns < h->min_ns)
        h->min_ns = ns;
    if (ns > h->max_ns)
        h->max_ns = ns;
}

void hb_hist_reset(hb_hist *h);
void hb_hist_merge(hb_hist *into, const hb_hist *from);
/* Lowest value and width of bucket i. */
void hb_hist_bucket(int i, uint64_t *low, uint64_t *width);
/* The q-quantile (0 < q <= 1), ns: the middle of the bucket that holds the ceil(q * count)-th
 * smallest value, clamped to [min, max]; 0 when empty. */
double hb_hist_quantile(const hb_hist *h, double q);

/* ---- io_uring through raw system calls ---- */

typedef struct hb_sqe {
    uint8_t opcode, flags;
    uint16_t ioprio;
    int32_t fd;
    uint64_t off, addr;
    uint32_t len, rw_flags;
    uint64_t user_data;
    uint16_t buf_index, personality;
    int32_t splice_fd_in;
    uint64_t addr3, pad2;
} hb_sqe;

typedef struct hb_cqe {
    uint64_t user_data;
    int32_t res;
    uint32_t flags;
} hb_cqe;

enum {
    HB_URING_OP_NOP = 0,
    HB_URING_OP_READ_FIXED = 4,
    HB_URING_OP_WRITE_FIXED = 5,
    HB_URING_OP_READ = 22,
    HB_URING_OP_WRITE = 23,
    HB_URING_SQE_FIXED_FILE = 1,
};

typedef struct hb_uring {
    int fd;
    unsigned flags;    /* setup flags the kernel accepted */
    unsigned features; /* IORING_FEAT_* */
    unsigned *sq_head, *sq_tail, *sq_mask, *sq_array, sq_entries;
    unsigned *cq_head, *cq_tail, *cq_mask, cq_entries;
    hb_sqe *sqes;
    hb_cqe *cqes;
    unsigned sq_local; /* our tail: SQEs filled but not yet published */
    void *sq_ring, *cq_ring;
    size_t sq_ring_bytes, cq_ring_bytes, sqes_bytes;
} hb_uring;

/* Sets up a ring with `entries` submission slots; tries the cheapest task-work flags first
 * (single issuer, deferred task work) and falls back to none. 0 or -errno. */
int hb_uring_init(hb_uring *r, unsigned entries);
void hb_uring_free(hb_uring *r);
/* The next free SQE, zeroed, or NULL when entries are all filled. */
hb_sqe *hb_uring_get_sqe(hb_uring *r);
/* Publishes the filled SQEs, submits them and waits for min_complete completions. Returns
 * how many were submitted, or -errno. */
int hb_uring_submit(hb_uring *r, unsigned min_complete);
/* The oldest unread completion, or NULL. */
static inline hb_cqe *hb_uring_peek(hb_uring *r)
{
    unsigned head = *r->cq_head;
    if (head == __atomic_load_n(r->cq_tail, __ATOMIC_ACQUIRE))
        return NULL;
    return &r->cqes[head & *r->cq_mask];
}
static inline void hb_uring_seen(hb_uring *r)
{
    __atomic_store_n(r->cq_head, *r->cq_head + 1, __ATOMIC_RELEASE);
}
/* io_uring_register(FILES) with one fd: SQEs then name it as index 0 with the FIXED_FILE flag. */
int hb_uring_register_file(hb_uring *r, int fd);
/* io_uring_register(BUFFERS): n buffers of len bytes each, contiguous from base. */
int hb_uring_register_buffers(hb_uring *r, void *base, size_t len, unsigned n);

/* ---- Linux native AIO (what libaio wraps) through raw system calls ---- */

typedef unsigned long hb_aio_ctx;
struct iocb;
struct io_event;
int hb_aio_setup(unsigned nr, hb_aio_ctx *ctx);                 /* 0 or -errno */
int hb_aio_destroy(hb_aio_ctx ctx);
int hb_aio_submit(hb_aio_ctx ctx, long n, struct iocb **iocbs); /* submitted or -errno */
int hb_aio_getevents(hb_aio_ctx ctx, long min, long max, struct io_event *ev); /* n or -errno */

#endif
