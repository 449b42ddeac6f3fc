/* The net kernel's pure parts, exposed for tests/test_net.c: the payload pattern, the latency
 * histogram, address parsing and the wire messages between driver and server. */
#ifndef HB_KERNEL_NET_H
#define HB_KERNEL_NET_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

/* The payload repeats with this period (a prime, so no message size or read size lines up with
 * it): byte k of a TCP stream is pattern[k % period]; a reordered, dropped, duplicated or
 * corrupted block shows as a mismatch. */
#define HB_NET_PERIOD 4093

/* Fills buf[0..len) with the pattern of seed: HB_NET_PERIOD pseudo-random bytes, repeated, so
 * that buf + (offset % HB_NET_PERIOD) is the stream from offset on. */
void hb_net_pattern(uint8_t *buf, size_t len, uint64_t seed);

/* Log-linear latency histogram in ns: exact below 256 ns, then 128 buckets per power of two
 * (relative width 1/128: a percentile is within 0.4 % of the true value); values above 2^40 ns
 * (18 min) go in the last bucket. */
#define HB_NET_HIST_BUCKETS (256 + 33 * 128)
typedef struct hb_net_hist {
    uint64_t count, sum, min, max;
    uint64_t b[HB_NET_HIST_BUCKETS];
} hb_net_hist;

int hb_net_hist_bucket(uint64_t ns);
uint64_t hb_net_hist_low(int bucket);  /* smallest value of the bucket */
uint64_t hb_net_hist_high(int bucket); /* largest value of the bucket */
void hb_net_hist_reset(hb_net_hist *h);
void hb_net_hist_merge(hb_net_hist *dst, const hb_net_hist *src);
/* The q-quantile (0 < q <= 1, nearest rank), in ns: the middle of its bucket, within min..max.
 * 0 when empty. */
double hb_net_hist_quantile(const hb_net_hist *h, double q);

static inline void hb_net_hist_add(hb_net_hist *h, uint64_t ns)
{
    h->b[hb_net_hist_bucket(ns)]++;
    h->count++;
    h->sum += ns;
    if (ns < h->min)
        h->min = ns;
    if (ns > h->max)
        h->max = ns;
}

/* An IPv4 or IPv6 literal (never a host name: nothing is looked up) and a port into ss.
 * 0 on success, -1 when text is not an address literal. */
int hb_net_parse_ip(const char *text, int port, struct sockaddr_storage *ss, socklen_t *len);

/* ---- wire messages (big-endian), docs/methodology/network.md ---- */

enum hb_net_op { HB_NET_TCP_STREAM, HB_NET_UDP_STREAM, HB_NET_TCP_RR, HB_NET_UDP_RR, HB_NET_PING,
                 HB_NET_OPS };

#define HB_NET_MAGIC 0x48424e31u /* "HBN1" */
#define HB_NET_VERSION 2 /* 2: the report carries the receiver's run-queue wait */
#define HB_NET_UDP_MAX 65507   /* largest UDP payload over IPv4 */
#define HB_NET_TCP_MAX (4 << 20)

/* First message of every connection, driver to server. */
#define HB_NET_HELLO_LEN 56
typedef struct hb_net_hello {
    uint32_t op, size, busy;
    int32_t pin_cpu;   /* where the server thread should run (honoured in loopback only); -1 */
    uint32_t udp_port; /* the driver's UDP port (UDP ops) */
    uint32_t sockbuf;  /* SO_SNDBUF/SO_RCVBUF bytes, 0 = the OS default */
    uint64_t seed;     /* of the payload pattern */
    uint64_t token;    /* in every UDP datagram header of this session */
} hb_net_hello;

/* Server to driver: the session is ready (status 0) or why not. */
#define HB_NET_REPLY_LEN 16
/* UDP stream, driver to server after its last datagram: how many it sent. */
#define HB_NET_END_LEN 24
/* Server to driver after a stream: what it received and checked. */
#define HB_NET_REPORT_LEN 64
typedef struct hb_net_report {
    uint32_t status;
    uint64_t bytes;   /* payload bytes received */
    uint64_t msgs;    /* recv calls (TCP) or datagrams (UDP) counted */
    uint64_t bad;     /* sampled messages whose payload differed from the pattern */
    uint64_t checked; /* payload bytes compared with the pattern */
    uint64_t foreign; /* datagrams of the wrong length or session: not counted */
    uint64_t wait_ns;  /* the receiving thread's time runnable but waiting for a CPU, from its
                        * hello to its report (/proc/thread-self/schedstat); UINT64_MAX: unknown */
    uint64_t alive_ns; /* the same window's length */
} hb_net_report;

void hb_net_put32(uint8_t *p, uint32_t v);
void hb_net_put64(uint8_t *p, uint64_t v);
uint32_t hb_net_get32(const uint8_t *p);
uint64_t hb_net_get64(const uint8_t *p);

void hb_net_hello_pack(const hb_net_hello *h, uint8_t out[HB_NET_HELLO_LEN]);
/* 0 when the bytes are a hello of this version with an op and size in bounds, else -1. */
int hb_net_hello_unpack(const uint8_t in[HB_NET_HELLO_LEN], hb_net_hello *h);
void hb_net_report_pack(const hb_net_report *r, uint8_t out[HB_NET_REPORT_LEN]);
int hb_net_report_unpack(const uint8_t in[HB_NET_REPORT_LEN], hb_net_report *r);

#endif
