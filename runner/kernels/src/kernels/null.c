/* null: units that do nothing but count. Its rate is the most the harness lets a kernel
 * publish; with --no_sampler it shows what the sampler costs. */
#include <stddef.h>

#include "../harness.h"

static hb_status null_setup(const hb_params *p, hb_setup *s, hb_err *err)
{
    (void)p;
    (void)err;
    s->state = NULL;
    s->nconfigs = 1;
    s->configs[0] = (hb_config){.op = "", .block_bytes = -1, .unit = NULL, .work_per_unit = 1};
    return HB_OK;
}

static void null_work(hb_worker *w)
{
    uint64_t units = 0;
    if (w->quota != HB_NO_QUOTA) { /* a fixed-work share; the timed loop below stays as it was */
        while (hb_next_units(w, units, 1))
            hb_publish(w, ++units);
        return;
    }
    while (!hb_should_stop(w))
        hb_publish(w, ++units);
}

static const hb_param_def null_params[] = {
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

const hb_kernel hb_kernel_null = {
    .name = "null",
    .title = "Harness overhead",
    .description = "Empty units: a counter store and a stop-flag load each. Measures what the "
                   "harness costs a kernel per unit and per sample.",
    .unit = "Munit/s",
    .unit_scale = 1e-6,
    .params = null_params,
    .setup = null_setup,
    .work = null_work,
    .fixed_work = 1,
};
