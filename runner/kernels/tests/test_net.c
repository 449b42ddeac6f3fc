/* The net kernel's pure parts: the payload pattern, the latency histogram and its percentiles,
 * address literals (never names), and the wire messages between driver and server. */
#include <arpa/inet.h>
#include <math.h>
#include <netinet/in.h>
#include <stdlib.h>

#include "check.h"
#include "kernels/net.h"

static void test_pattern_is_periodic_and_seeded(void)
{
    size_t n = 3 * HB_NET_PERIOD + 100;
    uint8_t *a = malloc(n), *b = malloc(n);
    hb_net_pattern(a, n, 42);
    hb_net_pattern(b, n, 43);
    int periodic = 1, distinct = 0, differs = 0;
    for (size_t i = HB_NET_PERIOD; i < n; i++)
        periodic &= a[i] == a[i - HB_NET_PERIOD];
    for (size_t i = 1; i < HB_NET_PERIOD; i++)
        distinct += a[i] != a[i - 1];
    for (size_t i = 0; i < HB_NET_PERIOD; i++)
        differs += a[i] != b[i];
    CHECK(periodic, "byte k equals byte k + period");
    CHECK(distinct > HB_NET_PERIOD * 9 / 10, "not a constant run: %d changes", distinct);
    CHECK(differs > HB_NET_PERIOD * 9 / 10, "another seed, another pattern: %d differ", differs);
    /* a stream read from any offset matches the pattern at offset % period */
    uint8_t *c = malloc(n);
    hb_net_pattern(c, n, 42);
    CHECK(memcmp(c + 5000, a + 5000 % HB_NET_PERIOD, 1000) == 0, "offset view");
    free(a);
    free(b);
    free(c);
}

static void test_hist_buckets_cover_values(void)
{
    uint64_t vals[] = {0, 1, 255, 256, 257, 511, 512, 1000, 4095, 4096, 123456, 1000000,
                       999999999, (uint64_t)1 << 40, ((uint64_t)1 << 41) - 1};
    int prev = -1;
    for (size_t i = 0; i < sizeof vals / sizeof vals[0]; i++) {
        int b = hb_net_hist_bucket(vals[i]);
        CHECK(b >= 0 && b < HB_NET_HIST_BUCKETS, "bucket of %llu in range: %d",
              (unsigned long long)vals[i], b);
        CHECK(b >= prev, "buckets grow with the value");
        prev = b;
        if (vals[i] < ((uint64_t)1 << 41) && b < HB_NET_HIST_BUCKETS - 1)
            CHECK(hb_net_hist_low(b) <= vals[i] && vals[i] <= hb_net_hist_high(b),
                  "%llu in [%llu, %llu]", (unsigned long long)vals[i],
                  (unsigned long long)hb_net_hist_low(b), (unsigned long long)hb_net_hist_high(b));
    }
    for (int b = 256; b < HB_NET_HIST_BUCKETS - 1; b++) {
        double lo = (double)hb_net_hist_low(b), hi = (double)hb_net_hist_high(b);
        if ((hi - lo + 1) / lo > 1.0 / 128 + 1e-12 || hb_net_hist_low(b + 1) != hb_net_hist_high(b) + 1) {
            CHECK(0, "bucket %d [%g, %g] is contiguous and at most 1/128 wide", b, lo, hi);
            break;
        }
    }
}

static void test_hist_percentiles(void)
{
    static hb_net_hist h, g;
    hb_net_hist_reset(&h);
    CHECK(hb_net_hist_quantile(&h, 0.5) == 0, "empty: 0");
    for (uint64_t v = 1; v <= 100000; v++) /* 1 ns .. 100 µs, uniform */
        hb_net_hist_add(&h, v);
    double p50 = hb_net_hist_quantile(&h, 0.5), p99 = hb_net_hist_quantile(&h, 0.99);
    CHECK(fabs(p50 / 50000 - 1) < 0.005, "p50 %.1f near 50000", p50);
    CHECK(fabs(p99 / 99000 - 1) < 0.005, "p99 %.1f near 99000", p99);
    CHECK(hb_net_hist_quantile(&h, 1.0) <= 100000 && h.min == 1 && h.max == 100000, "min, max");
    CHECK(h.count == 100000 && h.sum == 100000ull * 100001 / 2, "count and exact sum");
    CHECK(hb_net_hist_quantile(&h, 0.00001) == 1, "lowest values are exact");
    hb_net_hist_reset(&g);
    for (int i = 0; i < 10; i++)
        hb_net_hist_add(&g, 7000000); /* 7 ms */
    hb_net_hist_merge(&g, &h);
    CHECK(g.count == 100010 && g.max == 7000000, "merge adds counts and keeps the max");
    CHECK(fabs(hb_net_hist_quantile(&g, 1.0) / 7000000 - 1) < 0.005, "p100 is the max bucket");
}

