#include "params.h"

#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Value text as it may appear inside a message: at most 40 bytes, then "...". */
static const char *shown(const char *s, char *buf, size_t size)
{
    size_t n = strlen(s);
    if (n <= 40 || size < 48)
        return s;
    snprintf(buf, size, "%.40s...", s);
    return buf;
}

static const char *type_hint(const hb_param_def *d)
{
    switch (d->type) {
    case HB_P_INT: return "an integer";
    case HB_P_INT_LIST: return "a comma-separated list of integers like 1,2,4,8";
    case HB_P_DOUBLE: return "a number like 5 or 0.5";
    case HB_P_ENUM: return "one of the listed choices";
    case HB_P_BOOL: return "true or false";
    case HB_P_STRING: return "a text";
    case HB_P_ENUM_LIST: return "a comma-separated list of the listed choices";
    }
    return "a value";
}

static void choices_text(const hb_param_def *d, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; d->choices && d->choices[k]; k++)
        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", k ? ", " : "",
                                d->choices[k]);
}

/* One integer item: optional '-', then decimal digits only. */
static hb_status parse_int(const hb_param_def *d, const char *s, long long *out, hb_err *err)
{
    char tmp[64];
    const char *digits = s[0] == '-' ? s + 1 : s;
    size_t nd = strspn(digits, "0123456789");
    if (nd == 0 || digits[nd] != '\0')
        return hb_errorf(err, HB_BAD_PARAM, "%s: \"%s\" is not an integer (expected %s)",
                         d->name, shown(s, tmp, sizeof tmp), type_hint(d));
    errno = 0;
    long long v = strtoll(s, NULL, 10);
    if (errno == ERANGE || nd > 18)
        return hb_errorf(err, HB_BAD_PARAM, "%s: %s is too large (the maximum is %.15g)",
                         d->name, shown(s, tmp, sizeof tmp), d->max);
    if ((double)v < d->min)
        return hb_errorf(err, HB_BAD_PARAM, "%s: %lld is below the minimum %.15g", d->name, v,
                         d->min);
    if ((double)v > d->max)
        return hb_errorf(err, HB_BAD_PARAM, "%s: %lld is above the maximum %.15g", d->name, v,
                         d->max);
    *out = v;
    return HB_OK;
}

/* A plain decimal number: digits, one optional sign, '.', exponent. No hex, inf or nan. */
static hb_status parse_double(const hb_param_def *d, const char *s, double *out, hb_err *err)
{
    char tmp[64];
    char *end = NULL;
    int ok = s[0] != '\0' && strspn(s, "0123456789.eE+-") == strlen(s) &&
             (s[0] == '-' || s[0] == '.' || (s[0] >= '0' && s[0] <= '9'));
    errno = 0;
    double v = ok ? strtod(s, &end) : 0.0;
    if (!ok || end == s || *end != '\0')
        return hb_errorf(err, HB_BAD_PARAM, "%s: \"%s\" is not a number (expected %s)", d->name,
                         shown(s, tmp, sizeof tmp), type_hint(d));
    if (!isfinite(v) || (errno == ERANGE && fabs(v) > 1.0))
        return hb_errorf(err, HB_BAD_PARAM, "%s: %s is too large (the maximum is %.15g)",
                         d->name, shown(s, tmp, sizeof tmp), d->max);
    if (v < d->min)
        return hb_errorf(err, HB_BAD_PARAM, "%s: %s is below the minimum %.15g", d->name,
                         shown(s, tmp, sizeof tmp), d->min);
    if (v > d->max)
        return hb_errorf(err, HB_BAD_PARAM, "%s: %s is above the maximum %.15g", d->name,
                         shown(s, tmp, sizeof tmp), d->max);
    *out = v;
    return HB_OK;
}

