/* The harness's own parameters and rules: every kernel has them (hb_kernel_tables,
 * hb_kernel_rules). */
#include <stddef.h>

#include "harness.h"

const hb_param_def hb_run_params[] = {
    {"threads", HB_P_INT_LIST, "1,2,4,8", 1, 256, NULL,
     "Thread counts, run one after another. Threads are pinned round-robin over the CPUs of "
     "the process affinity mask; more threads than CPUs is allowed and reported as "
     "oversubscribed."},
    {"repeats", HB_P_INT, "3", 1, 100, NULL,
     "Measured phases per thread count; each one gives a result line."},
    {"duration_s", HB_P_DOUBLE, "5", 0.2, 86400, NULL,
     "Length of each measured phase, seconds (a whole day at most: a cpu_trace is one phase)."},
    {"warmup_s", HB_P_DOUBLE, "1", 0, 600, NULL,
     "Warm-up phase before the measured phases of each thread count, seconds; its samples say "
     "warmup:true and it gives no result. 0 skips it."},
    {"interval_s", HB_P_DOUBLE, "1", 0.1, 60, NULL,
     "Sampling interval, seconds: one sample line per interval of every phase."},
    {"stable_cv", HB_P_DOUBLE, "0", 0, 0.5, NULL,
     "Repeat until stable: after `repeats` phases, keep repeating until the coefficient of "
     "variation of the phases' rates is at most this (e.g. 0.035), or `max_repeats` is reached. "
     "0 = exactly `repeats` phases."},
    {"max_repeats", HB_P_INT, "10", 1, 1000, NULL,
     "Upper bound on measured phases per thread count when stable_cv > 0."},
    {"no_sampler", HB_P_BOOL, "false", 0, 1, NULL,
     "Run without the sampler (no sample lines), to show what sampling costs."},
    {"sampler_ab", HB_P_BOOL, "false", 0, 1, NULL,
     "To measure what sampling costs within one process, on the same memory and threads: the "
     "measured phases come in pairs, one with the sampler and one without, the order swapped "
     "every other pair (with/without, without/with, ...); each result says `sampler`. Needs an "
     "even `repeats` and stable_cv 0."},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL},
};

static const char *const yes[] = {"true", NULL};
static const char *const no[] = {"false", NULL};

const hb_rule hb_run_rules[] = {
    {"max_repeats", HB_RULE_MINIMUM_PARAM, 0, NULL, "repeats", {{"stable_cv", NULL, 0}},
     "repeat-until-stable runs at least `repeats` phases"},
    {"repeats", HB_RULE_MULTIPLE_OF, 2, NULL, NULL, {{"sampler_ab", yes, 0}},
     "sampler_ab compares phases with and without the sampler in pairs: it needs an even "
     "`repeats`"},
    {"no_sampler", HB_RULE_ENUM, 0, no, NULL, {{"sampler_ab", yes, 0}},
     "sampler_ab compares phases with and without the sampler: it needs the sampler on"},
    {"stable_cv", HB_RULE_MAXIMUM, 0, NULL, NULL, {{"sampler_ab", yes, 0}},
     "sampler_ab runs exactly `repeats` phases, in pairs: give stable_cv 0"},
    {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
};
