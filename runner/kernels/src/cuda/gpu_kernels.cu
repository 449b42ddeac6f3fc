/* The device side of `hbk gpu` and every CUDA runtime call it makes, behind the small C ABI of
 * gpu_kernels.h. Compiled by nvcc into a fat binary (SASS for each listed architecture plus PTX
 * for the newest, so later GPUs JIT it); the runtime is linked statically, so hbk needs only the
 * NVIDIA driver (libcuda.so.1) at run time, never a toolkit.
 *
 * Kernels:
 *   fma_chains<T>  HBG_ACC independent chains per thread, x <- x*m + c (FFMA, DFMA or IMAD),
 *                  HBG_UNROLL steps per trip; m = 1 and c arrive as launch arguments, so nothing
 *                  folds. At the end every thread compares each chain with x0 + S*c exactly and
 *                  the grid adds up mismatches and the chains' values; the host checks both.
 *   triad          dst = src + s*mul over uint32 arrays in 16-byte vectors, src and dst swapping
 *                  every launch, so the last array written equals B0 + L*s*C after L launches.
 *   *_check        the phase-end checks against those closed forms. */
#include <cuda_runtime.h>
#include <dlfcn.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include <algorithm>
#include <type_traits>

#include "gpu_kernels.h"

#define XSTR(...) STR(__VA_ARGS__)
#define STR(...) #__VA_ARGS__

/* ---- errors ---- */

static int whyf(char *why, size_t n, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(why, n, fmt, ap);
    va_end(ap);
    return -1;
}

static int cuda_fail(char *why, size_t n, const char *call, cudaError_t e)
{
    return whyf(why, n, "%s: %s (%s)", call, cudaGetErrorString(e), cudaGetErrorName(e));
}