hb_status hb_param_parse_value(const hb_param_def *d, const char *text, hb_value *out,
                               hb_err *err)
{
    char tmp[64], list[256];
    memset(out, 0, sizeof *out);
    out->def = d;
    out->n = 1;
    if (strlen(text) > HB_VALUE_MAX)
        return hb_errorf(err, HB_BAD_PARAM, "%s: the value is %zu bytes long, at most %d",
                         d->name, strlen(text), HB_VALUE_MAX);
    switch (d->type) {
    case HB_P_INT:
        return parse_int(d, text, &out->i[0], err);
    case HB_P_DOUBLE:
        return parse_double(d, text, &out->d, err);
    case HB_P_BOOL:
        if (!strcmp(text, "true") || !strcmp(text, "1"))
            out->i[0] = 1;
        else if (!strcmp(text, "false") || !strcmp(text, "0"))
            out->i[0] = 0;
        else
            return hb_errorf(err, HB_BAD_PARAM, "%s: \"%s\" is not a boolean; write true or false",
                             d->name, shown(text, tmp, sizeof tmp));
        return HB_OK;
    case HB_P_ENUM:
        for (int k = 0; d->choices && d->choices[k]; k++) {
            if (!strcmp(text, d->choices[k])) {
                out->i[0] = k;
                return HB_OK;
            }
        }
        choices_text(d, list, sizeof list);
        return hb_errorf(err, HB_BAD_PARAM, "%s: \"%s\" is not one of %s", d->name,
                         shown(text, tmp, sizeof tmp), list);
    case HB_P_STRING: {
        size_t n = strlen(text);
        for (size_t k = 0; k < n; k++)
            if ((unsigned char)text[k] < 0x20 || text[k] == 0x7f)
                return hb_errorf(err, HB_BAD_PARAM, "%s: byte %zu is a control character; "
                                 "give plain text", d->name, k + 1);
        if ((double)n < d->min || (double)n > d->max)
            return hb_errorf(err, HB_BAD_PARAM, "%s: the text is %zu bytes long; give %.0f to "
                             "%.0f bytes", d->name, n, d->min, d->max);
        out->s = text;
        return HB_OK;
    }
    case HB_P_INT_LIST:
    case HB_P_ENUM_LIST:
        break;
    }

    if (text[0] == '\0')
        return hb_errorf(err, HB_BAD_PARAM, "%s: the list is empty; give at least one value, "
                         "e.g. %s", d->name, d->def);
    out->n = 0;
    const char *s = text;
    for (;;) {
        char item[32];
        size_t len = strcspn(s, ",");
        if (len == 0)
            return hb_errorf(err, HB_BAD_PARAM, "%s: empty item in \"%s\"; separate values by "
                             "single commas, e.g. %s", d->name, shown(text, tmp, sizeof tmp),
                             d->def);
        if (out->n == HB_LIST_MAX)
            return hb_errorf(err, HB_BAD_PARAM, "%s: more than %d values; give at most %d",
                             d->name, HB_LIST_MAX, HB_LIST_MAX);
        if (len >= sizeof item)
            len = sizeof item - 1; /* still junk or too large: parse_int says which */
        memcpy(item, s, len);
        item[len] = '\0';
        if (d->type == HB_P_ENUM_LIST) {
            int k = 0;
            while (d->choices && d->choices[k] && strcmp(item, d->choices[k]))
                k++;
            if (!d->choices || !d->choices[k]) {
                choices_text(d, list, sizeof list);
                return hb_errorf(err, HB_BAD_PARAM, "%s: \"%s\" is not one of %s", d->name,
                                 shown(item, tmp, sizeof tmp), list);
            }
            out->i[out->n] = k;
        } else if (parse_int(d, item, &out->i[out->n], err) != HB_OK) {
            return err->code;
        }
        for (int k = 0; k < out->n; k++)
            if (out->i[k] == out->i[out->n])
                return hb_errorf(err, HB_BAD_PARAM, "%s: %s appears twice; list each value "
                                 "once", d->name, item);
        out->n++;
        s += strcspn(s, ",");
        if (*s == '\0')
            break;
        s++;
        if (*s == '\0')
            return hb_errorf(err, HB_BAD_PARAM, "%s: \"%s\" ends with a comma; remove it",
                             d->name, shown(text, tmp, sizeof tmp));
    }
    return HB_OK;
}

static int is_name_char(char c)
{
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-';
}

static void names_text(const hb_param_def *const *tables, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int t = 0; tables[t]; t++)
        for (const hb_param_def *d = tables[t]; d->name; d++)
            len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s--%s",
                                    len ? ", " : "", d->name);
}

static const hb_value *find_value(const hb_params *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].def->name, name))
            return &p->v[i];
    return NULL;
}

/* "copy, read, write" into buf. */
static void applies_text(const char *const *in, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; in[k]; k++)
        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", k ? ", " : "", in[k]);
}

/* A parameter given that does not apply to the value of the one its `applies` names. */
static hb_status applies_check(const hb_params *p, hb_err *err)
{
    char only[512];
    for (int i = 0; i < p->n; i++) {
        const hb_value *v = &p->v[i];
        const hb_applies *a = v->def->applies;
        if (!v->given || !a)
            continue;
        const hb_value *on = find_value(p, a->param);
        if (!on || on->def->type != HB_P_ENUM)
            return hb_errorf(err, HB_INTERNAL, "%s applies by %s, which is no enum parameter",
                             v->def->name, a->param);
        const char *now = on->def->choices[on->i[0]];
        int ok = 0;
        for (int k = 0; a->in[k] && !ok; k++)
            ok = !strcmp(a->in[k], now);
        if (!ok) {
            applies_text(a->in, only, sizeof only);
            return hb_errorf(err, HB_BAD_PARAM, "%s does not apply to %s %s (only to %s %s): "
                             "leave it out", v->def->name, a->param, now, a->param, only);
        }
    }
    return HB_OK;
}

