/* Application kernels: reduction, transpose, 5-point stencil, histogram. Each checks its output
 * against the host (the reduction within a tolerance, the others exactly). */
#include "clbench.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Warm-up (warm_up: sustained launches), then fill `out` with NaN and time the best of opt.runs
 * launches, so that the checked output comes from a timed run. */
static double time_kernel(bench *b, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local,
                          cl_mem out, size_t out_bytes, double *wall)
{
    if (warm_up(b, k, dims, global, local) < 0) return -1;
    float sentinel = NAN;
    TRY(b, clEnqueueFillBuffer(b->q, out, &sentinel, sizeof sentinel, 0, out_bytes, 0, NULL, NULL));
    return best_of(b, k, dims, global, local, b->opt.runs, wall);
fail:
    return -1;
}

static void report_rate(bench *b, const char *name, double bytes, double ms, double wall_ms)
{
    char wall_name[64];
    snprintf(wall_name, sizeof wall_name, "%s.wall", name);
    report(b, name, "GB/s", bytes / ms * 1e-6, "time_ms=%.4g bytes=%.0f", ms, bytes);
    report(b, wall_name, "GB/s", bytes / wall_ms * 1e-6, "time_ms=%.4g", wall_ms);
}

/* ---- reduction: two passes, each a grid-stride sum and a tree in local memory ---- */
static const char *reduce_src =
    "kernel void reduce_sum(global const float *in, global float *out, uint n)\n"
    "{\n"
    "    local float s[RWG];\n"
    "    uint lid = get_local_id(0);\n"
    "    float acc = 0.0f;\n"
    "    for (size_t i = get_global_id(0); i < n; i += get_global_size(0)) acc += in[i];\n"
    "    s[lid] = acc;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint w = RWG / 2; w > 0; w >>= 1) {\n"
    "        if (lid < w) s[lid] += s[lid + w];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (lid == 0) out[get_group_id(0)] = s[0];\n"
    "}\n";

void group_reduction(bench *b)
{
    cl_program prog = NULL;
    cl_kernel k1 = NULL, k2 = NULL;
    cl_mem in = NULL, partial = NULL, result = NULL;
    cl_event e1 = NULL, e2 = NULL;
    size_t wg = b->max_wg < 256 ? b->max_wg : 256;
    while (wg & (wg - 1)) wg &= wg - 1;
    size_t bytes = clamp_alloc(b, (size_t)4 << b->opt.reduce_log2, 4 * wg);
    cl_uint n = (cl_uint)(bytes / 4);
    float *host = xmalloc(bytes);
    uint64_t rng = 99;
    double ref = 0;
    for (cl_uint i = 0; i < n; i++) ref += host[i] = rng_float(&rng);
    char opts[64];
    snprintf(opts, sizeof opts, "-DRWG=%zu", wg);
    if (!(prog = build_program(b, reduce_src, opts))) goto fail;
    if (!(k1 = make_kernel(b, prog, "reduce_sum")) || !(k2 = make_kernel(b, prog, "reduce_sum"))) goto fail;
    if (pick_wg(b, k1, wg) < wg) {
        fail(b, "CL_KERNEL_WORK_GROUP_SIZE of reduce_sum is below %zu", wg);
        goto fail;
    }
    cl_uint groups = n / wg < 1024 ? (cl_uint)(n / wg) : 1024;
    size_t global1 = groups * wg, global2 = wg;
    if (!(in = make_buffer(b, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host))) goto fail;
    if (!(partial = make_buffer(b, CL_MEM_READ_WRITE, groups * 4, NULL))) goto fail;
    if (!(result = make_buffer(b, CL_MEM_READ_WRITE, 4, NULL))) goto fail;
    TRY(b, clSetKernelArg(k1, 0, sizeof in, &in));
    TRY(b, clSetKernelArg(k1, 1, sizeof partial, &partial));
    TRY(b, clSetKernelArg(k1, 2, sizeof n, &n));
    TRY(b, clSetKernelArg(k2, 0, sizeof partial, &partial));
    TRY(b, clSetKernelArg(k2, 1, sizeof result, &result));
    TRY(b, clSetKernelArg(k2, 2, sizeof groups, &groups));
    if (warm_up(b, k1, 1, &global1, &wg) < 0) goto fail;
    double best = 1e30, best_wall = 1e30;
    for (int r = -1; r < b->opt.runs; r++) {
        float sentinel = NAN;
        TRY(b, clEnqueueFillBuffer(b->q, result, &sentinel, 4, 0, 4, 0, NULL, NULL));
        TRY(b, clFinish(b->q));
        double t0 = now_s();
        TRY(b, clEnqueueNDRangeKernel(b->q, k1, 1, NULL, &global1, &wg, 0, NULL, &e1));
        TRY(b, clEnqueueNDRangeKernel(b->q, k2, 1, NULL, &global2, &wg, 0, NULL, &e2));
        TRY(b, clFinish(b->q));
        double wall = (now_s() - t0) * 1e3, ms = events_span_ms(b, e1, e2);
        rel_event(&e1);
        rel_event(&e2);
        if (ms < 0) goto fail;
        if (r >= 0 && ms < best) best = ms;
        if (r >= 0 && wall < best_wall) best_wall = wall;
    }
    float got = 0;
    TRY(b, clEnqueueReadBuffer(b->q, result, CL_TRUE, 0, 4, &got, 0, NULL, NULL));
    if (!(fabs(got - ref) <= 1e-5 * ref)) {
        fail(b, "wrong result: sum of %u floats = %.9g, expected %.9g (relative error %.3g)", n, got, ref,
             fabs(got - ref) / ref);
        goto fail;
    }
    fprintf(stderr, "  %u floats, relative error %.3g\n", n, fabs(got - ref) / ref);
    report_rate(b, "reduction", (double)bytes, best, best_wall);
fail:
    rel_event(&e1);
    rel_event(&e2);
    rel_mem(&in);
    rel_mem(&partial);
    rel_mem(&result);
    rel_kernel(&k1);
    rel_kernel(&k2);
    rel_program(&prog);
    free(host);
}

