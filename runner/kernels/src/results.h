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
#include "params.h"

typedef enum hb_rtype {
    HB_R_NUMBER, /* a number; null when it is not finite or not known */
    HB_R_INT,    /* an integer: a count, a size */
    HB_R_BOOL,
    HB_R_TEXT,   /* a word or a sentence; null when not known */
    HB_R_OBJECT, /* {member: number}, one level: `fields` declares the members */
} hb_rtype;

/* The range a number lies in by what it is (a share, a count, a time), never a guess at what a
 * machine may reach: --describe prints it as JSON Schema "minimum"/"exclusiveMinimum"/"maximum",
 * and the runner's check and the API refuse a value outside it. null (a number not known) stays
 * allowed. HB_ANY: none, e.g. the measured rate itself. */
typedef enum hb_range {
    HB_ANY = 0,
    HB_NONNEG,   /* >= 0: a count, a size, a time, a moment */
    HB_POSITIVE, /* > 0: a measured clock (an integer > 0 is HB_ONE_UP) */
    HB_ONE_UP,   /* >= 1: a 1-based index, a count that includes the first */
    HB_FRACTION, /* 0..1: a share */
    HB_PERCENT,  /* 0..100 */
} hb_range;

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
    /* Numbers: their range (HB_ANY for none; text, booleans and objects have none). Written as a
     * designated initializer, `.range = HB_FRACTION`, after the six fields above. */
    hb_range range;
    /* Numbers: the parameter whose maximum (its items' for a list) is this figure's maximum:
     * "threads" (the kernel's thread parameter: net's `streams`), "max_repeats". NULL: none but
     * the range's. */
    const char *within;
} hb_result;

/* HB_INTERNAL when a table is malformed: a key declared twice (the harness's included), a row
 * without help, an object without members or with nested ones, a member number without a unit
 * in an object without one, a unit or lower_is_better on what is not a number, a range or
 * `within` on what is not a number, a `within` that names no numeric parameter of `params` (the
 * kernel's parameter tables, NULL-terminated) or whose maximum is below the range's minimum.
 * tables: NULL-terminated list of tables. */
hb_status hb_results_valid(const hb_result *const *tables, const hb_param_def *const *params,
                           hb_err *err);

/* The "results" object of --describe: {key: {type, unit, lower_is_better, description,
 * [minimum | exclusiveMinimum], [maximum], [fields]}}; `within` is looked up in params. */
void hb_results_schema(hb_json *j, const hb_result *const *tables,
                       const hb_param_def *const *params);

/* A share for a result line (HB_FRACTION): part / whole, at most 1. The clocks behind a share
 * (a thread's CPU time, its run delay) are read just outside the timed window they are divided
 * by, so a thread on its CPU the whole window can come out a few ns over: that is 1. NaN (null)
 * when whole is not positive or part is negative (not known). */
double hb_result_share(double part, double whole);

#endif
