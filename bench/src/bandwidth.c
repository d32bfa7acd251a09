/* Global memory bandwidth (copy, triad; float and float4) and local memory bandwidth. */
#include "clbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static const char *stream_src =
    "kernel void copy_float(global const float *restrict a, global float *restrict b)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    b[i] = a[i];\n"
    "}\n"
    "kernel void copy_float4(global const float4 *restrict a, global float4 *restrict b)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    b[i] = a[i];\n"
    "}\n"
    "kernel void triad_float(global float *restrict a, global const float *restrict b,\n"
    "                        global const float *restrict c, float s)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = b[i] + s * c[i];\n"
    "}\n"
    "kernel void triad_float4(global float4 *restrict a, global const float4 *restrict b,\n"
    "                         global const float4 *restrict c, float s)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    a[i] = b[i] + s * c[i];\n"
    "}\n";

/* Every value is an integer below 2^24, so float arithmetic on them is exact. */
static float copy_value(size_t i) { return (float)(i & 0xFFFFF); }
static float triad_b(size_t i) { return (float)(i & 0xFFF); }
static float triad_c(size_t i) { return (float)((i >> 12) & 0xFFF); }
static float triad_a(size_t i) { return triad_b(i) + 2.0f * triad_c(i); }

static void fill_host(float *h, size_t n, float (*f)(size_t))
{
    for (size_t i = 0; i < n; i++) h[i] = f(i);
}

/* One stream kernel: `nbuf` buffers of n floats, out = bufs[out_index]; reports name and name.wall. */
static void stream_one(bench *b, cl_program prog, const char *name, int vec, cl_mem *bufs, int nbuf,
                       int out_index, size_t n, float *host, float (*expect)(size_t))
{
    char wall_name[64];
    snprintf(wall_name, sizeof wall_name, "%s.wall", name);
    cl_kernel k = make_kernel(b, prog, name);
    if (!k) goto fail;
    for (int i = 0; i < nbuf; i++) TRY(b, clSetKernelArg(k, i, sizeof(cl_mem), &bufs[i]));
    if (nbuf == 3) {
        float s = 2.0f;
        TRY(b, clSetKernelArg(k, 3, sizeof s, &s));
    }
    size_t global = n / vec, local = pick_wg(b, k, 256);
    if (warm_up(b, k, 1, &global, &local) < 0) goto fail;
    float sentinel = -1.0f;
    double best = 1e30, best_wall = 1e30;
    for (int r = -1; r < b->opt.runs; r++) {   /* r = -1: warm-up */
        TRY(b, clEnqueueFillBuffer(b->q, bufs[out_index], &sentinel, sizeof sentinel, 0, n * 4, 0, NULL,
                                   NULL));
        TRY(b, clFinish(b->q));
        double wall = 0, ms = run_kernel(b, k, 1, &global, &local, &wall);
        if (ms < 0) goto fail;
        if (r >= 0 && ms < best) best = ms;
        if (r >= 0 && wall < best_wall) best_wall = wall;
    }
    TRY(b, clEnqueueReadBuffer(b->q, bufs[out_index], CL_TRUE, 0, n * 4, host, 0, NULL, NULL));
    if (check_floats(b, name, host, n, expect)) goto fail;
    double bytes = (double)n * 4 * nbuf;
    report(b, name, "GB/s", bytes / best * 1e-6, "time_ms=%.4g bytes=%.0f", best, bytes);
    report(b, wall_name, "GB/s", bytes / best_wall * 1e-6, "time_ms=%.4g", best_wall);
    rel_kernel(&k);
    return;
fail:
    report_fail(b, name, "GB/s");
    report_fail(b, wall_name, "GB/s");
    rel_kernel(&k);
}

