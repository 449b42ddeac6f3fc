/* The net kernel's internals, shared by its files and by no other kernel: net.c (the kernel:
 * parameters, setup, facts, the serve role), net_driver.c (the driving side: sessions and the
 * timed phases), net_server.c (the serving side: listener and sessions), net_sock.c (socket
 * helpers) and net_wire.c (net.h: pattern, histogram, addresses, wire messages). */
#ifndef HB_KERNEL_NET_INTERNAL_H
#define HB_KERNEL_NET_INTERNAL_H

#include <pthread.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

#include "../harness.h"
#include "../host.h"
#include "net.h"

#define RECV_CHUNK (256 * 1024) /* a TCP receiver's read size */
#define RECV_LOWAT (256 * 1024) /* its SO_RCVLOWAT */
#define UDP_HDR 16              /* seq, token */
#define MAX_SESSIONS 256        /* concurrent server sessions */
#define UDP_RCVBUF (4 << 20)   /* udp_stream receiver's SO_RCVBUF unless sockbuf_kib is given */
#define GRACE_MS 20             /* UDP: quiet time that ends the drain after the END message */
#define UDP_RR_TIMEOUT_NS 200000000LL /* a udp_rr reply later than this counts as lost */
#define CTRL_TIMEOUT_MS 10000   /* hello/reply/report exchanges */

/* ---- socket helpers (net_sock.c) ---- */

void net_set_timeout(int fd, int opt, int64_t ns);
void net_set_int(int fd, int level, int opt, int v);
/* Both buffers to bytes (0: leave the OS default). Root may exceed net.core.[rw]mem_max. */
void net_set_bufs(int fd, uint32_t bytes);
/* SO_BUSY_POLL (µs) for busy mode: the driver spins on the NIC queue. 0 when set, else errno.
 * Loopback and veth have no NAPI queue to poll: it has no effect there. */
int net_set_busy_poll(int fd);
int net_write_all(int fd, const void *buf, size_t n);
/* Reads exactly n bytes; -1 on EOF, error or the socket's receive timeout. */
int net_read_all(int fd, void *buf, size_t n);
int net_pin_self(int cpu);
uint64_t net_random64(void);
int net_port_of(const struct sockaddr_storage *ss);
void net_set_port(struct sockaddr_storage *ss, int port);
/* UDP datagrams in one sendmmsg/recvmmsg call: up to 64, at most ~256 KiB. */
int net_udp_batch(uint32_t size);
/* Where datagram seq's payload starts in the pattern. */
size_t net_udp_offset(uint64_t seq);

/* ---- the serving side (net_server.c) ---- */

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

/* Binds the listener (and the UDP port holder) on addr; port 0 takes a free one. */
hb_status net_srv_open(server *srv, const struct sockaddr_storage *addr, socklen_t len,
                       hb_err *err);
/* Waits up to timeout_ms for a connection and starts its session thread. -1 on a listener
 * error, else 0. */
int net_srv_accept_once(server *srv, int timeout_ms);
/* Loopback: the acceptor thread's body (accepts until srv->stop). */
void *net_srv_acceptor_main(void *arg);
/* Stops accepting, wakes every session (shutdown of its socket) and waits up to 3 s for them. */
void net_srv_close(server *srv);

/* ---- the kernel's state (net.c) ---- */

enum { ROLE_LOOPBACK, ROLE_SERVE, ROLE_DRIVE };

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


/* ---- the driving side (net_driver.c) ---- */

/* Opens a session with the server: TCP connection, hello, reply; for UDP ops a UDP socket
 * connected to the server's port. 0, or -1 with why in buf. */
int net_session_open(const net_state *st, uint32_t op, uint32_t size, int pin, session *s,
                     char *why, size_t whylen);
void net_session_close(session *s);
hb_status net_thread_setup(hb_worker *w, hb_err *err);
void net_thread_teardown(hb_worker *w);
void net_work(hb_worker *w);
void net_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                      hb_json *j);

#endif
