/* net: TCP and UDP throughput, round-trip latency and UDP loss, with one binary that serves and
 * drives. --role loopback starts its own server threads in this process (one host, no peer);
 * --role serve listens, prints a `listening` event with its port and serves until SIGTERM or
 * --serve_s; --role drive measures against a server given by --peer (an address literal) and
 * --port. Each stream (harness thread) opens a fresh session for every phase before the phase
 * starts, so a phase never sees another phase's bytes. Methodology: docs/methodology/network.md.
 *
 * Verification: the payload is a seeded pattern (period HB_NET_PERIOD); the receiver compares a
 * sample of what it got with the pattern, and the byte (TCP) or datagram (UDP) counts of sender
 * and receiver must agree; round-trip replies are compared with what was sent. */
#include "net.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "../harness.h"
#include "../host.h"

#define RECV_CHUNK (256 * 1024) /* a TCP receiver's read size */
#define RECV_LOWAT (256 * 1024) /* its SO_RCVLOWAT */
#define UDP_HDR 16              /* seq, token */
#define MAX_SESSIONS 256        /* concurrent server sessions */
#define UDP_RCVBUF (4 << 20)   /* udp_stream receiver's SO_RCVBUF unless sockbuf_kib is given */
#define GRACE_MS 20             /* UDP: quiet time that ends the drain after the END message */
#define UDP_RR_TIMEOUT_NS 200000000LL /* a udp_rr reply later than this counts as lost */
#define CTRL_TIMEOUT_MS 10000   /* hello/reply/report exchanges */

/* ---- pure helpers (net.h) ---- */

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
    return 0;
}

/* ---- socket helpers ---- */

static void set_timeout(int fd, int opt, int64_t ns)
{
    struct timeval tv = {(time_t)(ns / 1000000000), (long)(ns % 1000000000 / 1000)};
    setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv);
}

static void set_int(int fd, int level, int opt, int v)
{
    setsockopt(fd, level, opt, &v, sizeof v);
}

/* Both buffers to bytes (0: leave the OS default). Root may exceed net.core.[rw]mem_max. */
static void set_bufs(int fd, uint32_t bytes)
{
    if (!bytes)
        return;
    int v = (int)bytes;
    if (setsockopt(fd, SOL_SOCKET, SO_SNDBUFFORCE, &v, sizeof v) != 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &v, sizeof v);
    if (setsockopt(fd, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v) != 0)
        setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
}

/* SO_BUSY_POLL (µs) for busy mode: the driver spins on the NIC queue. 0 when set, else errno.
 * Loopback and veth have no NAPI queue to poll: it has no effect there. */
static int set_busy_poll(int fd)
{
    int us = 50;
    return setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof us) == 0 ? 0 : errno;
}

static int write_all(int fd, const void *buf, size_t n)
{
    const uint8_t *p = buf;
    while (n) {
        ssize_t k = send(fd, p, n, MSG_NOSIGNAL);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

/* Reads exactly n bytes; -1 on EOF, error or the socket's receive timeout. */
static int read_all(int fd, void *buf, size_t n)
{
    uint8_t *p = buf;
    while (n) {
        ssize_t k = recv(fd, p, n, 0);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            return -1;
        p += k;
        n -= (size_t)k;
    }
    return 0;
}

static int pin_self(int cpu)
{
    if (cpu < 0)
        return 0;
    cpu_set_t *set = CPU_ALLOC(cpu + 1);
    if (!set)
        return ENOMEM;
    size_t size = CPU_ALLOC_SIZE(cpu + 1);
    CPU_ZERO_S(size, set);
    CPU_SET_S(cpu, size, set);
    int rc = pthread_setaffinity_np(pthread_self(), size, set);
    CPU_FREE(set);
    return rc;
}

static uint64_t random64(void)
{
    static _Atomic uint64_t counter;
    uint64_t x = (uint64_t)hb_now_ns() ^ ((uint64_t)getpid() << 32) ^
                 (atomic_fetch_add(&counter, 1) * 0x9E3779B97F4A7C15ull);
    x ^= x >> 33; /* splitmix64 finaliser */
    x *= 0xff51afd7ed558ccdull;
    x ^= x >> 33;
    x *= 0xc4ceb9fe1a85ec53ull;
    x ^= x >> 33;
    return x;
}

static int port_of(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)ss)->sin6_port)
                                     : ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

