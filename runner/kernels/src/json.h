/* Tiny JSON writer: builds one object in a growable buffer, escapes strings (invalid UTF-8
 * becomes U+FFFD so every line we print parses), writes non-finite numbers as null. */
#ifndef HB_JSON_H
#define HB_JSON_H

#include <stddef.h>

#define HB_JSON_DEPTH 16

typedef struct hb_json {
    char *buf;
    size_t len, cap;
    int depth;
    unsigned char first[HB_JSON_DEPTH]; /* next item at this depth is the first one */
    int after_key;
    int oom;
} hb_json;

void hb_json_init(hb_json *j);
void hb_json_free(hb_json *j);
void hb_json_reset(hb_json *j);
const char *hb_json_text(const hb_json *j); /* "" after an allocation failure */

void hb_json_obj(hb_json *j);
void hb_json_obj_end(hb_json *j);
void hb_json_arr(hb_json *j);
void hb_json_arr_end(hb_json *j);
void hb_json_key(hb_json *j, const char *key);

void hb_json_str(hb_json *j, const char *s);
void hb_json_int(hb_json *j, long long v);
void hb_json_num(hb_json *j, double v);          /* 10 significant digits */
void hb_json_fixed(hb_json *j, double v, int decimals);
void hb_json_bool(hb_json *j, int b);
void hb_json_null(hb_json *j);

/* key + value shorthands */
void hb_json_kstr(hb_json *j, const char *key, const char *s); /* s == NULL writes null */
void hb_json_kint(hb_json *j, const char *key, long long v);
void hb_json_knum(hb_json *j, const char *key, double v);
void hb_json_kbool(hb_json *j, const char *key, int b);
void hb_json_knull(hb_json *j, const char *key);

#endif
