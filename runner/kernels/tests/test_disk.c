/* The disk kernel's parts: the file content and its check, the latency histogram, the new
 * parameter types it uses, and the raw io_uring / Linux AIO engines on a real file. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <linux/aio_abi.h>

#include "check.h"
#include "kernels/disk.h"
#include "params.h"

static hb_disk_pattern pat;

static void test_content_roundtrip(void)
{
    static const uint64_t offs[] = {0, 1, 7, 8, 511, 512, 513, 4096, 65535, 65536, 1048576 + 3,
                                    (1ULL << 36) + 512};
    static const size_t lens[] = {1, 2, 8, 9, 504, 512, 1024, 4096, 65536, 65536 + 512, 300000};
    unsigned char *buf = malloc(300000), *ref = malloc(300000);
    for (size_t i = 0; i < sizeof offs / sizeof offs[0]; i++)
        for (size_t k = 0; k < sizeof lens / sizeof lens[0]; k++) {
            hb_disk_fill(buf, offs[i], lens[k], &pat);
            CHECK(hb_disk_check(buf, offs[i], lens[k], &pat, 1) == -1, "full check of own fill "
                  "off %llu len %zu", (unsigned long long)offs[i], lens[k]);
            CHECK(hb_disk_check(buf, offs[i], lens[k], &pat, 0) == -1, "stamp check off %llu "
                  "len %zu", (unsigned long long)offs[i], lens[k]);
            /* byte-for-byte: a sub-range of a fill is the fill of the sub-range */
            if (lens[k] > 3) {
                hb_disk_fill(ref, offs[i] + 1, lens[k] - 2, &pat);
                CHECK(memcmp(ref, buf + 1, lens[k] - 2) == 0, "content is a function of the "
                      "offset: off %llu len %zu", (unsigned long long)offs[i], lens[k]);
            }
        }
    free(buf);
    free(ref);
}

static void test_restamp_equals_fill(void)
{
    size_t len = 1 << 20;
    unsigned char *a = malloc(len), *b = malloc(len);
    hb_disk_fill(a, 0, len, &pat);
    hb_disk_restamp(a, 5 * (uint64_t)len, len, &pat); /* same place in the 64 KiB pattern */
    hb_disk_fill(b, 5 * (uint64_t)len, len, &pat);
    CHECK(memcmp(a, b, len) == 0, "restamp of a 1 MiB block = fill at the new offset");
    hb_disk_fill(a, 4096, 8192, &pat);
    hb_disk_restamp(a, 4096 + 65536 * 3, 8192, &pat);
    hb_disk_fill(b, 4096 + 65536 * 3, 8192, &pat);
    CHECK(memcmp(a, b, 8192) == 0, "restamp of an 8 KiB block at the same pattern phase");
    free(a);
    free(b);
}

static void test_check_catches_errors(void)
{
    size_t len = 65536;
    unsigned char *buf = malloc(len);
    hb_disk_fill(buf, 1 << 20, len, &pat);
    buf[777] ^= 1; /* inside the body of unit 1 */
    CHECK(hb_disk_check(buf, 1 << 20, len, &pat, 1) == 777, "full check finds the flipped byte");
    CHECK(hb_disk_check(buf, 1 << 20, len, &pat, 0) == -1, "stamps alone do not see a body byte");
    buf[777] ^= 1;
    buf[1024 + 3] ^= 0x80; /* inside the stamp of unit 2 */
    CHECK(hb_disk_check(buf, 1 << 20, len, &pat, 0) == 1024, "stamp check finds a bad stamp");
    /* a misdirected read: the data of the block 512 B further */
    hb_disk_fill(buf, (1 << 20) + 512, len, &pat);
    long bad = hb_disk_check(buf, 1 << 20, len, &pat, 0);
    CHECK(bad == 0, "misplaced block caught at its first stamp: %ld", bad);
    CHECK(hb_disk_stamp_offset(buf, &pat) == (1 << 20) + 512, "the stamp names where it came from");
    /* zeros (an unwritten extent) never pass */
    memset(buf, 0, len);
    CHECK(hb_disk_check(buf, 0, len, &pat, 0) >= 0, "zeros fail the stamp check");
    CHECK(hb_disk_check(buf, 3, 1, &pat, 1) >= 0 || pat.bytes[3] == 0 ||
              ((pat.seed >> 24) & 0xff) == 0, "a 1-byte read of zero is caught (unless it is 0)");
    /* another run's file (another seed) fails */
    hb_disk_pattern *other = aligned_alloc(64, sizeof *other);
    hb_disk_pattern_init(other, pat.seed + 1);
    hb_disk_fill(buf, 0, len, other);
    CHECK(hb_disk_check(buf, 0, len, &pat, 0) == 0, "a file of another seed fails");
    free(other);
    free(buf);
}

