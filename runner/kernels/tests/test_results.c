/* Declared result figures (results.h): every kernel's table, with the harness's, is well formed;
 * a malformed one is refused as a bug; the "results" JSON of --describe has the documented shape
 * (an object's members take its unit and lower_is_better unless they declare their own). */
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "results.h"

static const hb_result lat_fields[] = {
    {"p50", HB_R_NUMBER, NULL, 0, "median", NULL},
    {"max", HB_R_NUMBER, "ms", 0, "longest, in its own unit", NULL},
    {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL},
};
static const hb_result table[] = {
    {"rate_mbit_s", HB_R_NUMBER, "Mbit/s", 0, "the rate", NULL},
    {"lat_us", HB_R_OBJECT, "µs", 1, "latency", lat_fields},
    {"count", HB_R_INT, "", 0, "a count", NULL},
    {"ok", HB_R_BOOL, NULL, 0, "a flag", NULL},
    {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL},
};

static const char *schema(const hb_result *const *tables)
{
    static hb_json j;
    hb_json_free(&j);
    hb_json_init(&j);
    hb_results_schema(&j, tables);
    return hb_json_text(&j);
}

static void test_schema_shape(void)
{
    const hb_result *tables[] = {table, NULL};
    hb_err err;
    CHECK(hb_results_valid(tables, &err) == HB_OK, "%s", err.message);
    CHECK_STR(schema(tables),
              "{\"rate_mbit_s\":{\"type\":\"number\",\"unit\":\"Mbit/s\",\"lower_is_better\":false,"
              "\"description\":\"the rate\"},"
              "\"lat_us\":{\"type\":\"object\",\"unit\":\"µs\",\"lower_is_better\":true,"
              "\"description\":\"latency\",\"fields\":{"
              "\"p50\":{\"type\":\"number\",\"unit\":\"µs\",\"lower_is_better\":true,"
              "\"description\":\"median\"},"
              "\"max\":{\"type\":\"number\",\"unit\":\"ms\",\"lower_is_better\":false,"
              "\"description\":\"longest, in its own unit\"}}},"
              "\"count\":{\"type\":\"integer\",\"unit\":\"\",\"lower_is_better\":false,"
              "\"description\":\"a count\"},"
              "\"ok\":{\"type\":\"boolean\",\"description\":\"a flag\"}}");
}

static void refused(const hb_result *bad, const char *words)
{
    const hb_result *tables[] = {bad, hb_run_results, NULL};
    hb_err err;
    err.message[0] = '\0';
    CHECK(hb_results_valid(tables, &err) == HB_INTERNAL && strstr(err.message, words) != NULL,
          "want HB_INTERNAL with \"%s\", got \"%s\"", words, err.message);
}

static void test_malformed_tables_are_bugs(void)
{
    static const hb_result twice[] = {
        {"x", HB_R_INT, "", 0, "x", NULL}, {"x", HB_R_INT, "", 0, "x again", NULL},
        {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(twice, "result figure x is declared twice");
    static const hb_result harness_key[] = {
        {"cpu_share", HB_R_NUMBER, "", 0, "the harness's", NULL},
        {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(harness_key, "cpu_share is declared twice");
    static const hb_result no_help[] = {
        {"x", HB_R_INT, "", 0, "", NULL}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(no_help, "x has no description");
    static const hb_result unit_on_bool[] = {
        {"x", HB_R_BOOL, "s", 0, "x", NULL}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(unit_on_bool, "x is not a number but has a unit");
    static const hb_result no_members[] = {
        {"x", HB_R_OBJECT, "µs", 1, "x", NULL}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(no_members, "x is an object without members");
    static const hb_result members_of_number[] = {
        {"x", HB_R_NUMBER, "µs", 1, "x", lat_fields}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(members_of_number, "x has members but is not an object");
    static const hb_result unitless[] = {
        {"p50", HB_R_NUMBER, NULL, 0, "median", NULL}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    static const hb_result unitless_member[] = {
        {"x", HB_R_OBJECT, NULL, 0, "x", unitless}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(unitless_member, "x.p50 is a member without a unit");
    static const hb_result nested_fields[] = {
        {"y", HB_R_OBJECT, "", 0, "y", lat_fields}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    static const hb_result nested[] = {
        {"x", HB_R_OBJECT, "", 0, "x", nested_fields}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(nested, "x.y is an object inside an object");
    static const hb_result dup_fields[] = {
        {"a", HB_R_NUMBER, NULL, 0, "a", NULL}, {"a", HB_R_NUMBER, NULL, 0, "a", NULL},
        {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    static const hb_result dup_member[] = {
        {"x", HB_R_OBJECT, "µs", 1, "x", dup_fields}, {NULL, HB_R_NUMBER, NULL, 0, NULL, NULL}};
    refused(dup_member, "x has a member declared twice");
}

/* Every kernel: its table and the harness's are well formed, and --describe and a run accept
 * them (hb_kernel_params refuses a malformed table before any work). */
static void test_every_kernel_declares_well_formed_results(void)
{
    for (int k = 0; hb_kernels[k]; k++) {
        const hb_result *tables[3];
        hb_params p;
        hb_err err;
        hb_kernel_results(hb_kernels[k], tables);
        CHECK(hb_results_valid(tables, &err) == HB_OK, "%s: %s", hb_kernels[k]->name, err.message);
        CHECK(hb_kernel_params(hb_kernels[k], &p, 0, NULL, &err) == HB_OK, "%s: %s",
              hb_kernels[k]->name, err.message);
        CHECK(strstr(schema(tables), "\"value\":{\"type\":\"number\",\"lower_is_better\":false") !=
                  NULL, "%s: the harness's value is declared, its unit the line's", hb_kernels[k]->name);
        CHECK((hb_kernels[k]->results != NULL) == (hb_kernels[k]->result_facts != NULL) ||
                  !strcmp(hb_kernels[k]->name, "gpu"), /* no result_facts without CUDA */
              "%s: a kernel with result_facts declares its figures", hb_kernels[k]->name);
    }
}

int main(void)
{
    test_schema_shape();
    test_malformed_tables_are_bugs();
    test_every_kernel_declares_well_formed_results();
    return check_summary();
}
