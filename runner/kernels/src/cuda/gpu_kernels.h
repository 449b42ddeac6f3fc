/* The C ABI between the gpu kernel's host side (src/kernels/gpu.c, C11, compiled by cc) and its
 * device side (src/cuda/gpu_kernels.cu, compiled by nvcc). Everything that touches the CUDA
 * runtime lives in the .cu file; gpu.c sees plain C types only. The closed forms the results
 * are checked against are here, shared by both sides (HBG_HD: __host__ __device__ under nvcc). */
#ifndef HBK_GPU_KERNELS_H
#define HBK_GPU_KERNELS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __CUDACC__
#define HBG_HD __host__ __device__
#else
#define HBG_HD
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* The ops, in the order of the `op` parameter's choices. */
enum { HBG_FP32_FMA, HBG_FP64_FMA, HBG_INT32, HBG_DRAM_BW, HBG_H2D, HBG_D2H, HBG_OPS };

#define HBG_ACC 8     /* independent chains per GPU thread (registers) */
#define HBG_UNROLL 64 /* steps of every chain per trip of the loop: 512 FMAs, 3 loop instructions */
#define HBG_BLOCK 256 /* threads per block of every kernel */
#define HBG_WHY 400   /* room for an error text */

typedef struct hbg_info {
    char name[256];
    char pci_bus_id[32]; /* "0000:3b:00.0", lower case as in sysfs */
    int cc_major, cc_minor;
    int sm_count;
    int clock_khz;       /* cudaDevAttrClockRate: the peak (boost) SM clock */
    int mem_clock_khz;   /* cudaDevAttrMemoryClockRate */
    int bus_width_bits;  /* cudaDevAttrGlobalMemoryBusWidth */
    int l2_bytes;
    int max_threads_per_sm;
    int ecc, integrated;
    int driver_version, runtime_version; /* 13000 = 13.0 */
    uint64_t total_mem, free_mem;
    char arch_list[64]; /* the architectures this binary carries code for: "sm_80 sm_90 ..." */
    int binary_version, ptx_version; /* of the code this device runs: 90 = sm_90 */
} hbg_info;

/* Devices visible to the runtime, or -1 with why ("no CUDA driver: ...", "no CUDA device ..."). */
int hbg_device_count(char *why, size_t n);
/* 0, or -1 with why. */
int hbg_device_info(int dev, hbg_info *info, char *why, size_t n);

/* The SM clock under a full-grid FP32 FMA load: clock64() cycles of block 0 per %globaltimer
 * nanosecond; and the launch's FP32 FMA lane-operations per microsecond of its cudaEvent time
 * (the whole grid's rate, for a cross-check: block 0 alone finishes well before the last block,
 * so its cycles cannot be divided by the launch's time). 0, or -1. */
int hbg_measure_clock(int dev, double *mhz_timer, double *fma_per_us, char *why, size_t n);

/* How an op runs: fixed when it is opened (sizes calibrated to batch_ms). */
typedef struct hbg_plan {
    int grid, block, blocks_per_sm;
    int launches;             /* kernel launches or copies per batch */
    long long steps;          /* FMA ops: steps of every chain per launch */
    uint64_t bytes;           /* bandwidth ops: bytes of each buffer */
    uint64_t elems;           /* dram_bw: uint32 elements of each of the three arrays */
    uint64_t units_per_launch; /* FMA lane-operations, or bytes moved (read + written) */
    double launch_ms;         /* measured while calibrating */
} hbg_plan;

/* What one batch did, read after it finished. */
typedef struct hbg_batch {
    uint64_t units;     /* FMA lane-operations, or bytes moved */
    uint64_t bad;       /* FMA ops: chains whose value differs from the closed form */
    uint64_t checked;   /* FMA ops: chains compared */
    double fsum;        /* fp ops: the sum of every chain's final value (exact integers) */
    uint64_t isum;      /* int32: the same, mod 2^64 of the 32-bit values */
    long long cycles, ns; /* FMA ops: clock64() and %globaltimer deltas of block 0 */
    double gpu_ms;      /* cudaEventElapsedTime over the batch */
} hbg_batch;

