/* Parameter parsing: every malformed input is refused with bad_param and a message that names
 * the problem; every kernel's defaults parse and lie within bounds. */
#include "check.h"
#include "harness.h"
#include "params.h"

static const char *const colors[] = {"red", "green", NULL};
static const char *const green_only[] = {"green", NULL};
static const hb_applies to_green = {"color", green_only};
static const hb_param_def table[] = {
    {"threads", HB_P_INT_LIST, "1,2,4,8", 1, 256, NULL, "t", NULL, NULL},
    {"blocks", HB_P_INT_LIST, "8,4096", 8, 1073741824, NULL, "b", "B", NULL},
    {"repeats", HB_P_INT, "3", 1, 100, NULL, "r", NULL, NULL},
    {"duration_s", HB_P_DOUBLE, "5", 0.2, 3600, NULL, "d", NULL, NULL},
    {"color", HB_P_ENUM, "red", 0, 0, colors, "c", NULL, NULL},
    {"no_sampler", HB_P_BOOL, "false", 0, 1, NULL, "b", NULL, NULL},
    {"shade", HB_P_INT, "0", 0, 9, NULL, "s", NULL, &to_green},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};
static const hb_param_def *const tables[] = {table, NULL};

static hb_status parse(hb_params *p, hb_err *err, int argc, char **argv)
{
    err->code = HB_OK;
    err->message[0] = '\0';
    return hb_params_parse(p, "test", tables, argc, argv, err);
}

/* argv must be refused, with a message containing `want`. */
static void refused(int argc, char **argv, const char *want)
{
    hb_params p;
    hb_err err;
    hb_status st = parse(&p, &err, argc, argv);
    CHECK(st == HB_BAD_PARAM, "%s %s: status %d", argv[0], argc > 1 ? argv[1] : "", st);
    CHECK(strstr(err.message, want) != NULL, "message \"%s\" lacks \"%s\"", err.message, want);
}

#define REFUSED(want, ...)                                                                     \
    do {                                                                                       \
        char *args_[] = {__VA_ARGS__};                                                         \
        refused((int)(sizeof args_ / sizeof args_[0]), args_, want);                           \
    } while (0)

static void test_defaults_when_nothing_given(void)
{
    hb_params p;
    hb_err err;
    CHECK(parse(&p, &err, 0, NULL) == HB_OK, "%s", err.message);
    const hb_value *t = hb_param(&p, "threads");
    CHECK(t->n == 4 && t->i[0] == 1 && t->i[3] == 8, "threads default");
    CHECK(hb_param_int(&p, "repeats") == 3, "repeats default");
    CHECK(hb_param_double(&p, "duration_s") == 5.0, "duration default");
    CHECK(hb_param_choice(&p, "color") == 0, "enum default");
    CHECK(hb_param_bool(&p, "no_sampler") == 0, "bool default");
    CHECK(!t->given, "defaults are not marked given");
}

static void test_good_values_parse(void)
{
    hb_params p;
    hb_err err;
    char *argv[] = {"--threads", "2,1,256", "--repeats", "100", "--duration_s", "0.2",
                    "--color", "green", "--no-sampler", "--"};
    CHECK(parse(&p, &err, 9, argv) == HB_OK, "%s", err.message);
    const hb_value *t = hb_param(&p, "threads");
    CHECK(t->n == 3 && t->i[0] == 2 && t->i[2] == 256, "threads list");
    CHECK(hb_param_int(&p, "repeats") == 100, "repeats at maximum");
    CHECK(hb_param_double(&p, "duration_s") == 0.2, "duration at minimum");
    CHECK(hb_param_choice(&p, "color") == 1, "enum");
    CHECK(hb_param_bool(&p, "no_sampler") == 1, "bare bool flag, hyphen spelling");
    char *argv2[] = {"--no_sampler", "false", "--duration_s", "1e1"};
    CHECK(parse(&p, &err, 4, argv2) == HB_OK, "%s", err.message);
    CHECK(hb_param_bool(&p, "no_sampler") == 0 && hb_param_double(&p, "duration_s") == 10,
          "explicit false, exponent");
}

static void test_malformed_values_refused(void)
{
    REFUSED("unknown parameter", "--bogus", "1");
    REFUSED("given twice", "--repeats", "1", "--repeats", "2");
    REFUSED("given twice", "--no_sampler", "--no-sampler");
    REFUSED("needs a value", "--repeats");
    REFUSED("needs a value", "--threads", "--repeats", "2");
    REFUSED("above the maximum 256", "--threads", "1000000000");
    REFUSED("below the minimum 1", "--threads", "0");
    REFUSED("below the minimum 1", "--threads", "-3");
    REFUSED("not an integer", "--threads", "4; rm -rf /");
    REFUSED("not an integer", "--threads", "4x");
    REFUSED("not an integer", "--threads", " 4");
    REFUSED("not an integer", "--threads", "+4");
    REFUSED("not an integer", "--repeats", "2.5");
    REFUSED("not an integer", "--repeats", "0x10");
    REFUSED("too large", "--threads", "1000000000000000000000000000000");
    REFUSED("too large", "--repeats", "99999999999999999999");
    REFUSED("list is empty", "--threads", "");
    REFUSED("empty item", "--threads", "1,,2");
    REFUSED("empty item", "--threads", ",1");
    REFUSED("ends with a comma", "--threads", "1,");
    REFUSED("appears twice", "--threads", "2,4,2");
    REFUSED("not a number", "--duration_s", "abc");
    REFUSED("not a number", "--duration_s", "5s");
    REFUSED("not a number", "--duration_s", "nan");
    REFUSED("not a number", "--duration_s", "inf");
    REFUSED("not a number", "--duration_s", "0x1p3");
    REFUSED("too large", "--duration_s", "1e999");
    REFUSED("below the minimum 0.2", "--duration_s", "0.1");
    REFUSED("above the maximum 3600", "--duration_s", "3600.5");
    REFUSED("is not one of red, green", "--color", "blue");
    REFUSED("is not one of", "--color", "RED");
    REFUSED("not a boolean", "--no_sampler", "yes");
    REFUSED("unexpected argument", "threads", "4");
    REFUSED("unexpected argument", "-t", "4");
    REFUSED("not '='", "--threads=4");
    REFUSED("unknown parameter", "--Threads", "4");
}