/* CK(call): on error, fills why and returns -1 from the function. */
#define CK(call)                                                                               \
    do {                                                                                       \
        cudaError_t e_ = (call);                                                               \
        if (e_ != cudaSuccess)                                                                 \
            return cuda_fail(why, n, #call, e_);                                               \
    } while (0)

/* ---- device code ---- */

struct hbg_out {
    unsigned long long bad, checked, isum, first_bad;
    double fsum;
    long long cycles, ns;
};

__device__ __forceinline__ long long global_ns()
{
    unsigned long long t;
    asm volatile("mov.u64 %0, %%globaltimer;" : "=l"(t));
    return (long long)t;
}

__device__ __forceinline__ float step(float x, float m, float c) { return __fmaf_rn(x, m, c); }
__device__ __forceinline__ double step(double x, double m, double c) { return __fma_rn(x, m, c); }
__device__ __forceinline__ uint32_t step(uint32_t x, uint32_t m, uint32_t c) { return x * m + c; }

/* One warp's sums, added to out by its lane 0: one atomic per warp per launch. */
__device__ __forceinline__ void warp_add(hbg_out *out, unsigned long long bad,
                                         unsigned long long checked, double fsum,
                                         unsigned long long isum)
{
    for (int o = 16; o > 0; o >>= 1) {
        bad += __shfl_down_sync(0xffffffffu, bad, o);
        checked += __shfl_down_sync(0xffffffffu, checked, o);
        fsum += __shfl_down_sync(0xffffffffu, fsum, o);
        isum += __shfl_down_sync(0xffffffffu, isum, o);
    }
    if ((threadIdx.x & 31) == 0) {
        if (bad)
            atomicAdd(&out->bad, bad);
        atomicAdd(&out->checked, checked);
        atomicAdd(&out->fsum, fsum);
        atomicAdd(&out->isum, isum);
    }
}

/* 8 blocks of 256 threads per SM: at most 32 registers, the whole SM's 2048 threads (Turing
 * has 1024 a SM: 4 blocks). */
#if defined(__CUDA_ARCH__) && __CUDA_ARCH__ == 750
#define FMA_MIN_BLOCKS 4
#else
#define FMA_MIN_BLOCKS 8
#endif
template <typename T>
__global__ void __launch_bounds__(HBG_BLOCK, FMA_MIN_BLOCKS)
    fma_chains(T m, T c, T c_claimed, int iters, hbg_out *out)
{
    const uint32_t g = blockIdx.x * blockDim.x + threadIdx.x;
    long long ns0 = 0, cyc0 = 0;
    if (g == 0) {
        ns0 = global_ns();
        cyc0 = clock64();
    }
    T x[HBG_ACC];
#pragma unroll
    for (int k = 0; k < HBG_ACC; k++)
        x[k] = (T)hbg_x0(g, k);
#pragma unroll 1
    for (int i = 0; i < iters; i++) {
#pragma unroll
        for (int u = 0; u < HBG_UNROLL; u++) {
#pragma unroll
            for (int k = 0; k < HBG_ACC; k++)
                x[k] = step(x[k], m, c);
        }
    }
    /* the closed form, with the coefficient the host believes in */
    const long long steps = (long long)iters * HBG_UNROLL;
    unsigned long long bad = 0, isum = 0;
    double fsum = 0;
#pragma unroll
    for (int k = 0; k < HBG_ACC; k++) {
        if constexpr (std::is_integral<T>::value) {
            uint32_t want = hbg_x0(g, k) + (uint32_t)steps * (uint32_t)c_claimed;
            bad += (uint32_t)x[k] != want;
            isum += (uint32_t)x[k];
        } else {
            double want = (double)hbg_x0(g, k) + (double)steps * (double)c_claimed;
            bad += (double)x[k] != want;
            fsum += (double)x[k];
        }
    }
    warp_add(out, bad, HBG_ACC, fsum, isum);
    if (g == 0) {
        out->cycles = clock64() - cyc0;
        out->ns = global_ns() - ns0;
    }
}

__device__ __forceinline__ uint4 triad4(uint4 a, uint4 b, uint32_t s)
{
    return make_uint4(a.x + s * b.x, a.y + s * b.y, a.z + s * b.z, a.w + s * b.w);
}

/* dst = src + s*mul, 16 bytes a thread per access, four accesses in flight per thread. */
__global__ void __launch_bounds__(HBG_BLOCK)
    triad(uint4 *__restrict__ dst, const uint4 *__restrict__ src, const uint4 *__restrict__ mul,
          uint32_t s, size_t n4)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x;
    for (; i + 3 * stride < n4; i += 4 * stride) {
        uint4 a0 = src[i], a1 = src[i + stride], a2 = src[i + 2 * stride], a3 = src[i + 3 * stride];
        uint4 b0 = mul[i], b1 = mul[i + stride], b2 = mul[i + 2 * stride], b3 = mul[i + 3 * stride];
        dst[i] = triad4(a0, b0, s);
        dst[i + stride] = triad4(a1, b1, s);
        dst[i + 2 * stride] = triad4(a2, b2, s);
        dst[i + 3 * stride] = triad4(a3, b3, s);
    }
    for (; i < n4; i += stride)
        dst[i] = triad4(src[i], mul[i], s);
}

__global__ void triad_init(uint32_t *a, uint32_t *b, uint32_t *c, size_t n, uint32_t seed)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        a[i] = 0xA5A5A5A5u;
        b[i] = hbg_b0(i, seed);
        c[i] = hbg_c0(i, seed);
    }
}

/* mode 0: triad (expect B0 + L*s*C); mode 1: copy words (expect hbg_copy_word). */
__global__ void check_words(const uint32_t *a, size_t n, int mode, uint32_t seed, uint32_t s,
                            unsigned long long launches, hbg_out *out)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    unsigned long long bad = 0, checked = 0, isum = 0;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride) {
        uint32_t want = mode == 0 ? hbg_triad_expect(i, seed, s, launches) : hbg_copy_word(i, seed);
        if (a[i] != want) {
            bad++;
            atomicMin(&out->first_bad, (unsigned long long)i);
        }
        checked++;
        isum += a[i];
    }
    warp_add(out, bad, checked, 0.0, isum);
}

