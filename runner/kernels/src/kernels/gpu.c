/* gpu: what one CUDA device delivers. FP32 and FP64 FMA throughput, int32 multiply-add
 * throughput, device-memory bandwidth (a triad over arrays far larger than L2) and host<->device
 * copies from pinned memory, each against the closed form of its result.
 *
 * One host thread drives the device: it keeps two batches of ~batch_ms of GPU work in flight on
 * one stream and publishes its count each time a batch finishes, so the harness's one-per-second
 * samples see the device's rate. The device side, and every CUDA runtime call, is in
 * src/cuda/gpu_kernels.cu (built when the Makefile finds nvcc; without it this file is built with
 * HBK_NO_CUDA and the kernel reports itself unsupported, with that reason).
 *
 * Verification: FMA ops check every batch (each chain of each GPU thread against x0 + n*c on
 * the device, and the grid's sum of values against the same closed form computed here);
 * dram_bw checks every element of the last array written at the end of each phase (and a
 * sample on the host); h2d and d2h check every word of the destination at the end of each
 * phase and poison it for the next. Checks after a phase run outside its timed window. */
#include <sched.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "gpu.h"

#include "../harness.h"
#include "../host.h"
#include "../cuda/gpu_kernels.h"

#define MiB (1024ULL * 1024)

static const char *const op_names[] = {"fp32_fma", "fp64_fma", "int32", "dram_bw", "h2d", "d2h",
                                       NULL};

static const hb_param_def gpu_params[] = {
    {"op", HB_P_ENUM_LIST, "fp32_fma,fp64_fma,int32,dram_bw,h2d,d2h", 0, 0, op_names,
     "Operations, run one after another. fp32_fma / fp64_fma: chains of fused multiply-adds "
     "(FFMA / DFMA), GFLOP/s (an FMA is 2 FLOP). int32: chains of 32-bit integer multiply-adds "
     "(IMAD), GIOP/s (an IMAD is 2 ops). dram_bw: triad a = b + s*c over three device arrays "
     "far larger than L2, GB/s counting 2 reads and 1 write per element. h2d / d2h: "
     "cudaMemcpyAsync between pinned host memory and the device, GB/s.", NULL, NULL},
    {"device", HB_P_INT, "0", 0, 15, NULL,
     "CUDA device index (as CUDA numbers them; CUDA_VISIBLE_DEVICES applies).", NULL, NULL},
    {"bytes", HB_P_INT, "0", 0, 1e12, NULL,
     "Buffer size for dram_bw (each of its three arrays) and for h2d / d2h (the host and the "
     "device buffer), bytes; 0 picks: dram_bw the larger of 512 MiB and 16x the L2 cache, "
     "h2d / d2h 256 MiB. dram_bw refuses arrays smaller than 4x L2 (that would measure the "
     "cache).", "B", NULL},
    {"batch_ms", HB_P_DOUBLE, "20", 1, 1000, NULL,
     "GPU time per batch, milliseconds: kernel launches (or copies) are sized and grouped to "
     "about this, and the count is published when each batch finishes.", NULL, NULL},
    {NULL, HB_P_INT, NULL, 0, 0, NULL, NULL, NULL, NULL},
};

static const hb_param_def gpu_threads = {
    "threads", HB_P_INT_LIST, "1", 1, 1, NULL,
    "Host threads driving the device: one. It keeps the GPU busy with back-to-back launches; "
    "the parallelism is on the device (every SM filled, see the result's plan).", NULL, NULL};

/* What gpu_result_facts adds to each result line; declared in every build (the description of a
 * build without CUDA is the same). */
static const hb_result gpu_plan_fields[] = {
    {"grid", HB_R_INT, "", 0, "Blocks per launch.", NULL, .range = HB_NONNEG},
    {"block", HB_R_INT, "", 0, "Threads per block.", NULL, .range = HB_NONNEG},
    {"blocks_per_sm", HB_R_INT, "", 0, "Resident blocks per SM.", NULL, .range = HB_NONNEG},
    {"chains_per_thread", HB_R_INT, "", 0, "FMA ops: independent chains per thread.", NULL,
     .range = HB_NONNEG},
    {"steps_per_launch", HB_R_INT, "", 0, "FMA ops: steps of each chain per launch.", NULL,
     .range = HB_NONNEG},
    {"buffer_bytes", HB_R_INT, "B", 0, "Memory ops: bytes of each buffer.", NULL,
     .range = HB_NONNEG},
    {"bytes_per_launch", HB_R_INT, "B", 0, "Memory ops: bytes moved per launch or copy.", NULL,
     .range = HB_NONNEG},
    {"launches_per_batch", HB_R_INT, "", 0, "Launches (or copies) per batch.", NULL,
     .range = HB_NONNEG},
    {"launch_ms", HB_R_NUMBER, "ms", 0, "GPU time of one launch (or copy), as planned.", NULL,
     .range = HB_NONNEG},
    {NULL},
};

