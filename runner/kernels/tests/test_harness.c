/* Fixed work (the harness's `work` > 0, strong scaling): the split of a total over threads
 * (hb_share) sums to the total exactly with shares at most one apart; a worker that loops on
 * hb_next_units does exactly its quota whatever its chunk, stops at once on the stop flag, and
 * runs unbounded without a quota; the rules refuse more threads than units and `work` on a
 * kernel without fixed_work. */
#include <stdlib.h>

#include "check.h"
#include "harness.h"

static void test_shares_sum_to_the_total(void)
{
    const uint64_t works[] = {1, 2, 3, 7, 8, 1000, 1000003, 4294967297ULL, 1000000000000000ULL};
    const int ns[] = {1, 2, 3, 4, 7, 8, 64, 256};
    for (size_t a = 0; a < sizeof works / sizeof works[0]; a++)
        for (size_t b = 0; b < sizeof ns / sizeof ns[0]; b++) {
            uint64_t work = works[a], sum = 0, lo = UINT64_MAX, hi = 0;
            int n = ns[b], ordered = 1;
            if ((uint64_t)n > work) /* refused by hb_fixed_work_rules */
                continue;
            for (int i = 0; i < n; i++) {
                uint64_t s = hb_share(work, n, i);
                sum += s;
                lo = s < lo ? s : lo;
                hi = s > hi ? s : hi;
                if (i > 0 && s > hb_share(work, n, i - 1))
                    ordered = 0;
            }
            /* one check per (work, threads), not per share: the summary counts properties, not loop steps */
            CHECK(ordered, "work %llu over %d threads: the larger shares come first", (unsigned long long)work, n);
            CHECK(sum == work, "work %llu over %d threads: shares sum to %llu",
                  (unsigned long long)work, n, (unsigned long long)sum);
            CHECK(hi - lo <= 1 && lo >= 1, "work %llu over %d threads: shares %llu..%llu",
                  (unsigned long long)work, n, (unsigned long long)lo, (unsigned long long)hi);
        }
}

/* What a kernel's work() does: chunks from hb_next_units until 0. */
static uint64_t drive(hb_worker *w, uint64_t chunk, int *chunks, uint64_t stop_after)
{
    uint64_t done = 0, n, largest = 0;
    *chunks = 0;
    while ((n = hb_next_units(w, done, chunk)) > 0) {
        largest = n > largest ? n : largest;
        done += n;
        ++*chunks;
        if (done >= stop_after)
            atomic_store((_Atomic int *)w->stop, 1);
    }
    CHECK(largest <= chunk, "a step of %llu is larger than the chunk %llu", (unsigned long long)largest,
          (unsigned long long)chunk);
    return done;
}

static void test_a_worker_does_exactly_its_quota(void)
{
    static _Atomic int stop;
    static hb_worker w;
    int chunks;
    w.stop = &stop;
    const uint64_t quotas[] = {1, 5, 262143, 262144, 262145, 3 * 262144 + 7};
    for (size_t q = 0; q < sizeof quotas / sizeof quotas[0]; q++) {
        atomic_store(&stop, 0);
        w.quota = quotas[q];
        uint64_t done = drive(&w, 262144, &chunks, UINT64_MAX);
        CHECK(done == quotas[q], "quota %llu: did %llu", (unsigned long long)quotas[q],
              (unsigned long long)done);
        CHECK((uint64_t)chunks == (quotas[q] + 262143) / 262144, "quota %llu: %d chunks",
              (unsigned long long)quotas[q], chunks);
        atomic_store(&stop, 0);
        CHECK(drive(&w, 1, &chunks, UINT64_MAX) == quotas[q], "chunk 1: the quota exactly");
    }
    /* the stop flag (the duration_s cap, a signal) ends a share early: no more steps after it */
    atomic_store(&stop, 0);
    w.quota = 1000;
    CHECK(drive(&w, 10, &chunks, 300) == 300, "stop after 300 of 1000: did more");
    /* no quota: the chunk every time until the stop flag */
    atomic_store(&stop, 0);
    w.quota = HB_NO_QUOTA;
    CHECK(drive(&w, 1024, &chunks, 1024 * 50) == 1024 * 50 && chunks == 50,
          "fixed duration: whole chunks until stopped (%d)", chunks);
    atomic_store(&stop, 1);
    w.quota = 10;
    CHECK(hb_next_units(&w, 0, 4) == 0, "stopped before the first chunk: nothing to do");
}

static void test_rules_of_work(void)
{
    hb_params p;
    hb_err err;
    const hb_kernel *null_k = hb_kernel_find("null"), *cpu = hb_kernel_find("cpu");
    const hb_kernel *memory = hb_kernel_find("memory");
    char *more_threads[] = {"--threads", "1,4", "--work", "3"};
    CHECK(hb_kernel_params(cpu, &p, 4, more_threads, &err) == HB_BAD_PARAM &&
              strstr(err.message, "threads: 4 is larger than work 3 when work > 0") != NULL,
          "more threads than units of work: %s", err.message);
    char *enough[] = {"--threads", "1,4", "--work", "4"};
    CHECK(hb_kernel_params(null_k, &p, 4, enough, &err) == HB_OK && hb_param_int(&p, "work") == 4,
          "one unit per thread is enough: %s", err.message);
    char *timed[] = {"--threads", "8"};
    CHECK(hb_kernel_params(cpu, &p, 2, timed, &err) == HB_OK && hb_param_int(&p, "work") == 0,
          "work defaults to 0, fixed duration: %s", err.message);
    char *on_memory[] = {"--work", "5"};
    CHECK(hb_kernel_params(memory, &p, 2, on_memory, &err) == HB_BAD_PARAM &&
              strstr(err.message, "work: 5 is larger than 0") != NULL,
          "memory has no fixed-work mode: %s", err.message);
    char *too_much[] = {"--work", "1000000000000001"};
    CHECK(hb_kernel_params(cpu, &p, 2, too_much, &err) == HB_BAD_PARAM,
          "work above 1e15 is refused: %s", err.message);
    for (int k = 0; hb_kernels[k]; k++) {
        const hb_rule *rules[4];
        hb_kernel_rules(hb_kernels[k], rules);
        int n = 0;
        while (rules[n])
            n++;
        CHECK(rules[n - 1] == (hb_kernels[k]->fixed_work ? hb_fixed_work_rules
                                                          : hb_fixed_duration_rules),
              "%s: the rules of work match its fixed_work", hb_kernels[k]->name);
    }
}

int main(void)
{
    test_shares_sum_to_the_total();
    test_a_worker_does_exactly_its_quota();
    test_rules_of_work();
    return check_summary();
}
