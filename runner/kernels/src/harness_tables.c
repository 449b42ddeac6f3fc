/* A kernel's tables: its parameters with the harness's (hb_run_params), its rules and result
 * figures with the harness's, and parsing argv against them. */
#include <string.h>

#include "harness_tables.h"

#define RUN_PARAMS_MAX 16
#define RUN_RESULTS_MAX 48

void hb_kernel_tables(const hb_kernel *k, const hb_param_def *tables[3])
{
    /* A kernel with threads_def gets its own copy of the harness rows, made once and kept
     * (parsed values point into it); only the controlling thread calls this. */
    static struct {
        const hb_kernel *k;
        hb_param_def rows[RUN_PARAMS_MAX];
    } own[8];
    tables[0] = k->params;
    tables[1] = hb_run_params;
    tables[2] = NULL;
    if (!k->threads_def)
        return;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if (own[i].k == NULL) {
            size_t n = 0;
            while (hb_run_params[n].name && n < RUN_PARAMS_MAX - 1)
                n++;
            memcpy(own[i].rows, hb_run_params, (n + 1) * sizeof own[i].rows[0]);
            own[i].rows[0] = *k->threads_def; /* row 0 is threads */
            own[i].k = k;
        }
        if (own[i].k == k) {
            tables[1] = own[i].rows;
            return;
        }
    }
}

void hb_kernel_rules(const hb_kernel *k, const hb_rule *rules[4])
{
    int n = 0;
    if (k->rules)
        rules[n++] = k->rules;
    rules[n++] = hb_run_rules;
    rules[n++] = k->fixed_work ? hb_fixed_work_rules : hb_fixed_duration_rules;
    rules[n] = NULL;
}

void hb_kernel_results(const hb_kernel *k, const hb_result *results[3])
{
    /* As hb_kernel_tables: a kernel with threads_def gets its own copy of the harness rows, whose
     * `threads` lies within that parameter (net's streams), made once and kept. */
    static struct {
        const hb_kernel *k;
        hb_result rows[RUN_RESULTS_MAX];
    } own[8];
    int n = 0;
    if (k->results)
        results[n++] = k->results;
    results[n++] = hb_run_results;
    results[n] = NULL;
    if (!k->threads_def)
        return;
    for (size_t i = 0; i < sizeof own / sizeof own[0]; i++) {
        if (own[i].k == NULL) {
            size_t m = 0;
            while (hb_run_results[m].key && m < RUN_RESULTS_MAX - 1)
                m++;
            memcpy(own[i].rows, hb_run_results, (m + 1) * sizeof own[i].rows[0]);
            for (size_t r = 0; r < m; r++)
                if (own[i].rows[r].within && !strcmp(own[i].rows[r].within, "threads"))
                    own[i].rows[r].within = k->threads_def->name;
            own[i].k = k;
        }
        if (own[i].k == k) {
            results[n - 1] = own[i].rows;
            return;
        }
    }
}

hb_status hb_kernel_params(const hb_kernel *k, hb_params *p, int argc, char *const *argv,
                           hb_err *err)
{
    const hb_param_def *tables[3];
    const hb_rule *rules[4];
    const hb_result *results[3];
    hb_status st;
    hb_kernel_tables(k, tables);
    hb_kernel_rules(k, rules);
    hb_kernel_results(k, results);
    if ((st = hb_rules_valid(rules, tables, err)) != HB_OK ||
        (st = hb_results_valid(results, tables, err)) != HB_OK)
        return st;
    if ((st = hb_params_parse(p, k->name, tables, argc, argv, err)) != HB_OK)
        return st;
    return hb_rules_check(p, rules, err);
}

const char *hbi_threads_name(const hb_kernel *k)
{
    return k->threads_def ? k->threads_def->name : "threads";
}

const hb_kernel *hb_kernel_find(const char *name)
{
    for (int i = 0; hb_kernels[i]; i++)
        if (!strcmp(hb_kernels[i]->name, name))
            return hb_kernels[i];
    return NULL;
}
