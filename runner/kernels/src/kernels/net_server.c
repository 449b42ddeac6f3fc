/* net: the serving side (--role serve, and the server threads of --role loopback). A listener
 * plus a UDP socket holding the same port; one thread per session: it reads the driver's hello,
 * then receives and checks a stream (TCP or UDP) and reports what arrived, or echoes round trips,
 * until the driver closes. The kernel's own state and parameters are in net.c. */
#include "net_server.h"

#include "net_sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

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

/* The receiving thread's run-queue wait so far, for its report: how much of the phase it could
 * not run because other work held its CPU (the serving side's disturbance, judged by the driver's
 * verdict as peer_wait_share). */
typedef struct rx_clock {
    int64_t t0, wait0;
} rx_clock;

static rx_clock rx_clock_start(void)
{
    return (rx_clock){hb_now_ns(), hb_thread_wait_ns()};
}

static void rx_clock_stop(const rx_clock *c, hb_net_report *r)
{
    int64_t wait = hb_thread_wait_ns(), t = hb_now_ns();
    r->wait_ns = c->wait0 >= 0 && wait >= c->wait0 ? (uint64_t)(wait - c->wait0) : UINT64_MAX;
    r->alive_ns = t > c->t0 ? (uint64_t)(t - c->t0) : 0;
}

static void send_report(int fd, hb_net_report *r, const rx_clock *c)
{
    uint8_t out[HB_NET_REPORT_LEN];
    rx_clock_stop(c, r);
    hb_net_report_pack(r, out);
    net_write_all(fd, out, sizeof out);
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
    rx_clock clk = rx_clock_start();
    uint8_t *buf = malloc(RECV_CHUNK), *pat = malloc(RECV_CHUNK + HB_NET_PERIOD);
    hb_net_report r = {0};
    if (!buf || !pat)
        goto out;
    hb_net_pattern(pat, RECV_CHUNK + HB_NET_PERIOD, h->seed);
    net_set_timeout(fd, SO_RCVTIMEO, 1000000000LL);
    /* Wake the receiver once per RECV_LOWAT bytes, not once per segment: on a VM every
     * wake-up of a sleeping vCPU is an IPI and a VM exit (this alone is +20-35 % on one loopback
     * stream). At EOF recv returns what is left; under memory pressure TCP wakes it earlier. */
    int lowat = RECV_LOWAT;
    if (h->sockbuf && (int)(h->sockbuf / 4) < lowat)
        lowat = (int)(h->sockbuf / 4) > 0 ? (int)(h->sockbuf / 4) : 1;
    net_set_int(fd, SOL_SOCKET, SO_RCVLOWAT, lowat);
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
    send_report(fd, &r, &clk);
    srv_account(srv, &r);
out:
    free(buf);
    free(pat);
}

/* Echoes size-byte messages until EOF; busy: non-blocking receive, spinning. At a clean EOF
 * (the driver shut its side between messages) it reports its run-queue wait, as udp_rr does:
 * the counts are the driver's. */
static void serve_tcp_rr(server *srv, int fd, const hb_net_hello *h)
{
    rx_clock clk = rx_clock_start();
    uint8_t *buf = malloc(h->size);
    hb_net_report r = {0};
    int clean_eof = 0;
    if (!buf)
        return;
    net_set_timeout(fd, SO_RCVTIMEO, 1000000000LL);
    int flags = h->busy ? MSG_DONTWAIT : 0;
    for (;;) {
        size_t got = 0;
        unsigned spins = 0;
        while (got < h->size) {
            ssize_t n = recv(fd, buf + got, h->size - got, flags);
            if (n > 0) {
                got += (size_t)n;
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                clean_eof = n == 0 && got == 0;
                goto done;
            } else if ((++spins & 0xffff) == 0 || !h->busy) {
                if (srv_stopping(srv))
                    goto done;
            }
        }
        if (net_write_all(fd, buf, h->size))
            break;
        r.msgs++;
        r.bytes += h->size;
    }
done:
    if (clean_eof)
        send_report(fd, &r, &clk); /* fails quietly where the driver has gone */
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
    rx->n = net_udp_batch(size);
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
                r->bad += memcmp(d + UDP_HDR, pat + net_udp_offset(seq), h->size - UDP_HDR) != 0;
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
    rx_clock clk = rx_clock_start();
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
            if (net_read_all(ctrl, end, sizeof end) || hb_net_get32(end) != HB_NET_MAGIC)
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
    send_report(ctrl, &r, &clk);
    srv_account(srv, &r);
out:
    udp_rx_free(&rx);
    free(pat);
}

