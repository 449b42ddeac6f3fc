/* The harness's own parameters, rules and result figures: every kernel has them
 * (hb_kernel_tables, hb_kernel_rules, hb_kernel_results). */
#include <stddef.h>

#include "harness.h"

const hb_param_def hb_run_params[] = {
    {"threads", HB_P_INT_LIST, "1,2,4,8", 1, 256, NULL,
     "Thread counts, run one after another. Threads are pinned round-robin over the CPUs of "
     "the process affinity mask; more threads than CPUs is allowed and reported as "
     "oversubscribed.", NULL, NULL},
    {"repeats", HB_P_INT, "3", 1, 100, NULL,
     "Measured phases per thread count; each one gives a result line.", NULL, NULL},
    {"duration_s", HB_P_DOUBLE, "5", 0.2, 86400, NULL,
     "Length of each measured phase, seconds (a whole day at most: a cpu_trace is one phase).", NULL, NULL},
    {"warmup_s", HB_P_DOUBLE, "1", 0, 600, NULL,
     "Warm-up phase before the measured phases of each thread count, seconds; its samples say "
     "warmup:true and it gives no result. 0 skips it.", NULL, NULL},
    {"interval_s", HB_P_DOUBLE, "1", 0.1, 60, NULL,
     "Sampling interval, seconds: one sample line per interval of every phase.", NULL, NULL},
    {"stable_cv", HB_P_DOUBLE, "0", 0, 0.5, NULL,
     "Repeat until stable: after `repeats` phases, keep repeating until the coefficient of "
     "variation of the phases' rates is at most this (e.g. 0.035), or `max_repeats` is reached. "
     "0 = exactly `repeats` phases.", NULL, NULL},
    {"max_repeats", HB_P_INT, "10", 1, 1000, NULL,
     "Upper bound on measured phases per thread count when stable_cv > 0.", NULL, NULL},
    {"no_sampler", HB_P_BOOL, "false", 0, 1, NULL,
     "Run without the sampler (no sample lines), to show what sampling costs.", NULL, NULL},
    {"sampler_ab", HB_P_BOOL, "false", 0, 1, NULL,
     "To measure what sampling costs within one process, on the same memory and threads: the "
     "measured phases come in pairs, one with the sampler and one without, the order swapped "
     "every other pair (with/without, without/with, ...); each result says `sampler`. Needs an "
     "even `repeats` and stable_cv 0.", NULL, NULL},
    {"work", HB_P_INT, "0", 0, 1e15, NULL,
     "Strong scaling: units of work per measured repeat over all threads (the kernel's unit: "
     "configs[].work_per_unit says what one is), split evenly (the first work % threads threads "
     "do one more); each thread stops when its share is done, and the repeat's elapsed_s is the "
     "slowest thread's. duration_s is then a cap: a repeat it cuts short is not verified. 0 = "
     "fixed duration: every thread works for duration_s. Warm-up stays timed (warmup_s).", NULL, NULL},
    {"quiet_wait_s", HB_P_DOUBLE, "0", 0, 600, NULL,
     "Busy hosts: before each measured phase, wait until the other processes leave the phase's "
     "threads their CPUs (the machine's busy CPUs from /proc/stat, over 0.2 s windows), for at "
     "most this many seconds per phase; the result line says how long it waited (quiet_waited_s) "
     "and whether the host became quiet (quiet). 0 = start at once.", NULL, NULL},
    {"disturbed_retries", HB_P_INT, "0", 0, 10, NULL,
     "Busy hosts: a measured phase whose worker threads spent more than disturbed_wait of it "
     "waiting for a CPU (wait_share) is measured again, up to this many more times; only the "
     "last try gives a result line, which says how many it took (tries).", NULL, NULL},
    {"disturbed_wait", HB_P_DOUBLE, "0.1", 0.01, 1, NULL,
     "The run-queue wait (wait_share) above which a phase was disturbed: the bound the "
     "server's verdict uses too (1 - this is the CPU share below which a CPU-bound phase was "
     "disturbed).", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
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

/* A kernel with fixed_work: every thread gets at least one unit. */
const hb_rule hb_fixed_work_rules[] = {
    {"threads", HB_RULE_MAXIMUM_PARAM, 0, NULL, "work", {{"work", NULL, 0}},
     "a fixed amount of work is split over the threads: each needs at least one unit"},
    {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
};

/* A kernel without fixed_work runs for a duration only. */
const hb_rule hb_fixed_duration_rules[] = {
    {"work", HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}},
     "this kernel runs for a fixed duration only (its work cannot be split into a fixed number "
     "of units); fixed work (strong scaling) is for cpu and null"},
    {NULL, HB_RULE_MAXIMUM, 0, NULL, NULL, {{NULL, NULL, 0}}, NULL},
};

/* What run_phase writes into every result line, before the kernel's result_facts. */
const hb_result hb_run_results[] = {
    {"v", HB_R_INT, "", 0, "Protocol version: 1.", NULL, .range = HB_ONE_UP},
    {"type", HB_R_TEXT, NULL, 0, "\"result\".", NULL, .range = HB_ANY},
    {"threads", HB_R_INT, "", 0, "Worker threads of the repeat.", NULL,
     .range = HB_ONE_UP, .within = "threads"},
    {"repeat", HB_R_INT, "", 0, "The repeat, 1-based.", NULL,
     .range = HB_ONE_UP, .within = "max_repeats"},
    {"value", HB_R_NUMBER, NULL, 0,
     "The rate over the whole repeat: total work / total time, in the line's `unit`.", NULL,
     .range = HB_ANY},
    {"unit", HB_R_TEXT, NULL, 0, "The unit of `value`.", NULL, .range = HB_ANY},
    {"work", HB_R_INT, "", 0, "Units of work done in the repeat.", NULL, .range = HB_NONNEG},
    {"seconds", HB_R_NUMBER, "s", 0,
     "The repeat's timed length: from releasing the threads to the last one stopping.", NULL,
     .range = HB_NONNEG},
    {"verified", HB_R_BOOL, NULL, 0, "Every check of the repeat's work passed.", NULL,
     .range = HB_ANY},
    {"reason", HB_R_TEXT, NULL, 0, "Why not verified (only when verified is false).", NULL,
     .range = HB_ANY},
    {"oversubscribed", HB_R_BOOL, NULL, 0, "More threads than CPUs in the affinity mask.", NULL,
     .range = HB_ANY},
    {"cpu_share", HB_R_NUMBER, "", 0,
     "The worker threads' CPU time / (threads x seconds), at most 1: 1.0 when nothing else took "
     "their CPUs.", NULL, .range = HB_FRACTION},
    {"preemptions", HB_R_INT, "", 0, "Involuntary context switches of the worker threads.", NULL,
     .range = HB_NONNEG},
    {"tries", HB_R_INT, "", 0,
     "With disturbed_retries or quiet_wait_s: the tries this repeat took (1 = the first was not "
     "disturbed).", NULL, .range = HB_ONE_UP},
    {"quiet_waited_s", HB_R_NUMBER, "s", 0,
     "With disturbed_retries or quiet_wait_s: seconds waited for a quiet CPU before this repeat "
     "(all its tries).", NULL, .range = HB_NONNEG},
    {"quiet", HB_R_BOOL, NULL, 0,
     "With quiet_wait_s: whether the host was quiet when the repeat's last try started (false: "
     "the wait ran out).", NULL, .range = HB_ANY},
    {"others_cpus", HB_R_NUMBER, "", 0,
     "With quiet_wait_s: the CPUs other processes kept busy just before the last try; null when "
     "/proc/stat could not be read.", NULL, .range = HB_NONNEG},
    {"wait_share", HB_R_NUMBER, "", 1,
     "The worker threads' time runnable but waiting for a CPU (the scheduler's run delay) / "
     "(threads x seconds), at most 1: 0 when nothing else competed for their CPUs. Unlike "
     "cpu_share it holds for threads that sleep by design (sockets, I/O). Absent where "
     "/proc/thread-self/schedstat is not readable.", NULL, .range = HB_FRACTION},
    {"throttled_share", HB_R_NUMBER, "", 1,
     "The share of the phase the kernel's cgroup was held back by its CPU quota (CFS bandwidth "
     "throttling: cpu.stat throttled_time in cgroup v1, throttled_usec in v2, of its cgroup or the "
     "ancestor most throttled) / (seconds x the CPUs the worker threads run on), at most 1. A quota "
     "is the host's capacity; a disk or network phase throttled above disturbed_wait measured the "
     "quota, not the device or the link. Absent where no cgroup states its throttled time.", NULL,
     .range = HB_FRACTION},
    {"sampler", HB_R_BOOL, NULL, 0,
     "sampler_ab only: whether this repeat ran with the sampler.", NULL, .range = HB_ANY},
    {"work_target", HB_R_INT, "", 0,
     "Fixed-work repeats only (work > 0): the units asked for over all threads; `work` equals it "
     "when the repeat finished.", NULL, .range = HB_ONE_UP, .within = "work"},
    {"elapsed_s", HB_R_NUMBER, "s", 0,
     "Fixed-work repeats only: wall time from releasing the threads until the slowest one "
     "finished its share (the same span as `seconds`); null when the duration_s cap cut the "
     "repeat short.", NULL, .range = HB_NONNEG},
    {"elapsed_min_s", HB_R_NUMBER, "s", 0,
     "Fixed-work repeats only: the same for the fastest thread (elapsed_s - elapsed_min_s is "
     "the load imbalance); null when the cap cut the repeat short.", NULL, .range = HB_NONNEG},
    {"op", HB_R_TEXT, NULL, 0, "The configuration's operation (kernels with ops).", NULL,
     .range = HB_ANY},
    {"block_bytes", HB_R_INT, "B", 0,
     "The configuration's block size (kernels with blocks; memory latency: the working set per "
     "thread).", NULL, .range = HB_ONE_UP},
    {"t", HB_R_NUMBER, "s", 0, "UNIX time the line was written.", NULL, .range = HB_NONNEG},
    {NULL},
};
