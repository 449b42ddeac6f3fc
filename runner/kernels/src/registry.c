/* The one list of kernels. Adding a kernel: one file in kernels/, one line here. */
#include <stddef.h>

#include "harness.h"

extern const hb_kernel hb_kernel_cpu;
extern const hb_kernel hb_kernel_disk;
extern const hb_kernel hb_kernel_memory;
extern const hb_kernel hb_kernel_null;
extern const hb_kernel hb_kernel_net;
extern const hb_kernel hb_kernel_gpu;

const hb_kernel *const hb_kernels[] = {
    &hb_kernel_cpu,
    &hb_kernel_disk,
    &hb_kernel_memory,
    &hb_kernel_null,
    &hb_kernel_net,
    &hb_kernel_gpu,
    NULL,
};
