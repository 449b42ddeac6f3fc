/* net_driver.c: the driving side. */
#ifndef HB_KERNEL_NET_DRIVER_H
#define HB_KERNEL_NET_DRIVER_H

#include "net_internal.h"

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