static const hb_result gpu_results[] = {
    {"sm_clock_mhz", HB_R_NUMBER, "MHz", 0,
     "fp32_fma, fp64_fma, int32: the SM clock over all launches of the repeat (clock64 cycles "
     "per globaltimer ns); null when not measured.", NULL, .range = HB_POSITIVE},
    {"gpu_busy", HB_R_NUMBER, "", 0,
     "The batches' GPU time / the repeat's time: about 1.0 when the device never waited for "
     "the host.", NULL, .range = HB_NONNEG},
    {"batches", HB_R_INT, "", 0, "Batches finished in the repeat.", NULL, .range = HB_NONNEG},
    {"checked", HB_R_INT, "", 0, "Memory ops: words of the destination checked.", NULL,
     .range = HB_NONNEG},
    {"bytes_read", HB_R_INT, "B", 0, "dram_bw: bytes read from device memory.", NULL,
     .range = HB_NONNEG},
    {"bytes_written", HB_R_INT, "B", 0, "dram_bw: bytes written to device memory.", NULL,
     .range = HB_NONNEG},
    {"bytes_copied", HB_R_INT, "B", 0, "h2d, d2h: bytes copied.", NULL, .range = HB_NONNEG},
    {"pcie_link", HB_R_TEXT, NULL, 0,
     "h2d, d2h: the link speed sysfs reported right after the copies; null when unknown.", NULL,
     .range = HB_ANY},
    {"pcie_width", HB_R_NUMBER, "lanes", 0, "h2d, d2h: the link width; null when unknown.", NULL,
     .range = HB_NONNEG},
    {"pcie_gbs_theoretical", HB_R_NUMBER, "GB/s", 0,
     "h2d, d2h: GT/s x lanes x line code / 8, the link's ceiling; null when unknown.", NULL,
     .range = HB_NONNEG},
    {"plan", HB_R_OBJECT, NULL, 0, "How the work was launched.", gpu_plan_fields, .range = HB_ANY},
    {NULL},
};

/* ---- exported for tests/test_gpu.c ---- */

double hb_gpu_link_gbs(double gts, int width)
{
    if (gts <= 0 || width <= 0)
        return 0;
    /* 8b/10b to 5 GT/s, 128b/130b from 8 GT/s, PAM4 FLIT mode (242/256) from 64 GT/s */
    double code = gts < 8 ? 8.0 / 10 : gts < 64 ? 128.0 / 130 : 242.0 / 256;
    return gts * width * code / 8;
}

int hb_gpu_in_cpulist(const char *list, int cpu)
{
    const char *p = list;
    while (*p) {
        char *end;
        long a = strtol(p, &end, 10), b = a;
        if (end == p)
            return 0;
        p = end;
        if (*p == '-') {
            b = strtol(p + 1, &end, 10);
            if (end == p + 1)
                return 0;
            p = end;
        }
        if (cpu >= a && cpu <= b)
            return 1;
        if (*p != ',')
            break;
        p++;
    }
    return 0;
}

void hb_gpu_fma_sums(uint64_t threads, long long steps, uint32_t c, double *fsum, uint64_t *isum)
{
    uint64_t sx0 = 0, is = 0;
    const uint32_t add = (uint32_t)steps * c;
    for (uint64_t g = 0; g < threads; g++)
        for (int k = 0; k < HBG_ACC; k++) {
            uint32_t x0 = hbg_x0((uint32_t)g, k);
            sx0 += x0;
            is += (uint32_t)(x0 + add);
        }
    *fsum = (double)sx0 + (double)(threads * HBG_ACC) * (double)steps * c;
    *isum = is;
}

#ifdef HBK_NO_CUDA

static const char *gpu_supported(const hb_params *p)
{
    (void)p;
    return "built without CUDA (nvcc not found at build time)";
}

static hb_status gpu_setup(const hb_params *p, hb_setup *s, hb_err *err)
{
    (void)p;
    (void)s;
    return hb_errorf(err, HB_UNSUPPORTED, "built without CUDA (nvcc not found at build time)");
}

