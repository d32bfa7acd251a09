/* Compute throughput: chains of multiply-add in float, float4, double, half and int.
 *
 * Every work-item runs 8 independent chains x = x * a + b (mad() for the floating types), with a
 * and b kernel arguments, 2 * iters + 1 steps each. With a = 1, b = 1 a chain counts its steps
 * (exact: the values stay below 2^20); half, which cannot count that far, uses a = -1, b = 1,
 * x -> 1 - x, where the odd step count makes the result 1 - x0. The host checks every chain. */
#include "clbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

typedef struct {
    const char *name;
    const char *unit;
    const char *type, *scalar;
    int lanes;
    const char *lane_offsets;   /* added to the initial value, lane i gets i */
    const char *step;           /* one step of the chain on x */
    const char *to_float;       /* the chain's value as a float, lanes summed */
    int needs;                  /* 1: fp64, 2: fp16, 3: cl_khr_integer_dot_product */
    float a, b;
    int ops_per_step;           /* 0: 2 (a multiply and an add) */
} mad_type;

static const mad_type TYPES[] = {
    {"mad_float", "GFLOP/s", "float", "float", 1, "0.0f", "mad(x, a, b)", "(x)", 0, 1, 1},
    {"mad_float4", "GFLOP/s", "float4", "float", 4, "(float4)(0.0f, 1.0f, 2.0f, 3.0f)", "mad(x, a, b)",
     "((x).s0 + (x).s1 + (x).s2 + (x).s3)", 0, 1, 1},
    {"mad_double", "GFLOP/s", "double", "double", 1, "0.0", "mad(x, a, b)", "(float)(x)", 1, 1, 1},
    {"mad_half", "GFLOP/s", "half", "half", 1, "(half)0", "mad(x, a, b)", "(float)(x)", 2, -1, 1},
    {"mad_int", "GOP/s", "int", "int", 1, "0", "(x * a + b)", "(float)(x)", 0, 1, 1},
    /* 8-bit dot products (4 multiplies, 4 adds) on the chain's own low byte: with a = 1 the dot
     * is that byte, and adding the other bytes and b = 1 makes x + 1, so the chain counts. */
    {"dot_int8", "GOP/s", "uint", "uint", 1, "0u", "(dot(as_uchar4(x), as_uchar4(a)) + (x & 0xFFFFFF00u) + b)",
     "(float)(x)", 3, 1, 1, 8},
};

static const char *mad_template =
    "%s\n"
    "#define T %s\n"
    "#define S %s\n"
    "#define STEP(x) x = %s\n"
    "#define OUT(x) %s\n"
    "kernel void mad_chain(global float *out, float af, float bf, int iters)\n"
    "{\n"
    "    T a = (T)((S)af), b = (T)((S)bf);\n"
    "    T x0 = (T)((S)(get_local_id(0) & 7)) + %s;\n"
    "    T x1 = x0 + (T)((S)1), x2 = x0 + (T)((S)2), x3 = x0 + (T)((S)3);\n"
    "    T x4 = x0 + (T)((S)4), x5 = x0 + (T)((S)5), x6 = x0 + (T)((S)6), x7 = x0 + (T)((S)7);\n"
    "    for (int i = 0; i < iters; i++) {\n"
    "        STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5); STEP(x6); STEP(x7);\n"
    "        STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5); STEP(x6); STEP(x7);\n"
    "    }\n"
    "    STEP(x0); STEP(x1); STEP(x2); STEP(x3); STEP(x4); STEP(x5); STEP(x6); STEP(x7);\n"
    "    size_t o = get_global_id(0) * 8;\n"
    "    out[o] = OUT(x0); out[o + 1] = OUT(x1); out[o + 2] = OUT(x2); out[o + 3] = OUT(x3);\n"
    "    out[o + 4] = OUT(x4); out[o + 5] = OUT(x5); out[o + 6] = OUT(x6); out[o + 7] = OUT(x7);\n"
    "}\n";

static double chain_expected(const mad_type *t, size_t gid, size_t wg, int k, long steps)
{
    double v = 0;
    for (int l = 0; l < t->lanes; l++) {
        double x0 = (double)(((gid % wg) & 7) + k + l);
        v += t->a == 1 ? x0 + steps : 1 - x0;
    }
    return v;
}

static void mad_one(bench *b, const mad_type *t)
{
    cl_program prog = NULL;
    cl_kernel k = NULL;
    cl_mem out = NULL;
    float *host = NULL;
    if ((t->needs == 1 && !b->fp64) || (t->needs == 2 && !b->fp16) || (t->needs == 3 && !b->int_dot)) {
        report_skip(t->name, t->needs == 1   ? "the device lacks cl_khr_fp64"
                             : t->needs == 2 ? "the device lacks cl_khr_fp16"
                                             : "the device lacks cl_khr_integer_dot_product");
        return;
    }
    const char *pragma = t->needs == 1 ? "#pragma OPENCL EXTENSION cl_khr_fp64 : enable"
                         : t->needs == 2 ? "#pragma OPENCL EXTENSION cl_khr_fp16 : enable"
                                         : "";
    char src[4096];
    snprintf(src, sizeof src, mad_template, pragma, t->type, t->scalar, t->step, t->to_float, t->lane_offsets);
    if (!(prog = build_program(b, src, NULL))) goto fail;
    if (!(k = make_kernel(b, prog, "mad_chain"))) goto fail;
    size_t wg = pick_wg(b, k, 256);
    size_t groups = fill_groups(b);
    size_t global = groups * wg;
    size_t out_bytes = global * 8 * sizeof(float);
    if (!(out = make_buffer(b, CL_MEM_READ_WRITE, out_bytes, NULL))) goto fail;
    TRY(b, clSetKernelArg(k, 0, sizeof out, &out));
    TRY(b, clSetKernelArg(k, 1, sizeof t->a, &t->a));
    TRY(b, clSetKernelArg(k, 2, sizeof t->b, &t->b));
    /* At most 2^19 - 1 steps: the counting chains stay exact in float. */
    int iters = calibrate_iters(b, k, 3, global, wg, 16, (1 << 18) - 1);
    if (iters < 0) goto fail;
    float sentinel = -12345.0f;
    TRY(b, clEnqueueFillBuffer(b->q, out, &sentinel, sizeof sentinel, 0, out_bytes, 0, NULL, NULL));
    double wall, best = best_of(b, k, 1, &global, &wg, b->opt.runs, &wall);
    if (best < 0) goto fail;
    host = xmalloc(out_bytes);
    TRY(b, clEnqueueReadBuffer(b->q, out, CL_TRUE, 0, out_bytes, host, 0, NULL, NULL));
    long steps = 2L * iters + 1;
    for (size_t i = 0; i < global * 8; i++) {
        double want = chain_expected(t, i / 8, wg, (int)(i % 8), steps);
        if (host[i] != want) {
            fail(b, "wrong result: %s out[%zu] = %.9g, expected %.9g (steps %ld)", t->name, i, host[i], want,
                 steps);
            goto fail;
        }
    }
    double ops = (double)global * 8 * t->lanes * steps * (t->ops_per_step ? t->ops_per_step : 2);
    report(b, t->name, t->unit, ops / best * 1e-6, "time_ms=%.4g steps=%ld work_items=%zu", best, steps,
           global);
    goto done;
fail:
    report_fail(b, t->name, t->unit);
done:
    free(host);
    rel_mem(&out);
    rel_kernel(&k);
    rel_program(&prog);
}

void group_compute(bench *b)
{
    for (size_t i = 0; i < sizeof TYPES / sizeof TYPES[0]; i++) mad_one(b, &TYPES[i]);
}
