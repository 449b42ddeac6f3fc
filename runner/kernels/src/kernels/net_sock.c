/* net: socket helpers both ends use (net_sock.h): options and timeouts, whole-message
 * reads and writes, pinning the calling thread, session seeds, ports, and the UDP batch and
 * payload offsets. */
#include "net_sock.h"

#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <sys/time.h>
#include <unistd.h>

void net_set_timeout(int fd, int opt, int64_t ns)
{
    struct timeval tv = {(time_t)(ns / 1000000000), (long)(ns % 1000000000 / 1000)};
    setsockopt(fd, SOL_SOCKET, opt, &tv, sizeof tv);
}

void net_set_int(int fd, int level, int opt, int v)
{
    setsockopt(fd, level, opt, &v, sizeof v);
}

/* Both buffers to bytes (0: leave the OS default). Root may exceed net.core.[rw]mem_max. */
void net_set_bufs(int fd, uint32_t bytes)
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
int net_set_busy_poll(int fd)
{
    int us = 50;
    return setsockopt(fd, SOL_SOCKET, SO_BUSY_POLL, &us, sizeof us) == 0 ? 0 : errno;
}

int net_write_all(int fd, const void *buf, size_t n)
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
int net_read_all(int fd, void *buf, size_t n)
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

int net_pin_self(int cpu)
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

uint64_t net_random64(void)
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

int net_port_of(const struct sockaddr_storage *ss)
{
    return ss->ss_family == AF_INET6 ? ntohs(((const struct sockaddr_in6 *)ss)->sin6_port)
                                     : ntohs(((const struct sockaddr_in *)ss)->sin_port);
}

void net_set_port(struct sockaddr_storage *ss, int port)
{
    if (ss->ss_family == AF_INET6)
        ((struct sockaddr_in6 *)ss)->sin6_port = htons((uint16_t)port);
    else
        ((struct sockaddr_in *)ss)->sin_port = htons((uint16_t)port);
}

/* UDP datagrams in one sendmmsg/recvmmsg call: up to 64, at most ~256 KiB. */
int net_udp_batch(uint32_t size)
{
    int b = (int)(256 * 1024 / size);
    return b < 1 ? 1 : b > 64 ? 64 : b;
}

/* Where datagram seq's payload starts in the pattern. */
size_t net_udp_offset(uint64_t seq)
{
    return (size_t)(seq % 257) * 13; /* < HB_NET_PERIOD */
}