static void gpu_work(hb_worker *w)
{
    (void)w;
}

#define GPU_DESCRIPTION_BUILD "This build has no CUDA (nvcc was not found when it was built)."

#else /* CUDA */

#define GPU_DESCRIPTION_BUILD "CUDA runtime linked statically: needs only the NVIDIA driver."

/* Results per clock per SM of FFMA, DFMA and IMAD: the arithmetic-instruction throughput table
 * of NVIDIA's CUDA C++ Programming Guide. -1: not known to this table. */
typedef struct lanes {
    int major, minor, fp32, fp64, imad;
} lanes;

static const lanes lane_table[] = {
    {7, 5, 64, 2, 64},    /* Turing */
    {8, 0, 64, 32, 64},   /* A100, A30 */
    {8, 6, 128, 2, 64},   /* GA10x */
    {8, 9, 128, 2, 64},   /* Ada */
    {9, 0, 128, 64, 64},  /* H100, H200, GH200 */
    {10, 0, 128, 64, -1}, /* B200 */
    {12, 0, 128, 2, -1},  /* consumer Blackwell */
};

static const lanes *lanes_for(int major, int minor)
{
    for (size_t i = 0; i < sizeof lane_table / sizeof lane_table[0]; i++)
        if (lane_table[i].major == major && lane_table[i].minor == minor)
            return &lane_table[i];
    return NULL;
}

typedef struct pcie {
    char speed[48], max_speed[48];
    int width, max_width;
    double gts, max_gts;
} pcie;

typedef struct gpu_state {
    int dev;
    hbg_info info;
    double mhz, fma_per_us;
    int numa_node, host_cpu;
    char placement[200];
    pcie link;
    char sysfs[96];
    double batch_ms;
    uint32_t seed, coef_fp, coef_int, coef_triad;
    int corrupt;
    int op[HB_MAX_CONFIGS];
    uint64_t bytes[HB_MAX_CONFIGS];
} gpu_state;

typedef struct gpu_thread {
    hbg_ctx *ctx;
    hbg_plan plan;
    int op;
    uint32_t coef;
    double want_fsum;   /* fp: sum of every chain's closed form */
    uint64_t want_isum; /* int32: the same mod 2^64 of the 32-bit values */
    uint64_t want_checked;
    /* this phase */
    long long cycles, ns;
    double gpu_ms;
    uint64_t batches, checked;
    pcie link_after;
} gpu_thread;

static int is_fma(int op)
{
    return op == HBG_FP32_FMA || op == HBG_FP64_FMA || op == HBG_INT32;
}

/* ---- sysfs: the GPU's PCIe link and its local CPUs ---- */

static int read_line(const char *dir, const char *name, char *buf, size_t n)
{
    char path[256];
    snprintf(path, sizeof path, "%s/%s", dir, name);
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = fgets(buf, (int)n, f) != NULL;
    fclose(f);
    if (!ok)
        return -1;
    buf[strcspn(buf, "\n")] = '\0';
    return 0;
}

static void read_link(const char *dir, pcie *l)
{
    char w[32];
    memset(l, 0, sizeof *l);
    if (read_line(dir, "current_link_speed", l->speed, sizeof l->speed) == 0)
        l->gts = atof(l->speed);
    if (read_line(dir, "max_link_speed", l->max_speed, sizeof l->max_speed) == 0)
        l->max_gts = atof(l->max_speed);
    if (read_line(dir, "current_link_width", w, sizeof w) == 0)
        l->width = atoi(w);
    if (read_line(dir, "max_link_width", w, sizeof w) == 0)
        l->max_width = atoi(w);
}

/* The host thread and the pinned buffers belong on the GPU's NUMA node: the first CPU of the
 * affinity mask that is local to the GPU, else the harness's first CPU. */