__global__ void fill_words(uint32_t *a, size_t n, uint32_t seed)
{
    const size_t stride = (size_t)gridDim.x * blockDim.x;
    for (size_t i = (size_t)blockIdx.x * blockDim.x + threadIdx.x; i < n; i += stride)
        a[i] = hbg_copy_word(i, seed);
}

/* ---- host side ---- */

struct hbg_ctx {
    int dev, op;
    hbg_plan plan;
    uint32_t seed, coef;
    cudaStream_t stream;
    cudaEvent_t start[2], stop[2], done[2]; /* done: after the slot's result copy */
    hbg_out *out_dev;      /* [2] */
    hbg_out *out_host;     /* [2], pinned */
    int corrupt[2];
    unsigned long long launches; /* dram_bw: every triad launch since the arrays were set */
    uint32_t *a, *b, *c;   /* dram_bw arrays; h2d: a = device destination; d2h: a = source */
    uint32_t *host;        /* h2d / d2h: the pinned host buffer */
};

int hbg_device_count(char *why, size_t n)
{
    int count = 0;
    cudaError_t e = cudaGetDeviceCount(&count);
    if (e == cudaSuccess && count > 0)
        return count;
    if (e == cudaSuccess || e == cudaErrorNoDevice)
        return whyf(why, n, "no CUDA device: the NVIDIA driver is loaded but reports no GPU "
                    "(cudaGetDeviceCount: %s)",
                    e == cudaSuccess ? "0 devices" : cudaGetErrorString(e));
    void *h = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
    if (!h) {
        const char *dl = dlerror();
        return whyf(why, n, "no CUDA driver: libcuda.so.1 not found (%s); this host needs an "
                    "NVIDIA GPU and its driver", dl ? dl : "dlopen failed");
    }
    dlclose(h);
    int drv = 0;
    cudaDriverGetVersion(&drv);
    if (e == cudaErrorInsufficientDriver)
        return whyf(why, n, "the NVIDIA driver supports CUDA %d.%d, older than this build's CUDA "
                    "runtime %d.%d: update the driver, or rebuild hbk with an older nvcc (make "
                    "NVCC=/path/to/nvcc)", drv / 1000, drv % 1000 / 10, CUDART_VERSION / 1000,
                    CUDART_VERSION % 1000 / 10);
    return whyf(why, n, "no usable CUDA device: cudaGetDeviceCount: %s (%s)", cudaGetErrorString(e),
                cudaGetErrorName(e));
}

static int attr(int *v, cudaDeviceAttr a, int dev)
{
    *v = 0;
    return cudaDeviceGetAttribute(v, a, dev) == cudaSuccess ? 0 : -1;
}

