/* net: TCP and UDP throughput, round-trip latency and UDP loss, with one binary that serves and
 * drives. --role loopback starts its own server threads in this process (one host, no peer);
 * --role serve listens, prints a `listening` event with its port and serves until SIGTERM or
 * --serve_s; --role drive measures against a server given by --peer (an address literal) and
 * --port. Each stream (harness thread) opens a fresh session for every phase before the phase
 * starts, so a phase never sees another phase's bytes. Methodology: docs/methodology/network.md.
 *
 * Verification: the payload is a seeded pattern (period HB_NET_PERIOD); the receiver compares a
 * sample of what it got with the pattern, and the byte (TCP) or datagram (UDP) counts of sender
 * and receiver must agree; round-trip replies are compared with what was sent.
 *
 * This file: the parameters, setup, facts and the serve role; the driving side is
 * net_driver.c, the serving side net_server.c, shared parts net_sock.c and net_wire.c. */
#include "net_driver.h"
#include "net_server.h"
#include "net_sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

static const char *const op_names[] = {"tcp_stream", "udp_stream", "tcp_rr", "udp_rr", NULL};

/* ---- the kernel: parameters and state ---- */

static const char *const role_names[] = {"loopback", "serve", "drive", NULL};
static const char *const poll_names[] = {"blocking", "busy", NULL};