static void test_addresses_are_literals_only(void)
{
    struct sockaddr_storage ss;
    socklen_t len;
    CHECK(hb_net_parse_ip("127.0.0.1", 5201, &ss, &len) == 0 && ss.ss_family == AF_INET &&
          ntohs(((struct sockaddr_in *)&ss)->sin_port) == 5201 && len == sizeof(struct sockaddr_in),
          "IPv4 literal");
    CHECK(hb_net_parse_ip("fd00::2", 1, &ss, &len) == 0 && ss.ss_family == AF_INET6,
          "IPv6 literal");
    CHECK(hb_net_parse_ip("::1", 1, &ss, &len) == 0 && ss.ss_family == AF_INET6, "::1");
    CHECK(hb_net_parse_ip("::ffff:10.0.0.1", 1, &ss, &len) == 0, "v4-mapped");
    const char *bad[] = {"localhost", "example.com", "10.0.0", "10.0.0.256", "", " 10.0.0.1",
                         "10.0.0.1 ", "0x7f.0.0.1", "fe80::1%eth0", "1.2.3.4:80", NULL};
    for (int i = 0; bad[i]; i++)
        CHECK(hb_net_parse_ip(bad[i], 1, &ss, &len) == -1, "\"%s\" refused", bad[i]);
}

static void test_wire_messages_round_trip(void)
{
    uint8_t buf[HB_NET_HELLO_LEN], rb[HB_NET_REPORT_LEN];
    hb_net_hello h = {HB_NET_UDP_STREAM, 32768, 1, -1, 40000, 1 << 20, 0x0123456789abcdefull,
                      0xfedcba9876543210ull}, g;
    hb_net_hello_pack(&h, buf);
    CHECK(hb_net_hello_unpack(buf, &g) == 0 && memcmp(&h, &g, sizeof h) == 0, "hello round trip");
    buf[0] ^= 1;
    CHECK(hb_net_hello_unpack(buf, &g) == -1, "wrong magic refused");
    h.size = HB_NET_UDP_MAX + 1;
    hb_net_hello_pack(&h, buf);
    CHECK(hb_net_hello_unpack(buf, &g) == -1, "UDP datagram above 65507 refused");
    h.size = 1;
    h.sockbuf = (64u << 20) + 1;
    hb_net_hello_pack(&h, buf);
    CHECK(hb_net_hello_unpack(buf, &g) == -1, "socket buffers above 64 MiB refused");
    h.sockbuf = 0;
    h.size = HB_NET_UDP_MAX + 1;
    h.op = HB_NET_TCP_STREAM;
    CHECK((hb_net_hello_pack(&h, buf), hb_net_hello_unpack(buf, &g)) == 0, "TCP may send more");
    h.size = 0;
    hb_net_hello_pack(&h, buf);
    CHECK(hb_net_hello_unpack(buf, &g) == -1, "size 0 refused");
    h.size = 1;
    h.op = HB_NET_OPS;
    hb_net_hello_pack(&h, buf);
    CHECK(hb_net_hello_unpack(buf, &g) == -1, "unknown op refused");
    hb_net_report r = {0, 1ull << 40, 12345, 0, 999, 3, 7000000, 500000000}, s;
    hb_net_report_pack(&r, rb);
    CHECK(hb_net_report_unpack(rb, &s) == 0 && s.status == r.status && s.bytes == r.bytes &&
          s.msgs == r.msgs && s.bad == r.bad && s.checked == r.checked && s.foreign == r.foreign &&
          s.wait_ns == r.wait_ns && s.alive_ns == r.alive_ns,
          "report round trip (with the receiver's run-queue wait)");
    CHECK(hb_net_get64(rb + 8) == 1ull << 40 && rb[8] == 0 && rb[10] == 1, "big-endian on the wire");
}

int main(void)
{
    test_pattern_is_periodic_and_seeded();
    test_hist_buckets_cover_values();
    test_hist_percentiles();
    test_addresses_are_literals_only();
    test_wire_messages_round_trip();
    return check_summary();
}
