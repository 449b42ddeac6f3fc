/* The JSON writer: escaping, invalid UTF-8, numbers, commas in nested containers. */
#include "check.h"
#include "json.h"

#include <math.h>

static const char *str_json(hb_json *j, const char *s)
{
    hb_json_reset(j);
    hb_json_str(j, s);
    return hb_json_text(j);
}

static void test_escapes_quotes_backslash_and_controls(hb_json *j)
{
    CHECK_STR(str_json(j, "a\"b\\c"), "\"a\\\"b\\\\c\"");
    CHECK_STR(str_json(j, "l1\nl2\tx\r"), "\"l1\\nl2\\tx\\r\"");
    CHECK_STR(str_json(j, "\x01\x1f\x7f"), "\"\\u0001\\u001f\\u007f\"");
    CHECK_STR(str_json(j, "4; rm -rf /"), "\"4; rm -rf /\"");
}

static void test_utf8_kept_and_invalid_replaced(hb_json *j)
{
    CHECK_STR(str_json(j, "\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80"),
              "\"\xc3\xa9\xe2\x82\xac\xf0\x9f\x98\x80\"");
    CHECK_STR(str_json(j, "a\xffz"), "\"a\\ufffdz\"");
    CHECK_STR(str_json(j, "\xc0\xaf"), "\"\\ufffd\\ufffd\"");       /* overlong */
    CHECK_STR(str_json(j, "\xed\xa0\x80"), "\"\\ufffd\\ufffd\\ufffd\""); /* surrogate */
    CHECK_STR(str_json(j, "\xe2\x82"), "\"\\ufffd\\ufffd\"");       /* truncated */
}

static void test_numbers_and_nonfinite(hb_json *j)
{
    hb_json_reset(j);
    hb_json_arr(j);
    hb_json_num(j, 58.25);
    hb_json_num(j, NAN);
    hb_json_num(j, INFINITY);
    hb_json_int(j, -42);
    hb_json_fixed(j, 1.5, 3);
    hb_json_bool(j, 1);
    hb_json_null(j);
    hb_json_arr_end(j);
    CHECK_STR(hb_json_text(j), "[58.25,null,null,-42,1.500,true,null]");
}

static void test_nested_commas(hb_json *j)
{
    hb_json_reset(j);
    hb_json_obj(j);
    hb_json_kint(j, "v", 1);
    hb_json_key(j, "a");
    hb_json_arr(j);
    hb_json_obj(j);
    hb_json_obj_end(j);
    hb_json_obj(j);
    hb_json_kstr(j, "k", NULL);
    hb_json_obj_end(j);
    hb_json_arr_end(j);
    hb_json_kbool(j, "b", 0);
    hb_json_obj_end(j);
    CHECK_STR(hb_json_text(j), "{\"v\":1,\"a\":[{},{\"k\":null}],\"b\":false}");
}

int main(void)
{
    hb_json j;
    hb_json_init(&j);
    test_escapes_quotes_backslash_and_controls(&j);
    test_utf8_kept_and_invalid_replaced(&j);
    test_numbers_and_nonfinite(&j);
    test_nested_commas(&j);
    hb_json_free(&j);
    return check_summary();
}
