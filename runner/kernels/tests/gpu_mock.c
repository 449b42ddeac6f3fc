/* A stand-in for src/cuda/gpu_kernels.cu that runs on the CPU, so the gpu kernel's host side
 * (src/kernels/gpu.c: parameters, the two-batches-in-flight loop, per-batch and per-phase
 * checks, the test build's corruption, every event it writes) can be exercised on a host without
 * a GPU. It computes what the device would, at a tiny scale: the FMA chains of a 512-thread grid
 * with the same closed forms, the triad ping-pong over small arrays, copies with memcpy; each
 * batch "takes" batch_ms, like a stream that runs one batch after another.
 * tests/check_gpu.py links it with build/tobj/ and src/kernels/gpu.c as build/tests/hbk-gpumock.
 * HBK_MOCK_GPUS sets the device count (default 1; 0: "no CUDA device"). */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "cuda/gpu_kernels.h"

#define MOCK_BYTES_MAX (1u << 20)

struct hbg_ctx {
    int op;
    hbg_plan plan;
    uint32_t seed, coef;
    uint64_t launches;
    uint32_t *a, *b, *c, *host;
    double end[2], stream_end;
    hbg_batch result[2];
    int corrupt[2];
};

static double now_s(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (double)t.tv_sec + t.tv_nsec * 1e-9;
}

int hbg_device_count(char *why, size_t n)
{
    const char *env = getenv("HBK_MOCK_GPUS");
    int count = env ? atoi(env) : 1;
    if (count <= 0) {
        snprintf(why, n, "no CUDA device: the mock was told there is none");
        return -1;
    }
    return count;
}

int hbg_device_info(int dev, hbg_info *info, char *why, size_t n)
{
    (void)why;
    (void)n;
    memset(info, 0, sizeof *info);
    snprintf(info->name, sizeof info->name, "Mock GPU %d (on the CPU)", dev);
    snprintf(info->pci_bus_id, sizeof info->pci_bus_id, "0000:00:00.0");
    info->cc_major = 9;
    info->cc_minor = 0;
    info->sm_count = 132;
    info->clock_khz = 1980000;
    info->mem_clock_khz = 2619000;
    info->bus_width_bits = 5120;
    info->l2_bytes = 1 << 16;
    info->max_threads_per_sm = 2048;
    info->ecc = 1;
    info->driver_version = 13000;
    info->runtime_version = 13000;
    info->total_mem = 80ULL << 30;
    info->free_mem = 79ULL << 30;
    snprintf(info->arch_list, sizeof info->arch_list, "sm_75 sm_80 sm_90");
    info->binary_version = 90;
    info->ptx_version = 90;
    return 0;
}

int hbg_measure_clock(int dev, double *mhz_timer, double *fma_per_us, char *why, size_t n)
{
    (void)dev;
    (void)why;
    (void)n;
    *mhz_timer = 1755;
    *fma_per_us = 1740.0 * 128 * 132; /* the mock's 132 SMs x 128 lanes, at 1740 MHz */
    return 0;
}

hbg_ctx *hbg_open(int dev, int op, uint64_t bytes, double batch_ms, uint32_t seed,
                  uint32_t coefficient, hbg_plan *plan, char *why, size_t n)
{
    (void)dev;
    hbg_ctx *c = calloc(1, sizeof *c);
    if (!c) {
        snprintf(why, n, "out of memory");
        return NULL;
    }
    c->op = op;
    c->seed = seed;
    c->coef = coefficient;
    hbg_plan *p = &c->plan;
    p->block = HBG_BLOCK;
    p->launch_ms = batch_ms;
    p->launches = 1;
    if (op == HBG_FP32_FMA || op == HBG_FP64_FMA || op == HBG_INT32) {
        p->grid = 2;
        p->blocks_per_sm = 8;
        p->steps = 4 * HBG_UNROLL;
        p->units_per_launch = (uint64_t)p->grid * p->block * HBG_ACC * (uint64_t)p->steps;
    } else {
        uint64_t b = bytes < MOCK_BYTES_MAX ? bytes : MOCK_BYTES_MAX;
        p->grid = 4;
        p->blocks_per_sm = 8;
        p->bytes = b / 16 * 16;
        p->elems = p->bytes / 4;
        c->a = calloc(1, p->bytes);
        c->b = calloc(1, p->bytes);
        c->c = calloc(1, p->bytes);
        c->host = calloc(1, p->bytes);
        if (!c->a || !c->b || !c->c || !c->host) {
            hbg_close(c);
            snprintf(why, n, "out of memory");
            return NULL;
        }
        p->launches = 2;
        p->units_per_launch = op == HBG_DRAM_BW ? p->elems * 12 : p->bytes;
        for (uint64_t i = 0; i < p->elems; i++) {
            c->b[i] = hbg_b0(i, seed);
            c->c[i] = hbg_c0(i, seed);
            c->host[i] = hbg_copy_word(i, seed); /* h2d: the source */
            if (op == HBG_D2H)
                c->a[i] = hbg_copy_word(i, seed); /* d2h: the device source */
        }
        if (op == HBG_D2H)
            memset(c->host, 0xA5, p->bytes);
    }
    *plan = *p;
    return c;
}