/* Distinct-looking integers below 2^24 (exact in float) for matrix element (i, j). */
static float grid_value(size_t i, size_t j, unsigned mask)
{
    uint32_t h = (uint32_t)i * 0x9E3779B1u ^ (uint32_t)j * 0x85EBCA77u;
    h ^= h >> 15;
    return (float)(h & mask);
}

/* ---- transpose through a padded local tile ---- */
static const char *transpose_src =
    "#define TD 32\n"
    "#define BR 8\n"
    "kernel void transpose(global const float *in, global float *out, int n)\n"
    "{\n"
    "    local float tile[TD][TD + 1];\n"
    "    int lx = get_local_id(0), ly = get_local_id(1);\n"
    "    int x = get_group_id(0) * TD + lx, y = get_group_id(1) * TD + ly;\n"
    "    for (int j = 0; j < TD; j += BR) tile[ly + j][lx] = in[(size_t)(y + j) * n + x];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    x = get_group_id(1) * TD + lx;\n"
    "    y = get_group_id(0) * TD + ly;\n"
    "    for (int j = 0; j < TD; j += BR) out[(size_t)(y + j) * n + x] = tile[lx][ly + j];\n"
    "}\n";

/* The 2-D groups: run `name` (a kernel of `src` taking in, out, n) on an n x n grid. */
typedef struct {
    const char *name, *src;
    int n;
    size_t global[2], local[2];
    float *in, *out;
} grid_job;

static void grid_run(bench *b, grid_job *job, double (*expect)(const float *in, int n, size_t i, size_t j))
{
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem in = NULL, out = NULL;
    int n = job->n;
    size_t bytes = (size_t)n * n * 4;
    if (!(prog = build_program(b, job->src, NULL))) goto fail;
    if (!(k = make_kernel(b, prog, job->name))) goto fail;
    if (!(in = make_buffer(b, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, job->in))) goto fail;
    if (!(out = make_buffer(b, CL_MEM_READ_WRITE, bytes, NULL))) goto fail;
    TRY(b, clSetKernelArg(k, 0, sizeof in, &in));
    TRY(b, clSetKernelArg(k, 1, sizeof out, &out));
    TRY(b, clSetKernelArg(k, 2, sizeof n, &n));
    double wall, best = time_kernel(b, k, 2, job->global, job->local, out, bytes, &wall);
    if (best < 0) goto fail;
    TRY(b, clEnqueueReadBuffer(b->q, out, CL_TRUE, 0, bytes, job->out, 0, NULL, NULL));
    for (size_t i = 0; i < (size_t)n; i++) {
        for (size_t j = 0; j < (size_t)n; j++) {
            double want = expect(job->in, n, i, j);
            if (job->out[i * n + j] != want) {
                fail(b, "wrong result: %s out[%zu][%zu] = %.9g, expected %.9g (n %d)", job->name, i, j,
                     job->out[i * n + j], want, n);
                goto fail;
            }
        }
    }
    fprintf(stderr, "  %d x %d floats\n", n, n);
    report_rate(b, job->name, 2.0 * bytes, best, wall);
fail:
    rel_mem(&in);
    rel_mem(&out);
    rel_kernel(&k);
    rel_program(&prog);
}

/* n x n inputs grid_value(i, j, mask), an output of the same size, the run, and the frees. */
static void grid_fill_run(bench *b, grid_job *job, unsigned mask,
                          double (*expect)(const float *in, int n, size_t i, size_t j))
{
    size_t n = (size_t)job->n;
    job->in = xmalloc(n * n * 4);
    job->out = xmalloc(n * n * 4);
    for (size_t i = 0; i < n; i++) {
        for (size_t j = 0; j < n; j++) job->in[i * n + j] = grid_value(i, j, mask);
    }
    grid_run(b, job, expect);
    free(job->in);
    free(job->out);
}

static double transpose_expect(const float *in, int n, size_t i, size_t j)
{
    return in[j * n + i];
}

void group_transpose(bench *b)
{
    int n = b->opt.transpose_n - b->opt.transpose_n % 32;
    while ((size_t)n * n * 4 > b->max_alloc) n -= 32;
    grid_job job = {"transpose", transpose_src, n, {n, n / 4}, {32, 8}, NULL, NULL};
    grid_fill_run(b, &job, 0xFFFFFF, transpose_expect);
}

