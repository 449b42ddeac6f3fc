/* net_server.c: the serving side. */
#ifndef HB_KERNEL_NET_SERVER_H
#define HB_KERNEL_NET_SERVER_H

#include "net_internal.h"

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

#endif