static void fma_batch(hbg_ctx *c, uint32_t coef, hbg_batch *r)
{
    const hbg_plan *p = &c->plan;
    uint32_t threads = (uint32_t)(p->grid * p->block);
    for (uint32_t g = 0; g < threads; g++)
        for (int k = 0; k < HBG_ACC; k++) {
            uint32_t x0 = hbg_x0(g, k);
            double value, want = (double)x0 + (double)p->steps * c->coef;
            if (c->op == HBG_FP32_FMA) {
                float x = (float)x0;
                for (long long s = 0; s < p->steps; s++)
                    x = fmaf(x, 1.0f, (float)coef);
                value = x;
            } else if (c->op == HBG_FP64_FMA) {
                double x = x0;
                for (long long s = 0; s < p->steps; s++)
                    x = fma(x, 1.0, (double)coef);
                value = x;
            } else {
                uint32_t x = x0;
                for (long long s = 0; s < p->steps; s++)
                    x = x * 1u + coef;
                r->bad += x != x0 + (uint32_t)p->steps * c->coef;
                r->isum += x;
                r->checked++;
                continue;
            }
            r->bad += value != want;
            r->fsum += value;
            r->checked++;
        }
    r->cycles = 1755000;
    r->ns = 1000000;
}

int hbg_submit(hbg_ctx *c, int slot, int corrupt, char *why, size_t n)
{
    (void)why;
    (void)n;
    const hbg_plan *p = &c->plan;
    hbg_batch *r = &c->result[slot];
    memset(r, 0, sizeof *r);
    c->corrupt[slot] = corrupt;
    if (c->op == HBG_FP32_FMA || c->op == HBG_FP64_FMA || c->op == HBG_INT32) {
        fma_batch(c, corrupt ? c->coef + 1 : c->coef, r);
    } else {
        for (int k = 0; k < p->launches; k++) {
            if (c->op == HBG_DRAM_BW) {
                uint32_t s = corrupt && k == 0 ? c->coef + 1 : c->coef;
                c->launches++;
                uint32_t *dst = c->launches & 1 ? c->a : c->b, *src = c->launches & 1 ? c->b : c->a;
                for (uint64_t i = 0; i < p->elems; i++)
                    dst[i] = src[i] + s * c->c[i];
            } else if (c->op == HBG_H2D) {
                memcpy(c->a, c->host, p->bytes);
            } else {
                memcpy(c->host, c->a, p->bytes);
            }
        }
        if (corrupt && c->op == HBG_H2D)
            c->a[p->elems / 2] = 0x5A5A5A5Au;
    }
    r->units = p->units_per_launch * (uint64_t)p->launches;
    double start = now_s() > c->stream_end ? now_s() : c->stream_end;
    c->end[slot] = c->stream_end = start + p->launch_ms * p->launches / 1e3;
    r->gpu_ms = p->launch_ms * p->launches;
    return 0;
}

int hbg_collect(hbg_ctx *c, int slot, hbg_batch *out, char *why, size_t n)
{
    (void)why;
    (void)n;
    double wait = c->end[slot] - now_s();
    if (wait > 0) {
        struct timespec t = {(time_t)wait, (long)((wait - (double)(time_t)wait) * 1e9)};
        nanosleep(&t, NULL);
    }
    *out = c->result[slot];
    if (c->corrupt[slot] && c->op == HBG_D2H)
        c->host[c->plan.elems / 2] = ~hbg_copy_word(c->plan.elems / 2, c->seed);
    return 0;
}

long long hbg_check_phase(hbg_ctx *c, uint64_t *checked, char *why, size_t n)
{
    (void)why;
    (void)n;
    const hbg_plan *p = &c->plan;
    long long bad = 0;
    const uint32_t *a = c->op == HBG_DRAM_BW ? (c->launches & 1 ? c->a : c->b)
                        : c->op == HBG_H2D  ? c->a
                                            : c->host;
    for (uint64_t i = 0; i < p->elems; i++)
        bad += a[i] != (c->op == HBG_DRAM_BW ? hbg_triad_expect(i, c->seed, c->coef, c->launches)
                                             : hbg_copy_word(i, c->seed));
    *checked = p->elems;
    if (c->op == HBG_H2D)
        memset(c->a, 0xA5, p->bytes);
    if (c->op == HBG_D2H)
        memset(c->host, 0xA5, p->bytes);
    return bad;
}

void hbg_close(hbg_ctx *c)
{
    if (!c)
        return;
    free(c->a);
    free(c->b);
    free(c->c);
    free(c->host);
    free(c);
}