int hbg_device_info(int dev, hbg_info *info, char *why, size_t n)
{
    memset(info, 0, sizeof *info);
    cudaDeviceProp prop;
    CK(cudaGetDeviceProperties(&prop, dev));
    snprintf(info->name, sizeof info->name, "%s", prop.name);
    CK(cudaDeviceGetPCIBusId(info->pci_bus_id, sizeof info->pci_bus_id, dev));
    for (char *p = info->pci_bus_id; *p; p++)
        if (*p >= 'A' && *p <= 'F')
            *p = (char)(*p - 'A' + 'a');
    attr(&info->cc_major, cudaDevAttrComputeCapabilityMajor, dev);
    attr(&info->cc_minor, cudaDevAttrComputeCapabilityMinor, dev);
    attr(&info->sm_count, cudaDevAttrMultiProcessorCount, dev);
    attr(&info->clock_khz, cudaDevAttrClockRate, dev);
    attr(&info->mem_clock_khz, cudaDevAttrMemoryClockRate, dev);
    attr(&info->bus_width_bits, cudaDevAttrGlobalMemoryBusWidth, dev);
    attr(&info->l2_bytes, cudaDevAttrL2CacheSize, dev);
    attr(&info->max_threads_per_sm, cudaDevAttrMaxThreadsPerMultiProcessor, dev);
    attr(&info->ecc, cudaDevAttrEccEnabled, dev);
    attr(&info->integrated, cudaDevAttrIntegrated, dev);
    cudaDriverGetVersion(&info->driver_version);
    cudaRuntimeGetVersion(&info->runtime_version);
    CK(cudaSetDevice(dev));
    size_t fr = 0, tot = 0;
    CK(cudaMemGetInfo(&fr, &tot));
    info->free_mem = fr;
    info->total_mem = tot;
    /* __CUDA_ARCH_LIST__: what nvcc compiled for, e.g. 800,900 -> "sm_80 sm_90" */
    const char *list = XSTR(__CUDA_ARCH_LIST__);
    size_t len = 0;
    for (const char *p = list; *p && len + 8 < sizeof info->arch_list;) {
        int a = atoi(p);
        len += (size_t)snprintf(info->arch_list + len, sizeof info->arch_list - len, "%ssm_%d",
                                len ? " " : "", a / 10);
        while (*p && *p != ',')
            p++;
        if (*p == ',')
            p++;
    }
    /* which of the fat binary's codes this device runs: SASS for its architecture, or PTX
     * JIT-compiled by the driver; none (an older GPU) is refused here, before any work */
    cudaFuncAttributes fa;
    cudaError_t e = cudaFuncGetAttributes(&fa, fma_chains<float>);
    if (e != cudaSuccess)
        return whyf(why, n, "%s (compute capability %d.%d) cannot run this build's code (%s, "
                    "and PTX for the newest): %s", info->name, info->cc_major, info->cc_minor,
                    info->arch_list, cudaGetErrorString(e));
    info->binary_version = fa.binaryVersion;
    info->ptx_version = fa.ptxVersion;
    return 0;
}

static int grid_for(const void *fn, int dev, int *blocks_per_sm, char *why, size_t n)
{
    int sms = 0;
    CK(cudaDeviceGetAttribute(&sms, cudaDevAttrMultiProcessorCount, dev));
    CK(cudaOccupancyMaxActiveBlocksPerMultiprocessor(blocks_per_sm, fn, HBG_BLOCK, 0));
    if (*blocks_per_sm < 1)
        *blocks_per_sm = 1;
    return sms * *blocks_per_sm;
}

static const void *fma_fn(int op)
{
    switch (op) {
    case HBG_FP32_FMA: return (const void *)fma_chains<float>;
    case HBG_FP64_FMA: return (const void *)fma_chains<double>;
    default: return (const void *)fma_chains<uint32_t>;
    }
}

static void launch_fma(hbg_ctx *c, int iters, uint32_t coef, hbg_out *out)
{
    const hbg_plan *p = &c->plan;
    switch (c->op) {
    case HBG_FP32_FMA:
        fma_chains<float><<<p->grid, p->block, 0, c->stream>>>(1.0f, (float)coef, (float)c->coef,
                                                                iters, out);
        break;
    case HBG_FP64_FMA:
        fma_chains<double><<<p->grid, p->block, 0, c->stream>>>(1.0, (double)coef, (double)c->coef,
                                                                 iters, out);
        break;
    default:
        fma_chains<uint32_t><<<p->grid, p->block, 0, c->stream>>>(1u, coef, c->coef, iters, out);
        break;
    }
}

static void launch_triad(hbg_ctx *c, uint32_t s)
{
    const hbg_plan *p = &c->plan;
    c->launches++;
    /* launch 1 reads B and writes A, launch 2 reads A and writes B, ... */
    uint32_t *dst = c->launches & 1 ? c->a : c->b, *src = c->launches & 1 ? c->b : c->a;
    triad<<<p->grid, p->block, 0, c->stream>>>((uint4 *)dst, (const uint4 *)src,
                                               (const uint4 *)c->c, s, p->elems / 4);
}