static void choose_cpu(gpu_state *st)
{
    static int cpus[HB_MAX_CPUS];
    char list[4096], node[32];
    int n = hb_affinity_cpus(cpus, HB_MAX_CPUS);
    st->host_cpu = n > 0 ? cpus[0] : -1;
    st->numa_node = -1;
    if (read_line(st->sysfs, "numa_node", node, sizeof node) == 0)
        st->numa_node = atoi(node);
    if (read_line(st->sysfs, "local_cpulist", list, sizeof list) != 0) {
        snprintf(st->placement, sizeof st->placement,
                 "first CPU of the affinity mask (the GPU's local CPUs are not in sysfs)");
        return;
    }
    for (int i = 0; i < n; i++) {
        if (hb_gpu_in_cpulist(list, cpus[i])) {
            st->host_cpu = cpus[i];
            snprintf(st->placement, sizeof st->placement,
                     "first affinity CPU local to the GPU (NUMA node %d, local_cpulist %.100s)",
                     st->numa_node, list);
            return;
        }
    }
    snprintf(st->placement, sizeof st->placement,
             "first CPU of the affinity mask: none of the GPU's local CPUs (%.100s) is in it",
             list);
}

/* ---- the kernel ---- */

static const char *gpu_supported(const hb_params *p)
{
    static char why[HBG_WHY + 100];
    int dev = (int)hb_param_int(p, "device");
    int n = hbg_device_count(why, sizeof why);
    if (n < 0)
        return why;
    if (dev >= n) {
        snprintf(why, sizeof why, "device %d does not exist: this host has %d CUDA device%s "
                 "(0..%d); use --device 0%s", dev, n, n == 1 ? "" : "s", n - 1,
                 n > 1 ? " or another index below the count" : "");
        return why;
    }
    return NULL;
}

static hb_status gpu_setup(const hb_params *p, hb_setup *s, hb_err *err)
{
    char why[HBG_WHY];
    gpu_state *st = calloc(1, sizeof *st);
    if (!st)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    s->state = st;
    st->dev = (int)hb_param_int(p, "device");
    st->batch_ms = hb_param_double(p, "batch_ms");
    if (hbg_device_info(st->dev, &st->info, why, sizeof why) != 0)
        return hb_errorf(err, HB_UNSUPPORTED, "device %d: %s", st->dev, why);
    const hbg_info *in = &st->info;

    uint64_t l2 = in->l2_bytes > 0 ? (uint64_t)in->l2_bytes : 64 * MiB;
    uint64_t given = (uint64_t)hb_param_int(p, "bytes");
    const hb_value *ops = hb_param(p, "op");
    s->nconfigs = ops->n;
    for (int i = 0; i < ops->n; i++) {
        int op = (int)ops->i[i];
        hb_config *c = &s->configs[i];
        uint64_t b = 0;
        st->op[i] = op;
        if (op == HBG_DRAM_BW) {
            b = given ? given : (16 * l2 > 512 * MiB ? 16 * l2 : 512 * MiB);
            if (b < 4 * l2)
                return hb_errorf(err, HB_BAD_PARAM,
                                 "--bytes %llu is smaller than 4x the L2 cache of %s (%llu MiB):"
                                 " dram_bw would measure L2, not device memory; use --bytes 0 "
                                 "(picks %llu MiB) or at least %llu", (unsigned long long)b,
                                 in->name, (unsigned long long)(l2 / MiB),
                                 (unsigned long long)((16 * l2 > 512 * MiB ? 16 * l2
                                                                           : 512 * MiB) / MiB),
                                 (unsigned long long)(4 * l2));
            /* three arrays; keep a tenth of the free memory for the runtime */
            if (given == 0)
                while (3 * b > in->free_mem / 10 * 9 && b / 2 >= 4 * l2)
                    b /= 2;
            if (3 * b > in->free_mem / 10 * 9)
                return hb_errorf(err, HB_BAD_PARAM,
                                 "dram_bw with %llu-byte arrays needs 3 x %llu MiB of device "
                                 "memory; %s has %llu MiB free%s", (unsigned long long)b,
                                 (unsigned long long)(b / MiB), in->name,
                                 (unsigned long long)(in->free_mem / MiB),
                                 given ? ": use a smaller --bytes (at least 4x L2)"
                                       : " (not enough for arrays of 4x L2)");
        } else if (op == HBG_H2D || op == HBG_D2H) {
            b = given ? given : 256 * MiB;
            if (b > in->free_mem / 10 * 9)
                return hb_errorf(err, HB_BAD_PARAM,
                                 "--bytes %llu is more than the %llu MiB free on %s",
                                 (unsigned long long)b, (unsigned long long)(in->free_mem / MiB),
                                 in->name);
        }
        if (b && b < 4096)
            return hb_errorf(err, HB_BAD_PARAM, "--bytes %llu: the bandwidth ops need at "
                             "least 4096 bytes (0 picks a size)", (unsigned long long)b);
        st->bytes[i] = b;
        snprintf(c->op, sizeof c->op, "%s", op_names[op]);
        c->block_bytes = b ? (long long)b : -1;
        c->unit = op == HBG_INT32 ? "GIOP/s" : is_fma(op) ? "GFLOP/s" : "GB/s";
        c->work_per_unit = is_fma(op) ? 2 : 1; /* an FMA or IMAD on one lane; one byte */
    }

    uint64_t now = (uint64_t)hb_now_ns();
    st->seed = (uint32_t)(now ^ now >> 32) | 1u;
    st->coef_fp = 1 + (uint32_t)(now / 1000 % 3); /* 1..3: the addend comes from run time */
    st->coef_int = 0x9E3779B1u ^ (uint32_t)(now >> 7);
    st->coef_triad = (uint32_t)(now * 0x2545F491u) | 1u;
#ifdef HBK_TEST_HOOKS
    const char *env = getenv("HBK_TEST_CORRUPT");
    st->corrupt = env && env[0] == '1';
#endif
    snprintf(st->sysfs, sizeof st->sysfs, "/sys/bus/pci/devices/%s", in->pci_bus_id);
    read_link(st->sysfs, &st->link);
    choose_cpu(st);
    if (hbg_measure_clock(st->dev, &st->mhz, &st->fma_per_us, why, sizeof why) != 0)
        return hb_errorf(err, HB_INTERNAL, "measuring the SM clock on device %d: %s", st->dev,
                         why);
    return HB_OK;
}

