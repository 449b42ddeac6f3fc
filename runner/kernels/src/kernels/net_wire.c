/* net: the pure parts both ends share (net.h): byte order of the wire messages, the payload
 * pattern, the latency histogram, address literals, and packing of hello and report. No sockets,
 * no state: tests/test_net.c checks them directly. */
#include "net.h"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <stdint.h>
#include <string.h>

void hb_net_put32(uint8_t *p, uint32_t v)
{
    p[0] = (uint8_t)(v >> 24);
    p[1] = (uint8_t)(v >> 16);
    p[2] = (uint8_t)(v >> 8);
    p[3] = (uint8_t)v;
}

void hb_net_put64(uint8_t *p, uint64_t v)
{
    hb_net_put32(p, (uint32_t)(v >> 32));
    hb_net_put32(p + 4, (uint32_t)v);
}

uint32_t hb_net_get32(const uint8_t *p)
{
    return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

uint64_t hb_net_get64(const uint8_t *p)
{
    return (uint64_t)hb_net_get32(p) << 32 | hb_net_get32(p + 4);
}

void hb_net_pattern(uint8_t *buf, size_t len, uint64_t seed)
{
    uint64_t x = seed ^ 0x9E3779B97F4A7C15ull;
    for (size_t i = 0; i < len; i++) {
        if (i < HB_NET_PERIOD) {
            x ^= x >> 12; /* xorshift64* */
            x ^= x << 25;
            x ^= x >> 27;
            buf[i] = (uint8_t)((x * 0x2545F4914F6CDD1Dull) >> 56);
        } else {
            buf[i] = buf[i - HB_NET_PERIOD];
        }
    }
}

int hb_net_hist_bucket(uint64_t ns)
{
    if (ns < 256)
        return (int)ns;
    int e = 63 - __builtin_clzll(ns); /* 8.. */
    if (e > 40)
        return HB_NET_HIST_BUCKETS - 1;
    return 256 + (e - 8) * 128 + (int)((ns >> (e - 7)) - 128);
}

uint64_t hb_net_hist_low(int b)
{
    if (b < 256)
        return (uint64_t)b;
    int e = (b - 256) / 128 + 8, m = (b - 256) % 128 + 128;
    return (uint64_t)m << (e - 7);
}

uint64_t hb_net_hist_high(int b)
{
    if (b < 256)
        return (uint64_t)b;
    if (b == HB_NET_HIST_BUCKETS - 1)
        return UINT64_MAX;
    int e = (b - 256) / 128 + 8;
    return hb_net_hist_low(b) + ((uint64_t)1 << (e - 7)) - 1;
}

void hb_net_hist_reset(hb_net_hist *h)
{
    memset(h, 0, sizeof *h);
    h->min = UINT64_MAX;
}

void hb_net_hist_merge(hb_net_hist *dst, const hb_net_hist *src)
{
    for (int i = 0; i < HB_NET_HIST_BUCKETS; i++)
        dst->b[i] += src->b[i];
    dst->count += src->count;
    dst->sum += src->sum;
    if (src->min < dst->min)
        dst->min = src->min;
    if (src->max > dst->max)
        dst->max = src->max;
}

double hb_net_hist_quantile(const hb_net_hist *h, double q)
{
    if (h->count == 0)
        return 0;
    uint64_t rank = (uint64_t)(q * (double)h->count + 0.999999999);
    if (rank < 1)
        rank = 1;
    if (rank > h->count)
        rank = h->count;
    uint64_t seen = 0;
    for (int i = 0; i < HB_NET_HIST_BUCKETS; i++) {
        seen += h->b[i];
        if (seen >= rank) {
            double lo = (double)hb_net_hist_low(i);
            double hi = i == HB_NET_HIST_BUCKETS - 1 ? (double)h->max : (double)hb_net_hist_high(i);
            double v = (lo + hi) / 2;
            if (v < (double)h->min)
                v = (double)h->min;
            if (v > (double)h->max)
                v = (double)h->max;
            return v;
        }
    }
    return (double)h->max;
}

int hb_net_parse_ip(const char *text, int port, struct sockaddr_storage *ss, socklen_t *len)
{
    memset(ss, 0, sizeof *ss);
    struct sockaddr_in *a4 = (struct sockaddr_in *)ss;
    struct sockaddr_in6 *a6 = (struct sockaddr_in6 *)ss;
    if (!text || strlen(text) > 45)
        return -1;
    if (inet_pton(AF_INET, text, &a4->sin_addr) == 1) {
        a4->sin_family = AF_INET;
        a4->sin_port = htons((uint16_t)port);
        *len = sizeof *a4;
        return 0;
    }
    if (inet_pton(AF_INET6, text, &a6->sin6_addr) == 1) {
        a6->sin6_family = AF_INET6;
        a6->sin6_port = htons((uint16_t)port);
        *len = sizeof *a6;
        return 0;
    }
    return -1;
}

void hb_net_hello_pack(const hb_net_hello *h, uint8_t out[HB_NET_HELLO_LEN])
{
    memset(out, 0, HB_NET_HELLO_LEN);
    hb_net_put32(out, HB_NET_MAGIC);
    hb_net_put32(out + 4, HB_NET_VERSION);
    hb_net_put32(out + 8, h->op);
    hb_net_put32(out + 12, h->size);
    hb_net_put32(out + 16, h->busy);
    hb_net_put32(out + 20, (uint32_t)h->pin_cpu);
    hb_net_put32(out + 24, h->udp_port);
    hb_net_put32(out + 28, h->sockbuf);
    hb_net_put64(out + 32, h->seed);
    hb_net_put64(out + 40, h->token);
}

int hb_net_hello_unpack(const uint8_t in[HB_NET_HELLO_LEN], hb_net_hello *h)
{
    if (hb_net_get32(in) != HB_NET_MAGIC || hb_net_get32(in + 4) != HB_NET_VERSION)
        return -1;
    h->op = hb_net_get32(in + 8);
    h->size = hb_net_get32(in + 12);
    h->busy = hb_net_get32(in + 16);
    h->pin_cpu = (int32_t)hb_net_get32(in + 20);
    h->udp_port = hb_net_get32(in + 24);
    h->sockbuf = hb_net_get32(in + 28);
    h->seed = hb_net_get64(in + 32);
    h->token = hb_net_get64(in + 40);
    if (h->op >= HB_NET_OPS || h->busy > 1 || h->udp_port > 65535 || h->sockbuf > (64u << 20))
        return -1;
    uint32_t max = h->op == HB_NET_UDP_STREAM || h->op == HB_NET_UDP_RR ? HB_NET_UDP_MAX
                                                                         : HB_NET_TCP_MAX;
    if (h->op != HB_NET_PING && (h->size < 1 || h->size > max))
        return -1;
    return 0;
}

void hb_net_report_pack(const hb_net_report *r, uint8_t out[HB_NET_REPORT_LEN])
{
    hb_net_put32(out, HB_NET_MAGIC);
    hb_net_put32(out + 4, r->status);
    hb_net_put64(out + 8, r->bytes);
    hb_net_put64(out + 16, r->msgs);
    hb_net_put64(out + 24, r->bad);
    hb_net_put64(out + 32, r->checked);
    hb_net_put64(out + 40, r->foreign);
    hb_net_put64(out + 48, r->wait_ns);
    hb_net_put64(out + 56, r->alive_ns);
}

int hb_net_report_unpack(const uint8_t in[HB_NET_REPORT_LEN], hb_net_report *r)
{
    if (hb_net_get32(in) != HB_NET_MAGIC)
        return -1;
    r->status = hb_net_get32(in + 4);
    r->bytes = hb_net_get64(in + 8);
    r->msgs = hb_net_get64(in + 16);
    r->bad = hb_net_get64(in + 24);
    r->checked = hb_net_get64(in + 32);
    r->foreign = hb_net_get64(in + 40);
    r->wait_ns = hb_net_get64(in + 48);
    r->alive_ns = hb_net_get64(in + 56);
    return 0;
}
