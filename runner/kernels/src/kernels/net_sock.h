/* net_sock.c: socket helpers. */
#ifndef HB_KERNEL_NET_SOCK_H
#define HB_KERNEL_NET_SOCK_H

#include "net_internal.h"

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

#endif
