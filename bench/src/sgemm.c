/* SGEMM with local-memory tiles, and the build-time measurements (which build its source). */
#include "clbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

const char *sgemm_source =
    "#define TS 32\n"
    "#define WPT 8\n"
    "#define RTS (TS / WPT)\n"
    "/* C (M x N) = A (M x K) * B (K x N), row-major, dimensions multiples of TS. A TS x RTS\n"
    " * work-group computes a TS x TS tile of C; each work-item WPT elements of one column. */\n"
    "kernel void sgemm(int M, int N, int K, global const float *A, global const float *B,\n"
    "                  global float *C)\n"
    "{\n"
    "    local float As[TS][TS];\n"
    "    local float Bs[TS][TS];\n"
    "    int tx = get_local_id(0), ty = get_local_id(1);\n"
    "    int col = get_group_id(0) * TS + tx;\n"
    "    int row = get_group_id(1) * TS;\n"
    "    float acc[WPT];\n"
    "    for (int w = 0; w < WPT; w++) acc[w] = 0.0f;\n"
    "    for (int t = 0; t < K; t += TS) {\n"
    "        for (int w = 0; w < WPT; w++) {\n"
    "            int r = ty + w * RTS;\n"
    "            As[r][tx] = A[(size_t)(row + r) * K + t + tx];\n"
    "            Bs[r][tx] = B[(size_t)(t + r) * N + col];\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < TS; k++) {\n"
    "            float bk = Bs[k][tx];\n"
    "            for (int w = 0; w < WPT; w++) acc[w] += As[ty + w * RTS][k] * bk;\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    for (int w = 0; w < WPT; w++) C[(size_t)(row + ty + w * RTS) * N + col] = acc[w];\n"
    "}\n";

/* C = A * B for n x n matrices on the device: buffers and a kernel ready to launch. */
typedef struct {
    int n;
    cl_mem a, bm, c;
    cl_kernel k;
    size_t global[2], local[2];
    float *ha, *hb, *hc;
} gemm;

static void gemm_free(gemm *g)
{
    rel_mem(&g->a);
    rel_mem(&g->bm);
    rel_mem(&g->c);
    rel_kernel(&g->k);
    free(g->ha);
    free(g->hb);
    free(g->hc);
}

static int gemm_setup(bench *b, cl_program prog, gemm *g, int n)
{
    size_t bytes = (size_t)n * n * sizeof(float);
    uint64_t rng = 12345;
    g->n = n;
    g->ha = xmalloc(bytes);
    g->hb = xmalloc(bytes);
    g->hc = xmalloc(bytes);
    for (size_t i = 0; i < (size_t)n * n; i++) {
        g->ha[i] = rng_float(&rng) * 2 - 1;
        g->hb[i] = rng_float(&rng) * 2 - 1;
    }
    if (!(g->k = make_kernel(b, prog, "sgemm"))) return -1;
    if (!(g->a = make_buffer(b, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, g->ha))) return -1;
    if (!(g->bm = make_buffer(b, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, g->hb))) return -1;
    if (!(g->c = make_buffer(b, CL_MEM_READ_WRITE, bytes, NULL))) return -1;
    TRY(b, clSetKernelArg(g->k, 0, sizeof n, &n));
    TRY(b, clSetKernelArg(g->k, 1, sizeof n, &n));
    TRY(b, clSetKernelArg(g->k, 2, sizeof n, &n));
    TRY(b, clSetKernelArg(g->k, 3, sizeof g->a, &g->a));
    TRY(b, clSetKernelArg(g->k, 4, sizeof g->bm, &g->bm));
    TRY(b, clSetKernelArg(g->k, 5, sizeof g->c, &g->c));
    g->local[0] = 32;
    g->local[1] = 4;
    g->global[0] = n;
    g->global[1] = n / 8;
    float sentinel = NAN;
    TRY(b, clEnqueueFillBuffer(b->q, g->c, &sentinel, sizeof sentinel, 0, bytes, 0, NULL, NULL));
    return 0;
fail:
    return -1;
}

