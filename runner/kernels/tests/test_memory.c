/* The memory kernel's loops agree with plain C on every ISA this CPU has, its closed forms agree
 * with brute force, and its chase is one cycle through every node. (Cache sizes as sysfs writes
 * them: tests/test_hostfacts.c.) */
#include "check.h"
#include "kernels/memory.h"

static void test_pattern_sum_matches_brute_force(void)
{
    static const uint64_t seeds[] = {0, 1, 0xFFFFFFFFFFFFFFF0ULL, 0x9E3779B97F4A7C15ULL};
    static const uint64_t starts[] = {0, 1, 7, 1000, (1ULL << 62) + 3};
    for (size_t s = 0; s < sizeof seeds / sizeof seeds[0]; s++)
        for (size_t a = 0; a < sizeof starts / sizeof starts[0]; a++)
            for (uint64_t n = 0; n < 300; n += 1 + n / 3) {
                uint64_t want = 0;
                for (uint64_t i = starts[a]; i < starts[a] + n; i++)
                    want += i + seeds[s];
                CHECK(hb_mem_pattern_sum(seeds[s], starts[a], n) == want,
                      "seed %zu start %zu n %llu", s, a, (unsigned long long)n);
            }
}

static void test_kernels_match_plain_c(void)
{
    int ran = 0;
    for (int isa = 0; isa < HB_MEM_ISAS; isa++) {
        char why[200] = "";
        int r = hb_mem_check_kernels(isa, why, sizeof why);
        CHECK(r != 0, "isa %d: %s", isa, why);
        ran += r == 1;
    }
    CHECK(hb_mem_isa_available(HB_MEM_SCALAR), "scalar always available");
    CHECK(ran >= 1, "at least the scalar kernels ran");
}

static void test_chase_is_one_cycle(void)
{
    static const uint64_t nodes[] = {1, 2, 3, 64, 1000, 65536, 65537};
    for (size_t i = 0; i < sizeof nodes / sizeof nodes[0]; i++)
        for (uint64_t seed = 1; seed <= 3; seed++)
            CHECK(hb_mem_check_cycle(nodes[i], 64, seed) == 1, "nodes %llu seed %llu",
                  (unsigned long long)nodes[i], (unsigned long long)seed);
    CHECK(hb_mem_check_cycle(100, 128, 9) == 1, "128-byte lines");
}

static void test_levels(void)
{
    const long long K = 1024, M = K * K;
    CHECK_STR(hb_mem_level(4 * K, 1, 48 * K, M, 32 * M), "L1");
    CHECK_STR(hb_mem_level(48 * K, 8, 48 * K, M, 32 * M), "L1");
    CHECK_STR(hb_mem_level(64 * K, 1, 48 * K, M, 32 * M), "L2");
    CHECK_STR(hb_mem_level(16 * M, 2, 48 * K, M, 32 * M), "L3");
    CHECK_STR(hb_mem_level(16 * M, 4, 48 * K, M, 32 * M), "DRAM"); /* the L3 is shared */
    CHECK_STR(hb_mem_level(1024 * M, 1, 48 * K, M, 32 * M), "DRAM");
}

int main(void)
{
    test_pattern_sum_matches_brute_force();
    test_kernels_match_plain_c();
    test_chase_is_one_cycle();
    test_levels();
    return check_summary();
}
