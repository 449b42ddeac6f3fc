/* Cross-field parameter rules, declared as data next to a parameter table: "when op is udp_stream
 * or udp_rr, every size is at most 65507", "when stable_cv > 0, max_repeats is at least repeats".
 * The harness checks them after parsing, before any work (and for --check); --describe prints
 * them as "x-rules" in the parameters object, so the runner and the API refuse the same
 * combinations with the same message (docs/kernel-protocol.md). */
#ifndef HB_RULES_H
#define HB_RULES_H

#include "error.h"
#include "json.h"
#include "params.h"

#define HB_RULE_WHEN_MAX 2 /* conditions of one rule; all must hold */

/* A condition on a scalar parameter (enum, bool, int or number). */
typedef struct hb_when {
    const char *param;     /* NULL: no condition */
    const char *const *in; /* holds when the value, written as on the command line ("udp_rr",
                              "true", "4"), is one of these (NULL-terminated) ... */
    double above;          /* ... or, when `in` is NULL, when the number is above this */
} hb_when;

typedef enum hb_rule_kind {
    HB_RULE_MAXIMUM,       /* every value of param is at most `limit` */
    HB_RULE_ENUM,          /* every value of param is one of `in` */
    HB_RULE_MULTIPLE_OF,   /* every value of param is a multiple of `limit` */
    HB_RULE_MAXIMUM_PARAM, /* every value of param is at most the value of parameter `other` */
    HB_RULE_MINIMUM_PARAM, /* every value of param is at least the value of parameter `other` */
} hb_rule_kind;

typedef struct hb_rule {
    const char *param; /* the parameter it constrains, named by its error; NULL ends a table */
    hb_rule_kind kind;
    double limit;          /* HB_RULE_MAXIMUM, HB_RULE_MULTIPLE_OF */
    const char *const *in; /* HB_RULE_ENUM: NULL-terminated, written as on the command line */
    const char *other;     /* HB_RULE_MAXIMUM_PARAM, HB_RULE_MINIMUM_PARAM: a scalar number */
    hb_when when[HB_RULE_WHEN_MAX];
    const char *reason; /* why, ending the message: "one UDP datagram carries at most ..." */
} hb_rule;

/* The first rule the parsed values break: HB_BAD_PARAM with
 * "<param>: <value> is larger than 65507 when op is udp_stream; <reason>".
 * rules: NULL-terminated list of tables, each ended by an entry with param NULL. */
hb_status hb_rules_check(const hb_params *p, const hb_rule *const *rules, hb_err *err);

/* HB_INTERNAL when a rule names a parameter the tables lack, or one its kind cannot apply to. */
hb_status hb_rules_valid(const hb_rule *const *rules, const hb_param_def *const *tables,
                         hb_err *err);

/* The "x-rules" array of --describe. */
void hb_rules_schema(hb_json *j, const hb_rule *const *rules, const hb_param_def *const *tables);

#endif
