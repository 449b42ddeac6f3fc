#include "json.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

void hb_json_init(hb_json *j)
{
    memset(j, 0, sizeof *j);
    j->first[0] = 1;
}

void hb_json_free(hb_json *j)
{
    free(j->buf);
    hb_json_init(j);
}

void hb_json_reset(hb_json *j)
{
    char *buf = j->buf;
    size_t cap = j->cap;
    hb_json_init(j);
    j->buf = buf;
    j->cap = cap;
    if (buf)
        buf[0] = '\0';
}

const char *hb_json_text(const hb_json *j)
{
    return (j->oom || !j->buf) ? "" : j->buf;
}

static void put(hb_json *j, const char *s, size_t n)
{
    if (j->oom)
        return;
    if (j->len + n + 1 > j->cap) {
        size_t cap = j->cap ? j->cap : 256;
        while (j->len + n + 1 > cap)
            cap *= 2;
        char *nb = realloc(j->buf, cap);
        if (!nb) {
            j->oom = 1;
            return;
        }
        j->buf = nb;
        j->cap = cap;
    }
    memcpy(j->buf + j->len, s, n);
    j->len += n;
    j->buf[j->len] = '\0';
}

static void puts_(hb_json *j, const char *s) { put(j, s, strlen(s)); }

/* Comma before every item but the first of its container; nothing after a key. */
static void item(hb_json *j)
{
    if (j->after_key) {
        j->after_key = 0;
        return;
    }
    if (!j->first[j->depth])
        put(j, ",", 1);
    j->first[j->depth] = 0;
}

static void open_(hb_json *j, char c)
{
    item(j);
    put(j, &c, 1);
    if (j->depth + 1 < HB_JSON_DEPTH)
        j->depth++;
    j->first[j->depth] = 1;
}

static void close_(hb_json *j, char c)
{
    if (j->depth > 0)
        j->depth--;
    put(j, &c, 1);
}

void hb_json_obj(hb_json *j) { open_(j, '{'); }
void hb_json_obj_end(hb_json *j) { close_(j, '}'); }
void hb_json_arr(hb_json *j) { open_(j, '['); }
void hb_json_arr_end(hb_json *j) { close_(j, ']'); }

/* Length of the valid UTF-8 sequence at s (1..4), or 0 if it is not one. */
static int utf8_len(const unsigned char *s)
{
    unsigned char c = s[0];
    if (c >= 0xC2 && c <= 0xDF)
        return (s[1] & 0xC0) == 0x80 ? 2 : 0;
    if (c >= 0xE0 && c <= 0xEF) {
        unsigned char lo = c == 0xE0 ? 0xA0 : 0x80, hi = c == 0xED ? 0x9F : 0xBF;
        return (s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80) ? 3 : 0;
    }
    if (c >= 0xF0 && c <= 0xF4) {
        unsigned char lo = c == 0xF0 ? 0x90 : 0x80, hi = c == 0xF4 ? 0x8F : 0xBF;
        return (s[1] >= lo && s[1] <= hi && (s[2] & 0xC0) == 0x80 && (s[3] & 0xC0) == 0x80)
                   ? 4 : 0;
    }
    return 0;
}

static void escaped(hb_json *j, const char *str)
{
    const unsigned char *s = (const unsigned char *)str;
    put(j, "\"", 1);
    while (*s) {
        unsigned char c = *s;
        char tmp[8];
        if (c == '"' || c == '\\') {
            tmp[0] = '\\';
            tmp[1] = (char)c;
            put(j, tmp, 2);
            s++;
        } else if (c < 0x20 || c == 0x7F) {
            const char *short_ = c == '\n' ? "\\n" : c == '\t' ? "\\t" : c == '\r' ? "\\r" : NULL;
            if (short_) {
                puts_(j, short_);
            } else {
                snprintf(tmp, sizeof tmp, "\\u%04x", c);
                puts_(j, tmp);
            }
            s++;
        } else if (c < 0x80) {
            put(j, (const char *)s, 1);
            s++;
        } else {
            int n = utf8_len(s);
            if (n) {
                put(j, (const char *)s, (size_t)n);
                s += n;
            } else {
                puts_(j, "\\ufffd");
                s++;
            }
        }
    }
    put(j, "\"", 1);
}

void hb_json_key(hb_json *j, const char *key)
{
    item(j);
    escaped(j, key);
    put(j, ":", 1);
    j->after_key = 1;
}

void hb_json_str(hb_json *j, const char *s)
{
    item(j);
    escaped(j, s);
}

void hb_json_int(hb_json *j, long long v)
{
    char tmp[32];
    item(j);
    snprintf(tmp, sizeof tmp, "%lld", v);
    puts_(j, tmp);
}

void hb_json_num(hb_json *j, double v)
{
    char tmp[40];
    if (!isfinite(v)) {
        hb_json_null(j);
        return;
    }
    item(j);
    snprintf(tmp, sizeof tmp, "%.10g", v);
    puts_(j, tmp);
}

void hb_json_fixed(hb_json *j, double v, int decimals)
{
    char tmp[64];
    if (!isfinite(v) || fabs(v) > 1e30) {
        hb_json_num(j, v);
        return;
    }
    item(j);
    snprintf(tmp, sizeof tmp, "%.*f", decimals, v);
    puts_(j, tmp);
}

void hb_json_bool(hb_json *j, int b)
{
    item(j);
    puts_(j, b ? "true" : "false");
}

void hb_json_null(hb_json *j)
{
    item(j);
    puts_(j, "null");
}

void hb_json_kstr(hb_json *j, const char *key, const char *s)
{
    hb_json_key(j, key);
    if (s)
        hb_json_str(j, s);
    else
        hb_json_null(j);
}

void hb_json_kint(hb_json *j, const char *key, long long v)
{
    hb_json_key(j, key);
    hb_json_int(j, v);
}

void hb_json_knum(hb_json *j, const char *key, double v)
{
    hb_json_key(j, key);
    hb_json_num(j, v);
}

void hb_json_kbool(hb_json *j, const char *key, int b)
{
    hb_json_key(j, key);
    hb_json_bool(j, b);
}

void hb_json_knull(hb_json *j, const char *key)
{
    hb_json_key(j, key);
    hb_json_null(j);
}
