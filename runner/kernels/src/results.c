#include "results.h"

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

/* Why row r (a member of object `of`, or NULL) is malformed, or NULL. */
static const char *row_fault(const hb_result *r, const hb_result *of)
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
    return NULL;
}

static int declared_before(const hb_result *const *tables, int t, const hb_result *r)
{
    for (int u = 0; u <= t; u++)
        for (const hb_result *q = tables[u]; q->key && q != r; q++)
            if (!strcmp(q->key, r->key))
                return 1;
    return 0;
}

hb_status hb_results_valid(const hb_result *const *tables, hb_err *err)
{
    for (int t = 0; tables[t]; t++) {
        for (const hb_result *r = tables[t]; r->key; r++) {
            const char *why = declared_before(tables, t, r) ? "is declared twice" : row_fault(r, NULL);
            for (const hb_result *m = r->type == HB_R_OBJECT ? r->fields : NULL; !why && m && m->key;
                 m++) {
                for (const hb_result *q = r->fields; !why && q != m; q++)
                    if (!strcmp(q->key, m->key))
                        why = "has a member declared twice";
                if (!why && (why = row_fault(m, r)))
                    return hb_errorf(err, HB_INTERNAL, "result figure %s.%s %s", r->key, m->key,
                                     why);
            }
            if (why)
                return hb_errorf(err, HB_INTERNAL, "result figure %s %s", r->key, why);
        }
    }
    return HB_OK;
}

/* One figure; a member inherits the object's unit and lower_is_better when it has no unit. */
static void figure(hb_json *j, const hb_result *r, const hb_result *of)
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
    if (r->type == HB_R_OBJECT) {
        hb_json_key(j, "fields");
        hb_json_obj(j);
        for (const hb_result *m = r->fields; m->key; m++)
            figure(j, m, r);
        hb_json_obj_end(j);
    }
    hb_json_obj_end(j);
}

void hb_results_schema(hb_json *j, const hb_result *const *tables)
{
    hb_json_obj(j);
    for (int t = 0; tables[t]; t++)
        for (const hb_result *r = tables[t]; r->key; r++)
            figure(j, r, NULL);
    hb_json_obj_end(j);
}
