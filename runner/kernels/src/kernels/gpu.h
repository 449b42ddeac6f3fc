/* The gpu kernel's host-side helpers, exposed for tests/test_gpu.c (they need no GPU). */
#ifndef HB_KERNEL_GPU_H
#define HB_KERNEL_GPU_H

#include <stdint.h>

/* One direction of a PCIe link in GB/s: GT/s x lanes x line-code efficiency / 8. */
double hb_gpu_link_gbs(double gts, int width);

/* Whether cpu is in a sysfs CPU list such as "0-15,32-47". */
int hb_gpu_in_cpulist(const char *list, int cpu);

/* The closed form of a whole FMA launch: the sum of every chain's value after `steps` steps of
 * x <- x*1 + c from hbg_x0, over `threads` GPU threads (fp: exact below 2^53; int32: each value
 * mod 2^32, summed mod 2^64). */
void hb_gpu_fma_sums(uint64_t threads, long long steps, uint32_t c, double *fsum, uint64_t *isum);

#endif