/* Read C back and compare `samples` entries (all when samples == 0) with a double dot product. */
static int gemm_check(bench *b, gemm *g, int samples)
{
    int n = g->n;
    TRY(b, clEnqueueReadBuffer(b->q, g->c, CL_TRUE, 0, (size_t)n * n * sizeof(float), g->hc, 0, NULL, NULL));
    uint64_t rng = 777;
    long count = samples ? samples : (long)n * n;
    for (long s = 0; s < count; s++) {
        size_t i = samples ? rng_next(&rng) % n : (size_t)(s / n);
        size_t j = samples ? rng_next(&rng) % n : (size_t)(s % n);
        if (samples && s < 4) {   /* the corners too */
            i = (s & 1) ? n - 1 : 0;
            j = (s & 2) ? n - 1 : 0;
        }
        double ref = 0, mag = 0;
        for (int k = 0; k < n; k++) {
            double p = (double)g->ha[i * n + k] * g->hb[(size_t)k * n + j];
            ref += p;
            mag += fabs(p);
        }
        double got = g->hc[i * n + j];
        if (!(fabs(got - ref) <= 1e-4 * mag + 1e-6)) {
            fail(b, "wrong result: sgemm C[%zu][%zu] = %.9g, expected %.9g (n %d)", i, j, got, ref, n);
            return -1;
        }
    }
    return 0;
fail:
    return -1;
}

int sgemm_verify_small(bench *b, cl_program prog)
{
    gemm g = {0};
    int rc = -1;
    if (gemm_setup(b, prog, &g, 64) == 0 &&
        run_kernel(b, g.k, 2, g.global, g.local, NULL) >= 0 && gemm_check(b, &g, 0) == 0) {
        rc = 0;
    }
    gemm_free(&g);
    return rc;
}

void group_sgemm(bench *b)
{
    gemm g = {0};
    int n = b->opt.sgemm_n - b->opt.sgemm_n % 32;
    cl_program prog = build_program(b, sgemm_source, NULL);
    if (!prog || gemm_setup(b, prog, &g, n) != 0) goto fail;
    fprintf(stderr, "  %d x %d x %d\n", n, n, n);
    double wall;
    if (run_kernel(b, g.k, 2, g.global, g.local, NULL) < 0) goto fail;   /* warm-up */
    float sentinel = NAN;
    TRY(b, clEnqueueFillBuffer(b->q, g.c, &sentinel, sizeof sentinel, 0, (size_t)n * n * 4, 0, NULL, NULL));
    double best = best_of(b, g.k, 2, g.global, g.local, b->opt.runs, &wall);
    if (best < 0 || gemm_check(b, &g, 1024) != 0) goto fail;
    double flops = 2.0 * n * n * (double)n;
    report(b, "sgemm", "GFLOP/s", flops / best * 1e-6, "time_ms=%.4g n=%d", best, n);
    report(b, "sgemm.wall", "GFLOP/s", flops / wall * 1e-6, "time_ms=%.4g", wall);
fail:
    gemm_free(&g);
    rel_program(&prog);
}

/* ---- build time ---- */

static double timed_build(bench *b, cl_program *out)
{
    double t0 = now_s();
    *out = build_program(b, sgemm_source, NULL);
    double ms = (now_s() - t0) * 1e3;
    if (!*out) return -1;
    if (sgemm_verify_small(b, *out) != 0) return -1;
    return ms;
}

/* The first build of this process (the runner gives it an empty cache directory), then a
 * rebuild of the same source in the same process. */
void group_build_cold(bench *b)
{
    cl_program p1 = NULL, p2 = NULL;
    report(b, "platform_init", "ms", b->init_ms, "what=clGetPlatformIDs..clCreateCommandQueue");
    double ms = timed_build(b, &p1);
    if (ms < 0) goto fail;
    report(b, "build_cold", "ms", ms, NULL);
    ms = timed_build(b, &p2);
    if (ms < 0) goto fail;
    report(b, "build_same_process", "ms", ms, NULL);
fail:
    rel_program(&p1);
    rel_program(&p2);
}

/* The first build of a new process whose cache directory holds the cold build's results. */
void group_build_warm(bench *b)
{
    cl_program p = NULL;
    double ms = timed_build(b, &p);
    if (ms >= 0) report(b, "build_warm", "ms", ms, NULL);
    rel_program(&p);
}
