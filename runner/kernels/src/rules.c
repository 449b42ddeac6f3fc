#include "rules.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const hb_value *find_value(const hb_params *p, const char *name)
{
    for (int i = 0; i < p->n; i++)
        if (!strcmp(p->v[i].def->name, name))
            return &p->v[i];
    return NULL;
}

static const hb_param_def *find_def(const hb_param_def *const *tables, const char *name)
{
    for (int t = 0; tables[t]; t++)
        for (const hb_param_def *d = tables[t]; d->name; d++)
            if (!strcmp(d->name, name))
                return d;
    return NULL;
}

/* Item k of v as written on the command line. */
static const char *item_text(const hb_value *v, int k, char *buf, size_t size)
{
    switch (v->def->type) {
    case HB_P_INT:
    case HB_P_INT_LIST: snprintf(buf, size, "%lld", v->i[k]); return buf;
    case HB_P_DOUBLE: snprintf(buf, size, "%.15g", v->d); return buf;
    case HB_P_ENUM:
    case HB_P_ENUM_LIST: return v->def->choices[v->i[k]];
    case HB_P_BOOL: return v->i[0] ? "true" : "false";
    case HB_P_STRING: return v->s;
    }
    return "?";
}

static double item_num(const hb_value *v, int k)
{
    return v->def->type == HB_P_DOUBLE ? v->d : (double)v->i[k];
}

static int listed(const char *const *in, const char *text)
{
    for (int k = 0; in && in[k]; k++)
        if (!strcmp(in[k], text))
            return 1;
    return 0;
}

static int is_number(hb_ptype t)
{
    return t == HB_P_INT || t == HB_P_INT_LIST || t == HB_P_DOUBLE;
}

static int is_list(hb_ptype t)
{
    return t == HB_P_INT_LIST || t == HB_P_ENUM_LIST;
}

static void text_list(const char *const *in, char *buf, size_t size)
{
    size_t len = 0;
    buf[0] = '\0';
    for (int k = 0; in && in[k]; k++)
        len += (size_t)snprintf(buf + len, len < size ? size - len : 0, "%s%s", k ? ", " : "",
                                in[k]);
}

/* 1 when every condition of r holds, written into text (" when op is udp_rr and ..."); else 0. */
static int holds(const hb_params *p, const hb_rule *r, char *text, size_t size)
{
    size_t len = 0;
    char buf[64];
    text[0] = '\0';
    for (int c = 0; c < HB_RULE_WHEN_MAX && r->when[c].param; c++) {
        const hb_when *w = &r->when[c];
        const hb_value *v = find_value(p, w->param);
        if (!v) /* hb_rules_valid refuses such a rule */
            return 0;
        const char *now = item_text(v, 0, buf, sizeof buf);
        if (w->in ? !listed(w->in, now) : !(item_num(v, 0) > w->above))
            return 0;
        if (w->in)
            len += (size_t)snprintf(text + len, len < size ? size - len : 0, "%s%s is %s",
                                    c ? " and " : " when ", w->param, now);
        else
            len += (size_t)snprintf(text + len, len < size ? size - len : 0, "%s%s > %.15g",
                                    c ? " and " : " when ", w->param, w->above);
    }
    return 1;
}

static int breaks(const hb_rule *r, const hb_value *v, const hb_value *other, int k)
{
    char buf[64];
    switch (r->kind) {
    case HB_RULE_MAXIMUM: return item_num(v, k) > r->limit;
    case HB_RULE_ENUM: return !listed(r->in, item_text(v, k, buf, sizeof buf));
    case HB_RULE_MULTIPLE_OF: return fmod(item_num(v, k), r->limit) != 0;
    case HB_RULE_MAXIMUM_PARAM: return item_num(v, k) > item_num(other, 0);
    case HB_RULE_MINIMUM_PARAM: return item_num(v, k) < item_num(other, 0);
    }
    return 0;
}

/* What is wrong with a value that breaks r: "is larger than 65507". */
static void problem(const hb_rule *r, const hb_value *other, char *buf, size_t size)
{
    char t[64], list[256];
    switch (r->kind) {
    case HB_RULE_MAXIMUM: snprintf(buf, size, "is larger than %.15g", r->limit); return;
    case HB_RULE_ENUM:
        text_list(r->in, list, sizeof list);
        snprintf(buf, size, "is not one of %s", list);
        return;
    case HB_RULE_MULTIPLE_OF: snprintf(buf, size, "is not a multiple of %.15g", r->limit); return;
    case HB_RULE_MAXIMUM_PARAM:
        snprintf(buf, size, "is larger than %s %s", r->other, item_text(other, 0, t, sizeof t));
        return;
    case HB_RULE_MINIMUM_PARAM:
        snprintf(buf, size, "is below %s %s", r->other, item_text(other, 0, t, sizeof t));
        return;
    }
    buf[0] = '\0';
}

hb_status hb_rules_check(const hb_params *p, const hb_rule *const *rules, hb_err *err)
{
    for (int t = 0; rules[t]; t++) {
        for (const hb_rule *r = rules[t]; r->param; r++) {
            const hb_value *v = find_value(p, r->param);
            const hb_value *other = r->other ? find_value(p, r->other) : NULL;
            char when[200], what[300], item[64];
            if (!v || (r->other && !other))
                return hb_errorf(err, HB_INTERNAL, "kernel %s: a rule names a parameter it lacks "
                                 "(%s)", p->kernel, v ? r->other : r->param);
            if (!holds(p, r, when, sizeof when))
                continue;
            for (int k = 0; k < v->n; k++) {
                if (!breaks(r, v, other, k))
                    continue;
                problem(r, other, what, sizeof what);
                return hb_errorf(err, HB_BAD_PARAM, "%s: %s %s%s; %s", r->param,
                                 item_text(v, k, item, sizeof item), what, when, r->reason);
            }
        }
    }
    return HB_OK;
}