static void set_port(struct sockaddr_storage *ss, int port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

/* UDP datagrams in one sendmmsg/recvmmsg call: up to 64, at most ~256 KiB. */
static int udp_batch(uint32_t size)
{
    int b = (int)(256 * 1024 / size);
    return b < 1 ? 1 : b > 64 ? 64 : b;
}

/* Where datagram seq's payload starts in the pattern. */
static size_t udp_offset(uint64_t seq)
{
    return (size_t)(seq % 257) * 13; /* < HB_NET_PERIOD */
}

/* ---- server ---- */

static const char *const op_names[] = {"tcp_stream", "udp_stream", "tcp_rr", "udp_rr", NULL};

typedef struct server {
    int lfd, hold; /* TCP listener; a UDP socket holding the same port for the UDP sessions */
    struct sockaddr_storage addr;
    socklen_t addr_len;
    int port, cpu; /* cpu: pin every session thread there (-1: not pinned) */
    int honor_pin; /* loopback: the driver says where each session thread runs */
    int wake[2];   /* loopback: wakes the acceptor thread to stop */
    _Atomic int stop;
    pthread_t acceptor;
    int has_acceptor;
    pthread_mutex_t lock;
    pthread_cond_t idle;
    int active;
    int fds[MAX_SESSIONS];
    _Atomic uint64_t sessions, refused, bytes, msgs, bad, checked;
} server;

typedef struct conn {
    server *srv;
    int fd;
    struct sockaddr_storage peer;
    socklen_t peer_len;
} conn;

static void srv_track(server *srv, int fd, int add)
{
    pthread_mutex_lock(&srv->lock);
    for (int i = 0; i < MAX_SESSIONS; i++) {
        if (add && srv->fds[i] < 0) {
            srv->fds[i] = fd;
            break;
        }
        if (!add && srv->fds[i] == fd) {
            srv->fds[i] = -1;
            break;
        }
    }
    pthread_mutex_unlock(&srv->lock);
}

static int srv_stopping(server *srv)
{
    return atomic_load_explicit(&srv->stop, memory_order_relaxed);
}

static void send_report(int fd, const hb_net_report *r)
{
    uint8_t out[HB_NET_REPORT_LEN];
    hb_net_report_pack(r, out);
    write_all(fd, out, sizeof out);
}

static void srv_account(server *srv, const hb_net_report *r)
{
    atomic_fetch_add(&srv->bytes, r->bytes);
    atomic_fetch_add(&srv->msgs, r->msgs);
    atomic_fetch_add(&srv->bad, r->bad);
    atomic_fetch_add(&srv->checked, r->checked);
}

/* Receives until EOF; checks every 8th read against the pattern; reports the count. */
static void serve_tcp_stream(server *srv, int fd, const hb_net_hello *h)
{
    uint8_t *buf = malloc(RECV_CHUNK), *pat = malloc(RECV_CHUNK + HB_NET_PERIOD);
    hb_net_report r = {0};
    if (!buf || !pat)
        goto out;
    hb_net_pattern(pat, RECV_CHUNK + HB_NET_PERIOD, h->seed);
    set_timeout(fd, SO_RCVTIMEO, 1000000000LL);
    /* Wake the receiver once per RECV_LOWAT bytes, not once per segment: on a VM every
     * wake-up of a sleeping vCPU is an IPI and a VM exit (this alone is +20-35 % on one loopback
     * stream). At EOF recv returns what is left; under memory pressure TCP wakes it earlier. */
    int lowat = RECV_LOWAT;
    if (h->sockbuf && (int)(h->sockbuf / 4) < lowat)
        lowat = (int)(h->sockbuf / 4) > 0 ? (int)(h->sockbuf / 4) : 1;
    set_int(fd, SOL_SOCKET, SO_RCVLOWAT, lowat);
    for (;;) {
        ssize_t n = recv(fd, buf, RECV_CHUNK, 0);
        if (n > 0) {
            if ((r.msgs++ & 7) == 0) {
                r.checked += (uint64_t)n;
                r.bad += memcmp(buf, pat + r.bytes % HB_NET_PERIOD, (size_t)n) != 0;
            }
            r.bytes += (uint64_t)n;
        } else if (n == 0) {
            break;
        } else if (errno != EAGAIN && errno != EINTR) {
            r.status = 1;
            break;
        } else if (srv_stopping(srv)) {
            r.status = 2;
            break;
        }
    }
    send_report(fd, &r);
    srv_account(srv, &r);
out:
    free(buf);
    free(pat);
}

/* Echoes size-byte messages until EOF; busy: non-blocking receive, spinning. */
static void serve_tcp_rr(server *srv, int fd, const hb_net_hello *h)
{
    uint8_t *buf = malloc(h->size);
    hb_net_report r = {0};
    if (!buf)
        return;
    set_timeout(fd, SO_RCVTIMEO, 1000000000LL);
    int flags = h->busy ? MSG_DONTWAIT : 0;
    for (;;) {
        size_t got = 0;
        unsigned spins = 0;
        while (got < h->size) {
            ssize_t n = recv(fd, buf + got, h->size - got, flags);
            if (n > 0) {
                got += (size_t)n;
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                goto done;
            } else if ((++spins & 0xffff) == 0 || !h->busy) {
                if (srv_stopping(srv))
                    goto done;
            }
        }
        if (write_all(fd, buf, h->size))
            break;
        r.msgs++;
        r.bytes += h->size;
    }
done:
    srv_account(srv, &r);
    free(buf);
}

/* 1 when the control connection has closed (or failed), 0 when it is still open and quiet,
 * 2 when it has bytes to read. */
static int ctrl_state(int ctrl)
{
    uint8_t b;
    ssize_t n = recv(ctrl, &b, 1, MSG_DONTWAIT | MSG_PEEK);
    if (n > 0)
        return 2;
    if (n == 0 || (errno != EAGAIN && errno != EINTR))
        return 1;
    return 0;
}

typedef struct udp_rx {
    int n;
    uint32_t size;
    uint8_t *bufs;
    struct mmsghdr *mm;
    struct iovec *iov;
} udp_rx;

static int udp_rx_init(udp_rx *rx, uint32_t size)
{
    rx->n = udp_batch(size);
    rx->size = size;
    /* one byte more than expected: a longer datagram shows as a wrong length */
    rx->bufs = malloc((size_t)rx->n * (size + 1));
    rx->mm = calloc((size_t)rx->n, sizeof *rx->mm);
    rx->iov = calloc((size_t)rx->n, sizeof *rx->iov);
    if (!rx->bufs || !rx->mm || !rx->iov)
        return -1;
    for (int i = 0; i < rx->n; i++) {
        rx->iov[i].iov_base = rx->bufs + (size_t)i * (size + 1);
        rx->iov[i].iov_len = size + 1;
        rx->mm[i].msg_hdr.msg_iov = &rx->iov[i];
        rx->mm[i].msg_hdr.msg_iovlen = 1;
    }
    return 0;
}

static void udp_rx_free(udp_rx *rx)
{
    free(rx->bufs);
    free(rx->mm);
    free(rx->iov);
}

/* Counts and samples one batch of received datagrams. */
static void udp_take(const udp_rx *rx, int n, const hb_net_hello *h, const uint8_t *pat,
                     hb_net_report *r)
{
    for (int i = 0; i < n; i++) {
        const uint8_t *d = rx->iov[i].iov_base;
        uint32_t len = rx->mm[i].msg_len;
        if (len != h->size) {
            r->foreign++;
            continue;
        }
        if (h->size >= UDP_HDR) {
            uint64_t seq = hb_net_get64(d);
            if (hb_net_get64(d + 8) != h->token) {
                r->foreign++;
                continue;
            }
            if ((seq & 15) == 0) {
                r->checked += h->size - UDP_HDR;
                r->bad += memcmp(d + UDP_HDR, pat + udp_offset(seq), h->size - UDP_HDR) != 0;
            }
        } else {
            r->checked += h->size;
            r->bad += memcmp(d, pat, h->size) != 0;
        }
        r->msgs++;
        r->bytes += len;
    }
}

/* Receives datagrams until the driver's END message (then drains until GRACE_MS of quiet) and
 * reports what arrived. */
static void serve_udp_stream(server *srv, int ctrl, int udp, const hb_net_hello *h)
{
    udp_rx rx = {0};
    uint8_t *pat = malloc(65536 + HB_NET_PERIOD);
    hb_net_report r = {0};
    uint8_t end[HB_NET_END_LEN];
    if (!pat || udp_rx_init(&rx, h->size))
        goto out;
    hb_net_pattern(pat, 65536 + HB_NET_PERIOD, h->seed);
    for (;;) {
        int n = recvmmsg(udp, rx.mm, (unsigned)rx.n, MSG_DONTWAIT, NULL);
        if (n > 0) {
            udp_take(&rx, n, h, pat, &r);
            continue;
        }
        struct pollfd pf[2] = {{udp, POLLIN, 0}, {ctrl, POLLIN, 0}};
        if (poll(pf, 2, 1000) < 0 && errno != EINTR)
            goto out;
        if (srv_stopping(srv))
            goto out;
        if (pf[1].revents) {
            if (read_all(ctrl, end, sizeof end) || hb_net_get32(end) != HB_NET_MAGIC)
                goto out; /* the driver went away */
            break;
        }
    }
    for (;;) { /* the END message may overtake datagrams still on their way */
        int n = recvmmsg(udp, rx.mm, (unsigned)rx.n, MSG_DONTWAIT, NULL);
        if (n > 0) {
            udp_take(&rx, n, h, pat, &r);
            continue;
        }
        struct pollfd pf = {udp, POLLIN, 0};
        if (poll(&pf, 1, GRACE_MS) <= 0)
            break;
    }
    send_report(ctrl, &r);
    srv_account(srv, &r);
out:
    udp_rx_free(&rx);
    free(pat);
}

/* Echoes datagrams until the control connection closes. */
static void serve_udp_rr(server *srv, int ctrl, int udp, const hb_net_hello *h)
{
    uint8_t *buf = malloc(h->size + 1);
    hb_net_report r = {0};
    if (!buf)
        return;
    set_timeout(udp, SO_RCVTIMEO, 200000000LL);
    int flags = h->busy ? MSG_DONTWAIT : 0;
    unsigned spins = 0;
    for (;;) {
        ssize_t n = recv(udp, buf, h->size + 1, flags);
        if (n > 0) {
            send(udp, buf, (size_t)n, MSG_NOSIGNAL);
            r.msgs++;
            r.bytes += (uint64_t)n;
            continue;
        }
        if (h->busy && (++spins & 0xfff) != 0)
            continue;
        if (ctrl_state(ctrl) == 1 || srv_stopping(srv))
            break;
    }
    srv_account(srv, &r);
    free(buf);
}

static void *session_main(void *arg)
{
    conn *c = arg;
    server *srv = c->srv;
    int fd = c->fd, udp = -1;
    uint8_t in[HB_NET_HELLO_LEN], reply[HB_NET_REPLY_LEN] = {0};
    hb_net_hello h;

    set_timeout(fd, SO_RCVTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    if (read_all(fd, in, sizeof in) || hb_net_hello_unpack(in, &h)) {
        atomic_fetch_add(&srv->refused, 1);
        goto out;
    }
    pin_self(srv->honor_pin && h.pin_cpu >= 0 ? h.pin_cpu : srv->cpu);
    set_bufs(fd, h.sockbuf);
    if (h.op != HB_NET_TCP_STREAM)
        set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    if (h.busy)
        set_busy_poll(fd);
    if (h.op == HB_NET_UDP_STREAM || h.op == HB_NET_UDP_RR) {
        /* the listener's port, connected to the driver's UDP address: with SO_REUSEPORT every
         * session's socket shares the port, and the kernel delivers each datagram to the
         * socket connected to its sender */
        struct sockaddr_storage local = srv->addr, remote = c->peer;
        set_port(&remote, (int)h.udp_port);
        udp = socket(srv->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (udp < 0)
            goto fail;
        set_int(udp, SOL_SOCKET, SO_REUSEADDR, 1);
        set_int(udp, SOL_SOCKET, SO_REUSEPORT, 1);
        set_bufs(udp, h.sockbuf);
        if (h.op == HB_NET_UDP_STREAM && h.sockbuf == 0) {
            /* a queue deep enough to ride out the receiver's scheduling gaps: with the default
             * (~208 KiB, six 32-KiB datagrams) a few µs off the CPU is loss */
            int v = UDP_RCVBUF;
            if (setsockopt(udp, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v) != 0)
                setsockopt(udp, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
        }
        if (h.busy)
            set_busy_poll(udp);
        if (bind(udp, (struct sockaddr *)&local, srv->addr_len) ||
            connect(udp, (struct sockaddr *)&remote, c->peer_len))
            goto fail;
    }
    hb_net_put32(reply, HB_NET_MAGIC);
    hb_net_put32(reply + 8, (uint32_t)srv->port);
    if (write_all(fd, reply, sizeof reply))
        goto out;
    atomic_fetch_add(&srv->sessions, 1);
    switch (h.op) {
    case HB_NET_TCP_STREAM: serve_tcp_stream(srv, fd, &h); break;
    case HB_NET_TCP_RR: serve_tcp_rr(srv, fd, &h); break;
    case HB_NET_UDP_STREAM: serve_udp_stream(srv, fd, udp, &h); break;
    case HB_NET_UDP_RR: serve_udp_rr(srv, fd, udp, &h); break;
    default: break; /* ping: the reply was all */
    }
    goto out;
fail:
    hb_net_put32(reply, HB_NET_MAGIC);
    hb_net_put32(reply + 4, (uint32_t)(errno ? errno : EIO));
    write_all(fd, reply, sizeof reply);
out:
    if (udp >= 0)
        close(udp);
    srv_track(srv, fd, 0);
    close(fd);
    free(c);
    pthread_mutex_lock(&srv->lock);
    srv->active--;
    pthread_cond_broadcast(&srv->idle);
    pthread_mutex_unlock(&srv->lock);
    return NULL;
}

/* Waits up to timeout_ms for a connection and starts its session thread. -1 on a listener
 * error, else 0. */
static int srv_accept_once(server *srv, int timeout_ms)
{
    struct pollfd pf[2] = {{srv->lfd, POLLIN, 0}, {srv->wake[0], POLLIN, 0}};
    int np = srv->wake[0] >= 0 ? 2 : 1;
    if (poll(pf, (nfds_t)np, timeout_ms) <= 0 || !(pf[0].revents & POLLIN))
        return 0;
    conn *c = calloc(1, sizeof *c);
    if (!c)
        return 0;
    c->srv = srv;
    c->peer_len = sizeof c->peer;
    c->fd = accept4(srv->lfd, (struct sockaddr *)&c->peer, &c->peer_len, SOCK_CLOEXEC);
    if (c->fd < 0) {
        free(c);
        return errno == EINTR || errno == EAGAIN || errno == ECONNABORTED || errno == EMFILE ||
                       errno == ENFILE || errno == ENOBUFS || errno == ENOMEM
                   ? 0 : -1;
    }
    pthread_mutex_lock(&srv->lock);
    int full = srv->active >= MAX_SESSIONS || srv_stopping(srv);
    if (!full)
        srv->active++;
    pthread_mutex_unlock(&srv->lock);
    pthread_t t;
    if (full) {
        atomic_fetch_add(&srv->refused, 1);
        close(c->fd);
        free(c);
        return 0;
    }
    srv_track(srv, c->fd, 1);
    if (hb_thread_start(&t, -1, session_main, c) != 0) {
        srv_track(srv, c->fd, 0);
        close(c->fd);
        free(c);
        pthread_mutex_lock(&srv->lock);
        srv->active--;
        pthread_mutex_unlock(&srv->lock);
        return 0;
    }
    pthread_detach(t);
    return 0;
}

static void *acceptor_main(void *arg)
{
    server *srv = arg;
    while (!srv_stopping(srv))
        if (srv_accept_once(srv, 1000) < 0)
            break;
    return NULL;
}

/* Binds the listener (and the UDP port holder) on addr; port 0 takes a free one. */
static hb_status srv_open(server *srv, const struct sockaddr_storage *addr, socklen_t len,
                          hb_err *err)
{
    srv->lfd = srv->hold = srv->wake[0] = srv->wake[1] = -1;
    pthread_mutex_init(&srv->lock, NULL);
    pthread_cond_init(&srv->idle, NULL);
    for (int i = 0; i < MAX_SESSIONS; i++)
        srv->fds[i] = -1;
    int want = port_of(addr);
    char text[INET6_ADDRSTRLEN] = "?";
    inet_ntop(addr->ss_family,
              addr->ss_family == AF_INET6 ? (const void *)&((const struct sockaddr_in6 *)addr)->sin6_addr
                                          : (const void *)&((const struct sockaddr_in *)addr)->sin_addr,
              text, sizeof text);
    for (int attempt = 0; attempt < 20; attempt++) {
        srv->addr = *addr;
        srv->addr_len = len;
        srv->lfd = socket(addr->ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
        if (srv->lfd < 0)
            return hb_errorf(err, HB_INTERNAL, "socket: %s", strerror(errno));
        set_int(srv->lfd, SOL_SOCKET, SO_REUSEADDR, 1);
        if (bind(srv->lfd, (struct sockaddr *)&srv->addr, len) || listen(srv->lfd, 128)) {
            int e = errno;
            close(srv->lfd);
            srv->lfd = -1;
            return hb_errorf(err, e == EADDRINUSE ? HB_BAD_PARAM : HB_INTERNAL,
                             "cannot listen on %s port %d: %s%s", text, want, strerror(e),
                             e == EADDRINUSE ? "; give --port 0 to take a free port"
                             : e == EADDRNOTAVAIL ? "; --bind must be an address of this host"
                                                  : "");
        }
        socklen_t l = sizeof srv->addr;
        getsockname(srv->lfd, (struct sockaddr *)&srv->addr, &l);
        srv->port = port_of(&srv->addr);
        srv->hold = socket(addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (srv->hold >= 0) {
            set_int(srv->hold, SOL_SOCKET, SO_REUSEADDR, 1);
            set_int(srv->hold, SOL_SOCKET, SO_REUSEPORT, 1);
            set_int(srv->hold, SOL_SOCKET, SO_RCVBUF, 4096); /* strays only */
            if (bind(srv->hold, (struct sockaddr *)&srv->addr, l) == 0)
                return HB_OK;
        }
        int e = errno;
        if (srv->hold >= 0)
            close(srv->hold);
        close(srv->lfd);
        srv->hold = srv->lfd = -1;
        if (want != 0)
            return hb_errorf(err, HB_BAD_PARAM, "port %d is free for TCP but not for UDP on %s "
                             "(%s); give another --port, or 0 to take a free one", want, text,
                             strerror(e));
    }
    return hb_errorf(err, HB_INTERNAL, "no port on %s was free for both TCP and UDP in 20 tries",
                     text);
}

/* Stops accepting, wakes every session (shutdown of its socket) and waits up to 3 s for them. */
static void srv_close(server *srv)
{
    atomic_store(&srv->stop, 1);
    if (srv->wake[1] >= 0) {
        char b = 1;
        if (write(srv->wake[1], &b, 1) < 0) { /* the acceptor also wakes within a second */
        }
    }
    if (srv->has_acceptor)
        pthread_join(srv->acceptor, NULL);
    pthread_mutex_lock(&srv->lock);
    for (int i = 0; i < MAX_SESSIONS; i++)
        if (srv->fds[i] >= 0)
            shutdown(srv->fds[i], SHUT_RDWR);
    struct timespec dl;
    clock_gettime(CLOCK_REALTIME, &dl);
    dl.tv_sec += 3;
    while (srv->active > 0)
        if (pthread_cond_timedwait(&srv->idle, &srv->lock, &dl) == ETIMEDOUT)
            break;
    int left = srv->active;
    pthread_mutex_unlock(&srv->lock);
    if (srv->lfd >= 0)
        close(srv->lfd);
    if (srv->hold >= 0)
        close(srv->hold);
    for (int i = 0; i < 2; i++)
        if (srv->wake[i] >= 0)
            close(srv->wake[i]);
    if (left == 0) { /* a session still running keeps using the lock */
        pthread_mutex_destroy(&srv->lock);
        pthread_cond_destroy(&srv->idle);
    }
}

/* ---- the kernel: parameters and state ---- */

enum { ROLE_LOOPBACK, ROLE_SERVE, ROLE_DRIVE };
static const char *const role_names[] = {"loopback", "serve", "drive", NULL};
static const char *const poll_names[] = {"blocking", "busy", NULL};

static const hb_param_def net_params[] = {
    {"role", HB_P_ENUM, "loopback", 0, 0, role_names,
     "loopback: measure over this host's loopback with server threads in this process (no "
     "peer); serve: listen on --bind/--port, print a listening event with the port, serve "
     "drivers until SIGTERM or --serve_s; drive: measure against the server at --peer/--port."},
    {"op", HB_P_ENUM, "tcp_stream", 0, 0, op_names,
     "tcp_stream / udp_stream: one-way throughput in Mbit/s (10^6 bit/s) counted by the "
     "receiver (UDP: also datagrams sent, received, loss %); tcp_rr / udp_rr: ping-pong of one "
     "message, round trips/s plus round-trip latency avg/p50/p99 in µs (full round trip, not "
     "half)."},
    {"sizes", HB_P_INT_LIST, "1,1024,65536", 1, HB_NET_TCP_MAX, NULL,
     "Message sizes in bytes, one configuration each: the size of every send (TCP) or datagram "
     "payload (UDP, at most 65507)."},
    {"poll", HB_P_ENUM, "blocking", 0, 0, poll_names,
     "Round-trip ops only. blocking: the thread sleeps in recv until the reply; busy: "
     "non-blocking recv in a spin loop on both ends, plus SO_BUSY_POLL where permitted. Busy "
     "needs a CPU per spinning thread."},
    {"peer", HB_P_STRING, "127.0.0.1", 2, 45, NULL,
     "drive: the server's IPv4 or IPv6 address literal (the address of the serving runner); "
     "host names are never looked up."},
    {"port", HB_P_INT, "0", 0, 65535, NULL,
     "drive: the server's port (from its listening event), required; serve and loopback: the "
     "port to listen on, 0 takes a free one. UDP uses the same port number."},
    {"bind", HB_P_STRING, "127.0.0.1", 2, 45, NULL,
     "serve and loopback: the local IPv4 or IPv6 address literal to listen on (0.0.0.0 or :: "
     "for every address)."},
    {"server_cpu", HB_P_INT, "-1", -1, 4095, NULL,
     "CPU of the server thread of each stream. -1: loopback puts it on the affinity CPU after "
     "its stream's client CPU (across vCPUs when there are two or more); serve leaves it to the "
     "OS. Give the same CPU as --client_cpu to measure both ends on one vCPU."},
    {"client_cpu", HB_P_INT, "-1", -1, 4095, NULL,
     "CPU of every driving (client) thread. -1: stream i runs on the i-th CPU of the affinity "
     "mask, round-robin."},
    {"sockbuf_kib", HB_P_INT, "0", 0, 65536, NULL,
     "SO_SNDBUF and SO_RCVBUF of every data socket, both ends, in KiB; 0 keeps the OS default "
     "(and TCP autotuning), except the udp_stream receiver, which takes 4096 KiB."},
    {"serve_s", HB_P_DOUBLE, "3600", 1, 604800, NULL,
     "serve: stop serving after this many seconds even without SIGTERM."},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL},
};

static const hb_param_def net_streams = {
    "streams", HB_P_INT_LIST, "1", 1, 8, NULL,
    "Concurrent streams, run one after another: each is its own thread (pinned) with its own "
    "connection and, in loopback, its own server thread."};

typedef struct net_state {
    int role, op, busy;
    uint32_t sockbuf;
    struct sockaddr_storage peer; /* where the driving threads connect */
    socklen_t peer_len;
    char peer_text[64], bind_text[64];
    int client_cpu, server_cpu;
    int cpus[HB_MAX_CPUS], ncpus;
    double serve_s;
    int busy_poll_errno; /* SO_BUSY_POLL on a probe socket: 0 = permitted */
    server srv;
    int have_srv;
} net_state;

/* One stream's session: a TCP connection (the data for TCP ops, the control for UDP ops) and
 * for UDP ops a connected UDP socket. */
typedef struct session {
    int fd, udp;
    uint64_t seed, token;
} session;

typedef struct nstream {
    session next;      /* opened before the phase that uses it */
    char open_err[120];
    uint32_t size;
    int server_pin;
    int corrupt;       /* test builds: HBK_TEST_CORRUPT=1 */
    uint8_t *pat;      /* pattern, HB_NET_PERIOD + max(size, 65536) bytes */
    uint8_t *msg, *rbuf; /* round trips: what was sent, what came back */
    struct mmsghdr *mm;  /* UDP stream: one batch */
    struct iovec *iov;
    uint8_t *hdrs;
    int batch;
    /* the last phase */
    int64_t t_start, t_stop;
    uint64_t sent_bytes, recv_bytes, sent_msgs, recv_msgs, send_errors, timeouts, checked;
    hb_net_hist hist;
} nstream;

static int in_affinity(const net_state *st, int cpu)
{
    for (int i = 0; i < st->ncpus; i++)
        if (st->cpus[i] == cpu)
            return 1;
    return 0;
}

static hb_status parse_addr(const hb_params *p, const char *name, int port,
                            struct sockaddr_storage *ss, socklen_t *len, hb_err *err)
{
    const char *text = hb_param_str(p, name);
    if (hb_net_parse_ip(text, port, ss, len) == 0)
        return HB_OK;
    return hb_errorf(err, HB_BAD_PARAM, "%s: \"%.45s\" is not an IPv4 or IPv6 address literal "
                     "(like 10.0.0.2 or fd00::2); host names are never looked up: give the "
                     "address itself", name, text);
}

/* Opens a session with the server: TCP connection, hello, reply; for UDP ops a UDP socket
 * connected to the server's port. 0, or -1 with why in buf. */
static int session_open(const net_state *st, uint32_t op, uint32_t size, int pin, session *s,
                        char *why, size_t whylen)
{
    uint8_t hello[HB_NET_HELLO_LEN], reply[HB_NET_REPLY_LEN];
    struct sockaddr_storage local;
    socklen_t llen = sizeof local;
    hb_net_hello h = {.op = op, .size = size, .busy = (uint32_t)st->busy, .pin_cpu = pin,
                      .sockbuf = st->sockbuf};
    int udp_op = op == HB_NET_UDP_STREAM || op == HB_NET_UDP_RR;
    s->fd = s->udp = -1;
    s->seed = h.seed = random64();
    s->token = h.token = random64();
    const char *step = "socket";
    if (udp_op) {
        s->udp = socket(st->peer.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s->udp < 0)
            goto fail;
        memset(&local, 0, sizeof local);
        local.ss_family = st->peer.ss_family;
        set_bufs(s->udp, st->sockbuf);
        step = "bind UDP";
        if (bind(s->udp, (struct sockaddr *)&local, st->peer_len) ||
            getsockname(s->udp, (struct sockaddr *)&local, &llen))
            goto fail;
        h.udp_port = (uint32_t)port_of(&local);
    }
    step = "socket";
    s->fd = socket(st->peer.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        goto fail;
    if (op != HB_NET_TCP_STREAM)
        set_int(s->fd, IPPROTO_TCP, TCP_NODELAY, 1);
    set_bufs(s->fd, st->sockbuf);
    set_timeout(s->fd, SO_SNDTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    set_timeout(s->fd, SO_RCVTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    step = "connect";
    if (connect(s->fd, (const struct sockaddr *)&st->peer, st->peer_len))
        goto fail;
    hb_net_hello_pack(&h, hello);
    step = "hello";
    if (write_all(s->fd, hello, sizeof hello) || read_all(s->fd, reply, sizeof reply) ||
        hb_net_get32(reply) != HB_NET_MAGIC) {
        if (!errno)
            errno = EPROTO;
        goto fail;
    }
    if (hb_net_get32(reply + 4) != 0) {
        errno = (int)hb_net_get32(reply + 4);
        step = "the server's session setup";
        goto fail;
    }
    set_timeout(s->fd, SO_SNDTIMEO, 0);
    if (udp_op) {
        struct sockaddr_storage remote = st->peer;
        set_port(&remote, (int)hb_net_get32(reply + 8));
        step = "connect UDP";
        if (connect(s->udp, (struct sockaddr *)&remote, st->peer_len))
            goto fail;
    }
    if (st->busy) {
        set_busy_poll(s->fd);
        if (s->udp >= 0)
            set_busy_poll(s->udp);
    }
    return 0;
fail:
    snprintf(why, whylen, "%s to %s port %d: %s", step, st->peer_text, port_of(&st->peer),
             strerror(errno));
    if (s->fd >= 0)
        close(s->fd);
    if (s->udp >= 0)
        close(s->udp);
    s->fd = s->udp = -1;
    return -1;
}

static void session_close(session *s)
{
    if (s->fd >= 0)
        close(s->fd);
    if (s->udp >= 0)
        close(s->udp);
    s->fd = s->udp = -1;
}

static void net_teardown(hb_setup *s);

static hb_status net_setup_state(const hb_params *p, hb_setup *s, hb_err *err)
{
    net_state *st = calloc(1, sizeof *st);
    hb_status rc;
    if (!st)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    s->state = st; /* teardown frees it, also after an error here */
    st->role = hb_param_choice(p, "role");
    st->op = hb_param_choice(p, "op");
    st->busy = hb_param_choice(p, "poll");
    st->sockbuf = (uint32_t)hb_param_int(p, "sockbuf_kib") * 1024u;
    st->client_cpu = (int)hb_param_int(p, "client_cpu");
    st->server_cpu = (int)hb_param_int(p, "server_cpu");
    st->serve_s = hb_param_double(p, "serve_s");
    st->ncpus = hb_affinity_cpus(st->cpus, HB_MAX_CPUS);
    int port = (int)hb_param_int(p, "port");
    const hb_value *sizes = hb_param(p, "sizes");
    int udp_op = st->op == HB_NET_UDP_STREAM || st->op == HB_NET_UDP_RR;
    int rr_op = st->op == HB_NET_TCP_RR || st->op == HB_NET_UDP_RR;

    if (st->role != ROLE_SERVE) {
        for (int i = 0; i < sizes->n; i++)
            if (udp_op && sizes->i[i] > HB_NET_UDP_MAX)
                return hb_errorf(err, HB_BAD_PARAM, "sizes: %lld bytes do not fit in one UDP "
                                 "datagram (at most 65507 bytes of payload); give sizes up to "
                                 "65507 for %s", sizes->i[i], op_names[st->op]);
        if (st->busy && !rr_op)
            return hb_errorf(err, HB_BAD_PARAM, "poll busy applies to tcp_rr and udp_rr (round "
                             "trips); stream ops always block, like iperf3");
        if (st->client_cpu >= 0 && !in_affinity(st, st->client_cpu))
            return hb_errorf(err, HB_BAD_PARAM, "client_cpu %d is not among the CPUs this "
                             "process may use (see affinity_cpus); give one of them or -1",
                             st->client_cpu);
    }
    if (st->server_cpu >= 0 && st->role != ROLE_DRIVE && !in_affinity(st, st->server_cpu))
        return hb_errorf(err, HB_BAD_PARAM, "server_cpu %d is not among the CPUs this process "
                         "may use; give one of them or -1", st->server_cpu);
    if (st->role == ROLE_DRIVE && st->server_cpu >= 0)
        return hb_errorf(err, HB_BAD_PARAM, "server_cpu is the serving side's parameter; give it "
                         "to the runner that serves (drive leaves it at -1)");

    struct sockaddr_storage bind_addr;
    socklen_t bind_len;
    if (st->role == ROLE_DRIVE) {
        if ((rc = parse_addr(p, "peer", port, &st->peer, &st->peer_len, err)) != HB_OK)
            return rc;
        if (port == 0)
            return hb_errorf(err, HB_BAD_PARAM, "drive needs --port: the port the serving "
                             "runner printed in its listening event");
        snprintf(st->peer_text, sizeof st->peer_text, "%s", hb_param_str(p, "peer"));
    } else {
        if ((rc = parse_addr(p, "bind", port, &bind_addr, &bind_len, err)) != HB_OK)
            return rc;
        snprintf(st->bind_text, sizeof st->bind_text, "%s", hb_param_str(p, "bind"));
        if ((rc = srv_open(&st->srv, &bind_addr, bind_len, err)) != HB_OK)
            return rc;
        st->have_srv = 1;
        st->srv.cpu = st->role == ROLE_SERVE ? st->server_cpu : -1;
        st->srv.honor_pin = st->role == ROLE_LOOPBACK;
    }
    /* SO_BUSY_POLL permitted? (probe socket; the real ones try again) */
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    st->busy_poll_errno = probe >= 0 ? set_busy_poll(probe) : errno;
    if (probe >= 0)
        close(probe);

    if (st->role == ROLE_LOOPBACK) {
        /* drivers connect to the server's own address: a wildcard bind is reached over the
         * loopback address of its family */
        st->peer = st->srv.addr;
        st->peer_len = st->srv.addr_len;
        if (st->peer.ss_family == AF_INET) {
            struct sockaddr_in *a = (struct sockaddr_in *)&st->peer;
            if (a->sin_addr.s_addr == htonl(INADDR_ANY))
                a->sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        } else {
            struct sockaddr_in6 *a = (struct sockaddr_in6 *)&st->peer;
            if (IN6_IS_ADDR_UNSPECIFIED(&a->sin6_addr))
                a->sin6_addr = in6addr_loopback;
        }
        inet_ntop(st->peer.ss_family,
                  st->peer.ss_family == AF_INET6
                      ? (void *)&((struct sockaddr_in6 *)&st->peer)->sin6_addr
                      : (void *)&((struct sockaddr_in *)&st->peer)->sin_addr,
                  st->peer_text, sizeof st->peer_text);
        if (pipe2(st->srv.wake, O_CLOEXEC))
            return hb_errorf(err, HB_INTERNAL, "pipe: %s", strerror(errno));
        int e = hb_thread_start(&st->srv.acceptor, -1, acceptor_main, &st->srv);
        if (e)
            return hb_errorf(err, HB_INTERNAL, "cannot start the server thread: %s", strerror(e));
        st->srv.has_acceptor = 1;
    }
    if (st->role == ROLE_DRIVE) { /* fail before the start event when nobody serves there */
        session ping;
        char why[200];
        if (session_open(st, HB_NET_PING, 1, -1, &ping, why, sizeof why))
            return hb_errorf(err, HB_INTERNAL, "cannot reach the server: %s; is the serving "
                             "runner's net kernel running, and is this the port from its "
                             "listening event?", why);
        session_close(&ping);
    }

    if (st->role == ROLE_SERVE) {
        s->serving = 1;
        s->expected_s = st->serve_s;
        s->nconfigs = 1;
        s->configs[0] = (hb_config){.op = "serve", .block_bytes = -1, .unit = "Mbit/s",
                                    .work_per_unit = 8e-6};
        return HB_OK;
    }
    s->nconfigs = sizes->n;
    for (int i = 0; i < sizes->n; i++) {
        hb_config *c = &s->configs[i];
        snprintf(c->op, sizeof c->op, "%s", op_names[st->op]);
        c->block_bytes = sizes->i[i];
        c->unit = rr_op ? "RT/s" : "Mbit/s";
        c->work_per_unit = rr_op ? 1 : 8e-6; /* a unit: one round trip, or one byte */
    }
    return HB_OK;
}

/* The harness calls teardown only after a setup that succeeded: clean up here otherwise. */
static hb_status net_setup(const hb_params *p, hb_setup *s, hb_err *err)
{
    hb_status rc = net_setup_state(p, s, err);
    if (rc != HB_OK)
        net_teardown(s);
    return rc;
}

static void net_facts(const hb_setup *s, hb_json *j)
{
    const net_state *st = s->state;
    int rr = st->op == HB_NET_TCP_RR || st->op == HB_NET_UDP_RR;
    hb_json_kstr(j, "role", role_names[st->role]);
    if (st->role == ROLE_SERVE) {
        hb_json_kstr(j, "bind", st->bind_text);
        hb_json_kint(j, "port", st->srv.port);
        hb_json_kint(j, "server_cpu", st->server_cpu);
        return;
    }
    hb_json_kstr(j, "peer", st->peer_text);
    hb_json_kint(j, "port", port_of(&st->peer));
    hb_json_kstr(j, "proto", st->op == HB_NET_UDP_STREAM || st->op == HB_NET_UDP_RR ? "udp"
                                                                                     : "tcp");
    hb_json_kstr(j, "family", st->peer.ss_family == AF_INET6 ? "ipv6" : "ipv4");
    hb_json_kint(j, "client_cpu", st->client_cpu);
    hb_json_kint(j, "server_cpu", st->server_cpu);
    hb_json_kstr(j, "placement",
                 st->role == ROLE_DRIVE ? "two hosts"
                 : st->client_cpu >= 0 && st->client_cpu == st->server_cpu ? "same vCPU"
                 : st->client_cpu >= 0 && st->server_cpu >= 0 ? "across vCPUs"
                 : st->server_cpu < 0 && st->ncpus > 1 ? "across vCPUs (auto)" : "auto");
    hb_json_kint(j, "sockbuf_bytes", st->sockbuf);
    if (st->op == HB_NET_UDP_STREAM)
        hb_json_kint(j, "udp_rcvbuf_bytes", st->sockbuf ? (long long)st->sockbuf : UDP_RCVBUF);
    if (rr) {
        hb_json_kstr(j, "poll", poll_names[st->busy]);
        hb_json_kbool(j, "so_busy_poll", st->busy && st->busy_poll_errno == 0);
        hb_json_kstr(j, "latency", "full round trip in µs: from before the send of a message "
                     "to after the last byte of its echo was received (sockperf prints half of "
                     "it unless --full-rtt)");
    }
    hb_json_kstr(j, "count", st->op == HB_NET_TCP_STREAM
                 ? "bytes counted by the receiver after the sender closed (all of them must "
                   "arrive); the phase ends when the receiver's report arrives"
                 : st->op == HB_NET_UDP_STREAM
                 ? "datagrams and bytes counted by the receiver; the phase ends at the sender's "
                   "last datagram"
                 : "round trips completed");
    hb_json_kstr(j, "verify", st->op == HB_NET_TCP_STREAM
                 ? "every 8th receive (up to 256 KiB each, SO_RCVLOWAT 256 KiB) compared with "
                   "the seeded pattern; receiver byte count = sender byte count"
                 : st->op == HB_NET_UDP_STREAM
                 ? "session token in every datagram; every 16th payload compared with the "
                   "seeded pattern; received <= sent"
                 : "every echo compared with what was sent (every 16th above 1 KiB)");
}

/* ---- the driving side ---- */

static int server_pin_for(const net_state *st, const hb_worker *w)
{
    if (st->role != ROLE_LOOPBACK)
        return -1;
    if (st->server_cpu >= 0)
        return st->server_cpu;
    int client = st->client_cpu >= 0 ? st->client_cpu : w->cpu;
    for (int i = 0; i < st->ncpus; i++)
        if (st->cpus[i] == client)
            return st->cpus[(i + 1) % st->ncpus];
    return -1;
}

static void stream_free(nstream *ns)
{
    if (!ns)
        return;
    session_close(&ns->next);
    free(ns->pat);
    free(ns->msg);
    free(ns->rbuf);
    free(ns->mm);
    free(ns->iov);
    free(ns->hdrs);
    free(ns);
}

/* The driver's copy of the pattern for its current session. */
static void stream_pattern(nstream *ns)
{
    size_t len = HB_NET_PERIOD + (ns->size > 65536 ? ns->size : 65536);
    hb_net_pattern(ns->pat, len, ns->next.seed);
#ifdef HBK_TEST_HOOKS
    /* HBK_TEST_CORRUPT=1: the sender's payload differs from the pattern once per period */
    const char *env = getenv("HBK_TEST_CORRUPT");
    ns->corrupt = env && env[0] == '1';
    if (ns->corrupt)
        for (size_t i = 7; i < len; i += HB_NET_PERIOD)
            ns->pat[i] ^= 0x20;
#endif
}

static hb_status net_thread_setup(hb_worker *w, hb_err *err)
{
    const net_state *st = w->state;
    nstream *ns = calloc(1, sizeof *ns);
    if (!ns)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    ns->size = (uint32_t)w->config->block_bytes;
    ns->next.fd = ns->next.udp = -1;
    if (st->client_cpu >= 0 && pin_self(st->client_cpu))
        return stream_free(ns), hb_errorf(err, HB_INTERNAL, "cannot pin to CPU %d",
                                          st->client_cpu);
    ns->server_pin = server_pin_for(st, w);
    size_t patlen = HB_NET_PERIOD + (ns->size > 65536 ? ns->size : 65536);
    ns->pat = malloc(patlen);
    if (st->op == HB_NET_TCP_RR || st->op == HB_NET_UDP_RR) {
        ns->msg = malloc(ns->size);
        ns->rbuf = malloc(ns->size + 1);
    }
    if (st->op == HB_NET_UDP_STREAM) {
        ns->batch = udp_batch(ns->size);
        ns->mm = calloc((size_t)ns->batch, sizeof *ns->mm);
        ns->iov = calloc((size_t)ns->batch * 2, sizeof *ns->iov);
        ns->hdrs = calloc((size_t)ns->batch, UDP_HDR);
    }
    if (!ns->pat || (st->op >= HB_NET_TCP_RR && (!ns->msg || !ns->rbuf)) ||
        (st->op == HB_NET_UDP_STREAM && (!ns->mm || !ns->iov || !ns->hdrs)))
        return stream_free(ns), hb_errorf(err, HB_INTERNAL, "out of memory");
    if (session_open(st, (uint32_t)st->op, ns->size, ns->server_pin, &ns->next, ns->open_err,
                     sizeof ns->open_err)) {
        hb_status rc = hb_errorf(err, HB_INTERNAL, "stream %d: %s", w->tid + 1, ns->open_err);
        stream_free(ns);
        return rc;
    }
    stream_pattern(ns);
    w->tstate = ns;
    return HB_OK;
}

static void net_thread_teardown(hb_worker *w)
{
    stream_free(w->tstate);
    w->tstate = NULL;
}

static void read_report(hb_worker *w, nstream *ns, hb_net_report *r)
{
    uint8_t in[HB_NET_REPORT_LEN];
    set_timeout(ns->next.fd, SO_RCVTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    memset(r, 0, sizeof *r);
    if (read_all(ns->next.fd, in, sizeof in) || hb_net_report_unpack(in, r)) {
        hb_fail(w, "no report from the receiver: %s", errno ? strerror(errno) : "bad message");
        r->status = 99;
        return;
    }
    if (r->status)
        hb_fail(w, "the receiver stopped early (status %u)", r->status);
    if (r->bad)
        hb_fail(w, "%llu sampled messages differ from the pattern at the receiver",
                (unsigned long long)r->bad);
}

static void tcp_stream_phase(hb_worker *w, nstream *ns)
{
    const uint8_t *pat = ns->pat;
    int fd = ns->next.fd;
    uint64_t off = 0;
    while (!hb_should_stop(w)) {
        ssize_t n = send(fd, pat + off % HB_NET_PERIOD, ns->size, MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR)
                continue;
            hb_fail(w, "send: %s", strerror(errno));
            break;
        }
        off += (uint64_t)n;
        hb_publish(w, off);
    }
    ns->t_stop = hb_now_ns();
    ns->sent_bytes = off;
    shutdown(fd, SHUT_WR); /* the receiver reads to EOF, then reports */
    hb_net_report r;
    read_report(w, ns, &r);
    w->end_ns = hb_now_ns(); /* the phase lasts until every byte was received */
    ns->recv_bytes = r.bytes;
    ns->checked = r.checked;
    if (r.status == 0 && r.bytes != off)
        hb_fail(w, "the sender wrote %llu bytes, the receiver got %llu",
                (unsigned long long)off, (unsigned long long)r.bytes);
    hb_publish(w, r.bytes);
}

static void udp_stream_phase(hb_worker *w, nstream *ns)
{
    int udp = ns->next.udp, b = ns->batch;
    uint32_t size = ns->size;
    uint64_t seq = 0, errors = 0, token = ns->next.token;
    for (int i = 0; i < b; i++) {
        struct msghdr *m = &ns->mm[i].msg_hdr;
        memset(m, 0, sizeof *m);
        m->msg_iov = &ns->iov[2 * i];
        if (size >= UDP_HDR) {
            ns->iov[2 * i].iov_base = ns->hdrs + (size_t)i * UDP_HDR;
            ns->iov[2 * i].iov_len = UDP_HDR;
            ns->iov[2 * i + 1].iov_len = size - UDP_HDR;
            m->msg_iovlen = 2;
            hb_net_put64(ns->hdrs + (size_t)i * UDP_HDR + 8, token);
        } else {
            ns->iov[2 * i].iov_base = ns->pat;
            ns->iov[2 * i].iov_len = size;
            m->msg_iovlen = 1;
        }
    }
    while (!hb_should_stop(w)) {
        if (size >= UDP_HDR)
            for (int i = 0; i < b; i++) {
                hb_net_put64(ns->hdrs + (size_t)i * UDP_HDR, seq + (uint64_t)i);
                ns->iov[2 * i + 1].iov_base = ns->pat + udp_offset(seq + (uint64_t)i);
            }
        int n = sendmmsg(udp, ns->mm, (unsigned)b, 0);
        if (n > 0) {
            seq += (uint64_t)n;
            hb_publish(w, seq * size);
        } else if (errno == ENOBUFS || errno == EAGAIN || errno == ECONNREFUSED ||
                   errno == EINTR) {
            errors++; /* the datagram was not sent: it is not counted as sent */
        } else {
            hb_fail(w, "sendmmsg: %s", strerror(errno));
            break;
        }
    }
    ns->t_stop = w->end_ns = hb_now_ns(); /* every counted datagram was sent before this */
    ns->sent_msgs = seq;
    ns->sent_bytes = seq * size;
    ns->send_errors = errors;
    uint8_t end[HB_NET_END_LEN] = {0};
    hb_net_put32(end, HB_NET_MAGIC);
    hb_net_put64(end + 8, seq);
    hb_net_put64(end + 16, seq * size);
    hb_net_report r;
    if (write_all(ns->next.fd, end, sizeof end)) {
        hb_fail(w, "cannot send END to the receiver: %s", strerror(errno));
        return;
    }
    read_report(w, ns, &r);
    ns->recv_msgs = r.msgs;
    ns->recv_bytes = r.bytes;
    ns->checked = r.checked;
    if (r.msgs > seq)
        hb_fail(w, "the receiver counted %llu datagrams of this session, %llu were sent",
                (unsigned long long)r.msgs, (unsigned long long)seq);
    if (r.foreign)
        hb_fail(w, "the receiver got %llu datagrams of a wrong length or session",
                (unsigned long long)r.foreign);
    hb_publish(w, r.bytes);
}

/* Receives exactly n bytes (TCP) or one datagram of n bytes (UDP) into buf. 1: done;
 * 0: stopped or timed out (UDP: the reply is lost); -1: error. */
static int rr_receive(hb_worker *w, const net_state *st, int fd, int udp, uint8_t *buf,
                      uint32_t n, uint64_t seq, int64_t t0, char *why, size_t whylen)
{
    int flags = st->busy ? MSG_DONTWAIT : 0;
    size_t got = 0;
    unsigned spins = 0;
    for (;;) {
        ssize_t k = recv(fd, buf + got, udp ? n + 1 : n - got, flags);
        if (k > 0) {
            if (!udp) {
                got += (size_t)k;
                if (got == n)
                    return 1;
                continue;
            }
            if ((uint32_t)k == n && (n < 8 || hb_net_get64(buf) == seq))
                return 1;
            continue; /* a late reply to an earlier message, or a wrong length: skip it */
        }
        if (k == 0 && !udp) {
            snprintf(why, whylen, "the server closed the connection");
            return -1;
        }
        if (k < 0 && errno != EAGAIN && errno != EINTR && !(udp && errno == ECONNREFUSED)) {
            snprintf(why, whylen, "recv: %s", strerror(errno));
            return -1;
        }
        if (st->busy && (++spins & 0x3ff) != 0 && !hb_should_stop(w))
            continue;
        if (hb_should_stop(w))
            return 0;
        if (udp && hb_now_ns() - t0 > UDP_RR_TIMEOUT_NS)
            return 0;
    }
}

static void rr_phase(hb_worker *w, nstream *ns)
{
    const net_state *st = w->state;
    int udp = st->op == HB_NET_UDP_RR;
    int fd = udp ? ns->next.udp : ns->next.fd;
    uint32_t size = ns->size;
    uint64_t rts = 0, timeouts = 0;
    char why[120];
    set_timeout(fd, SO_RCVTIMEO, udp ? UDP_RR_TIMEOUT_NS / 2 : 500000000LL);
    memcpy(ns->msg, ns->pat, size);
    if (udp && size >= UDP_HDR)
        hb_net_put64(ns->msg + 8, ns->next.token);
    while (!hb_should_stop(w)) {
        uint64_t seq = rts + timeouts;
        if (size >= 8)
            hb_net_put64(ns->msg, seq);
        int64_t t0 = hb_now_ns();
        if ((udp ? send(fd, ns->msg, size, MSG_NOSIGNAL) != (ssize_t)size
                 : write_all(fd, ns->msg, size) != 0)) {
            if (udp && (errno == ENOBUFS || errno == ECONNREFUSED || errno == EINTR)) {
                timeouts++;
                continue;
            }
            hb_fail(w, "send: %s", strerror(errno));
            break;
        }
        int got = rr_receive(w, st, fd, udp, ns->rbuf, size, seq, t0, why, sizeof why);
        int64_t t1 = hb_now_ns();
        if (got < 0) {
            hb_fail(w, "%s", why);
            break;
        }
        if (got == 0) {
            if (hb_should_stop(w))
                break;
            timeouts++; /* UDP: no reply within the timeout */
            continue;
        }
        hb_net_hist_add(&ns->hist, (uint64_t)(t1 - t0));
#ifdef HBK_TEST_HOOKS
        if (rts == 3 && ns->corrupt) /* and one echo differs from what was sent */
            ns->rbuf[0] ^= 1;
#endif
        rts++;
        hb_publish(w, rts);
        if ((size <= 1024 || (seq & 15) == 0) && memcmp(ns->rbuf, ns->msg, size) != 0) {
            hb_fail(w, "round trip %llu: the echo differs from the message sent",
                    (unsigned long long)seq);
        }
    }
    ns->t_stop = w->end_ns = hb_now_ns();
    ns->sent_msgs = rts + timeouts;
    ns->recv_msgs = rts;
    ns->timeouts = timeouts;
}

static void net_work(hb_worker *w)
{
    const net_state *st = w->state;
    nstream *ns = w->tstate;
    ns->t_start = hb_now_ns();
    ns->sent_bytes = ns->recv_bytes = ns->sent_msgs = ns->recv_msgs = 0;
    ns->send_errors = ns->timeouts = ns->checked = 0;
    hb_net_hist_reset(&ns->hist);
    if (ns->next.fd < 0) {
        hb_fail(w, "no session with the server: %s", ns->open_err);
        return;
    }
    switch (st->op) {
    case HB_NET_TCP_STREAM: tcp_stream_phase(w, ns); break;
    case HB_NET_UDP_STREAM: udp_stream_phase(w, ns); break;
    default: rr_phase(w, ns); break;
    }
    /* the next phase's session, opened now: outside any timed window */
    session_close(&ns->next);
    if (session_open(st, (uint32_t)st->op, ns->size, ns->server_pin, &ns->next, ns->open_err,
                     sizeof ns->open_err) == 0)
        stream_pattern(ns);
}

static void net_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                             hb_json *j)
{
    (void)seconds; /* each stream's own sending window is used for sender_mbit_s */
    const net_state *st = s->state;
    uint64_t sent_b = 0, recv_b = 0, sent_m = 0, recv_m = 0, errs = 0, tmo = 0, checked = 0;
    double sender_mbit = 0;
    static hb_net_hist all; /* controlling thread only */
    hb_net_hist_reset(&all);
    for (int i = 0; i < nthreads; i++) {
        const nstream *ns = w[i].tstate;
        if (!ns)
            continue;
        sent_b += ns->sent_bytes;
        recv_b += ns->recv_bytes;
        sent_m += ns->sent_msgs;
        recv_m += ns->recv_msgs;
        errs += ns->send_errors;
        tmo += ns->timeouts;
        checked += ns->checked;
        if (ns->t_stop > ns->t_start)
            sender_mbit += (double)ns->sent_bytes * 8 / ((double)(ns->t_stop - ns->t_start) / 1e3);
        hb_net_hist_merge(&all, &ns->hist);
    }
    switch (st->op) {
    case HB_NET_TCP_STREAM:
        hb_json_kint(j, "sender_bytes", (long long)sent_b);
        hb_json_kint(j, "receiver_bytes", (long long)recv_b);
        hb_json_kint(j, "checked_bytes", (long long)checked);
        hb_json_knum(j, "sender_mbit_s", sender_mbit);
        break;
    case HB_NET_UDP_STREAM:
        hb_json_kint(j, "datagrams_sent", (long long)sent_m);
        hb_json_kint(j, "datagrams_received", (long long)recv_m);
        hb_json_knum(j, "loss_pct", sent_m ? 100.0 * (double)(sent_m - recv_m) / (double)sent_m
                                           : 0);
        hb_json_kint(j, "sender_bytes", (long long)sent_b);
        hb_json_kint(j, "receiver_bytes", (long long)recv_b);
        hb_json_kint(j, "checked_bytes", (long long)checked);
        hb_json_knum(j, "sender_mbit_s", sender_mbit);
        hb_json_kint(j, "send_errors", (long long)errs);
        break;
    default:
        hb_json_kint(j, "round_trips", (long long)recv_m);
        if (st->op == HB_NET_UDP_RR)
            hb_json_kint(j, "lost", (long long)tmo);
        hb_json_key(j, "latency_us");
        hb_json_obj(j);
        hb_json_knum(j, "avg", all.count ? (double)all.sum / (double)all.count / 1e3 : 0);
        hb_json_knum(j, "p50", hb_net_hist_quantile(&all, 0.50) / 1e3);
        hb_json_knum(j, "p99", hb_net_hist_quantile(&all, 0.99) / 1e3);
        hb_json_knum(j, "min", all.count ? (double)all.min / 1e3 : 0);
        hb_json_knum(j, "max", (double)all.max / 1e3);
        hb_json_obj_end(j);
        break;
    }
}

/* ---- serving ---- */

static void listening_fields(hb_json *j, void *arg)
{
    const net_state *st = arg;
    hb_json_kint(j, "port", st->srv.port);
    hb_json_kstr(j, "proto", "tcp+udp");
    hb_json_kstr(j, "bind", st->bind_text);
}

typedef struct served_info {
    const net_state *st;
    const char *stopped;
} served_info;

static void served_fields(hb_json *j, void *arg)
{
    const served_info *si = arg;
    server *srv = (server *)&si->st->srv;
    hb_json_kint(j, "sessions", (long long)atomic_load(&srv->sessions));
    hb_json_kint(j, "refused", (long long)atomic_load(&srv->refused));
    hb_json_kint(j, "bytes_received", (long long)atomic_load(&srv->bytes));
    hb_json_kint(j, "checked_bytes", (long long)atomic_load(&srv->checked));
    hb_json_kint(j, "verify_failures", (long long)atomic_load(&srv->bad));
    hb_json_kstr(j, "stopped", si->stopped);
}

static hb_status net_serve(hb_setup *s, hb_err *err)
{
    net_state *st = s->state;
    served_info si = {st, "serve_s elapsed"};
    int64_t deadline = hb_now_ns() + (int64_t)(st->serve_s * 1e9);
    hb_event("listening", listening_fields, st);
    for (;;) {
        const char *why = hb_stop_reason();
        if (why) {
            si.stopped = why;
            break;
        }
        int64_t left = (deadline - hb_now_ns()) / 1000000;
        if (left <= 0)
            break;
        if (srv_accept_once(&st->srv, left < 200 ? (int)left : 200) < 0) {
            si.stopped = "the listening socket failed";
            break;
        }
    }
    srv_close(&st->srv);
    st->have_srv = 0;
    hb_event("served", served_fields, &si);
    uint64_t bad = atomic_load(&st->srv.bad);
    if (bad)
        return hb_errorf(err, HB_UNTRUSTED, "%llu sampled messages received differed from the "
                         "pattern", (unsigned long long)bad);
    return HB_OK;
}

static void net_teardown(hb_setup *s)
{
    net_state *st = s->state;
    if (!st)
        return;
    if (st->have_srv)
        srv_close(&st->srv);
    free(st);
    s->state = NULL;
}

const hb_kernel hb_kernel_net = {
    .name = "net",
    .title = "Network throughput, latency and loss",
    .description = "TCP and UDP over loopback or between two hosts (one serves, one drives): "
                   "stream throughput in Mbit/s counted by the receiver, UDP loss, and "
                   "ping-pong round-trip latency (avg, p50, p99) in blocking or busy-poll "
                   "mode; payloads are checked against a seeded pattern.",
    .unit = "Mbit/s",
    .unit_scale = 1,
    .params = net_params,
    .setup = net_setup,
    .facts = net_facts,
    .thread_setup = net_thread_setup,
    .work = net_work,
    .thread_teardown = net_thread_teardown,
    .teardown = net_teardown,
    .result_facts = net_result_facts,
    .threads_def = &net_streams,
    .serve = net_serve,
};