static void test_histogram(void)
{
    uint64_t prev_low = 0;
    int ok_mono = 1, ok_bounds = 1;
    for (uint64_t v = 0; v < (1ULL << 41); v = v < 1000 ? v + 1 : v + v / 97 + 1) {
        int i = hb_hist_index(v);
        uint64_t low, width;
        hb_hist_bucket(i, &low, &width);
        ok_bounds &= i >= 0 && i < HB_HIST_BUCKETS && low <= v && v < low + width &&
                     (width == 1 || (double)width / 2 / (double)low <= 1.0 / 256 + 1e-12);
        ok_mono &= low >= prev_low;
        prev_low = low;
    }
    CHECK(ok_bounds, "every value lies in its bucket, half-width <= 1/256 of the value");
    CHECK(ok_mono, "buckets ascend");
    CHECK(hb_hist_index(~0ULL) == HB_HIST_BUCKETS - 1, "huge values land in the last bucket");

    hb_hist *h = malloc(sizeof *h), *g = malloc(sizeof *g);
    hb_hist_reset(h);
    hb_hist_reset(g);
    CHECK(hb_hist_quantile(h, 0.5) == 0, "empty histogram: 0");
    for (uint64_t v = 1; v <= 100000; v++) /* 1 us .. 100 ms in us steps, two halves */
        hb_hist_add(v % 2 ? h : g, v * 1000);
    hb_hist_merge(h, g);
    CHECK(h->count == 100000 && h->min_ns == 1000 && h->max_ns == 100000000, "merge: count, min, max");
    CHECK(fabs(hb_hist_quantile(h, 0.5) - 50000e3) / 50000e3 < 0.005, "p50 within 0.5 %%: %.0f",
          hb_hist_quantile(h, 0.5));
    CHECK(fabs(hb_hist_quantile(h, 0.99) - 99000e3) / 99000e3 < 0.005, "p99 within 0.5 %%");
    CHECK(fabs(hb_hist_quantile(h, 0.999) - 99900e3) / 99900e3 < 0.005, "p99.9 within 0.5 %%");
    CHECK(hb_hist_quantile(h, 1.0) <= 100000e3 && hb_hist_quantile(h, 1e-9) >= 1000,
          "quantiles clamped to [min, max]");
    CHECK(fabs((double)h->sum_ns / h->count - 50000.5e3) < 1, "exact mean");
    hb_hist_reset(h);
    hb_hist_add(h, 77);
    CHECK(hb_hist_quantile(h, 0.5) == 77, "exact below 128 ns");
    free(h);
    free(g);
}

static const char *const colors[] = {"red", "green", "blue", NULL};

static void test_new_param_types(void)
{
    hb_param_def list = {"ops", HB_P_ENUM_LIST, "red", 0, 0, colors, "h", NULL, NULL};
    hb_param_def str = {"dir", HB_P_STRING, ".", 1, 16, NULL, "h", NULL, NULL};
    hb_value v;
    hb_err err;
    CHECK(hb_param_parse_value(&list, "blue,red", &v, &err) == HB_OK && v.n == 2 && v.i[0] == 2 &&
              v.i[1] == 0, "enum list parses to choice indexes");
    CHECK(hb_param_parse_value(&list, "red,red", &v, &err) == HB_BAD_PARAM &&
              strstr(err.message, "twice"), "enum list: duplicate refused: %s", err.message);
    CHECK(hb_param_parse_value(&list, "red,pink", &v, &err) == HB_BAD_PARAM &&
              strstr(err.message, "red, green, blue"), "enum list: unknown item names the "
              "choices: %s", err.message);
    CHECK(hb_param_parse_value(&list, "red,", &v, &err) == HB_BAD_PARAM, "trailing comma");
    CHECK(hb_param_parse_value(&list, "", &v, &err) == HB_BAD_PARAM, "empty list");
    CHECK(hb_param_parse_value(&str, "/tmp/x", &v, &err) == HB_OK && !strcmp(v.s, "/tmp/x"),
          "string kept as given");
    CHECK(hb_param_parse_value(&str, "", &v, &err) == HB_BAD_PARAM, "string below min length");
    CHECK(hb_param_parse_value(&str, "01234567890123456", &v, &err) == HB_BAD_PARAM,
          "string above max length: %s", err.message);
    CHECK(hb_param_parse_value(&str, "a\nb", &v, &err) == HB_BAD_PARAM &&
              strstr(err.message, "control"), "control characters refused");
}

/* A test file in /tmp, removed at once, holding the content of [0, size). */
static int temp_file(size_t size)
{
    char tmpl[] = "/tmp/hbk-test-disk-XXXXXX";
    int fd = mkstemp(tmpl);
    if (fd < 0)
        return -1;
    unlink(tmpl);
    unsigned char *buf = malloc(size);
    hb_disk_fill(buf, 0, size, &pat);
    ssize_t w = pwrite(fd, buf, size, 0);
    free(buf);
    return w == (ssize_t)size ? fd : -1;
}

