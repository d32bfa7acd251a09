/* Kernel launch latency (dispatch rate and round trip) and many small non-blocking writes. */
#include "clbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* Nearly empty: one work-item counts its launches, so the host can check that all of them ran. */
static const char *tick_src =
    "kernel void tick(global int *count)\n"
    "{\n"
    "    if (get_global_id(0) == 0) count[0] += 1;\n"
    "}\n";

static int read_count(bench *b, cl_mem counter, int *value)
{
    TRY(b, clEnqueueReadBuffer(b->q, counter, CL_TRUE, 0, sizeof *value, value, 0, NULL, NULL));
    return 0;
fail:
    return -1;
}

/* Best time per launch over `runs` runs of n launches (a clFinish after each when `finish_each`,
 * else one at the end), checked against the counter and reported; 0 on success. */
static int time_launches(bench *b, cl_kernel k, cl_mem counter, int n, int runs, int finish_each, int *launched,
                         const char *name, const char *what)
{
    size_t one = 1;
    int count = 0;
    double best = 1e30;
    for (int r = 0; r < runs; r++) {
        double t0 = now_s();
        for (int i = 0; i < n; i++, (*launched)++) {
            TRY(b, clEnqueueNDRangeKernel(b->q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
            if (finish_each) TRY(b, clFinish(b->q));
        }
        if (!finish_each) TRY(b, clFinish(b->q));
        double us = (now_s() - t0) * 1e6 / n;
        if (us < best) best = us;
    }
    if (read_count(b, counter, &count)) return -1;
    if (count != *launched) {
        fail(b, "wrong result: the counter kernel ran %d times, %d launches were enqueued", count, *launched);
        return -1;
    }
    report(b, name, "us", best, "%s=%d", what, n);
    return 0;
fail:
    return -1;
}

void group_latency(bench *b)
{
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem counter = NULL;
    int zero = 0, launched = 0;
    size_t one = 1;
    if (!(prog = build_program(b, tick_src, NULL))) goto fail;
    if (!(k = make_kernel(b, prog, "tick"))) goto fail;
    if (!(counter = make_buffer(b, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof zero, &zero))) goto fail;
    TRY(b, clSetKernelArg(k, 0, sizeof counter, &counter));
    for (int i = 0; i < 100; i++, launched++) {   /* warm-up */
        TRY(b, clEnqueueNDRangeKernel(b->q, k, 1, NULL, &one, NULL, 0, NULL, NULL));
    }
    TRY(b, clFinish(b->q));

    int runs = b->opt.runs < 3 ? b->opt.runs : 3;
    /* dispatch: back-to-back enqueues, one clFinish */
    if (time_launches(b, k, counter, b->opt.dispatch_n, runs, 0, &launched, "launch_dispatch", "kernels")) goto fail;
    /* round trip: enqueue + clFinish, one at a time */
    time_launches(b, k, counter, b->opt.roundtrip_n, runs, 1, &launched, "launch_roundtrip", "iterations");
fail:
    rel_mem(&counter);
    rel_kernel(&k);
    rel_program(&prog);
}

void group_small_writes(bench *b)
{
    int n = b->opt.small_n, sz = b->opt.small_bytes;
    size_t total = (size_t)n * sz;
    cl_mem dev = NULL;
    unsigned char *src = xmalloc(total), *back = xmalloc(total);
    if (!(dev = make_buffer(b, CL_MEM_READ_WRITE, total, NULL))) goto fail;
    int runs = b->opt.runs < 3 ? b->opt.runs : 3;
    double best = 1e30;
    for (int r = -1; r < runs; r++) {   /* r = -1: warm-up */
        for (size_t i = 0; i < total; i++) src[i] = (unsigned char)(i * 131 + i / 251 + r * 7);
        double t0 = now_s();
        for (int i = 0; i < n; i++) {
            TRY(b, clEnqueueWriteBuffer(b->q, dev, CL_FALSE, (size_t)i * sz, sz, src + (size_t)i * sz, 0, NULL,
                                        NULL));
        }
        TRY(b, clFinish(b->q));
        double ms = (now_s() - t0) * 1e3;
        if (r >= 0 && ms < best) best = ms;
        memset(back, 0, total);
        TRY(b, clEnqueueReadBuffer(b->q, dev, CL_TRUE, 0, total, back, 0, NULL, NULL));
        for (size_t i = 0; i < total; i++) {
            if (back[i] != src[i]) {
                fail(b, "wrong result: byte %zu (write %zu) is %d after the small writes, expected %d", i,
                     i / sz, back[i], src[i]);
                goto fail;
            }
        }
    }
    report(b, "small_writes", "ms", best, "writes=%d bytes_each=%d us_per_write=%.4g", n, sz, best * 1e3 / n);
fail:
    rel_mem(&dev);
    free(src);
    free(back);
}