typedef struct hbg_ctx hbg_ctx;

/* Allocates and calibrates one op on device dev, on the calling thread. seed: the buffers'
 * pattern; coefficient: the FMA addend c (1..3) or the int32 addend, the triad scalar. */
hbg_ctx *hbg_open(int dev, int op, uint64_t bytes, double batch_ms, uint32_t seed,
                  uint32_t coefficient, hbg_plan *plan, char *why, size_t n);
/* Enqueues one batch into slot 0 or 1 (two are kept in flight). corrupt (test builds): the
 * batch computes with a wrong coefficient, or damages its destination. 0, or -1 with why. */
int hbg_submit(hbg_ctx *c, int slot, int corrupt, char *why, size_t n);
/* Waits for the slot's batch; 0, or -1 with why (a CUDA error). */
int hbg_collect(hbg_ctx *c, int slot, hbg_batch *out, char *why, size_t n);
/* After the last batch of a phase, outside its timed window: checks the destination against
 * the closed form (dram_bw: every element on the device, a sample on the host; h2d: every
 * element on the device; d2h: every element on the host), then poisons it for the next phase.
 * Returns the number of differing elements (0: all good), or -1 with why. */
long long hbg_check_phase(hbg_ctx *c, uint64_t *checked, char *why, size_t n);
void hbg_close(hbg_ctx *c);

/* ---- closed forms, shared by both sides ---- */

/* FMA ops: chain k of global thread g starts at this value and gains c per step (m = 1). */
static inline HBG_HD uint32_t hbg_x0(uint32_t g, int k)
{
    return (g & 1023u) * HBG_ACC + (uint32_t)k + 1u; /* <= 8192: fp32 stays exact below 2^24 */
}

/* The most steps of every chain per launch whose closed form stays exact, for a grid of `chains`
 * chains: fp32 values below 2^24 (x0 <= 1024*HBG_ACC, c <= 3), the grid's sum of fp values below
 * 2^52 (it is added up in fp64); int32 wraps mod 2^32 and is exact at any length. */
static inline long long hbg_max_steps(int op, double chains)
{
    double steps = 1e15;
    if (op == HBG_FP32_FMA)
        steps = (16777216.0 - 1024 * HBG_ACC - 1) / 3;
    if (op != HBG_INT32 && chains > 0) {
        double sum_cap = (4503599627370496.0 / chains - 1024 * HBG_ACC - 1) / 3;
        steps = steps < sum_cap ? steps : sum_cap;
    }
    return steps < 1 ? 0 : (long long)steps;
}

/* dram_bw: the three arrays are B (source of launch 1), C (the multiplier) and A. Launch L
 * reads the array launch L-1 wrote (B for L = 1) and writes the other: dst = src + s*C, so
 * after L launches the last one written holds B0 + L*s*C (mod 2^32) everywhere. */
static inline HBG_HD uint32_t hbg_mix32(uint64_t i, uint32_t seed)
{
    uint32_t x = (uint32_t)i ^ (uint32_t)(i >> 32) * 0x85EBCA6Bu ^ seed;
    x ^= x >> 16;
    x *= 0x7FEB352Du;
    x ^= x >> 15;
    x *= 0x846CA68Bu;
    x ^= x >> 16;
    return x;
}
static inline HBG_HD uint32_t hbg_b0(uint64_t i, uint32_t seed) { return hbg_mix32(i, seed); }
static inline HBG_HD uint32_t hbg_c0(uint64_t i, uint32_t seed)
{
    return hbg_mix32(i, seed ^ 0x5BD1E995u) | 1u;
}
static inline HBG_HD uint32_t hbg_triad_expect(uint64_t i, uint32_t seed, uint32_t s,
                                               uint64_t launches)
{
    return hbg_b0(i, seed) + (uint32_t)launches * s * hbg_c0(i, seed);
}
/* h2d / d2h: the source buffer's 32-bit word i. */
static inline HBG_HD uint32_t hbg_copy_word(uint64_t i, uint32_t seed)
{
    return hbg_mix32(i, seed ^ 0x27D4EB2Fu);
}

#ifdef __cplusplus
}
#endif

#endif