static void knum_or_null(hb_json *j, const char *key, double v, int known)
{
    if (known)
        hb_json_knum(j, key, v);
    else
        hb_json_knull(j, key);
}

static void gpu_facts(const hb_setup *s, hb_json *j)
{
    const gpu_state *st = s->state;
    const hbg_info *in = &st->info;
    const lanes *ln = lanes_for(in->cc_major, in->cc_minor);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", in->cc_major, in->cc_minor);
    double dram = 2.0 * in->mem_clock_khz * 1e3 * in->bus_width_bits / 8 / 1e9;
    double ghz = st->mhz / 1e3;

    hb_json_kint(j, "device", st->dev);
    hb_json_kstr(j, "name", in->name);
    hb_json_kstr(j, "pci_bus_id", in->pci_bus_id);
    hb_json_kstr(j, "compute_capability", cc);
    hb_json_kint(j, "sm_count", in->sm_count);
    hb_json_kint(j, "max_threads_per_sm", in->max_threads_per_sm);
    hb_json_kint(j, "l2_bytes", in->l2_bytes);
    hb_json_kint(j, "memory_bytes", (long long)in->total_mem);
    hb_json_kint(j, "memory_free_bytes", (long long)in->free_mem);
    hb_json_kbool(j, "ecc", in->ecc);
    hb_json_kbool(j, "integrated", in->integrated);
    hb_json_knum(j, "sm_clock_mhz", st->mhz);
    knum_or_null(j, "sm_clock_mhz_implied",
                 ln && ln->fp32 > 0 ? st->fma_per_us / ((double)in->sm_count * ln->fp32) : 0,
                 ln && ln->fp32 > 0);
    hb_json_knum(j, "sm_clock_mhz_reported", in->clock_khz / 1e3);
    hb_json_kstr(j, "sm_clock_method", "clock64() cycles of block 0 per %globaltimer ns during a "
                 "full-grid FP32 FMA launch of ~50 ms, median of 3 after ~200 ms of load; "
                 "sm_clock_mhz_implied: the same launches' FP32 FMAs per cudaEvent time / (SMs x "
                 "FP32 lanes per SM), the lowest clock that can deliver them (a cross-check of the "
                 "measured clock and of the lanes table: it should be a few percent below it); "
                 "_reported: cudaDevAttrClockRate (the peak boost clock). Each FMA result "
                 "adds sm_clock_mhz measured the same way over that repeat.");
    hb_json_knum(j, "mem_clock_mhz_reported", in->mem_clock_khz / 1e3);
    hb_json_kint(j, "mem_bus_width_bits", in->bus_width_bits);
    hb_json_knum(j, "dram_gbs_theoretical", dram);
    hb_json_kstr(j, "dram_formula", "2 x mem_clock_mhz_reported x 1e6 x mem_bus_width_bits / 8 "
                 "(the clock CUDA reports is the double-data-rate base for HBM and GDDR alike)");
    hb_json_key(j, "lanes_per_sm");
    hb_json_obj(j);
    knum_or_null(j, "fp32_fma", ln ? ln->fp32 : 0, ln && ln->fp32 > 0);
    knum_or_null(j, "fp64_fma", ln ? ln->fp64 : 0, ln && ln->fp64 > 0);
    knum_or_null(j, "int32_imad", ln ? ln->imad : 0, ln && ln->imad > 0);
    hb_json_obj_end(j);
    hb_json_kstr(j, "lanes_source", ln ? "table by compute capability: results per clock per SM "
                 "of the CUDA C++ Programming Guide's arithmetic-instruction throughput table"
                 : "unknown for this compute capability: null");
    hb_json_key(j, "peak_at_measured_clock");
    hb_json_obj(j);
    knum_or_null(j, "fp32_gflops", ln ? in->sm_count * ln->fp32 * 2 * ghz : 0, ln && ln->fp32 > 0);
    knum_or_null(j, "fp64_gflops", ln ? in->sm_count * ln->fp64 * 2 * ghz : 0, ln && ln->fp64 > 0);
    knum_or_null(j, "int32_giops", ln ? in->sm_count * ln->imad * 2 * ghz : 0, ln && ln->imad > 0);
    hb_json_knum(j, "dram_gbs", dram);
    hb_json_obj_end(j);
    hb_json_kstr(j, "peak_formula", "sm_count x lanes_per_sm x 2 (an FMA or IMAD is 2 ops) x "
                 "sm_clock_mhz");
    hb_json_kstr(j, "fma_mix", "8 independent chains per GPU thread, 64 steps each per loop "
                 "trip: 512 FFMA / DFMA / IMAD and 3-5 loop instructions (SASS checked by "
                 "tests/check_gpu.py); a grid of one full wave (SMs x resident blocks x 256)");
    hb_json_kstr(j, "pcie_link", st->link.speed[0] ? st->link.speed : NULL);
    knum_or_null(j, "pcie_width", st->link.width, st->link.width > 0);
    hb_json_kstr(j, "pcie_max_link", st->link.max_speed[0] ? st->link.max_speed : NULL);
    knum_or_null(j, "pcie_max_width", st->link.max_width, st->link.max_width > 0);
    double pcie = hb_gpu_link_gbs(st->link.max_gts, st->link.max_width);
    knum_or_null(j, "pcie_gbs_theoretical", pcie, pcie > 0);
    hb_json_kint(j, "numa_node", st->numa_node);
    hb_json_kint(j, "host_cpu", st->host_cpu);
    hb_json_kstr(j, "host_cpu_placement", st->placement);
    char ver[64];
    snprintf(ver, sizeof ver, "%d.%d", in->driver_version / 1000, in->driver_version % 1000 / 10);
    hb_json_kstr(j, "driver_cuda_version", ver);
    snprintf(ver, sizeof ver, "%d.%d", in->runtime_version / 1000, in->runtime_version % 1000 / 10);
    hb_json_kstr(j, "runtime_cuda_version", ver);
    hb_json_kstr(j, "code_for", in->arch_list);
    char arch[16], used[96];
    snprintf(arch, sizeof arch, "sm_%d", in->binary_version);
    if (strstr(in->arch_list, arch))
        snprintf(used, sizeof used, "%s SASS", arch);
    else
        snprintf(used, sizeof used, "compute_%d PTX, JIT-compiled by the driver for %s",
                 in->ptx_version, arch);
    hb_json_kstr(j, "code_used", used);
    hb_json_knum(j, "batch_ms", st->batch_ms);
    hb_json_kstr(j, "verify", "FMA ops: every batch, each chain = x0 + n*c exactly (m = 1), on "
                 "the device, and the grid's sum of values on the host; dram_bw: after each "
                 "phase every element = B0 + L*s*C mod 2^32 on the device, 4096 spread on the "
                 "host; h2d, d2h: after each phase every word of the destination, then poisoned");
}