/* Echoes datagrams until the driver shuts its side of the control connection, then reports
 * (its run-queue wait: the counts are the driver's). */
static void serve_udp_rr(server *srv, int ctrl, int udp, const hb_net_hello *h)
{
    rx_clock clk = rx_clock_start();
    uint8_t *buf = malloc(h->size + 1);
    hb_net_report r = {0};
    if (!buf)
        return;
    net_set_timeout(udp, SO_RCVTIMEO, 200000000LL);
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
    send_report(ctrl, &r, &clk); /* fails quietly where the driver has gone */
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

    net_set_timeout(fd, SO_RCVTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    if (net_read_all(fd, in, sizeof in) || hb_net_hello_unpack(in, &h)) {
        atomic_fetch_add(&srv->refused, 1);
        goto out;
    }
    net_pin_self(srv->honor_pin && h.pin_cpu >= 0 ? h.pin_cpu : srv->cpu);
    net_set_bufs(fd, h.sockbuf);
    if (h.op != HB_NET_TCP_STREAM)
        net_set_int(fd, IPPROTO_TCP, TCP_NODELAY, 1);
    if (h.busy)
        net_set_busy_poll(fd);
    if (h.op == HB_NET_UDP_STREAM || h.op == HB_NET_UDP_RR) {
        /* the listener's port, connected to the driver's UDP address: with SO_REUSEPORT every
         * session's socket shares the port, and the kernel delivers each datagram to the
         * socket connected to its sender */
        struct sockaddr_storage local = srv->addr, remote = c->peer;
        net_set_port(&remote, (int)h.udp_port);
        udp = socket(srv->addr.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (udp < 0)
            goto fail;
        net_set_int(udp, SOL_SOCKET, SO_REUSEADDR, 1);
        net_set_int(udp, SOL_SOCKET, SO_REUSEPORT, 1);
        net_set_bufs(udp, h.sockbuf);
        if (h.op == HB_NET_UDP_STREAM && h.sockbuf == 0) {
            /* a queue deep enough to ride out the receiver's scheduling gaps: with the default
             * (~208 KiB, six 32-KiB datagrams) a few µs off the CPU is loss */
            int v = UDP_RCVBUF;
            if (setsockopt(udp, SOL_SOCKET, SO_RCVBUFFORCE, &v, sizeof v) != 0)
                setsockopt(udp, SOL_SOCKET, SO_RCVBUF, &v, sizeof v);
        }
        if (h.busy)
            net_set_busy_poll(udp);
        if (bind(udp, (struct sockaddr *)&local, srv->addr_len) ||
            connect(udp, (struct sockaddr *)&remote, c->peer_len))
            goto fail;
    }
    hb_net_put32(reply, HB_NET_MAGIC);
    hb_net_put32(reply + 8, (uint32_t)srv->port);
    if (net_write_all(fd, reply, sizeof reply))
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
    net_write_all(fd, reply, sizeof reply);
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
int net_srv_accept_once(server *srv, int timeout_ms)
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

void *net_srv_acceptor_main(void *arg)
{
    server *srv = arg;
    while (!srv_stopping(srv))
        if (net_srv_accept_once(srv, 1000) < 0)
            break;
    return NULL;
}

/* Binds the listener (and the UDP port holder) on addr; port 0 takes a free one. */
hb_status net_srv_open(server *srv, const struct sockaddr_storage *addr, socklen_t len,
                       hb_err *err)
{
    srv->lfd = srv->hold = srv->wake[0] = srv->wake[1] = -1;
    pthread_mutex_init(&srv->lock, NULL);
    pthread_cond_init(&srv->idle, NULL);
    for (int i = 0; i < MAX_SESSIONS; i++)
        srv->fds[i] = -1;
    int want = net_port_of(addr);
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
        net_set_int(srv->lfd, SOL_SOCKET, SO_REUSEADDR, 1);
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
        srv->port = net_port_of(&srv->addr);
        srv->hold = socket(addr->ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (srv->hold >= 0) {
            net_set_int(srv->hold, SOL_SOCKET, SO_REUSEADDR, 1);
            net_set_int(srv->hold, SOL_SOCKET, SO_REUSEPORT, 1);
            net_set_int(srv->hold, SOL_SOCKET, SO_RCVBUF, 4096); /* strays only */
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
void net_srv_close(server *srv)
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
