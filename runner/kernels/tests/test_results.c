/* Declared result figures (results.h): every kernel's table, with the harness's, is well formed;
 * a malformed one is refused as a bug; the "results" JSON of --describe has the documented shape
 * (an object's members take its unit and lower_is_better unless they declare their own; a
 * number's range is its minimum/maximum, a `within` the parameter's maximum). */
#include <stdio.h>
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "results.h"

static const hb_result lat_fields[] = {
    {"p50", HB_R_NUMBER, NULL, 0, "median", NULL, .range = HB_NONNEG},
    {"max", HB_R_NUMBER, "ms", 0, "longest, in its own unit", NULL, .range = HB_ANY},
    {NULL},
};
static const hb_result table[] = {
    {"rate_mbit_s", HB_R_NUMBER, "Mbit/s", 0, "the rate", NULL, .range = HB_ANY},
    {"lat_us", HB_R_OBJECT, "µs", 1, "latency", lat_fields, .range = HB_ANY},
    {"count", HB_R_INT, "", 0, "a count", NULL, .range = HB_NONNEG},
    {"ok", HB_R_BOOL, NULL, 0, "a flag", NULL, .range = HB_ANY},
    {"share", HB_R_NUMBER, "", 0, "a share", NULL, .range = HB_FRACTION},
    {"pct", HB_R_NUMBER, "%", 0, "a percentage", NULL, .range = HB_PERCENT},
    {"clock", HB_R_NUMBER, "GHz", 0, "a clock", NULL, .range = HB_POSITIVE},
    {"nth", HB_R_INT, "", 0, "1-based", NULL, .range = HB_ONE_UP, .within = "n"},
    {"wait_s", HB_R_NUMBER, "s", 0, "a wait", NULL, .range = HB_NONNEG, .within = "wait_s"},
    {NULL},
};
static const hb_param_def params[] = {
    {"n", HB_P_INT_LIST, "1", 1, 64, NULL, "n", NULL, NULL},
    {"wait_s", HB_P_DOUBLE, "0", 0, 2.5, NULL, "wait", NULL, NULL},
    {"op", HB_P_STRING, "x", 1, 8, NULL, "a string", NULL, NULL},
    {"none", HB_P_INT, "0", 0, 0, NULL, "always 0", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const hb_param_def *const param_tables[] = {params, NULL};

static const char *schema_of(const hb_result *const *tables, const hb_param_def *const *ptables)
{
    static hb_json j;
    hb_json_free(&j);
    hb_json_init(&j);
    hb_results_schema(&j, tables, ptables);
    return hb_json_text(&j);
}

static const char *schema(const hb_result *const *tables)
{
    return schema_of(tables, param_tables);
}

static void test_schema_shape(void)
{
    const hb_result *tables[] = {table, NULL};
    hb_err err;
    CHECK(hb_results_valid(tables, param_tables, &err) == HB_OK, "%s", err.message);
    CHECK_STR(schema(tables),
              "{\"rate_mbit_s\":{\"type\":\"number\",\"unit\":\"Mbit/s\",\"lower_is_better\":false,"
              "\"description\":\"the rate\"},"
              "\"lat_us\":{\"type\":\"object\",\"unit\":\"µs\",\"lower_is_better\":true,"
              "\"description\":\"latency\",\"fields\":{"
              "\"p50\":{\"type\":\"number\",\"unit\":\"µs\",\"lower_is_better\":true,"
              "\"description\":\"median\",\"minimum\":0},"
              "\"max\":{\"type\":\"number\",\"unit\":\"ms\",\"lower_is_better\":false,"
              "\"description\":\"longest, in its own unit\"}}},"
              "\"count\":{\"type\":\"integer\",\"unit\":\"\",\"lower_is_better\":false,"
              "\"description\":\"a count\",\"minimum\":0},"
              "\"ok\":{\"type\":\"boolean\",\"description\":\"a flag\"},"
              "\"share\":{\"type\":\"number\",\"unit\":\"\",\"lower_is_better\":false,"
              "\"description\":\"a share\",\"minimum\":0,\"maximum\":1},"
              "\"pct\":{\"type\":\"number\",\"unit\":\"%\",\"lower_is_better\":false,"
              "\"description\":\"a percentage\",\"minimum\":0,\"maximum\":100},"
              "\"clock\":{\"type\":\"number\",\"unit\":\"GHz\",\"lower_is_better\":false,"
              "\"description\":\"a clock\",\"exclusiveMinimum\":0},"
              "\"nth\":{\"type\":\"integer\",\"unit\":\"\",\"lower_is_better\":false,"
              "\"description\":\"1-based\",\"minimum\":1,\"maximum\":64},"
              "\"wait_s\":{\"type\":\"number\",\"unit\":\"s\",\"lower_is_better\":false,"
              "\"description\":\"a wait\",\"minimum\":0,\"maximum\":2.5}}");
}

static void refused(const hb_result *bad, const char *words)
{
    const hb_result *tables[] = {bad, hb_run_results, NULL};
    const hb_param_def *ptables[] = {params, hb_run_params, NULL};
    hb_err err;
    err.message[0] = '\0';
    CHECK(hb_results_valid(tables, ptables, &err) == HB_INTERNAL &&
              strstr(err.message, words) != NULL,
          "want HB_INTERNAL with \"%s\", got \"%s\"", words, err.message);
}

static void test_malformed_tables_are_bugs(void)
{
    static const hb_result twice[] = {
        {"x", HB_R_INT, "", 0, "x", NULL, .range = HB_ANY},
        {"x", HB_R_INT, "", 0, "x again", NULL, .range = HB_ANY},
        {NULL}};
    refused(twice, "result figure x is declared twice");
    static const hb_result harness_key[] = {
        {"cpu_share", HB_R_NUMBER, "", 0, "the harness's", NULL, .range = HB_ANY},
        {NULL}};
    refused(harness_key, "cpu_share is declared twice");
    static const hb_result no_help[] = {
        {"x", HB_R_INT, "", 0, "", NULL, .range = HB_ANY}, {NULL}};
    refused(no_help, "x has no description");
    static const hb_result unit_on_bool[] = {
        {"x", HB_R_BOOL, "s", 0, "x", NULL, .range = HB_ANY}, {NULL}};
    refused(unit_on_bool, "x is not a number but has a unit");
    static const hb_result no_members[] = {
        {"x", HB_R_OBJECT, "µs", 1, "x", NULL, .range = HB_ANY}, {NULL}};
    refused(no_members, "x is an object without members");
    static const hb_result members_of_number[] = {
        {"x", HB_R_NUMBER, "µs", 1, "x", lat_fields, .range = HB_ANY}, {NULL}};
    refused(members_of_number, "x has members but is not an object");
    static const hb_result unitless[] = {
        {"p50", HB_R_NUMBER, NULL, 0, "median", NULL, .range = HB_ANY}, {NULL}};
    static const hb_result unitless_member[] = {
        {"x", HB_R_OBJECT, NULL, 0, "x", unitless, .range = HB_ANY}, {NULL}};
    refused(unitless_member, "x.p50 is a member without a unit");
    static const hb_result nested_fields[] = {
        {"y", HB_R_OBJECT, "", 0, "y", lat_fields, .range = HB_ANY}, {NULL}};
    static const hb_result nested[] = {
        {"x", HB_R_OBJECT, "", 0, "x", nested_fields, .range = HB_ANY}, {NULL}};
    refused(nested, "x.y is an object inside an object");
    static const hb_result dup_fields[] = {
        {"a", HB_R_NUMBER, NULL, 0, "a", NULL, .range = HB_ANY},
        {"a", HB_R_NUMBER, NULL, 0, "a", NULL, .range = HB_ANY},
        {NULL}};
    static const hb_result dup_member[] = {
        {"x", HB_R_OBJECT, "µs", 1, "x", dup_fields, .range = HB_ANY}, {NULL}};
    refused(dup_member, "x has a member declared twice");
    static const hb_result range_on_bool[] = {
        {"x", HB_R_BOOL, NULL, 0, "x", NULL, .range = HB_NONNEG}, {NULL}};
    refused(range_on_bool, "x is not a number but has a range");
    static const hb_result within_on_text[] = {
        {"x", HB_R_TEXT, NULL, 0, "x", NULL, .range = HB_ANY, .within = "n"}, {NULL}};
    refused(within_on_text, "x is not a number but has a range");
    static const hb_result positive_int[] = {
        {"x", HB_R_INT, "", 0, "x", NULL, .range = HB_POSITIVE}, {NULL}};
    refused(positive_int, "x is an integer > 0");
    static const hb_result unknown_range[] = {
        {"x", HB_R_NUMBER, "", 0, "x", NULL, .range = (hb_range)99}, {NULL}};
    refused(unknown_range, "x has an unknown range");
    static const hb_result within_nothing[] = {
        {"x", HB_R_INT, "", 0, "x", NULL, .range = HB_NONNEG, .within = "nothing"}, {NULL}};
    refused(within_nothing, "x is within a parameter that is not a numeric parameter");
    static const hb_result within_string[] = {
        {"x", HB_R_INT, "", 0, "x", NULL, .range = HB_NONNEG, .within = "op"}, {NULL}};
    refused(within_string, "x is within a parameter that is not a numeric parameter");
    static const hb_result within_share[] = {
        {"x", HB_R_NUMBER, "", 0, "x", NULL, .range = HB_FRACTION, .within = "wait_s"}, {NULL}};
    refused(within_share, "x has a `within` without a lower bound, or beside the range's own");
    static const hb_result within_any[] = {
        {"x", HB_R_NUMBER, "", 0, "x", NULL, .range = HB_ANY, .within = "wait_s"}, {NULL}};
    refused(within_any, "x has a `within` without a lower bound");
    static const hb_result within_below[] = {
        {"x", HB_R_INT, "", 0, "x", NULL, .range = HB_ONE_UP, .within = "none"}, {NULL}};
    refused(within_below, "x is within a parameter whose maximum is below the range's minimum");
    static const hb_result member_range[] = {
        {"p50", HB_R_NUMBER, NULL, 0, "median", NULL, .range = HB_ONE_UP, .within = "op"}, {NULL}};
    static const hb_result bad_member[] = {
        {"x", HB_R_OBJECT, "µs", 1, "x", member_range, .range = HB_ANY}, {NULL}};
    refused(bad_member, "x.p50 is within a parameter that is not a numeric parameter");
}

/* Every kernel: its table and the harness's are well formed, and --describe and a run accept
 * them (hb_kernel_params refuses a malformed table before any work); its threads and repeat lie
 * within its own parameters (net's threads within streams 1..8). */
static void test_every_kernel_declares_well_formed_results(void)
{
    for (int k = 0; hb_kernels[k]; k++) {
        const hb_kernel *kern = hb_kernels[k];
        const hb_result *tables[3];
        const hb_param_def *ptables[3];
        hb_params p;
        hb_err err;
        hb_kernel_results(kern, tables);
        hb_kernel_tables(kern, ptables);
        CHECK(hb_results_valid(tables, ptables, &err) == HB_OK, "%s: %s", kern->name, err.message);
        CHECK(hb_kernel_params(kern, &p, 0, NULL, &err) == HB_OK, "%s: %s", kern->name,
              err.message);
        const char *text = schema_of(tables, ptables);
        CHECK(strstr(text, "\"value\":{\"type\":\"number\",\"lower_is_better\":false") != NULL,
              "%s: the harness's value is declared, its unit the line's", kern->name);
        CHECK((kern->results != NULL) == (kern->result_facts != NULL) ||
                  !strcmp(kern->name, "gpu"), /* no result_facts without CUDA */
              "%s: a kernel with result_facts declares its figures", kern->name);
        const hb_param_def *threads = &ptables[1][0], *repeats = NULL, *max_repeats = NULL;
        for (const hb_param_def *d = ptables[1]; d->name; d++) {
            if (!strcmp(d->name, "repeats"))
                repeats = d;
            if (!strcmp(d->name, "max_repeats"))
                max_repeats = d;
        }
        char want[160];
        snprintf(want, sizeof want, "\"description\":\"Worker threads of the repeat.\","
                 "\"minimum\":1,\"maximum\":%lld}", (long long)threads->max);
        CHECK(strstr(text, want) != NULL, "%s: threads within its %s (1..%g): %s", kern->name,
              threads->name, threads->max, text);
        /* a result's repeat is at most max_repeats' maximum: repeats' may not exceed it */
        CHECK(repeats && max_repeats && repeats->max <= max_repeats->max,
              "%s: repeats' maximum above max_repeats'", kern->name);
    }
}

int main(void)
{
    test_schema_shape();
    test_malformed_tables_are_bugs();
    test_every_kernel_declares_well_formed_results();
    return check_summary();
}
