/* net: the driving side (--role drive and loopback): each stream (harness thread) opens a
 * session with the server before every phase, then sends a TCP or UDP stream and reads the
 * receiver's report, or times round trips into a histogram; the results' extra keys. */
#include "net_driver.h"

#include "net_sock.h"

#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

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
    uint64_t peer_wait_ns, peer_alive_ns; /* the receiver's run-queue wait (UINT64_MAX: unknown) */
    hb_net_hist hist;
} nstream;

/* Opens a session with the server: TCP connection, hello, reply; for UDP ops a UDP socket
 * connected to the server's port. 0, or -1 with why in buf. */
int net_session_open(const net_state *st, uint32_t op, uint32_t size, int pin, session *s,
                     char *why, size_t whylen)
{
    uint8_t hello[HB_NET_HELLO_LEN], reply[HB_NET_REPLY_LEN];
    struct sockaddr_storage local;
    socklen_t llen = sizeof local;
    hb_net_hello h = {.op = op, .size = size, .busy = (uint32_t)st->busy, .pin_cpu = pin,
                      .sockbuf = st->sockbuf};
    int udp_op = op == HB_NET_UDP_STREAM || op == HB_NET_UDP_RR;
    s->fd = s->udp = -1;
    s->seed = h.seed = net_random64();
    s->token = h.token = net_random64();
    const char *step = "socket";
    if (udp_op) {
        s->udp = socket(st->peer.ss_family, SOCK_DGRAM | SOCK_CLOEXEC, 0);
        if (s->udp < 0)
            goto fail;
        memset(&local, 0, sizeof local);
        local.ss_family = st->peer.ss_family;
        net_set_bufs(s->udp, st->sockbuf);
        step = "bind UDP";
        if (bind(s->udp, (struct sockaddr *)&local, st->peer_len) ||
            getsockname(s->udp, (struct sockaddr *)&local, &llen))
            goto fail;
        h.udp_port = (uint32_t)net_port_of(&local);
    }
    step = "socket";
    s->fd = socket(st->peer.ss_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (s->fd < 0)
        goto fail;
    if (op != HB_NET_TCP_STREAM)
        net_set_int(s->fd, IPPROTO_TCP, TCP_NODELAY, 1);
    net_set_bufs(s->fd, st->sockbuf);
    net_set_timeout(s->fd, SO_SNDTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    net_set_timeout(s->fd, SO_RCVTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    step = "connect";
    if (connect(s->fd, (const struct sockaddr *)&st->peer, st->peer_len))
        goto fail;
    hb_net_hello_pack(&h, hello);
    step = "hello";
    if (net_write_all(s->fd, hello, sizeof hello) ||
        net_read_all(s->fd, reply, sizeof reply) || hb_net_get32(reply) != HB_NET_MAGIC) {
        if (!errno)
            errno = EPROTO;
        goto fail;
    }
    if (hb_net_get32(reply + 4) != 0) {
        errno = (int)hb_net_get32(reply + 4);
        step = "the server's session setup";
        goto fail;
    }
    net_set_timeout(s->fd, SO_SNDTIMEO, 0);
    if (udp_op) {
        struct sockaddr_storage remote = st->peer;
        net_set_port(&remote, (int)hb_net_get32(reply + 8));
        step = "connect UDP";
        if (connect(s->udp, (struct sockaddr *)&remote, st->peer_len))
            goto fail;
    }
    if (st->busy) {
        net_set_busy_poll(s->fd);
        if (s->udp >= 0)
            net_set_busy_poll(s->udp);
    }
    return 0;
fail:
    snprintf(why, whylen, "%s to %s port %d: %s", step, st->peer_text,
             net_port_of(&st->peer), strerror(errno));
    if (s->fd >= 0)
        close(s->fd);
    if (s->udp >= 0)
        close(s->udp);
    s->fd = s->udp = -1;
    return -1;
}

void net_session_close(session *s)
{
    if (s->fd >= 0)
        close(s->fd);
    if (s->udp >= 0)
        close(s->udp);
    s->fd = s->udp = -1;
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
    net_session_close(&ns->next);
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

hb_status net_thread_setup(hb_worker *w, hb_err *err)
{
    const net_state *st = w->state;
    nstream *ns = calloc(1, sizeof *ns);
    if (!ns)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    ns->size = (uint32_t)w->config->block_bytes;
    ns->next.fd = ns->next.udp = -1;
    if (st->client_cpu >= 0 && net_pin_self(st->client_cpu))
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
        ns->batch = net_udp_batch(ns->size);
        ns->mm = calloc((size_t)ns->batch, sizeof *ns->mm);
        ns->iov = calloc((size_t)ns->batch * 2, sizeof *ns->iov);
        ns->hdrs = calloc((size_t)ns->batch, UDP_HDR);
    }
    if (!ns->pat || (st->op >= HB_NET_TCP_RR && (!ns->msg || !ns->rbuf)) ||
        (st->op == HB_NET_UDP_STREAM && (!ns->mm || !ns->iov || !ns->hdrs)))
        return stream_free(ns), hb_errorf(err, HB_INTERNAL, "out of memory");
    if (net_session_open(st, (uint32_t)st->op, ns->size, ns->server_pin, &ns->next,
                         ns->open_err, sizeof ns->open_err)) {
        hb_status rc = hb_errorf(err, HB_INTERNAL, "stream %d: %s", w->tid + 1, ns->open_err);
        stream_free(ns);
        return rc;
    }
    stream_pattern(ns);
    w->tstate = ns;
    return HB_OK;
}

void net_thread_teardown(hb_worker *w)
{
    stream_free(w->tstate);
    w->tstate = NULL;
}

static void read_report(hb_worker *w, nstream *ns, hb_net_report *r)
{
    uint8_t in[HB_NET_REPORT_LEN];
    net_set_timeout(ns->next.fd, SO_RCVTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
    memset(r, 0, sizeof *r);
    if (net_read_all(ns->next.fd, in, sizeof in) || hb_net_report_unpack(in, r)) {
        hb_fail(w, "no report from the receiver: %s", errno ? strerror(errno) : "bad message");
        r->status = 99;
        return;
    }
    ns->peer_wait_ns = r->wait_ns;
    ns->peer_alive_ns = r->alive_ns;
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
                ns->iov[2 * i + 1].iov_base = ns->pat + net_udp_offset(seq + (uint64_t)i);
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
    if (net_write_all(ns->next.fd, end, sizeof end)) {
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
    net_set_timeout(fd, SO_RCVTIMEO, udp ? UDP_RR_TIMEOUT_NS / 2 : 500000000LL);
    memcpy(ns->msg, ns->pat, size);
    if (udp && size >= UDP_HDR)
        hb_net_put64(ns->msg + 8, ns->next.token);
    while (!hb_should_stop(w)) {
        uint64_t seq = rts + timeouts;
        if (size >= 8)
            hb_net_put64(ns->msg, seq);
        int64_t t0 = hb_now_ns();
        if ((udp ? send(fd, ns->msg, size, MSG_NOSIGNAL) != (ssize_t)size
                 : net_write_all(fd, ns->msg, size) != 0)) {
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
    { /* the echoing side's run-queue wait, outside the timed window; none: unknown */
        uint8_t in[HB_NET_REPORT_LEN];
        hb_net_report r;
        shutdown(ns->next.fd, SHUT_WR);
        net_set_timeout(ns->next.fd, SO_RCVTIMEO, (int64_t)CTRL_TIMEOUT_MS * 1000000);
        if (net_read_all(ns->next.fd, in, sizeof in) == 0 && hb_net_report_unpack(in, &r) == 0) {
            ns->peer_wait_ns = r.wait_ns;
            ns->peer_alive_ns = r.alive_ns;
        }
    }
}

void net_work(hb_worker *w)
{
    const net_state *st = w->state;
    nstream *ns = w->tstate;
    ns->t_start = hb_now_ns();
    ns->sent_bytes = ns->recv_bytes = ns->sent_msgs = ns->recv_msgs = 0;
    ns->send_errors = ns->timeouts = ns->checked = 0;
    ns->peer_wait_ns = UINT64_MAX;
    ns->peer_alive_ns = 0;
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
    net_session_close(&ns->next);
    if (net_session_open(st, (uint32_t)st->op, ns->size, ns->server_pin, &ns->next,
                         ns->open_err, sizeof ns->open_err) == 0)
        stream_pattern(ns);
}

void net_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                      hb_json *j)
{
    (void)seconds; /* each stream's own sending window is used for sender_mbit_s */
    const net_state *st = s->state;
    uint64_t sent_b = 0, recv_b = 0, sent_m = 0, recv_m = 0, errs = 0, tmo = 0, checked = 0;
    double sender_mbit = 0, peer_wait = 0, peer_alive = 0;
    int peer_known = 1;
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
        if (ns->peer_wait_ns == UINT64_MAX || ns->peer_alive_ns == 0)
            peer_known = 0;
        peer_wait += (double)ns->peer_wait_ns;
        peer_alive += (double)ns->peer_alive_ns;
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
        if (peer_known && peer_alive > 0)
            hb_json_knum(j, "peer_wait_share", hb_result_share(peer_wait, peer_alive));
        break;
    case HB_NET_UDP_STREAM:
        hb_json_kint(j, "datagrams_sent", (long long)sent_m);
        hb_json_kint(j, "datagrams_received", (long long)recv_m);
        /* more received than sent (a duplicate): none lost, not a wrapped difference */
        hb_json_knum(j, "loss_pct", sent_m ? 100.0 * (double)(sent_m > recv_m ? sent_m - recv_m : 0)
                                                 / (double)sent_m
                                           : 0);
        hb_json_kint(j, "sender_bytes", (long long)sent_b);
        hb_json_kint(j, "receiver_bytes", (long long)recv_b);
        hb_json_kint(j, "checked_bytes", (long long)checked);
        hb_json_knum(j, "sender_mbit_s", sender_mbit);
        hb_json_kint(j, "send_errors", (long long)errs);
        if (peer_known && peer_alive > 0)
            hb_json_knum(j, "peer_wait_share", hb_result_share(peer_wait, peer_alive));
        break;
    default:
        hb_json_kint(j, "round_trips", (long long)recv_m);
        if (st->op == HB_NET_UDP_RR)
            hb_json_kint(j, "lost", (long long)tmo);
        if (peer_known && peer_alive > 0)
            hb_json_knum(j, "peer_wait_share", hb_result_share(peer_wait, peer_alive));
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