static void test_list_longer_than_64_refused(void)
{
    static char buf[1024];
    size_t len = 0;
    for (int i = 1; i <= 65; i++)
        len += (size_t)snprintf(buf + len, sizeof buf - len, "%s%d", i > 1 ? "," : "", i);
    REFUSED("more than 64 values", "--threads", buf);
    buf[strlen(buf) - 3] = '\0'; /* 64 values */
    hb_params p;
    hb_err err;
    char *argv[] = {"--threads", buf};
    CHECK(parse(&p, &err, 2, argv) == HB_OK, "64 values: %s", err.message);
    CHECK(hb_param(&p, "threads")->n == 64, "64 items");
}

/* A parameter's unit is declared in its row and published as "x-unit": a byte size is one
 * because its row says "B", never because its help mentions bytes. */
static void test_schema_publishes_the_declared_unit(void)
{
    hb_json j;
    hb_json_init(&j);
    hb_params_schema(&j, tables);
    const char *text = hb_json_text(&j);
    CHECK(strstr(text, "\"description\":\"b\",\"x-unit\":\"B\"}") != NULL, "blocks in B: %s", text);
    CHECK(strstr(text, "\"description\":\"t\"}") != NULL, "threads has no unit: %s", text);
    hb_json_free(&j);
}

/* A parameter that applies only to some values of another is refused when given with any other
 * (its default is not "given"), and --describe publishes the values it applies to. */
static void test_a_parameter_that_does_not_apply_is_refused(void)
{
    hb_params p;
    hb_err err;
    char *green[] = {"--color", "green", "--shade", "3"};
    CHECK(parse(&p, &err, 4, green) == HB_OK, "applies to green: %s", err.message);
    char *none[] = {"--color", "red"};
    CHECK(parse(&p, &err, 2, none) == HB_OK, "not given: its default is no refusal: %s", err.message);
    REFUSED("shade does not apply to color red (only to color green): leave it out", "--shade", "3");
    REFUSED("shade does not apply to color red", "--shade", "3", "--color", "red");
    hb_json j;
    hb_json_init(&j);
    hb_params_schema(&j, tables);
    CHECK(strstr(hb_json_text(&j), "\"description\":\"s\",\"x-applies\":{\"color\":[\"green\"]}}") != NULL,
          "x-applies: %s", hb_json_text(&j));
    hb_json_free(&j);
}

static void test_every_kernel_default_parses_within_bounds(void)
{
    for (int k = 0; hb_kernels[k]; k++) {
        const hb_param_def *kt[3];
        hb_params p;
        hb_err err;
        hb_kernel_tables(hb_kernels[k], kt);
        CHECK(hb_params_parse(&p, hb_kernels[k]->name, kt, 0, NULL, &err) == HB_OK,
              "%s: %s", hb_kernels[k]->name, err.message);
        for (int t = 0; kt[t]; t++)
            for (const hb_param_def *d = kt[t]; d->name; d++) {
                CHECK(d->help && d->help[0], "%s.%s has help", hb_kernels[k]->name, d->name);
                CHECK(d->type == HB_P_ENUM || d->type == HB_P_BOOL || d->min <= d->max,
                      "%s.%s bounds", hb_kernels[k]->name, d->name);
                CHECK(!d->unit || d->type == HB_P_INT || d->type == HB_P_INT_LIST ||
                          d->type == HB_P_DOUBLE,
                      "%s.%s: only a number has a unit", hb_kernels[k]->name, d->name);
                if (d->applies) { /* names an enum of the same tables, and only its choices */
                    const hb_param_def *on = NULL;
                    for (int u = 0; kt[u]; u++)
                        for (const hb_param_def *e = kt[u]; e->name; e++)
                            if (!strcmp(e->name, d->applies->param))
                                on = e;
                    CHECK(on && on->type == HB_P_ENUM, "%s.%s applies by an enum",
                          hb_kernels[k]->name, d->name);
                    for (int a = 0; on && d->applies->in[a]; a++) {
                        int known = 0;
                        for (int c = 0; on->choices[c]; c++)
                            known |= !strcmp(on->choices[c], d->applies->in[a]);
                        CHECK(known, "%s.%s applies to %s, one of its choices",
                              hb_kernels[k]->name, d->name, d->applies->in[a]);
                    }
                }
            }
        CHECK(hb_kernels[k]->work && hb_kernels[k]->setup && hb_kernels[k]->unit_scale > 0,
              "%s descriptor complete", hb_kernels[k]->name);
        CHECK(hb_kernel_find(hb_kernels[k]->name) == hb_kernels[k], "registry lookup");
    }
}

int main(void)
{
    test_defaults_when_nothing_given();
    test_good_values_parse();
    test_malformed_values_refused();
    test_list_longer_than_64_refused();
    test_schema_publishes_the_declared_unit();
    test_a_parameter_that_does_not_apply_is_refused();
    test_every_kernel_default_parses_within_bounds();
    return check_summary();
}
