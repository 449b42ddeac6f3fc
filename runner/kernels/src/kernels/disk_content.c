/* disk: the file's content and the latency histogram (disk.h). The content is a pure function
 * of the byte offset, so any read can be checked and no write changes the file; no I/O here. */
#include "disk.h"

#include <string.h>

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