hb_status hb_params_parse(hb_params *p, const char *kernel, const hb_param_def *const *tables,
                          int argc, char *const *argv, hb_err *err)
{
    char tmp[64], names[512];
    memset(p, 0, sizeof *p);
    p->kernel = kernel;
    for (int t = 0; tables[t]; t++) {
        for (const hb_param_def *d = tables[t]; d->name; d++) {
            if (p->n == HB_PARAMS_MAX)
                return hb_errorf(err, HB_INTERNAL, "kernel %s has more than %d parameters",
                                 kernel, HB_PARAMS_MAX);
            if (hb_param_parse_value(d, d->def, &p->v[p->n], err) != HB_OK)
                return hb_errorf(err, HB_INTERNAL, "default of %s is invalid: %s", d->name,
                                 err->message);
            p->n++;
        }
    }

    for (int a = 0; a < argc; a++) {
        const char *arg = argv[a];
        char name[64];
        size_t len = strlen(arg);
        if (strncmp(arg, "--", 2) != 0 || len < 3)
            return hb_errorf(err, HB_BAD_PARAM, "unexpected argument \"%s\"; parameters are "
                             "written --name value", shown(arg, tmp, sizeof tmp));
        const char *eq = strchr(arg, '=');
        if (eq)
            return hb_errorf(err, HB_BAD_PARAM, "write \"--%.*s %s\": a space between name and "
                             "value, not '='", (int)(eq - arg - 2 < 40 ? eq - arg - 2 : 40),
                             arg + 2, shown(eq + 1, tmp, sizeof tmp));
        size_t k;
        for (k = 0; arg[2 + k] && k < sizeof name - 1; k++) {
            if (!is_name_char(arg[2 + k]))
                break;
            name[k] = arg[2 + k] == '-' ? '_' : arg[2 + k];
        }
        name[k] = '\0';
        hb_value *v = NULL;
        for (int i = 0; i < p->n; i++)
            if (arg[2 + k] == '\0' && !strcmp(p->v[i].def->name, name))
                v = &p->v[i];
        if (!v) {
            names_text(tables, names, sizeof names);
            return hb_errorf(err, HB_BAD_PARAM, "unknown parameter \"%s\" for kernel %s; known: "
                             "%s", shown(arg, tmp, sizeof tmp), kernel, names);
        }
        const hb_param_def *d = v->def;
        if (v->given)
            return hb_errorf(err, HB_BAD_PARAM, "--%s is given twice; give it once%s", d->name,
                             d->type == HB_P_INT_LIST ? " (a list is comma-separated: "
                             "--threads 1,2,4)" : "");
        const char *text;
        if (a + 1 < argc && strncmp(argv[a + 1], "--", 2) != 0) {
            text = argv[++a];
        } else if (d->type == HB_P_BOOL) {
            text = "true"; /* a bare boolean flag: --no_sampler */
        } else {
            return hb_errorf(err, HB_BAD_PARAM, "--%s needs a value: %s", d->name, type_hint(d));
        }
        if (hb_param_parse_value(d, text, v, err) != HB_OK)
            return err->code;
        v->given = 1;
    }
    return applies_check(p, err);
}

static void value_json(hb_json *j, const hb_value *v)
{
    switch (v->def->type) {
    case HB_P_INT: hb_json_int(j, v->i[0]); break;
    case HB_P_DOUBLE: hb_json_num(j, v->d); break;
    case HB_P_BOOL: hb_json_bool(j, (int)v->i[0]); break;
    case HB_P_ENUM: hb_json_str(j, v->def->choices[v->i[0]]); break;
    case HB_P_INT_LIST:
        hb_json_arr(j);
        for (int k = 0; k < v->n; k++)
            hb_json_int(j, v->i[k]);
        hb_json_arr_end(j);
        break;
    case HB_P_STRING: hb_json_str(j, v->s); break;
    case HB_P_ENUM_LIST:
        hb_json_arr(j);
        for (int k = 0; k < v->n; k++)
            hb_json_str(j, v->def->choices[v->i[k]]);
        hb_json_arr_end(j);
        break;
    }
}

