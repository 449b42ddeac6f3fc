/* Parameter tables {name, type, default, min, max, choices, help, unit, applies}: parsing of `--name value` argv,
 * validation, and their JSON Schema for --describe. Every check happens before any work. */
#ifndef HB_PARAMS_H
#define HB_PARAMS_H

#include "error.h"
#include "json.h"

#define HB_LIST_MAX 64     /* most items in a list parameter */
#define HB_PARAMS_MAX 32   /* most parameters of one kernel, harness ones included */
#define HB_VALUE_MAX 4096  /* longest accepted value text */

typedef enum hb_ptype {
    HB_P_INT,      /* integer in [min, max] */
    HB_P_INT_LIST, /* 1..HB_LIST_MAX distinct integers in [min, max], comma-separated */
    HB_P_DOUBLE,   /* finite number in [min, max] */
    HB_P_ENUM,     /* one of choices */
    HB_P_BOOL,     /* true or false */
    HB_P_STRING,   /* text of min..max bytes, no control characters (the kernel checks meaning) */
    HB_P_ENUM_LIST, /* 1..HB_LIST_MAX distinct choices, comma-separated */
} hb_ptype;

/* The values of another (enum) parameter for which a parameter means anything: memory's `blocks`
 * only for the block ops. Given for any other value, the parameter is refused (bad_param); --describe
 * publishes it as "x-applies": {"op": [...]}, the one declaration the runner and the API read. */
typedef struct hb_applies {
    const char *param;     /* an HB_P_ENUM parameter of the same tables */
    const char *const *in; /* NULL-terminated choices of it */
} hb_applies;

typedef struct hb_param_def {
    const char *name;            /* NULL ends a table */
    hb_ptype type;
    const char *def;             /* default, written as on the command line: "1,2,4,8" */
    double min, max;             /* inclusive bounds of numbers and list items; string length */
    const char *const *choices;  /* HB_P_ENUM, HB_P_ENUM_LIST: NULL-terminated */
    const char *help;
    /* The unit of the value (of each item of a list), published as "x-unit": "B" marks a size in
     * bytes, which a form reads and writes as "8 KiB"; NULL: a plain count, or the unit is in the
     * name (duration_s). The one place that says a parameter is a byte size. */
    const char *unit;
    const hb_applies *applies; /* NULL: it applies whatever the other parameters are */
} hb_param_def;

typedef struct hb_value {
    const hb_param_def *def;
    int given;                /* set on the command line, not defaulted */
    int n;                    /* number of items; 1 for scalars */
    long long i[HB_LIST_MAX]; /* ints, list items, bool 0/1, enum index (also per list item) */
    double d;                 /* HB_P_DOUBLE */
    const char *s;            /* HB_P_STRING: the argv or default text itself */
} hb_value;

typedef struct hb_params {
    const char *kernel;
    int n;
    hb_value v[HB_PARAMS_MAX];
} hb_params;

/* tables: NULL-terminated list of tables, each ended by an entry with name NULL.
 * argv holds only the `--name value` part. */
hb_status hb_params_parse(hb_params *p, const char *kernel, const hb_param_def *const *tables,
                          int argc, char *const *argv, hb_err *err);

/* Parses one value for def (also used for defaults). */
hb_status hb_param_parse_value(const hb_param_def *def, const char *text, hb_value *out,
                               hb_err *err);

/* The JSON Schema "properties" object of the tables. */
void hb_params_schema(hb_json *j, const hb_param_def *const *tables);
/* The parsed values as a JSON object {name: value}. */
void hb_params_json(hb_json *j, const hb_params *p);

/* Accessors by name; a name that is not in the table is a programming error (abort). */
const hb_value *hb_param(const hb_params *p, const char *name);
long long hb_param_int(const hb_params *p, const char *name);
double hb_param_double(const hb_params *p, const char *name);
int hb_param_bool(const hb_params *p, const char *name);
int hb_param_choice(const hb_params *p, const char *name); /* enum index */
const char *hb_param_str(const hb_params *p, const char *name);

#endif
