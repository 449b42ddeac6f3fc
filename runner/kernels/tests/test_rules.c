/* Cross-field rules (rules.h): each kind refuses what it should with a message that names the
 * parameter, the value, the condition and the reason; conditions that do not hold let anything
 * through; a malformed rule is refused as a bug; every kernel's rules are well-formed; the
 * "x-rules" JSON of --describe has the documented shape. */
#include <stdlib.h>

#include "check.h"
#include "harness.h"
#include "rules.h"

static const char *const modes[] = {"fast", "slow", "busy", NULL};
static const hb_param_def table[] = {
    {"mode", HB_P_ENUM, "fast", 0, 0, modes, "m", NULL, NULL},
    {"sizes", HB_P_INT_LIST, "1,64", 1, 1000000, NULL, "s", NULL, NULL},
    {"file", HB_P_INT, "4096", 1, 1 << 30, NULL, "f", NULL, NULL},
    {"cv", HB_P_DOUBLE, "0", 0, 1, NULL, "c", NULL, NULL},
    {"paired", HB_P_BOOL, "false", 0, 1, NULL, "p", NULL, NULL},
    {"count", HB_P_INT, "3", 1, 100, NULL, "n", NULL, NULL},
    {"cap", HB_P_INT, "10", 1, 1000, NULL, "x", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const hb_param_def *const tables[] = {table, NULL};

static const char *const slow_or_busy[] = {"slow", "busy", NULL};
static const char *const fast_only[] = {"fast", NULL};
static const char *const yes[] = {"true", NULL};
static const hb_rule rules_table[] = {
    {"sizes", HB_RULE_MAXIMUM, 1000, NULL, NULL, {{"mode", slow_or_busy, 0}}, "slow sizes"},
    {"mode", HB_RULE_ENUM, 0, fast_only, NULL, {{"paired", yes, 0}}, "pairs are fast"},
    {"file", HB_RULE_MULTIPLE_OF, 4096, NULL, NULL, {{NULL, NULL, 0}}, "whole pages"},
    {"sizes", HB_RULE_MAXIMUM_PARAM, 0, NULL, "file", {{NULL, NULL, 0}}, "inside the file"},
    {"file", HB_RULE_MINIMUM_PARAM, 0, NULL, "sizes", {{NULL, NULL, 0}}, "unused"},
    {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
};
/* The same without the (malformed) last rule: `sizes` is a list, not a scalar to compare with. */
static const hb_rule rules_ok[] = {
    {"sizes", HB_RULE_MAXIMUM, 1000, NULL, NULL, {{"mode", slow_or_busy, 0}}, "slow sizes"},
    {"mode", HB_RULE_ENUM, 0, fast_only, NULL, {{"paired", yes, 0}}, "pairs are fast"},
    {"file", HB_RULE_MULTIPLE_OF, 4096, NULL, NULL, {{NULL, NULL, 0}}, "whole pages"},
    {"sizes", HB_RULE_MAXIMUM_PARAM, 0, NULL, "file", {{NULL, NULL, 0}}, "inside the file"},
    {"cap", HB_RULE_MINIMUM_PARAM, 0, NULL, "count", {{"cv", NULL, 0.5}}, "a cap"},
    {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
};
static const hb_rule *const rules[] = {rules_ok, NULL};

static hb_status check_args(int argc, char **argv, hb_err *err)
{
    hb_params p;
    err->code = HB_OK;
    err->message[0] = '\0';
    if (hb_params_parse(&p, "test", tables, argc, argv, err) != HB_OK)
        return err->code;
    return hb_rules_check(&p, rules, err);
}

static void refused(int argc, char **argv, const char *want)
{
    hb_err err;
    hb_status st = check_args(argc, argv, &err);
    CHECK(st == HB_BAD_PARAM && strstr(err.message, want) != NULL,
          "%s %s: status %d, message \"%s\" lacks \"%s\"", argv[0], argv[1], st, err.message, want);
}

static void accepted(int argc, char **argv)
{
    hb_err err;
    CHECK(check_args(argc, argv, &err) == HB_OK, "%s %s: %s", argv[0], argv[1], err.message);
}

#define REFUSED(want, ...)                                                                     \
    do {                                                                                       \
        char *args_[] = {__VA_ARGS__};                                                         \
        refused((int)(sizeof args_ / sizeof args_[0]), args_, want);                           \
    } while (0)
#define ACCEPTED(...)                                                                          \
    do {                                                                                       \
        char *args_[] = {__VA_ARGS__};                                                         \
        accepted((int)(sizeof args_ / sizeof args_[0]), args_);                                \
    } while (0)

static void test_each_kind(void)
{
    hb_err err;
    CHECK(check_args(0, NULL, &err) == HB_OK, "defaults: %s", err.message);
    REFUSED("sizes: 1001 is larger than 1000 when mode is slow; slow sizes", "--mode", "slow",
            "--sizes", "1,1001");
    ACCEPTED("--mode", "busy", "--sizes", "1,1000");
    ACCEPTED("--mode", "fast", "--sizes", "1,4096"); /* the condition does not hold */
    REFUSED("mode: slow is not one of fast when paired is true; pairs are fast", "--mode",
            "slow", "--paired", "true");
    ACCEPTED("--mode", "slow", "--paired", "false");
    REFUSED("file: 5000 is not a multiple of 4096; whole pages", "--file", "5000");
    REFUSED("sizes: 8192 is larger than file 4096; inside the file", "--sizes", "8192");
    ACCEPTED("--sizes", "8192", "--file", "8192");
    REFUSED("cap: 3 is below count 5 when cv > 0.5; a cap", "--cv", "0.75", "--count", "5",
            "--cap", "3");
    ACCEPTED("--cv", "0.5", "--count", "5", "--cap", "3");
}

static void test_malformed_rules_are_bugs(void)
{
    static const hb_rule unknown[] = {
        {"nope", HB_RULE_MAXIMUM, 1, NULL, NULL, {{NULL, NULL, 0}}, "r"},
        {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
    };
    static const char *const bogus[] = {"bogus", NULL};
    static const hb_rule bad_value[] = {
        {"sizes", HB_RULE_MAXIMUM, 1, NULL, NULL, {{"mode", bogus, 0}}, "r"},
        {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
    };
    static const hb_rule enum_on_int[] = {
        {"file", HB_RULE_ENUM, 0, fast_only, NULL, {{NULL, NULL, 0}}, "r"},
        {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
    };
    static const hb_rule no_reason[] = {
        {"file", HB_RULE_MAXIMUM, 1, NULL, NULL, {{NULL, NULL, 0}}, ""},
        {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
    };
    const hb_rule *const sets[][2] = {{unknown, NULL}, {bad_value, NULL}, {enum_on_int, NULL},
                                      {no_reason, NULL}, {rules_table, NULL}};
    hb_err err;
    for (size_t i = 0; i < sizeof sets / sizeof sets[0]; i++)
        CHECK(hb_rules_valid(sets[i], tables, &err) == HB_INTERNAL, "malformed rule set %zu "
              "accepted", i);
    CHECK(hb_rules_valid(rules, tables, &err) == HB_OK, "good rules: %s", err.message);
}

static void test_schema_shape(void)
{
    hb_json j;
    hb_json_init(&j);
    hb_rules_schema(&j, rules, tables);
    const char *text = hb_json_text(&j);
    CHECK(strstr(text, "{\"param\":\"sizes\",\"when\":{\"mode\":{\"enum\":[\"slow\",\"busy\"]}},"
                       "\"maximum\":1000,\"reason\":\"slow sizes\"}") != NULL, "maximum: %s", text);
    CHECK(strstr(text, "\"when\":{\"paired\":{\"enum\":[true]}},\"enum\":[\"fast\"]") != NULL,
          "enum with a boolean condition: %s", text);
    CHECK(strstr(text, "\"when\":{},\"multipleOf\":4096") != NULL, "multipleOf: %s", text);
    CHECK(strstr(text, "\"maximumParam\":\"file\"") != NULL, "maximumParam: %s", text);
    CHECK(strstr(text, "\"when\":{\"cv\":{\"exclusiveMinimum\":0.5}},\"minimumParam\":"
                       "\"count\"") != NULL, "minimumParam with a number condition: %s", text);
    hb_json_free(&j);
}

static void test_every_kernel_has_well_formed_rules(void)
{
    for (int k = 0; hb_kernels[k]; k++) {
        const hb_param_def *kt[3];
        const hb_rule *kr[4];
        hb_params p;
        hb_err err;
        hb_kernel_tables(hb_kernels[k], kt);
        hb_kernel_rules(hb_kernels[k], kr);
        CHECK(hb_rules_valid(kr, kt, &err) == HB_OK, "%s: %s", hb_kernels[k]->name, err.message);
        CHECK(hb_kernel_params(hb_kernels[k], &p, 0, NULL, &err) == HB_OK,
              "%s: the defaults keep every rule: %s", hb_kernels[k]->name, err.message);
    }
}

/* The rules that used to be checks in the harness's run and net's setup. */
static void test_harness_and_net_rules(void)
{
    const hb_kernel *null_k = hb_kernel_find("null"), *net = hb_kernel_find("net");
    hb_params p;
    hb_err err;
    char *stable[] = {"--repeats", "5", "--stable_cv", "0.1", "--max_repeats", "3"};
    CHECK(hb_kernel_params(null_k, &p, 6, stable, &err) == HB_BAD_PARAM &&
          strstr(err.message, "max_repeats: 3 is below repeats 5 when stable_cv > 0") != NULL,
          "max_repeats below repeats: %s", err.message);
    char *fixed[] = {"--repeats", "5", "--stable_cv", "0", "--max_repeats", "3"};
    CHECK(hb_kernel_params(null_k, &p, 6, fixed, &err) == HB_OK,
          "max_repeats is only a cap when stable_cv > 0: %s", err.message);
    char *udp[] = {"--op", "udp_rr", "--sizes", "1,65508"};
    CHECK(hb_kernel_params(net, &p, 4, udp, &err) == HB_BAD_PARAM &&
          strstr(err.message, "sizes: 65508 is larger than 65507 when op is udp_rr and role is "
                              "loopback") != NULL, "UDP size: %s", err.message);
    char *udp_max[] = {"--op", "udp_stream", "--sizes", "1,65507"};
    CHECK(hb_kernel_params(net, &p, 4, udp_max, &err) == HB_OK, "%s", err.message);
    char *serve[] = {"--role", "serve", "--op", "udp_stream"}; /* serve takes any size */
    CHECK(hb_kernel_params(net, &p, 4, serve, &err) == HB_OK, "%s", err.message);
    char *busy[] = {"--op", "udp_stream", "--poll", "busy", "--sizes", "1024"};
    CHECK(hb_kernel_params(net, &p, 6, busy, &err) == HB_BAD_PARAM &&
          strstr(err.message, "poll: busy is not one of blocking when op is udp_stream") != NULL,
          "busy stream: %s", err.message);
    char *busy_rr[] = {"--op", "tcp_rr", "--poll", "busy"};
    CHECK(hb_kernel_params(net, &p, 4, busy_rr, &err) == HB_OK, "%s", err.message);
}

int main(void)
{
    test_each_kind();
    test_malformed_rules_are_bugs();
    test_schema_shape();
    test_every_kernel_has_well_formed_rules();
    test_harness_and_net_rules();
    return check_summary();
}