/* Enqueues `count` units of the op's work (launches or copies) without events. */
static void enqueue(hbg_ctx *c, int count, int iters, int corrupt)
{
    const hbg_plan *p = &c->plan;
    for (int k = 0; k < count; k++) {
        switch (c->op) {
        case HBG_FP32_FMA:
        case HBG_FP64_FMA:
        case HBG_INT32:
            launch_fma(c, iters, corrupt ? c->coef + 1 : c->coef, c->out_dev + 1);
            break;
        case HBG_DRAM_BW:
            launch_triad(c, corrupt && k == 0 ? c->coef + 1 : c->coef);
            break;
        case HBG_H2D:
            cudaMemcpyAsync(c->a, c->host, p->bytes, cudaMemcpyHostToDevice, c->stream);
            break;
        case HBG_D2H:
            cudaMemcpyAsync(c->host, c->a, p->bytes, cudaMemcpyDeviceToHost, c->stream);
            break;
        }
    }
}

/* Runs `count` units and returns their GPU time in ms, or -1. */
static double timed(hbg_ctx *c, int count, int iters, char *why, size_t n)
{
    float ms = 0;
    cudaEventRecord(c->start[0], c->stream);
    enqueue(c, count, iters, 0);
    cudaEventRecord(c->stop[0], c->stream);
    cudaError_t e = cudaEventSynchronize(c->stop[0]);
    if (e == cudaSuccess)
        e = cudaGetLastError();
    if (e == cudaSuccess)
        e = cudaEventElapsedTime(&ms, c->start[0], c->stop[0]);
    if (e != cudaSuccess)
        return cuda_fail(why, n, "calibration", e);
    return ms;
}

void hbg_close(hbg_ctx *c)
{
    if (!c)
        return;
    cudaSetDevice(c->dev);
    if (c->stream)
        cudaStreamSynchronize(c->stream);
    cudaFree(c->a);
    cudaFree(c->b);
    cudaFree(c->c);
    cudaFree(c->out_dev);
    cudaFreeHost(c->out_host);
    cudaFreeHost(c->host);
    for (int i = 0; i < 2; i++) {
        if (c->start[i])
            cudaEventDestroy(c->start[i]);
        if (c->stop[i])
            cudaEventDestroy(c->stop[i]);
        if (c->done[i])
            cudaEventDestroy(c->done[i]);
    }
    if (c->stream)
        cudaStreamDestroy(c->stream);
    free(c);
}

/* Poisons the destination of the next phase's copies (outside any timed window). */
static int poison(hbg_ctx *c, char *why, size_t n)
{
    if (c->op == HBG_H2D)
        CK(cudaMemsetAsync(c->a, 0xA5, c->plan.bytes, c->stream));
    if (c->op == HBG_D2H)
        memset(c->host, 0xA5, c->plan.bytes);
    CK(cudaStreamSynchronize(c->stream));
    return 0;
}

static long long max_iters(const hbg_ctx *c)
{
    const double chains = (double)c->plan.grid * c->plan.block * HBG_ACC;
    return std::max(1LL, std::min(hbg_max_steps(c->op, chains) / HBG_UNROLL, 1LL << 30));
}

