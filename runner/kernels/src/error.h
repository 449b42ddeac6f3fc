/* The one error enum. Values are the process exit statuses of the kernel protocol. */
#ifndef HB_ERROR_H
#define HB_ERROR_H

typedef enum hb_status {
    HB_OK = 0,
    HB_INTERNAL = 1,    /* "internal": a bug, a failed system call, or interrupted */
    HB_BAD_PARAM = 2,   /* "bad_param" */
    HB_UNSUPPORTED = 3, /* "unsupported" on this host */
    HB_UNTRUSTED = 4,   /* verification failed: the end event says "untrusted" */
} hb_status;

typedef struct hb_err {
    hb_status code;
    char message[512];
} hb_err;

/* The protocol's error code for a status: "internal", "bad_param", ... */
const char *hb_strerror(hb_status code);

/* Sets err and returns code, so callers can write `return hb_fail_with(err, HB_BAD_PARAM, ...)`. */
hb_status hb_errorf(hb_err *err, hb_status code, const char *fmt, ...)
    __attribute__((format(printf, 3, 4)));

#endif
