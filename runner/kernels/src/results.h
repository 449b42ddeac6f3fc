/* The figures a kernel writes into its result lines, declared as data next to its parameter
 * table: key, type, unit as people write it ("MB/s", "µs", "%"), whether lower is better (a
 * latency) and what it means. --describe prints them as "results" (docs/kernel-protocol.md), so
 * that the API and the dashboard take each figure's unit from the kernel that writes it instead
 * of guessing it from the key's spelling; tests/check_results.py fails on a result key a kernel
 * writes without declaring it. */
#ifndef HB_RESULTS_H
#define HB_RESULTS_H

#include "error.h"
#include "json.h"

typedef enum hb_rtype {
    HB_R_NUMBER, /* a number; null when it is not finite or not known */
    HB_R_INT,    /* an integer: a count, a size */
    HB_R_BOOL,
    HB_R_TEXT,   /* a word or a sentence; null when not known */
    HB_R_OBJECT, /* {member: number}, one level: `fields` declares the members */
} hb_rtype;

typedef struct hb_result {
    const char *key;  /* NULL ends a table */
    hb_rtype type;
    /* Numbers: "MB/s", "Mbit/s", "µs", "ns", "%", "B", "GHz", "IOPS" ...; "" for none (a count, a
     * ratio). NULL: a number whose unit the line itself gives (the harness's `value`: `unit`).
     * An object: the unit of every member that declares none (NULL: members declare their own). */
    const char *unit;
    int lower_is_better; /* a latency, a time per operation: the smaller the better */
    const char *help;
    /* HB_R_OBJECT: its members, a table like this one (no objects in it). A member whose unit is
     * NULL takes the object's unit and lower_is_better: latency_us {avg, p50, p99} is declared
     * once, for the object. */
    const struct hb_result *fields;
} hb_result;

/* HB_INTERNAL when a table is malformed: a key declared twice (the harness's included), a row
 * without help, an object without members or with nested ones, a member number without a unit
 * in an object without one, a unit or lower_is_better on what is not a number. tables:
 * NULL-terminated list of tables. */
hb_status hb_results_valid(const hb_result *const *tables, hb_err *err);

/* The "results" object of --describe: {key: {type, unit, lower_is_better, description[, fields]}}. */
void hb_results_schema(hb_json *j, const hb_result *const *tables);

#endif