hbg_ctx *hbg_open(int dev, int op, uint64_t bytes, double batch_ms, uint32_t seed,
                  uint32_t coefficient, hbg_plan *plan, char *why, size_t n)
{
    hbg_ctx *c = (hbg_ctx *)calloc(1, sizeof *c);
    if (!c) {
        whyf(why, n, "out of memory");
        return NULL;
    }
    c->dev = dev;
    c->op = op;
    c->seed = seed;
    c->coef = coefficient;
    hbg_plan *p = &c->plan;
    p->block = HBG_BLOCK;
    cudaError_t e;
#define OPEN_CK(call)                                                                          \
    do {                                                                                       \
        if ((e = (call)) != cudaSuccess) {                                                     \
            cuda_fail(why, n, #call, e);                                                       \
            hbg_close(c);                                                                      \
            return NULL;                                                                       \
        }                                                                                      \
    } while (0)
    OPEN_CK(cudaSetDevice(dev));
    OPEN_CK(cudaStreamCreateWithFlags(&c->stream, cudaStreamNonBlocking));
    for (int i = 0; i < 2; i++) {
        OPEN_CK(cudaEventCreate(&c->start[i]));
        OPEN_CK(cudaEventCreate(&c->stop[i]));
        OPEN_CK(cudaEventCreateWithFlags(&c->done[i], cudaEventDisableTiming));
    }
    OPEN_CK(cudaMalloc((void **)&c->out_dev, 3 * sizeof(hbg_out)));
    OPEN_CK(cudaMallocHost((void **)&c->out_host, 2 * sizeof(hbg_out)));
    OPEN_CK(cudaMemsetAsync(c->out_dev, 0, 3 * sizeof(hbg_out), c->stream));

    double ms = 0;
    int iters = 0;
    if (op == HBG_FP32_FMA || op == HBG_FP64_FMA || op == HBG_INT32) {
        int g = grid_for(fma_fn(op), dev, &p->blocks_per_sm, why, n);
        if (g < 0) {
            hbg_close(c);
            return NULL;
        }
        p->grid = g;
        /* the first launch loads the module and wakes the clocks; then grow until >= 2 ms */
        long long cap = max_iters(c);
        iters = (int)std::min(16LL, cap);
        if (timed(c, 1, iters, why, n) < 0) {
            hbg_close(c);
            return NULL;
        }
        for (;;) {
            if ((ms = timed(c, 1, iters, why, n)) < 0) {
                hbg_close(c);
                return NULL;
            }
            if (ms >= 2 || iters >= cap)
                break;
            iters = (int)std::min((long long)iters * 8, cap);
        }
        double want = (double)iters * batch_ms / std::max(ms, 1e-3);
        iters = (int)std::max(1.0, std::min(want, (double)cap));
        p->steps = (long long)iters * HBG_UNROLL;
        p->launches = 1;
        p->units_per_launch = (uint64_t)p->grid * p->block * HBG_ACC * (uint64_t)p->steps;
        if ((ms = timed(c, 1, iters, why, n)) < 0) {
            hbg_close(c);
            return NULL;
        }
        p->launch_ms = ms;
    } else if (op == HBG_DRAM_BW) {
        int g = grid_for((const void *)triad, dev, &p->blocks_per_sm, why, n);
        if (g < 0) {
            hbg_close(c);
            return NULL;
        }
        p->grid = g;
        p->elems = bytes / 16 * 4; /* whole 16-byte vectors */
        p->bytes = p->elems * 4;
        p->units_per_launch = p->elems * 12; /* read src and mul, write dst: 3 x 4 bytes */
        OPEN_CK(cudaMalloc((void **)&c->a, p->bytes));
        OPEN_CK(cudaMalloc((void **)&c->b, p->bytes));
        OPEN_CK(cudaMalloc((void **)&c->c, p->bytes));
        triad_init<<<p->grid, p->block, 0, c->stream>>>(c->a, c->b, c->c, p->elems, seed);
        OPEN_CK(cudaGetLastError());
        if (timed(c, 2, 0, why, n) < 0 || (ms = timed(c, 4, 0, why, n)) < 0) {
            hbg_close(c);
            return NULL;
        }
        p->launch_ms = ms / 4;
    } else {
        p->bytes = bytes / 4 * 4;
        p->units_per_launch = p->bytes;
        OPEN_CK(cudaMalloc((void **)&c->a, p->bytes));
        OPEN_CK(cudaMallocHost((void **)&c->host, p->bytes));
        size_t words = p->bytes / 4;
        if (op == HBG_H2D) {
            for (size_t i = 0; i < words; i++)
                c->host[i] = hbg_copy_word(i, seed);
        } else {
            int bps = 0;
            int g = grid_for((const void *)fill_words, dev, &bps, why, n);
            if (g < 0) {
                hbg_close(c);
                return NULL;
            }
            fill_words<<<g, HBG_BLOCK, 0, c->stream>>>(c->a, words, seed);
            OPEN_CK(cudaGetLastError());
        }
        if (timed(c, 1, 0, why, n) < 0 || (ms = timed(c, 2, 0, why, n)) < 0) {
            hbg_close(c);
            return NULL;
        }
        p->launch_ms = ms / 2;
    }
    if (op == HBG_DRAM_BW || op == HBG_H2D || op == HBG_D2H)
        p->launches = (int)std::max(1.0, std::min(1e6, batch_ms / std::max(p->launch_ms, 1e-4)));
    if (poison(c, why, n) < 0) {
        hbg_close(c);
        return NULL;
    }
    *plan = *p;
    return c;
#undef OPEN_CK
}

int hbg_submit(hbg_ctx *c, int slot, int corrupt, char *why, size_t n)
{
    const hbg_plan *p = &c->plan;
    hbg_out *out = c->out_dev + slot;
    c->corrupt[slot] = corrupt;
    if (c->op == HBG_FP32_FMA || c->op == HBG_FP64_FMA || c->op == HBG_INT32) {
        CK(cudaMemsetAsync(out, 0, sizeof *out, c->stream));
        CK(cudaEventRecord(c->start[slot], c->stream));
        launch_fma(c, (int)(p->steps / HBG_UNROLL), corrupt ? c->coef + 1 : c->coef, out);
        CK(cudaEventRecord(c->stop[slot], c->stream));
        CK(cudaMemcpyAsync(c->out_host + slot, out, sizeof *out, cudaMemcpyDeviceToHost,
                           c->stream));
    } else {
        CK(cudaEventRecord(c->start[slot], c->stream));
        enqueue(c, p->launches, 0, corrupt);
        CK(cudaEventRecord(c->stop[slot], c->stream));
        if (corrupt && c->op == HBG_H2D) /* damage one word of what was copied */
            CK(cudaMemsetAsync(c->a + p->bytes / 8, 0x5A, 4, c->stream));
    }
    /* only this slot's work: the other slot's batch stays queued behind it */
    CK(cudaEventRecord(c->done[slot], c->stream));
    CK(cudaGetLastError());
    return 0;
}

int hbg_collect(hbg_ctx *c, int slot, hbg_batch *out, char *why, size_t n)
{
    const hbg_plan *p = &c->plan;
    float ms = 0;
    memset(out, 0, sizeof *out);
    CK(cudaEventSynchronize(c->done[slot]));
    CK(cudaEventElapsedTime(&ms, c->start[slot], c->stop[slot]));
    out->gpu_ms = ms;
    out->units = p->units_per_launch * (uint64_t)p->launches;
    if (c->op == HBG_FP32_FMA || c->op == HBG_FP64_FMA || c->op == HBG_INT32) {
        const hbg_out *r = c->out_host + slot;
        out->bad = r->bad;
        out->checked = r->checked;
        out->fsum = r->fsum;
        out->isum = r->isum;
        out->cycles = r->cycles;
        out->ns = r->ns;
    }
    if (c->corrupt[slot] && c->op == HBG_D2H)
        c->host[p->bytes / 8] = ~hbg_copy_word(p->bytes / 8, c->seed); /* damage one word */
    return 0;
}

/* The FMA ops check every batch in hbg_collect; this is for the bandwidth ops. */
long long hbg_check_phase(hbg_ctx *c, uint64_t *checked, char *why, size_t n)
{
    const hbg_plan *p = &c->plan;
    *checked = 0;
    CK(cudaSetDevice(c->dev));
    CK(cudaStreamSynchronize(c->stream));
    long long bad = 0;
    if (c->op == HBG_DRAM_BW || c->op == HBG_H2D) {
        const int dram = c->op == HBG_DRAM_BW;
        const uint32_t *a = dram ? (c->launches & 1 ? c->a : c->b) : c->a;
        const size_t words = dram ? p->elems : p->bytes / 4;
        hbg_out *o = c->out_dev + 2, h;
        CK(cudaMemsetAsync(o, 0, sizeof *o, c->stream));
        CK(cudaMemsetAsync(&o->first_bad, 0xff, sizeof o->first_bad, c->stream));
        int bps = 0, g = grid_for((const void *)check_words, c->dev, &bps, why, n);
        if (g < 0)
            return -1;
        check_words<<<g, HBG_BLOCK, 0, c->stream>>>(a, words, dram ? 0 : 1, c->seed, c->coef,
                                                    c->launches, o);
        CK(cudaGetLastError());
        CK(cudaMemcpyAsync(&h, o, sizeof h, cudaMemcpyDeviceToHost, c->stream));
        CK(cudaStreamSynchronize(c->stream));
        bad = (long long)h.bad;
        *checked = h.checked;
        if (h.checked != words)
            return whyf(why, n, "the check kernel compared %llu of %zu words", h.checked, words);
        if (dram) {
            /* and a sample on the host: 4096 words spread over the array */
            enum { SAMPLE = 4096 };
            static uint32_t got[SAMPLE];
            size_t step = std::max<size_t>(1, words / SAMPLE), m = std::min<size_t>(SAMPLE, words);
            CK(cudaMemcpy2D(got, sizeof got[0], a, step * sizeof got[0], sizeof got[0], m,
                            cudaMemcpyDeviceToHost));
            long long host_bad = 0;
            for (size_t k = 0; k < m; k++)
                host_bad += got[k] != hbg_triad_expect(k * step, c->seed, c->coef, c->launches);
            if (host_bad && !bad)
                return whyf(why, n, "the host found %lld wrong words in a sample the device check "
                            "passed", host_bad);
        }
    } else if (c->op == HBG_D2H) {
        const size_t words = p->bytes / 4;
        for (size_t i = 0; i < words; i++)
            bad += c->host[i] != hbg_copy_word(i, c->seed);
        *checked = words;
    }
    if (poison(c, why, n) < 0)
        return -1;
    return bad;
}

int hbg_measure_clock(int dev, double *mhz_timer, double *fma_per_us, char *why, size_t n)
{
    hbg_plan plan;
    *mhz_timer = *fma_per_us = 0;
    hbg_ctx *c = hbg_open(dev, HBG_FP32_FMA, 0, 50, 1, 1, &plan, why, n);
    if (!c)
        return -1;
    double timer[3], event[3];
    int rc = 0;
    /* ~200 ms of load first: the clocks leave their idle state */
    for (int k = 0; k < 4 && rc == 0; k++) {
        hbg_batch b = {};
        rc = hbg_submit(c, 0, 0, why, n);
        if (rc == 0)
            rc = hbg_collect(c, 0, &b, why, n);
    }
    for (int k = 0; k < 3 && rc == 0; k++) {
        hbg_batch b = {};
        rc = hbg_submit(c, 0, 0, why, n);
        if (rc == 0)
            rc = hbg_collect(c, 0, &b, why, n);
        if (rc == 0 && b.bad)
            rc = whyf(why, n, "the clock-measuring FMA launch failed its check");
        timer[k] = b.ns > 0 ? (double)b.cycles / (double)b.ns * 1e3 : 0;
        event[k] = b.gpu_ms > 0 ? (double)b.units / (b.gpu_ms * 1e3) : 0;
    }
    hbg_close(c);
    if (rc)
        return rc;
    std::sort(timer, timer + 3);
    std::sort(event, event + 3);
    *mhz_timer = timer[1];
    *fma_per_us = event[1];
    return 0;
}