/* The sum of every chain's closed form over the grid (fp: exact, below 2^53). */
static void expected_sums(gpu_thread *t)
{
    const uint64_t threads = (uint64_t)t->plan.grid * t->plan.block;
    t->want_checked = threads * HBG_ACC;
    hb_gpu_fma_sums(threads, t->plan.steps, t->coef, &t->want_fsum, &t->want_isum);
}

static hb_status gpu_thread_setup(hb_worker *w, hb_err *err)
{
    const gpu_state *st = w->state;
    char why[HBG_WHY];
    if (st->host_cpu >= 0 && st->host_cpu != w->cpu) { /* onto the GPU's NUMA node */
        cpu_set_t set;
        CPU_ZERO(&set);
        CPU_SET(st->host_cpu, &set);
        if (sched_setaffinity(0, sizeof set, &set) == 0)
            w->cpu = st->host_cpu;
    }
    gpu_thread *t = calloc(1, sizeof *t);
    if (!t)
        return hb_errorf(err, HB_INTERNAL, "out of memory");
    t->op = st->op[w->config_index];
    t->coef = t->op == HBG_INT32 ? st->coef_int : t->op == HBG_DRAM_BW ? st->coef_triad
                                                                        : st->coef_fp;
    t->ctx = hbg_open(st->dev, t->op, st->bytes[w->config_index], st->batch_ms, st->seed,
                      t->coef, &t->plan, why, sizeof why);
    if (!t->ctx) {
        int op = t->op;
        free(t);
        return hb_errorf(err, HB_INTERNAL, "device %d, %s: %s", st->dev, op_names[op], why);
    }
    if (is_fma(t->op))
        expected_sums(t);
    w->tstate = t;
    return HB_OK;
}