void hb_params_json(hb_json *j, const hb_params *p)
{
    hb_json_obj(j);
    for (int i = 0; i < p->n; i++) {
        hb_json_key(j, p->v[i].def->name);
        value_json(j, &p->v[i]);
    }
    hb_json_obj_end(j);
}

static void bounds(hb_json *j, const hb_param_def *d)
{
    if (d->type == HB_P_INT || d->type == HB_P_INT_LIST) { /* exact: 64 GiB has 11 digits */
        hb_json_kint(j, "minimum", (long long)d->min);
        hb_json_kint(j, "maximum", (long long)d->max);
        return;
    }
    hb_json_knum(j, "minimum", d->min);
    hb_json_knum(j, "maximum", d->max);
}

void hb_params_schema(hb_json *j, const hb_param_def *const *tables)
{
    hb_err err;
    hb_json_obj(j);
    for (int t = 0; tables[t]; t++) {
        for (const hb_param_def *d = tables[t]; d->name; d++) {
            hb_value def;
            int have_default = hb_param_parse_value(d, d->def, &def, &err) == HB_OK;
            hb_json_key(j, d->name);
            hb_json_obj(j);
            switch (d->type) {
            case HB_P_INT:
                hb_json_kstr(j, "type", "integer");
                bounds(j, d);
                break;
            case HB_P_DOUBLE:
                hb_json_kstr(j, "type", "number");
                bounds(j, d);
                break;
            case HB_P_BOOL:
                hb_json_kstr(j, "type", "boolean");
                break;
            case HB_P_ENUM:
                hb_json_kstr(j, "type", "string");
                hb_json_key(j, "enum");
                hb_json_arr(j);
                for (int k = 0; d->choices[k]; k++)
                    hb_json_str(j, d->choices[k]);
                hb_json_arr_end(j);
                break;
            case HB_P_INT_LIST:
                hb_json_kstr(j, "type", "array");
                hb_json_key(j, "items");
                hb_json_obj(j);
                hb_json_kstr(j, "type", "integer");
                bounds(j, d);
                hb_json_obj_end(j);
                hb_json_kint(j, "minItems", 1);
                hb_json_kint(j, "maxItems", HB_LIST_MAX);
                hb_json_kbool(j, "uniqueItems", 1);
                break;
            case HB_P_STRING:
                hb_json_kstr(j, "type", "string");
                hb_json_kint(j, "minLength", (long long)d->min);
                hb_json_kint(j, "maxLength", (long long)d->max);
                break;
            case HB_P_ENUM_LIST:
                hb_json_kstr(j, "type", "array");
                hb_json_key(j, "items");
                hb_json_obj(j);
                hb_json_kstr(j, "type", "string");
                hb_json_key(j, "enum");
                hb_json_arr(j);
                for (int k = 0; d->choices[k]; k++)
                    hb_json_str(j, d->choices[k]);
                hb_json_arr_end(j);
                hb_json_obj_end(j);
                hb_json_kint(j, "minItems", 1);
                hb_json_kint(j, "maxItems", HB_LIST_MAX);
                hb_json_kbool(j, "uniqueItems", 1);
                break;
            }
            hb_json_key(j, "default");
            if (have_default)
                value_json(j, &def);
            else
                hb_json_null(j);
            hb_json_kstr(j, "description", d->help);
            if (d->unit)
                hb_json_kstr(j, "x-unit", d->unit);
            if (d->applies) {
                hb_json_key(j, "x-applies");
                hb_json_obj(j);
                hb_json_key(j, d->applies->param);
                hb_json_arr(j);
                for (int k = 0; d->applies->in[k]; k++)
                    hb_json_str(j, d->applies->in[k]);
                hb_json_arr_end(j);
                hb_json_obj_end(j);
            }
            hb_json_obj_end(j);
        }
    }
    hb_json_obj_end(j);
}

const hb_value *hb_param(const hb_params *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].def->name, name))
            return &p->v[i];
    fprintf(stderr, "hbk: bug: kernel %s has no parameter %s\n", p->kernel, name);
    abort();
}

long long hb_param_int(const hb_params *p, const char *name) { return hb_param(p, name)->i[0]; }
double hb_param_double(const hb_params *p, const char *name) { return hb_param(p, name)->d; }
int hb_param_bool(const hb_params *p, const char *name) { return (int)hb_param(p, name)->i[0]; }
int hb_param_choice(const hb_params *p, const char *name) { return (int)hb_param(p, name)->i[0]; }
const char *hb_param_str(const hb_params *p, const char *name) { return hb_param(p, name)->s; }