void group_bandwidth(bench *b)
{
    cl_mem buf[3] = {NULL, NULL, NULL};
    size_t want = b->opt.bw_mib << 20;
    if (2 * want > b->global_mem / 4 * 3) {   /* both copy buffers must fit with room to spare */
        want = b->global_mem / 8 * 3;
        fprintf(stderr, "  (copy buffers reduced to %zu MiB: CL_DEVICE_GLOBAL_MEM_SIZE)\n", want >> 20);
    }
    size_t copy_bytes = clamp_alloc(b, want, 1 << 16);
    size_t triad_bytes = clamp_alloc(b, (b->opt.bw_mib << 20) / 3, 1 << 16);
    if (3 * triad_bytes > 2 * copy_bytes) triad_bytes = clamp_alloc(b, copy_bytes * 2 / 3, 1 << 16);
    size_t host_bytes = copy_bytes > triad_bytes ? copy_bytes : triad_bytes;
    float *host = xmalloc(host_bytes);
    cl_program prog = build_program(b, stream_src, NULL);
    if (!prog) goto fail;
    fprintf(stderr, "  copy: 2 buffers of %zu MiB; triad: 3 buffers of %zu MiB\n", copy_bytes >> 20,
            triad_bytes >> 20);

    size_t n = copy_bytes / 4;
    if (!(buf[0] = make_buffer(b, CL_MEM_READ_WRITE, copy_bytes, NULL))) goto fail;
    if (!(buf[1] = make_buffer(b, CL_MEM_READ_WRITE, copy_bytes, NULL))) goto fail;
    fill_host(host, n, copy_value);
    TRY(b, clEnqueueWriteBuffer(b->q, buf[0], CL_TRUE, 0, copy_bytes, host, 0, NULL, NULL));
    stream_one(b, prog, "copy_float", 1, buf, 2, 1, n, host, copy_value);
    stream_one(b, prog, "copy_float4", 4, buf, 2, 1, n, host, copy_value);
    rel_mem(&buf[0]);
    rel_mem(&buf[1]);

    n = triad_bytes / 4;
    for (int i = 0; i < 3; i++) {
        if (!(buf[i] = make_buffer(b, CL_MEM_READ_WRITE, triad_bytes, NULL))) goto fail;
    }
    fill_host(host, n, triad_b);
    TRY(b, clEnqueueWriteBuffer(b->q, buf[1], CL_TRUE, 0, triad_bytes, host, 0, NULL, NULL));
    fill_host(host, n, triad_c);
    TRY(b, clEnqueueWriteBuffer(b->q, buf[2], CL_TRUE, 0, triad_bytes, host, 0, NULL, NULL));
    stream_one(b, prog, "triad_float", 1, buf, 3, 0, n, host, triad_a);
    stream_one(b, prog, "triad_float4", 4, buf, 3, 0, n, host, triad_a);
fail:
    for (int i = 0; i < 3; i++) rel_mem(&buf[i]);
    rel_program(&prog);
    free(host);
}

/* ---- local memory ----
 * Words [0, 1024) of `buf` are a read-only table (value: index & 15); each work-item owns four
 * accumulators at 1024 + lid + s * LWG. Each iteration reads three table words and one
 * accumulator and writes the accumulator back: 16 bytes read, 4 written, all exact in float. */
static const char *local_src =
    "kernel void local_rw(global float *out, int iters)\n"
    "{\n"
    "    local float buf[2048];\n"
    "    int lid = get_local_id(0);\n"
    "    for (int k = lid; k < 2048; k += LWG) buf[k] = (float)(k & 15);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    int acc = 1024 + lid;\n"
    "    for (int i = 0; i < iters; i++) {\n"
    "        int r = (lid + i) & 1023;\n"
    "        buf[acc + (i & 3) * LWG] += buf[r] + buf[(r + 256) & 1023] + buf[(r + 512) & 1023];\n"
    "    }\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[get_global_id(0)] = buf[acc] + buf[acc + LWG] + buf[acc + 2 * LWG] + buf[acc + 3 * LWG];\n"
    "}\n";

static double local_expected(int lid, int wg, int iters)
{
    double v = 0;
    for (int s = 0; s < 4; s++) v += (1024 + lid + s * wg) & 15;
    long cycles = iters / 16;
    v += 3.0 * 120 * cycles;
    for (int i = 0; i < iters % 16; i++) v += 3 * ((lid + i) & 15);
    return v;
}

void group_local(bench *b)
{
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem out = NULL;
    float *host = NULL;
    size_t wg = b->max_wg < 256 ? b->max_wg : 256;
    while (wg & (wg - 1)) wg &= wg - 1;   /* a power of two, at most 256 */
    char opts[64];
    snprintf(opts, sizeof opts, "-DLWG=%zu", wg);
    if (!(prog = build_program(b, local_src, opts))) goto fail;
    if (!(k = make_kernel(b, prog, "local_rw"))) goto fail;
    if (pick_wg(b, k, wg) < wg) {
        fail(b, "CL_KERNEL_WORK_GROUP_SIZE of local_rw is below %zu", wg);
        goto fail;
    }
    size_t groups = fill_groups(b);
    size_t global = groups * wg;
    if (!(out = make_buffer(b, CL_MEM_READ_WRITE, global * 4, NULL))) goto fail;
    TRY(b, clSetKernelArg(k, 0, sizeof out, &out));
    /* The accumulators stay below 2^24 (exact in float) up to 2^18 iterations. */
    int iters = calibrate_iters(b, k, 1, global, wg, 64, 1 << 18);
    if (iters < 0) goto fail;
    double wall, best = best_of(b, k, 1, &global, &wg, b->opt.runs, &wall);
    if (best < 0) goto fail;
    host = xmalloc(global * 4);
    TRY(b, clEnqueueReadBuffer(b->q, out, CL_TRUE, 0, global * 4, host, 0, NULL, NULL));
    for (size_t i = 0; i < global; i++) {
        double want = local_expected((int)(i % wg), (int)wg, iters);
        if (host[i] != want) {
            fail(b, "wrong result: local_rw out[%zu] = %.9g, expected %.9g (iters %d)", i, host[i], want,
                 iters);
            goto fail;
        }
    }
    double bytes = (double)global * iters * 20;
    report(b, "local_mem", "GB/s", bytes / best * 1e-6, "time_ms=%.4g iters=%d work_items=%zu", best, iters,
           global);
fail:
    free(host);
    rel_mem(&out);
    rel_kernel(&k);
    rel_program(&prog);
}