static void gpu_thread_teardown(hb_worker *w)
{
    gpu_thread *t = w->tstate;
    if (!t)
        return;
    hbg_close(t->ctx);
    free(t);
    w->tstate = NULL;
}

/* Checks one FMA batch against the closed form; returns 0 when it holds. */
static int fma_batch_ok(hb_worker *w, const gpu_thread *t, const hbg_batch *b, uint64_t batch)
{
    int sum_ok = t->op == HBG_INT32 ? b->isum == t->want_isum : b->fsum == t->want_fsum;
    if (b->bad == 0 && b->checked == t->want_checked && sum_ok)
        return 0;
    if (b->bad || b->checked != t->want_checked)
        hb_fail(w, "batch %llu: %llu of %llu chains differ from the closed form x0 + n*c "
                "(%llu compared)", (unsigned long long)batch, (unsigned long long)b->bad,
                (unsigned long long)t->want_checked, (unsigned long long)b->checked);
    else
        hb_fail(w, "batch %llu: the grid's sum of chain values differs from the closed form",
                (unsigned long long)batch);
    return -1;
}

static void wait_for_stop(hb_worker *w)
{
    struct timespec ms = {0, 1000000};
    while (!hb_should_stop(w))
        nanosleep(&ms, NULL);
}

static void gpu_work(hb_worker *w)
{
    const gpu_state *st = w->state;
    gpu_thread *t = w->tstate;
    char why[HBG_WHY];
    uint64_t units = 0, batch = 0;
    int inflight[2] = {0, 0}, s = 0, broken = 0;
    t->cycles = t->ns = 0;
    t->gpu_ms = 0;
    t->batches = t->checked = 0;

    /* two batches in flight: the device never waits for this thread. Test builds with
     * HBK_TEST_CORRUPT=1 corrupt the second batch of every phase (the copies: every batch from
     * the second on, since each copy rewrites what the one before it damaged). */
    uint64_t submitted = 0;
    const int copies = t->op == HBG_H2D || t->op == HBG_D2H;
#define CORRUPT_THIS(n) (st->corrupt && ((n) == 1 || ((n) > 1 && copies)))
    for (int k = 0; k < 2 && !broken; k++, submitted++) {
        if (hbg_submit(t->ctx, k, CORRUPT_THIS(submitted), why, sizeof why) == 0)
            inflight[k] = 1;
        else
            broken = 1;
    }
    while (!broken && inflight[s]) {
        hbg_batch b;
        inflight[s] = 0;
        if (hbg_collect(t->ctx, s, &b, why, sizeof why) != 0) {
            broken = 1;
            break;
        }
        if (is_fma(t->op)) {
            fma_batch_ok(w, t, &b, batch);
            t->cycles += b.cycles;
            t->ns += b.ns;
            t->checked += b.checked;
        }
        t->gpu_ms += b.gpu_ms;
        t->batches++;
        batch++;
        units += b.units;
        hb_publish(w, units);
        if (!hb_should_stop(w)) {
            if (hbg_submit(t->ctx, s, CORRUPT_THIS(submitted), why, sizeof why) != 0) {
                broken = 1;
                break;
            }
            submitted++;
            inflight[s] = 1;
        }
        s ^= 1;
    }
#undef CORRUPT_THIS
    w->end_ns = hb_now_ns(); /* the checks below are outside the timed window */
    if (broken) {
        hb_fail(w, "CUDA error on device %d: %s", st->dev, why);
        wait_for_stop(w);
        return;
    }
    if (t->op == HBG_H2D || t->op == HBG_D2H)
        read_link(st->sysfs, &t->link_after); /* while the link is still at its working speed */
    if (!is_fma(t->op)) {
        uint64_t checked = 0;
        long long bad = hbg_check_phase(t->ctx, &checked, why, sizeof why);
        t->checked = checked;
        if (bad < 0)
            hb_fail(w, "checking the destination on device %d: %s", st->dev, why);
        else if (bad > 0)
            hb_fail(w, "%lld of %llu words of the destination differ from the closed form %s",
                    bad, (unsigned long long)checked,
                    t->op == HBG_DRAM_BW ? "B0 + L*s*C" : "(the source pattern)");
    }
}