/* ---- 5-point stencil: inputs are integers 0..255, so every result is exact ---- */
static const char *stencil_src =
    "kernel void stencil(global const float *in, global float *out, int n)\n"
    "{\n"
    "    int x = get_global_id(0), y = get_global_id(1);\n"
    "    size_t i = (size_t)y * n + x;\n"
    "    if (x == 0 || y == 0 || x == n - 1 || y == n - 1) {\n"
    "        out[i] = in[i];\n"
    "        return;\n"
    "    }\n"
    "    out[i] = 0.5f * in[i] + 0.125f * (in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);\n"
    "}\n";

static double stencil_expect(const float *in, int n, size_t y, size_t x)
{
    size_t i = y * n + x;
    if (x == 0 || y == 0 || x == (size_t)n - 1 || y == (size_t)n - 1) return in[i];
    return 0.5 * in[i] + 0.125 * ((double)in[i - 1] + in[i + 1] + in[i - n] + in[i + n]);
}

void group_stencil(bench *b)
{
    int n = b->opt.stencil_n - b->opt.stencil_n % 16;
    while ((size_t)n * n * 4 > b->max_alloc) n -= 16;
    grid_job job = {"stencil", stencil_src, n, {n, n}, {16, 16}, NULL, NULL};
    grid_fill_run(b, &job, 0xFF, stencil_expect);
}

/* ---- histogram of bytes: local atomics per work-group, then global atomics ---- */
static const char *histogram_src =
    "kernel void histogram(global const uint *data, global uint *hist, uint n_words)\n"
    "{\n"
    "    local uint h[256];\n"
    "    for (uint i = get_local_id(0); i < 256; i += get_local_size(0)) h[i] = 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (size_t i = get_global_id(0); i < n_words; i += get_global_size(0)) {\n"
    "        uint w = data[i];\n"
    "        atomic_inc(&h[w & 255]);\n"
    "        atomic_inc(&h[(w >> 8) & 255]);\n"
    "        atomic_inc(&h[(w >> 16) & 255]);\n"
    "        atomic_inc(&h[w >> 24]);\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint i = get_local_id(0); i < 256; i += get_local_size(0))\n"
    "        if (h[i]) atomic_add(&hist[i], h[i]);\n"
    "}\n";

void group_histogram(bench *b)
{
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem data = NULL, hist = NULL;
    size_t bytes = clamp_alloc(b, (size_t)1 << b->opt.hist_log2, 4096);
    cl_uint words = (cl_uint)(bytes / 4);
    uint32_t *host = xmalloc(bytes);
    uint32_t want[256] = {0}, got[256];
    uint64_t rng = 4242;
    for (size_t i = 0; i < words; i++) {
        uint64_t r = rng_next(&rng);
        /* Skewed: byte values below 16 are 4x as frequent, as in real data. */
        uint32_t w = (uint32_t)r;
        if ((r >> 32) & 1) w &= 0x0F0F0F0F;
        host[i] = w;
        for (int s = 0; s < 32; s += 8) want[(w >> s) & 255]++;
    }
    if (!(prog = build_program(b, histogram_src, NULL))) goto fail;
    if (!(k = make_kernel(b, prog, "histogram"))) goto fail;
    size_t wg = pick_wg(b, k, 256);
    size_t groups = fill_groups(b);
    size_t global = groups * wg;
    if (!(data = make_buffer(b, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, bytes, host))) goto fail;
    if (!(hist = make_buffer(b, CL_MEM_READ_WRITE, sizeof got, NULL))) goto fail;
    TRY(b, clSetKernelArg(k, 0, sizeof data, &data));
    TRY(b, clSetKernelArg(k, 1, sizeof hist, &hist));
    TRY(b, clSetKernelArg(k, 2, sizeof words, &words));
    if (warm_up(b, k, 1, &global, &wg) < 0) goto fail;
    double best = 1e30, best_wall = 1e30;
    for (int r = -1; r < b->opt.runs; r++) {
        cl_uint zero = 0;
        TRY(b, clEnqueueFillBuffer(b->q, hist, &zero, sizeof zero, 0, sizeof got, 0, NULL, NULL));
        TRY(b, clFinish(b->q));
        double wall = 0, ms = run_kernel(b, k, 1, &global, &wg, &wall);
        if (ms < 0) goto fail;
        TRY(b, clEnqueueReadBuffer(b->q, hist, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
        for (int i = 0; i < 256; i++) {
            if (got[i] != want[i]) {
                fail(b, "wrong result: histogram bin %d = %u, expected %u (run %d)", i, got[i], want[i], r + 1);
                goto fail;
            }
        }
        if (r >= 0 && ms < best) best = ms;
        if (r >= 0 && wall < best_wall) best_wall = wall;
    }
    report_rate(b, "histogram", (double)bytes, best, best_wall);
fail:
    rel_mem(&data);
    rel_mem(&hist);
    rel_kernel(&k);
    rel_program(&prog);
    free(host);
}