static const hb_param_def net_params[] = {
    {"role", HB_P_ENUM, "loopback", 0, 0, role_names,
     "loopback: measure over this host's loopback with server threads in this process (no "
     "peer); serve: listen on --bind/--port, print a listening event with the port, serve "
     "drivers until SIGTERM or --serve_s; drive: measure against the server at --peer/--port.", NULL, NULL},
    {"op", HB_P_ENUM, "tcp_stream", 0, 0, op_names,
     "tcp_stream / udp_stream: one-way throughput in Mbit/s (10^6 bit/s) counted by the "
     "receiver (UDP: also datagrams sent, received, loss %); tcp_rr / udp_rr: ping-pong of one "
     "message, round trips/s plus round-trip latency avg/p50/p99 in µs (full round trip, not "
     "half).", NULL, NULL},
    {"sizes", HB_P_INT_LIST, "1,1024,65536", 1, HB_NET_TCP_MAX, NULL,
     "Message sizes in bytes, one configuration each: the size of every send (TCP) or datagram "
     "payload (UDP, at most 65507).", "B", NULL},
    {"poll", HB_P_ENUM, "blocking", 0, 0, poll_names,
     "Round-trip ops only. blocking: the thread sleeps in recv until the reply; busy: "
     "non-blocking recv in a spin loop on both ends, plus SO_BUSY_POLL where permitted. Busy "
     "needs a CPU per spinning thread.", NULL, NULL},
    {"peer", HB_P_STRING, "127.0.0.1", 2, 45, NULL,
     "drive: the server's IPv4 or IPv6 address literal (the address of the serving runner); "
     "host names are never looked up.", NULL, NULL},
    {"port", HB_P_INT, "0", 0, 65535, NULL,
     "drive: the server's port (from its listening event), required; serve and loopback: the "
     "port to listen on, 0 takes a free one. UDP uses the same port number.", NULL, NULL},
    {"bind", HB_P_STRING, "127.0.0.1", 2, 45, NULL,
     "serve and loopback: the local IPv4 or IPv6 address literal to listen on (0.0.0.0 or :: "
     "for every address).", NULL, NULL},
    {"server_cpu", HB_P_INT, "-1", -1, 4095, NULL,
     "CPU of the server thread of each stream. -1: loopback puts it on the affinity CPU after "
     "its stream's client CPU (across vCPUs when there are two or more); serve leaves it to the "
     "OS. Give the same CPU as --client_cpu to measure both ends on one vCPU.", NULL, NULL},
    {"client_cpu", HB_P_INT, "-1", -1, 4095, NULL,
     "CPU of every driving (client) thread. -1: stream i runs on the i-th CPU of the affinity "
     "mask, round-robin.", NULL, NULL},
    {"sockbuf_kib", HB_P_INT, "0", 0, 65536, NULL,
     "SO_SNDBUF and SO_RCVBUF of every data socket, both ends, in KiB; 0 keeps the OS default "
     "(and TCP autotuning), except the udp_stream receiver, which takes 4096 KiB.", NULL, NULL},
    {"serve_s", HB_P_DOUBLE, "3600", 1, 604800, NULL,
     "serve: stop serving after this many seconds even without SIGTERM.", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

static const char *const udp_ops[] = {"udp_stream", "udp_rr", NULL};
static const char *const stream_ops[] = {"tcp_stream", "udp_stream", NULL};
static const char *const measuring[] = {"loopback", "drive", NULL}; /* serve takes both */
static const char *const blocking_only[] = {"blocking", NULL};

static const hb_rule net_rules[] = {
    {"sizes", HB_RULE_MAXIMUM, HB_NET_UDP_MAX, NULL, NULL,
     {{"op", udp_ops, 0}, {"role", measuring, 0}},
     "one UDP datagram carries at most 65507 bytes of payload; give sizes up to 65507 for UDP"},
    {"poll", HB_RULE_ENUM, 0, blocking_only, NULL, {{"op", stream_ops, 0}, {"role", measuring, 0}},
     "poll busy applies to tcp_rr and udp_rr (round trips); stream ops always block, like iperf3"},
    {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
};

/* What net_result_facts (net_driver.c) adds to each result line: streams their byte counts,
 * round trips their latency. */
static const hb_result net_latency_fields[] = {
    {"avg", HB_R_NUMBER, NULL, 0, "Mean round trip.", NULL, .range = HB_NONNEG},
    {"p50", HB_R_NUMBER, NULL, 0, "Median round trip (within 0.4 %).", NULL, .range = HB_NONNEG},
    {"p99", HB_R_NUMBER, NULL, 0, "99th percentile round trip (within 0.4 %).", NULL,
     .range = HB_NONNEG},
    {"min", HB_R_NUMBER, NULL, 0, "Shortest round trip.", NULL, .range = HB_NONNEG},
    {"max", HB_R_NUMBER, NULL, 0, "Longest round trip.", NULL, .range = HB_NONNEG},
    {NULL},
};

static const hb_result net_results[] = {
    {"sender_bytes", HB_R_INT, "B", 0, "Streams: payload bytes the senders sent.", NULL,
     .range = HB_NONNEG},
    {"receiver_bytes", HB_R_INT, "B", 0,
     "Streams: payload bytes the receivers got; value is computed from these.", NULL,
     .range = HB_NONNEG},
    {"checked_bytes", HB_R_INT, "B", 0, "Streams: received bytes checked against the pattern.",
     NULL, .range = HB_NONNEG},
    {"sender_mbit_s", HB_R_NUMBER, "Mbit/s", 0,
     "Streams: the senders' rate, each over its own sending window.", NULL, .range = HB_NONNEG},
    {"datagrams_sent", HB_R_INT, "", 0, "udp_stream: datagrams sent.", NULL, .range = HB_NONNEG},
    {"datagrams_received", HB_R_INT, "", 0, "udp_stream: datagrams received.", NULL,
     .range = HB_NONNEG},
    {"loss_pct", HB_R_NUMBER, "%", 0, "udp_stream: datagrams lost, of those sent.", NULL,
     .range = HB_PERCENT},
    {"send_errors", HB_R_INT, "", 0,
     "udp_stream: datagrams the sender's kernel refused (never counted as sent).", NULL,
     .range = HB_NONNEG},
    {"peer_wait_share", HB_R_NUMBER, "", 1,
     "Every op: the share of the phase the receiving threads (the serving side's, or loopback's "
     "own) spent runnable but waiting for a CPU, from their hello to their report: the "
     "receiver's disturbance, judged with the same bound as wait_share.", NULL,
     .range = HB_FRACTION},
    {"round_trips", HB_R_INT, "", 0, "tcp_rr, udp_rr: round trips completed.", NULL,
     .range = HB_NONNEG},
    {"lost", HB_R_INT, "", 0, "udp_rr: requests without a reply within 200 ms.", NULL,
     .range = HB_NONNEG},
    {"latency_us", HB_R_OBJECT, "µs", 1,
     "tcp_rr, udp_rr: full round trips (not half), from the client's send to its receive.",
     net_latency_fields, .range = HB_ANY},
    {NULL},
};

static const hb_param_def net_streams = {
    "streams", HB_P_INT_LIST, "1", 1, 8, NULL,
    "Concurrent streams, run one after another: each is its own thread (pinned) with its own "
    "connection and, in loopback, its own server thread.", NULL, NULL};

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
    const hb_value *sizes = hb_param(p, "sizes"); /* UDP sizes, busy poll: net_rules */
    int rr_op = st->op == HB_NET_TCP_RR || st->op == HB_NET_UDP_RR;

    if (st->role != ROLE_SERVE && st->client_cpu >= 0 && !in_affinity(st, st->client_cpu))
        return hb_errorf(err, HB_BAD_PARAM, "client_cpu %d is not among the CPUs this process "
                         "may use (see affinity_cpus); give one of them or -1", st->client_cpu);
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
        if ((rc = net_srv_open(&st->srv, &bind_addr, bind_len, err)) != HB_OK)
            return rc;
        st->have_srv = 1;
        st->srv.cpu = st->role == ROLE_SERVE ? st->server_cpu : -1;
        st->srv.honor_pin = st->role == ROLE_LOOPBACK;
    }
    /* SO_BUSY_POLL permitted? (probe socket; the real ones try again) */
    int probe = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
    st->busy_poll_errno = probe >= 0 ? net_set_busy_poll(probe) : errno;
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
        int e = hb_thread_start(&st->srv.acceptor, -1, net_srv_acceptor_main, &st->srv);
        if (e)
            return hb_errorf(err, HB_INTERNAL, "cannot start the server thread: %s", strerror(e));
        st->srv.has_acceptor = 1;
    }
    if (st->role == ROLE_DRIVE) { /* fail before the start event when nobody serves there */
        session ping;
        char why[200];
        if (net_session_open(st, HB_NET_PING, 1, -1, &ping, why, sizeof why))
            return hb_errorf(err, HB_INTERNAL, "cannot reach the server: %s; is the serving "
                             "runner's net kernel running, and is this the port from its "
                             "listening event?", why);
        net_session_close(&ping);
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
    hb_json_kint(j, "port", net_port_of(&st->peer));
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
        if (net_srv_accept_once(&st->srv, left < 200 ? (int)left : 200) < 0) {
            si.stopped = "the listening socket failed";
            break;
        }
    }
    net_srv_close(&st->srv);
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
        net_srv_close(&st->srv);
    free(st);
    s->state = NULL;
}

static const char *const net_checks[] = {"network", NULL};

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
    .rules = net_rules,
    .results = net_results,
    .checks = net_checks,
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