static void gpu_result_facts(const hb_setup *s, hb_worker *w, int nthreads, double seconds,
                             hb_json *j)
{
    (void)s;
    (void)nthreads;
    const gpu_thread *t = w[0].tstate;
    const hbg_plan *p = &t->plan;
    if (is_fma(t->op))
        knum_or_null(j, "sm_clock_mhz", t->ns > 0 ? (double)t->cycles / (double)t->ns * 1e3 : 0,
                     t->ns > 0);
    hb_json_knum(j, "gpu_busy", seconds > 0 ? t->gpu_ms / 1e3 / seconds : 0);
    hb_json_kint(j, "batches", (long long)t->batches);
    hb_json_kint(j, "checked", (long long)t->checked);
    uint64_t per = p->units_per_launch * (uint64_t)p->launches * t->batches;
    if (t->op == HBG_DRAM_BW) {
        hb_json_kint(j, "bytes_read", (long long)(per / 3 * 2));
        hb_json_kint(j, "bytes_written", (long long)(per / 3));
    } else if (t->op == HBG_H2D || t->op == HBG_D2H) {
        hb_json_kint(j, "bytes_copied", (long long)per);
        hb_json_kstr(j, "pcie_link", t->link_after.speed[0] ? t->link_after.speed : NULL);
        knum_or_null(j, "pcie_width", t->link_after.width, t->link_after.width > 0);
        double pcie = hb_gpu_link_gbs(t->link_after.gts, t->link_after.width);
        knum_or_null(j, "pcie_gbs_theoretical", pcie, pcie > 0);
    }
    hb_json_key(j, "plan");
    hb_json_obj(j);
    hb_json_kint(j, "grid", p->grid);
    hb_json_kint(j, "block", p->block);
    hb_json_kint(j, "blocks_per_sm", p->blocks_per_sm);
    if (is_fma(t->op)) {
        hb_json_kint(j, "chains_per_thread", HBG_ACC);
        hb_json_kint(j, "steps_per_launch", p->steps);
    } else {
        hb_json_kint(j, "buffer_bytes", (long long)p->bytes);
        hb_json_kint(j, "bytes_per_launch", (long long)p->units_per_launch);
    }
    hb_json_kint(j, "launches_per_batch", p->launches);
    hb_json_knum(j, "launch_ms", p->launch_ms);
    hb_json_obj_end(j);
}

#endif /* CUDA */

static void gpu_teardown(hb_setup *s)
{
    free(s->state);
    s->state = NULL;
}

const hb_kernel hb_kernel_gpu = {
    .name = "gpu",
    .title = "GPU (CUDA) arithmetic and memory throughput",
    .description = "FP32 and FP64 FMA FLOP/s, int32 multiply-add ops/s, device-memory triad "
                   "bandwidth and pinned host<->device copy bandwidth of one CUDA device; every "
                   "batch or phase checked against its closed form. " GPU_DESCRIPTION_BUILD,
    .unit = "GFLOP/s",
    .unit_scale = 1e-9,
    .params = gpu_params,
    .results = gpu_results,
    .supported = gpu_supported,
    .setup = gpu_setup,
#ifndef HBK_NO_CUDA
    .facts = gpu_facts,
    .thread_setup = gpu_thread_setup,
    .thread_teardown = gpu_thread_teardown,
    .result_facts = gpu_result_facts,
#endif
    .work = gpu_work,
    .teardown = gpu_teardown,
    .threads_def = &gpu_threads,
};