static void test_uring_roundtrip(void)
{
    hb_uring r;
    int e = hb_uring_init(&r, 8);
    if (e < 0) {
        fprintf(stderr, "test_disk: io_uring unavailable here (%s): skipped\n", strerror(-e));
        return;
    }
    int fd = temp_file(1 << 16);
    unsigned char *buf = aligned_alloc(4096, 4 * 4096);
    CHECK(fd >= 0, "temp file");
    CHECK(r.sq_entries >= 8 && r.cq_entries >= 8, "ring sizes");
    for (int i = 0; i < 4; i++) {
        hb_sqe *q = hb_uring_get_sqe(&r);
        q->opcode = HB_URING_OP_READ;
        q->fd = fd;
        q->addr = (uintptr_t)(buf + i * 4096);
        q->len = 4096;
        q->off = (uint64_t)(3 - i) * 4096;
        q->user_data = (uint64_t)i;
    }
    CHECK(hb_uring_submit(&r, 4) == 4, "4 reads submitted");
    int seen = 0, good = 0;
    hb_cqe *c;
    while ((c = hb_uring_peek(&r))) {
        int i = (int)c->user_data;
        good += c->res == 4096 &&
                hb_disk_check(buf + i * 4096, (uint64_t)(3 - i) * 4096, 4096, &pat, 1) == -1;
        seen++;
        hb_uring_seen(&r);
    }
    CHECK(seen == 4 && good == 4, "4 completions with the right data (%d, %d)", seen, good);
    /* a write with registered file and buffer, then read back */
    CHECK(hb_uring_register_file(&r, fd) == 0, "register file");
    int fixed = hb_uring_register_buffers(&r, buf, 4096, 4) == 0;
    hb_disk_fill(buf, 8192, 4096, &pat);
    hb_sqe *q = hb_uring_get_sqe(&r);
    q->opcode = fixed ? HB_URING_OP_WRITE_FIXED : HB_URING_OP_WRITE;
    q->flags = HB_URING_SQE_FIXED_FILE;
    q->fd = 0;
    q->addr = (uintptr_t)buf;
    q->len = 4096;
    q->off = 8192;
    q->user_data = 9;
    CHECK(hb_uring_submit(&r, 1) == 1, "write submitted");
    c = hb_uring_peek(&r);
    CHECK(c && c->user_data == 9 && c->res == 4096, "write completed");
    if (c)
        hb_uring_seen(&r);
    CHECK(hb_uring_get_sqe(&r) != NULL, "SQEs recycle");
    hb_uring_free(&r);
    memset(buf, 0, 4096);
    CHECK(pread(fd, buf, 4096, 8192) == 4096 && hb_disk_check(buf, 8192, 4096, &pat, 1) == -1,
          "written content reads back");
    free(buf);
    if (fd >= 0)
        close(fd);
}

static void test_aio_roundtrip(void)
{
    hb_aio_ctx ctx;
    int e = hb_aio_setup(4, &ctx);
    if (e < 0) {
        fprintf(stderr, "test_disk: Linux AIO unavailable here (%s): skipped\n", strerror(-e));
        return;
    }
    int fd = temp_file(1 << 16);
    unsigned char *buf = aligned_alloc(4096, 2 * 4096);
    struct iocb cb[2], *cbp[2] = {&cb[0], &cb[1]};
    struct io_event ev[2];
    memset(cb, 0, sizeof cb);
    for (int i = 0; i < 2; i++) {
        cb[i].aio_lio_opcode = IOCB_CMD_PREAD;
        cb[i].aio_fildes = (uint32_t)fd;
        cb[i].aio_buf = (uintptr_t)(buf + i * 4096);
        cb[i].aio_nbytes = 4096;
        cb[i].aio_offset = 4096 * (i + 5);
        cb[i].aio_data = (uint64_t)i;
    }
    int sub = hb_aio_submit(ctx, 2, cbp);
    CHECK(sub == 2, "2 AIO reads submitted: %d (%s)", sub, sub < 0 ? strerror(-sub) : "");
    int n = 0;
    while (n < 2) {
        int k = hb_aio_getevents(ctx, 1, 2 - n, ev + n);
        if (k <= 0)
            break;
        n += k;
    }
    int good = 0;
    for (int i = 0; i < n; i++)
        good += ev[i].res == 4096 &&
                hb_disk_check(buf + ev[i].data * 4096, 4096 * (ev[i].data + 5), 4096, &pat, 1) == -1;
    CHECK(n == 2 && good == 2, "2 AIO completions with the right data");
    hb_aio_destroy(ctx);
    free(buf);
    if (fd >= 0)
        close(fd);
}

int main(void)
{
    hb_disk_pattern_init(&pat, 0x123456789abcdefULL);
    test_content_roundtrip();
    test_restamp_equals_fill();
    test_check_catches_errors();
    test_histogram();
    test_new_param_types();
    test_uring_roundtrip();
    test_aio_roundtrip();
    return check_summary();
}
