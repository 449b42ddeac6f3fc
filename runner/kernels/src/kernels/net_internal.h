/* The net kernel's types and constants, shared by its files and by no other kernel. Each part
 * declares its functions in its own header, and the parts use each other one way only: net.c
 * (the kernel: parameters, setup, facts, the serve role) -> net_driver.c (the driving side:
 * sessions and the timed phases) and net_server.c (the serving side: listener and sessions),
 * which both use net_sock.c (socket helpers) and net_wire.c (net.h: pattern, histogram,
 * addresses, wire messages). tests/check_layers.py keeps it so. */
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

/* ---- the serving side's state (net_server.c) ---- */

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

#endif