/* Whether text is a value def can take ("udp_rr" for an enum, "true" for a bool ...). */
static int takes(const hb_param_def *d, const char *text)
{
    hb_value v;
    hb_err err;
    if (d->type == HB_P_ENUM_LIST || d->type == HB_P_ENUM)
        return listed(d->choices, text);
    return hb_param_parse_value(d, text, &v, &err) == HB_OK;
}

hb_status hb_rules_valid(const hb_rule *const *rules, const hb_param_def *const *tables,
                         hb_err *err)
{
    for (int t = 0; rules[t]; t++) {
        for (const hb_rule *r = rules[t]; r->param; r++) {
            const hb_param_def *d = find_def(tables, r->param);
            const hb_param_def *o = r->other ? find_def(tables, r->other) : NULL;
            int ok = d != NULL && r->reason && r->reason[0];
            if (ok) {
                switch (r->kind) {
                case HB_RULE_MAXIMUM: ok = is_number(d->type); break;
                case HB_RULE_MULTIPLE_OF:
                    ok = (d->type == HB_P_INT || d->type == HB_P_INT_LIST) && r->limit >= 1;
                    break;
                case HB_RULE_ENUM:
                    ok = r->in && r->in[0] && (d->type == HB_P_ENUM || d->type == HB_P_ENUM_LIST ||
                                               d->type == HB_P_BOOL);
                    for (int k = 0; ok && r->in[k]; k++)
                        ok = takes(d, r->in[k]);
                    break;
                case HB_RULE_MAXIMUM_PARAM:
                case HB_RULE_MINIMUM_PARAM:
                    ok = is_number(d->type) && o && (o->type == HB_P_INT || o->type == HB_P_DOUBLE);
                    break;
                }
            }
            for (int c = 0; ok && c < HB_RULE_WHEN_MAX && r->when[c].param; c++) {
                const hb_when *w = &r->when[c];
                const hb_param_def *wd = find_def(tables, w->param);
                ok = wd && !is_list(wd->type) && wd->type != HB_P_STRING &&
                     (w->in ? w->in[0] != NULL : is_number(wd->type));
                for (int k = 0; ok && w->in && w->in[k]; k++)
                    ok = takes(wd, w->in[k]);
            }
            if (!ok)
                return hb_errorf(err, HB_INTERNAL, "the rule on %s names an unknown parameter, "
                                 "a value its parameter cannot take, or a kind that does not fit "
                                 "its type", r->param);
        }
    }
    return HB_OK;
}

/* A value written as on the command line, as JSON of def's type. */
static void typed(hb_json *j, const hb_param_def *d, const char *text)
{
    switch (d->type) {
    case HB_P_BOOL: hb_json_bool(j, !strcmp(text, "true") || !strcmp(text, "1")); return;
    case HB_P_INT:
    case HB_P_INT_LIST: hb_json_int(j, strtoll(text, NULL, 10)); return;
    case HB_P_DOUBLE: hb_json_num(j, strtod(text, NULL)); return;
    default: hb_json_str(j, text); return;
    }
}

static void typed_list(hb_json *j, const hb_param_def *d, const char *const *in)
{
    hb_json_arr(j);
    for (int k = 0; in[k]; k++)
        typed(j, d, in[k]);
    hb_json_arr_end(j);
}

/* A limit of def's type: exact for integers. */
static void limit(hb_json *j, const char *key, const hb_param_def *d, double v)
{
    if (d->type == HB_P_INT || d->type == HB_P_INT_LIST)
        hb_json_kint(j, key, (long long)v);
    else
        hb_json_knum(j, key, v);
}

void hb_rules_schema(hb_json *j, const hb_rule *const *rules, const hb_param_def *const *tables)
{
    hb_json_arr(j);
    for (int t = 0; rules[t]; t++) {
        for (const hb_rule *r = rules[t]; r->param; r++) {
            const hb_param_def *d = find_def(tables, r->param);
            if (!d) /* hb_rules_valid refuses it; never print half a rule */
                continue;
            hb_json_obj(j);
            hb_json_kstr(j, "param", r->param);
            hb_json_key(j, "when");
            hb_json_obj(j);
            for (int c = 0; c < HB_RULE_WHEN_MAX && r->when[c].param; c++) {
                const hb_when *w = &r->when[c];
                const hb_param_def *wd = find_def(tables, w->param);
                hb_json_key(j, w->param);
                hb_json_obj(j);
                if (w->in && wd) {
                    hb_json_key(j, "enum");
                    typed_list(j, wd, w->in);
                } else {
                    hb_json_knum(j, "exclusiveMinimum", w->above);
                }
                hb_json_obj_end(j);
            }
            hb_json_obj_end(j);
            switch (r->kind) {
            case HB_RULE_MAXIMUM: limit(j, "maximum", d, r->limit); break;
            case HB_RULE_MULTIPLE_OF: limit(j, "multipleOf", d, r->limit); break;
            case HB_RULE_ENUM:
                hb_json_key(j, "enum");
                typed_list(j, d, r->in);
                break;
            case HB_RULE_MAXIMUM_PARAM: hb_json_kstr(j, "maximumParam", r->other); break;
            case HB_RULE_MINIMUM_PARAM: hb_json_kstr(j, "minimumParam", r->other); break;
            }
            hb_json_kstr(j, "reason", r->reason);
            hb_json_obj_end(j);
        }
    }
    hb_json_arr_end(j);
}
