/* Every (op, ISA) chain this CPU can run matches its closed form, and a chunk computed with
 * the wrong addend is caught. */
#include "check.h"
#include "kernels/cpu.h"

static void test_chains_match_closed_form(void)
{
    static const long steps[] = {0, 1, 7, 1000, 1L << 18};
    int ran = 0;
    for (int op = 0; op < HB_CPU_OPS; op++)
        for (int isa = 0; isa < HB_ISAS; isa++) {
            if (!hb_cpu_available(op, isa))
                continue;
            for (size_t s = 0; s < sizeof steps / sizeof steps[0]; s++)
                for (unsigned c = 1; c <= 3; c++)
                    CHECK(hb_cpu_check_chunk(op, isa, steps[s], c, c) == 1,
                          "op %d isa %d n %ld c %u", op, isa, steps[s], c);
            CHECK(hb_cpu_check_chunk(HB_CPU_INT32, isa, 12345, 0x9E3779B1u, 0x9E3779B1u) == 1,
                  "int32 wraps mod 2^32, isa %d", isa);
            ran++;
        }
    CHECK(hb_cpu_available(HB_CPU_FP64, HB_ISA_SCALAR), "scalar always available");
    CHECK(ran >= 3, "at least the scalar variants ran");
}

static void test_wrong_addend_detected(void)
{
    for (int op = 0; op < HB_CPU_OPS; op++)
        for (int isa = 0; isa < HB_ISAS; isa++)
            if (hb_cpu_available(op, isa))
                CHECK(hb_cpu_check_chunk(op, isa, 1000, 2, 1) == 0, "op %d isa %d", op, isa);
}

int main(void)
{
    test_chains_match_closed_form();
    test_wrong_addend_detected();
    return check_summary();
}
