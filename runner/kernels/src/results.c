#include "results.h"

#include <math.h>
#include <stddef.h>
#include <string.h>

static int is_number(hb_rtype t)
{
    return t == HB_R_NUMBER || t == HB_R_INT;
}

static const char *type_name(hb_rtype t)
{
    switch (t) {
    case HB_R_NUMBER: return "number";
    case HB_R_INT: return "integer";
    case HB_R_BOOL: return "boolean";
    case HB_R_TEXT: return "string";
    case HB_R_OBJECT: return "object";
    }
    return "?";
}

/* The numeric parameter named `name` in params, or NULL. */
static const hb_param_def *param_named(const hb_param_def *const *params, const char *name)
{
    for (int t = 0; params && params[t]; t++)
        for (const hb_param_def *d = params[t]; d->name; d++)
            if (!strcmp(d->name, name))
                return d->type == HB_P_INT || d->type == HB_P_INT_LIST || d->type == HB_P_DOUBLE
                           ? d : NULL;
    return NULL;
}

/* The least value of a range (exclusive for HB_POSITIVE). */
static double range_min(hb_range g)
{
    return g == HB_ONE_UP ? 1 : 0;
}

/* Why row r's range is malformed, or NULL. */
static const char *range_fault(const hb_result *r, const hb_param_def *const *params)
{
    if (!is_number(r->type))
        return r->range != HB_ANY || r->within ? "is not a number but has a range" : NULL;
    if ((unsigned)r->range > HB_PERCENT)
        return "has an unknown range";
    if (r->type == HB_R_INT && r->range == HB_POSITIVE)
        return "is an integer > 0: declare it HB_ONE_UP";
    if (!r->within)
        return NULL;
    if (r->range == HB_ANY || r->range == HB_FRACTION || r->range == HB_PERCENT)
        return "has a `within` without a lower bound, or beside the range's own maximum";
    const hb_param_def *d = param_named(params, r->within);
    if (!d)
        return "is within a parameter that is not a numeric parameter of the kernel";
    if (d->max < range_min(r->range))
        return "is within a parameter whose maximum is below the range's minimum";
    return NULL;
}

/* Why row r (a member of object `of`, or NULL) is malformed, or NULL. */
static const char *row_fault(const hb_result *r, const hb_result *of,
                             const hb_param_def *const *params)
{
    if (!r->help || !r->help[0])
        return "has no description";
    if (of && r->type == HB_R_OBJECT)
        return "is an object inside an object";
    if ((r->type == HB_R_OBJECT) != (r->fields != NULL))
        return r->fields ? "has members but is not an object" : "is an object without members";
    if (!is_number(r->type) && r->type != HB_R_OBJECT && (r->unit || r->lower_is_better))
        return "is not a number but has a unit or lower_is_better";
    if (of && is_number(r->type) && !r->unit && !of->unit)
        return "is a member without a unit in an object without one";
    if (!of && r->type == HB_R_OBJECT && !r->unit && r->lower_is_better)
        return "is lower_is_better without a unit for its members";
    return range_fault(r, params);
}

static int declared_before(const hb_result *const *tables, int t, const hb_result *r)
{
    for (int u = 0; u <= t; u++)
        for (const hb_result *q = tables[u]; q->key && q != r; q++)
            if (!strcmp(q->key, r->key))
                return 1;
    return 0;
}

hb_status hb_results_valid(const hb_result *const *tables, const hb_param_def *const *params,
                           hb_err *err)
{
    for (int t = 0; tables[t]; t++) {
        for (const hb_result *r = tables[t]; r->key; r++) {
            const char *why = declared_before(tables, t, r) ? "is declared twice"
                                                            : row_fault(r, NULL, params);
            for (const hb_result *m = r->type == HB_R_OBJECT ? r->fields : NULL; !why && m && m->key;
                 m++) {
                for (const hb_result *q = r->fields; !why && q != m; q++)
                    if (!strcmp(q->key, m->key))
                        why = "has a member declared twice";
                if (!why && (why = row_fault(m, r, params)))
                    return hb_errorf(err, HB_INTERNAL, "result figure %s.%s %s", r->key, m->key,
                                     why);
            }
            if (why)
                return hb_errorf(err, HB_INTERNAL, "result figure %s %s", r->key, why);
        }
    }
    return HB_OK;
}

/* A number's range as JSON Schema: HB_POSITIVE is "exclusiveMinimum": 0; `within` gives the
 * maximum its parameter's. */
static void range_schema(hb_json *j, const hb_result *r, const hb_param_def *const *params)
{
    if (r->range == HB_ANY)
        return;
    hb_json_kint(j, r->range == HB_POSITIVE ? "exclusiveMinimum" : "minimum",
                 (long long)range_min(r->range));
    const hb_param_def *d = r->within ? param_named(params, r->within) : NULL;
    if (d && d->type == HB_P_DOUBLE)
        hb_json_knum(j, "maximum", d->max);
    else if (d)
        hb_json_kint(j, "maximum", (long long)d->max);
    else if (r->range == HB_FRACTION || r->range == HB_PERCENT)
        hb_json_kint(j, "maximum", r->range == HB_FRACTION ? 1 : 100);
}

/* One figure; a member inherits the object's unit and lower_is_better when it has no unit. */
static void figure(hb_json *j, const hb_result *r, const hb_result *of,
                   const hb_param_def *const *params)
{
    const hb_result *u = of && !r->unit ? of : r;
    hb_json_key(j, r->key);
    hb_json_obj(j);
    hb_json_kstr(j, "type", type_name(r->type));
    if (is_number(r->type) || r->type == HB_R_OBJECT) {
        if (u->unit)
            hb_json_kstr(j, "unit", u->unit);
        if (u->unit || is_number(r->type))
            hb_json_kbool(j, "lower_is_better", u->lower_is_better);
    }
    hb_json_kstr(j, "description", r->help);
    range_schema(j, r, params);
    if (r->type == HB_R_OBJECT) {
        hb_json_key(j, "fields");
        hb_json_obj(j);
        for (const hb_result *m = r->fields; m->key; m++)
            figure(j, m, r, params);
        hb_json_obj_end(j);
    }
    hb_json_obj_end(j);
}

void hb_results_schema(hb_json *j, const hb_result *const *tables,
                       const hb_param_def *const *params)
{
    hb_json_obj(j);
    for (int t = 0; tables[t]; t++)
        for (const hb_result *r = tables[t]; r->key; r++)
            figure(j, r, NULL, params);
    hb_json_obj_end(j);
}

double hb_result_share(double part, double whole)
{
    if (!(whole > 0) || !(part >= 0))
        return NAN;
    return part < whole ? part / whole : 1;
}
