#include "error.h"

#include <stdarg.h>
#include <stdio.h>

const char *hb_strerror(hb_status code)
{
    switch (code) {
    case HB_OK: return "ok";
    case HB_BAD_PARAM: return "bad_param";
    case HB_UNSUPPORTED: return "unsupported";
    case HB_UNTRUSTED: return "verify_failed";
    case HB_INTERNAL: break;
    }
    return "internal";
}

hb_status hb_errorf(hb_err *err, hb_status code, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    err->code = code;
    vsnprintf(err->message, sizeof err->message, fmt, ap);
    va_end(ap);
    return code;
}
