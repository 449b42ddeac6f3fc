/* The gpu kernel's closed forms and host helpers, without a GPU: the triad's ping-pong agrees
 * with its closed form, FMA chains stay exact up to the step cap (fp32 on the host's IEEE fmaf,
 * like the GPU's FFMA), the grid sums agree with brute force, and the sysfs parsers. */
#include <math.h>
#include <stdint.h>

#include "check.h"
#include "cuda/gpu_kernels.h"
#include "kernels/gpu.h"

static void test_triad_ping_pong_matches_closed_form(void)
{
    enum { N = 257 };
    static uint32_t a[N], b[N], c[N];
    const uint32_t seeds[] = {1, 0xDEADBEEFu, 0xFFFFFFFFu};
    const uint32_t scalars[] = {1, 3, 0x9E3779B1u};
    for (size_t si = 0; si < 3; si++)
        for (size_t ki = 0; ki < 3; ki++) {
            uint32_t seed = seeds[si], s = scalars[ki];
            for (uint64_t i = 0; i < N; i++) {
                a[i] = 0xA5A5A5A5u;
                b[i] = hbg_b0(i, seed);
                c[i] = hbg_c0(i, seed);
            }
            int ok = 1;
            for (uint64_t launch = 1; launch <= 9; launch++) {
                uint32_t *dst = launch & 1 ? a : b, *src = launch & 1 ? b : a;
                for (uint64_t i = 0; i < N; i++)
                    dst[i] = src[i] + s * c[i];
                for (uint64_t i = 0; i < N; i++)
                    ok &= dst[i] == hbg_triad_expect(i, seed, s, launch);
            }
            CHECK(ok, "seed %u scalar %u", seed, s);
            /* a wrong scalar in one launch shows in every element of the end result (C is odd) */
            for (uint64_t i = 0; i < N; i++)
                b[i] = hbg_b0(i, seed);
            for (uint64_t launch = 1; launch <= 5; launch++) {
                uint32_t *dst = launch & 1 ? a : b, *src = launch & 1 ? b : a;
                for (uint64_t i = 0; i < N; i++)
                    dst[i] = src[i] + (launch == 3 ? s + 1 : s) * c[i];
            }
            int caught = 0;
            for (uint64_t i = 0; i < N; i++)
                caught += a[i] != hbg_triad_expect(i, seed, s, 5);
            CHECK(caught == N, "a wrong launch shows in %d of %d elements", caught, N);
        }
}

static void test_patterns_are_not_constant(void)
{
    int same = 0;
    for (uint64_t i = 1; i < 1000; i++)
        same += hbg_copy_word(i, 5) == hbg_copy_word(i - 1, 5);
    CHECK(same < 3, "copy words repeat %d times in 1000", same);
    CHECK(hbg_copy_word(1ULL << 33, 5) != hbg_copy_word(0, 5) ||
          hbg_copy_word((1ULL << 33) + 1, 5) != hbg_copy_word(1, 5), "index above 2^32 counts");
    CHECK((hbg_c0(12345, 7) & 1u) == 1, "the triad multiplier is odd");
}

static void test_x0_range(void)
{
    uint32_t lo = UINT32_MAX, hi = 0;
    for (uint32_t g = 0; g < 5000; g++)
        for (int k = 0; k < HBG_ACC; k++) {
            uint32_t x = hbg_x0(g, k);
            lo = x < lo ? x : lo;
            hi = x > hi ? x : hi;
        }
    CHECK(lo == 1 && hi == 1024 * HBG_ACC, "x0 in [%u, %u]", lo, hi);
}

/* The fp32 cap: the largest start value with c = 3 for the longest allowed launch stays exact. */
static void test_fp32_exact_up_to_the_cap(void)
{
    long long cap = hbg_max_steps(HBG_FP32_FMA, 1e6);
    float m = 1.0f, x = (float)(1024 * HBG_ACC);
    for (long long i = 0; i < cap; i++)
        x = fmaf(x, m, 3.0f);
    CHECK((double)x == 1024.0 * HBG_ACC + 3.0 * (double)cap, "fp32 after %lld steps: %.1f", cap,
          (double)x);
    CHECK(1024.0 * HBG_ACC + 3.0 * (double)(cap + 1) >= 16777216.0 - 3, "the cap is tight");
    /* the grid's fp64 sum: below 2^52 for a huge grid */
    double chains = 1e9;
    long long c64 = hbg_max_steps(HBG_FP64_FMA, chains);
    CHECK(c64 > 0 && chains * (1024.0 * HBG_ACC + 3.0 * (double)c64) <= 4503599627370496.0,
          "fp64 sum cap %lld", c64);
    CHECK(hbg_max_steps(HBG_INT32, 1e9) >= (1LL << 40), "int32 has no exactness cap");
}

static void test_fma_sums_match_brute_force(void)
{
    const uint64_t threads[] = {1, 32, 1500};
    const long long steps[] = {64, 4096, 5000000};
    const uint32_t cs[] = {1, 3, 0x9E3779B1u};
    for (size_t t = 0; t < 3; t++)
        for (size_t s = 0; s < 3; s++)
            for (size_t k = 0; k < 3; k++) {
                double fsum, want_f = 0;
                uint64_t isum, want_i = 0;
                hb_gpu_fma_sums(threads[t], steps[s], cs[k], &fsum, &isum);
                for (uint64_t g = 0; g < threads[t]; g++)
                    for (int j = 0; j < HBG_ACC; j++) {
                        uint32_t x0 = hbg_x0((uint32_t)g, j);
                        want_f += (double)x0 + (double)steps[s] * cs[k];
                        uint32_t xi = x0;
                        xi += (uint32_t)steps[s] * cs[k];
                        want_i += xi;
                    }
                CHECK((cs[k] > 3 || fsum == want_f) && isum == want_i,
                      "threads %llu steps %lld c %u", (unsigned long long)threads[t], steps[s],
                      cs[k]);
            }
}

static void test_cpulist_and_link(void)
{
    CHECK(hb_gpu_in_cpulist("0-3,8,10-11", 0) && hb_gpu_in_cpulist("0-3,8,10-11", 3) &&
          hb_gpu_in_cpulist("0-3,8,10-11", 8) && hb_gpu_in_cpulist("0-3,8,10-11", 11), "in");
    CHECK(!hb_gpu_in_cpulist("0-3,8,10-11", 4) && !hb_gpu_in_cpulist("0-3,8,10-11", 9) &&
          !hb_gpu_in_cpulist("0-3,8,10-11", 12), "out");
    CHECK(!hb_gpu_in_cpulist("", 0) && !hb_gpu_in_cpulist("x", 0) && !hb_gpu_in_cpulist("3-", 3),
          "garbage");
    CHECK(fabs(hb_gpu_link_gbs(16, 16) - 31.5077) < 1e-3, "gen4 x16 %.4f", hb_gpu_link_gbs(16, 16));
    CHECK(fabs(hb_gpu_link_gbs(32, 16) - 63.0154) < 1e-3, "gen5 x16");
    CHECK(fabs(hb_gpu_link_gbs(2.5, 16) - 4.0) < 1e-9, "gen1 x16");
    CHECK(hb_gpu_link_gbs(0, 16) == 0 && hb_gpu_link_gbs(16, 0) == 0, "unknown link");
}

int main(void)
{
    test_triad_ping_pong_matches_closed_form();
    test_patterns_are_not_constant();
    test_x0_range();
    test_fp32_exact_up_to_the_cap();
    test_fma_sums_match_brute_force();
    test_cpulist_and_link();
    return check_summary();
}
