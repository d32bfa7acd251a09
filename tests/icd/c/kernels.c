/* Real kernels through the ICD loader, every result checked on the host: vector add, saxpy
 * (float, double), reductions and scans in local memory, tiled SGEMM, atomics, n-body, Mandelbrot,
 * a stencil with a global offset, struct arguments, printf, 3-D and huge grids, non-uniform
 * work-groups, clEnqueueTask, arguments captured at enqueue, many arguments; then the errors of
 * clEnqueueNDRangeKernel and empty NDRanges.
 * Usage: kernels SECTION; each section is one pytest test (test_kernels_c.py). */
#include "harness.h"
#include <math.h>
#include <stdint.h>

static cl_device_id device;
static cl_context ctx;
static cl_command_queue queue;

/* --- helpers ------------------------------------------------------------------------------- */

static cl_program build_in(cl_context c, const char *src, const char *options)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(c, 1, &src, NULL, &err);
    REQUIRE_OK(err);
    cl_int rc = clBuildProgram(p, 1, &device, options, NULL, NULL);
    if (rc != CL_SUCCESS) {
        char log[16384] = {0};
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        printf("FAIL clBuildProgram (%s): %d\n%s\n", options ? options : "", rc, log);
        exit(1);
    }
    return p;
}

static cl_program build(const char *src, const char *options)
{
    return build_in(ctx, src, options);
}

static cl_kernel kernel(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    if (err != CL_SUCCESS) {
        printf("FAIL clCreateKernel(%s): %d\n", name, err);
        exit(1);
    }
    return k;
}

static cl_mem buffer(size_t size, const void *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE | (host ? CL_MEM_COPY_HOST_PTR : 0), size, (void *)host, &err);
    REQUIRE_OK(err);
    return m;
}

/* a buffer whose every byte is `byte` */
static cl_mem filled(size_t size, unsigned char byte)
{
    cl_mem m = buffer(size, NULL);
    REQUIRE_OK(clEnqueueFillBuffer(queue, m, &byte, 1, 0, size, 0, NULL, NULL));
    return m;
}

static void read_back(cl_mem m, size_t size, void *dst)
{
    REQUIRE_OK(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, size, dst, 0, NULL, NULL));
}

#define ARG(k, i, v) REQUIRE_OK(clSetKernelArg((k), (i), sizeof(v), &(v)))

static void run(cl_kernel k, cl_uint dims, const size_t *offset, const size_t *global, const size_t *local)
{
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, k, dims, offset, global, local, 0, NULL, NULL));
    REQUIRE_OK(clFinish(queue));
}

static uint32_t rng_state = 12345;
static uint32_t rnd(void) /* xorshift32 */
{
    rng_state ^= rng_state << 13;
    rng_state ^= rng_state >> 17;
    rng_state ^= rng_state << 5;
    return rng_state;
}

static float rnd_float(void) /* in [-1, 1) */
{
    return (float)((double)(rnd() >> 8) / (1 << 23) - 1.0);
}

static cl_ulong device_ulong(cl_device_info param)
{
    cl_ulong v = 0;
    REQUIRE_OK(clGetDeviceInfo(device, param, sizeof v, &v, NULL));
    return v;
}

static size_t device_size(cl_device_info param)
{
    size_t v = 0;
    REQUIRE_OK(clGetDeviceInfo(device, param, sizeof v, &v, NULL));
    return v;
}

static int has_extension(const char *name)
{
    char ext[8192] = {0};
    REQUIRE_OK(clGetDeviceInfo(device, CL_DEVICE_EXTENSIONS, sizeof ext - 1, ext, NULL));
    size_t n = strlen(name);
    for (const char *p = ext; (p = strstr(p, name)) != NULL; p += n)
        if ((p == ext || p[-1] == ' ') && (p[n] == ' ' || p[n] == 0))
            return 1;
    return 0;
}

/* --- vector add, saxpy ----------------------------------------------------------------------- */

static const char *SRC_BASIC =
    "kernel void vadd(global const float *a, global const float *b, global float *c, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        c[i] = a[i] + b[i];\n"
    "}\n"
    "kernel void saxpy(float a, global const float *x, global float *y)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

static void test_vector_add(void)
{
    enum { N = 100003 };
    float *a = malloc(N * sizeof(float)), *b = malloc(N * sizeof(float)), *c = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        a[i] = rnd_float() * 1000.0f;
        b[i] = rnd_float();
    }
    cl_program p = build(SRC_BASIC, NULL);
    cl_kernel k = kernel(p, "vadd");
    cl_mem ma = buffer(N * sizeof(float), a), mb = buffer(N * sizeof(float), b), mc = filled(N * sizeof(float), 0);
    cl_uint n = N;
    ARG(k, 0, ma);
    ARG(k, 1, mb);
    ARG(k, 2, mc);
    ARG(k, 3, n);
    size_t global = (N + 63) / 64 * 64, local = 64;
    run(k, 1, NULL, &global, &local);
    read_back(mc, N * sizeof(float), c);
    int bad = 0;
    for (int i = 0; i < N; i++)
        if (c[i] != a[i] + b[i] && bad++ < 5) /* IEEE addition is correctly rounded on both sides */
            EXPECT(0, "c[%d] = %.9g, expected %.9g", i, c[i], a[i] + b[i]);
    EXPECT(bad == 0, "%d wrong sums", bad);
    clReleaseMemObject(ma);
    clReleaseMemObject(mb);
    clReleaseMemObject(mc);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(a);
    free(b);
    free(c);
}

static const char *SRC_DAXPY =
    "#pragma OPENCL EXTENSION cl_khr_fp64 : enable\n"
    "kernel void daxpy(double a, global const double *x, global double *y)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

static void test_saxpy(void)
{
    enum { N = 65536 };
    float *x = malloc(N * sizeof(float)), *y = malloc(N * sizeof(float)), *r = malloc(N * sizeof(float));
    for (int i = 0; i < N; i++) {
        x[i] = rnd_float() * 100.0f;
        y[i] = rnd_float() * 100.0f;
    }
    cl_program p = build(SRC_BASIC, NULL);
    cl_kernel k = kernel(p, "saxpy");
    cl_mem mx = buffer(N * sizeof(float), x), my = buffer(N * sizeof(float), y);
    cl_float a = 2.71828f;
    ARG(k, 0, a);
    ARG(k, 1, mx);
    ARG(k, 2, my);
    size_t global = N;
    run(k, 1, NULL, &global, NULL);
    read_back(my, N * sizeof(float), r);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double want = (double)a * x[i] + y[i];
        double tol = 2.5e-7 * (fabs((double)a * x[i]) + fabs(y[i])) + 1e-30; /* about 2 ulp of the terms */
        if (fabs(r[i] - want) > tol && bad++ < 5)
            EXPECT(0, "saxpy y[%d] = %.9g, expected %.9g", i, r[i], want);
    }
    EXPECT(bad == 0, "%d wrong float results", bad);
    clReleaseMemObject(mx);
    clReleaseMemObject(my);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(x);
    free(y);
    free(r);

    if (!has_extension("cl_khr_fp64")) {
        printf("cl_khr_fp64 not supported: daxpy skipped\n");
        return;
    }
    double *dx = malloc(N * sizeof(double)), *dy = malloc(N * sizeof(double)), *dr = malloc(N * sizeof(double));
    for (int i = 0; i < N; i++) {
        dx[i] = rnd_float() * 1e6 + rnd_float() * 1e-3; /* needs more than float precision */
        dy[i] = rnd_float() * 1e6 + rnd_float() * 1e-3;
    }
    p = build(SRC_DAXPY, NULL);
    k = kernel(p, "daxpy");
    mx = buffer(N * sizeof(double), dx);
    my = buffer(N * sizeof(double), dy);
    cl_double da = 1.000000123456789;
    ARG(k, 0, da);
    ARG(k, 1, mx);
    ARG(k, 2, my);
    run(k, 1, NULL, &global, NULL);
    read_back(my, N * sizeof(double), dr);
    bad = 0;
    for (int i = 0; i < N; i++) {
        double want = da * dx[i] + dy[i];
        double tol = 5e-16 * (fabs(da * dx[i]) + fabs(dy[i]));
        if (fabs(dr[i] - want) > tol && bad++ < 5)
            EXPECT(0, "daxpy y[%d] = %.17g, expected %.17g", i, dr[i], want);
    }
    EXPECT(bad == 0, "%d wrong double results", bad);
    clReleaseMemObject(mx);
    clReleaseMemObject(my);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(dx);
    free(dy);
    free(dr);
}

/* --- reduction and scan in local memory ---------------------------------------------------- */

static const char *SRC_REDUCE =
    "kernel void reduce(global const int *in, global int *partial, local int *scratch, uint n)\n"
    "{\n"
    "    uint lid = get_local_id(0);\n"
    "    size_t gid = get_global_id(0);\n"
    "    scratch[lid] = gid < n ? in[gid] : 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "        if (lid < s)\n"
    "            scratch[lid] += scratch[lid + s];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (lid == 0)\n"
    "        partial[get_group_id(0)] = scratch[0];\n"
    "}\n"
    /* a float reduction with two local arguments: sum and max of |x| */
    "kernel void sum_max(global const float *in, global float2 *partial, local float *sums, local float *maxs)\n"
    "{\n"
    "    uint lid = get_local_id(0);\n"
    "    float v = in[get_global_id(0)];\n"
    "    sums[lid] = v;\n"
    "    maxs[lid] = fabs(v);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint s = get_local_size(0) / 2; s > 0; s >>= 1) {\n"
    "        if (lid < s) {\n"
    "            sums[lid] += sums[lid + s];\n"
    "            maxs[lid] = fmax(maxs[lid], maxs[lid + s]);\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (lid == 0)\n"
    "        partial[get_group_id(0)] = (float2)(sums[0], maxs[0]);\n"
    "}\n";

static void test_reduction(void)
{
    enum { N = 250000 };
    int *in = malloc(N * sizeof(int));
    for (int i = 0; i < N; i++)
        in[i] = (int)(rnd() % 2001) - 1000;
    cl_program p = build(SRC_REDUCE, NULL);
    cl_kernel k = kernel(p, "reduce");
    cl_mem min = buffer(N * sizeof(int), in);
    size_t locals[] = {256, 64, 1024};
    for (int t = 0; t < 3; t++) {
        size_t local = locals[t], groups = (N + local - 1) / local, global = groups * local;
        int *partial = malloc(groups * sizeof(int));
        cl_mem mp = filled(groups * sizeof(int), 0xff);
        cl_uint n = N;
        ARG(k, 0, min);
        ARG(k, 1, mp);
        REQUIRE_OK(clSetKernelArg(k, 2, local * sizeof(int), NULL));
        ARG(k, 3, n);
        run(k, 1, NULL, &global, &local);
        read_back(mp, groups * sizeof(int), partial);
        long long total = 0, want_total = 0;
        int bad = 0;
        for (size_t g = 0; g < groups; g++) {
            int want = 0;
            for (size_t i = g * local; i < (g + 1) * local && i < N; i++)
                want += in[i];
            if (partial[g] != want && bad++ < 5)
                EXPECT(0, "local %zu: partial[%zu] = %d, expected %d", local, g, partial[g], want);
            total += partial[g];
        }
        for (int i = 0; i < N; i++)
            want_total += in[i];
        EXPECT(bad == 0 && total == want_total, "local %zu: %d wrong partial sums, total %lld, expected %lld",
               local, bad, total, want_total);
        clReleaseMemObject(mp);
        free(partial);
    }
    clReleaseMemObject(min);
    clReleaseKernel(k);

    /* float sums and maxima with two __local arguments of different sizes */
    enum { M = 128 * 512 };
    float *f = malloc(M * sizeof(float));
    for (int i = 0; i < M; i++)
        f[i] = rnd_float() * 10.0f;
    k = kernel(p, "sum_max");
    cl_mem mf = buffer(M * sizeof(float), f);
    size_t local = 128, global = M, groups = M / 128;
    cl_mem mp = filled(groups * 2 * sizeof(float), 0);
    ARG(k, 0, mf);
    ARG(k, 1, mp);
    REQUIRE_OK(clSetKernelArg(k, 2, local * sizeof(float), NULL));
    REQUIRE_OK(clSetKernelArg(k, 3, local * sizeof(float) + 64, NULL)); /* larger than needed is fine */
    run(k, 1, NULL, &global, &local);
    float *res = malloc(groups * 2 * sizeof(float));
    read_back(mp, groups * 2 * sizeof(float), res);
    int bad = 0;
    for (size_t g = 0; g < groups; g++) {
        double sum = 0, abs_sum = 0;
        float mx = 0;
        for (size_t i = g * local; i < (g + 1) * local; i++) {
            sum += f[i];
            abs_sum += fabs(f[i]);
            mx = fabsf(f[i]) > mx ? fabsf(f[i]) : mx;
        }
        if ((fabs(res[2 * g] - sum) > 1e-6 * abs_sum || res[2 * g + 1] != mx) && bad++ < 5)
            EXPECT(0, "group %zu: sum %.9g max %.9g, expected %.9g %.9g", g, res[2 * g], res[2 * g + 1], sum, mx);
    }
    EXPECT(bad == 0, "%d wrong float groups", bad);
    clReleaseMemObject(mf);
    clReleaseMemObject(mp);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(f);
    free(res);
    free(in);
}

static const char *SRC_SCAN =
    /* inclusive Hillis-Steele scan of each work-group; the group's total goes to sums */
    "kernel void scan_block(global const uint *in, global uint *out, global uint *sums, local uint *tmp, uint n)\n"
    "{\n"
    "    uint lid = get_local_id(0), ls = get_local_size(0);\n"
    "    size_t gid = get_global_id(0);\n"
    "    tmp[lid] = gid < n ? in[gid] : 0;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (uint off = 1; off < ls; off <<= 1) {\n"
    "        uint add = lid >= off ? tmp[lid - off] : 0;\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        tmp[lid] += add;\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    if (gid < n)\n"
    "        out[gid] = tmp[lid];\n"
    "    if (lid == ls - 1)\n"
    "        sums[get_group_id(0)] = tmp[lid];\n"
    "}\n"
    "kernel void add_base(global uint *out, global const uint *scanned_sums, uint n)\n"
    "{\n"
    "    size_t gid = get_global_id(0), g = get_group_id(0);\n"
    "    if (g > 0 && gid < n)\n"
    "        out[gid] += scanned_sums[g - 1];\n"
    "}\n";

static void test_scan(void)
{
    enum { N = 60001, L = 256 };
    size_t groups = (N + L - 1) / L, global = groups * L, local = L; /* 235 groups: one group scans them */
    cl_uint *in = malloc(N * sizeof(cl_uint)), *out = malloc(N * sizeof(cl_uint));
    for (int i = 0; i < N; i++)
        in[i] = rnd() % 100000;
    cl_program p = build(SRC_SCAN, NULL);
    cl_kernel scan = kernel(p, "scan_block"), add = kernel(p, "add_base");
    cl_mem min = buffer(N * sizeof(cl_uint), in), mout = filled(N * sizeof(cl_uint), 0);
    cl_mem sums = filled(L * sizeof(cl_uint), 0), sums_scanned = filled(L * sizeof(cl_uint), 0);
    cl_mem total = filled(sizeof(cl_uint), 0);
    cl_uint n = N, ng = (cl_uint)groups;
    /* pass 1: each block */
    ARG(scan, 0, min);
    ARG(scan, 1, mout);
    ARG(scan, 2, sums);
    REQUIRE_OK(clSetKernelArg(scan, 3, L * sizeof(cl_uint), NULL));
    ARG(scan, 4, n);
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, scan, 1, NULL, &global, &local, 0, NULL, NULL));
    /* pass 2: the block sums, in one work-group */
    ARG(scan, 0, sums);
    ARG(scan, 1, sums_scanned);
    ARG(scan, 2, total);
    ARG(scan, 4, ng);
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, scan, 1, NULL, &local, &local, 0, NULL, NULL));
    /* pass 3: add each block's base */
    ARG(add, 0, mout);
    ARG(add, 1, sums_scanned);
    ARG(add, 2, n);
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, add, 1, NULL, &global, &local, 0, NULL, NULL));
    REQUIRE_OK(clFinish(queue));
    read_back(mout, N * sizeof(cl_uint), out);
    cl_uint acc = 0, tot = 0;
    int bad = 0;
    for (int i = 0; i < N; i++) {
        acc += in[i];
        if (out[i] != acc && bad++ < 5)
            EXPECT(0, "scan[%d] = %u, expected %u", i, out[i], acc);
    }
    EXPECT(bad == 0, "%d wrong prefix sums", bad);
    read_back(total, sizeof tot, &tot);
    EXPECT(tot == acc, "total %u, expected %u", tot, acc);
    clReleaseMemObject(min);
    clReleaseMemObject(mout);
    clReleaseMemObject(sums);
    clReleaseMemObject(sums_scanned);
    clReleaseMemObject(total);
    clReleaseKernel(scan);
    clReleaseKernel(add);
    clReleaseProgram(p);
    free(in);
    free(out);
}

/* --- SGEMM ------------------------------------------------------------------------------------ */

static const char *SRC_SGEMM =
    "#define TS 16\n"
    "kernel void sgemm_tile2d(int M, int N, int K, global const float *A, global const float *B, global float *C)\n"
    "{\n"
    "    local float As[TS][TS];\n"
    "    local float Bs[TS][TS];\n"
    "    int r = get_local_id(1), c = get_local_id(0);\n"
    "    int row = get_global_id(1), col = get_global_id(0);\n"
    "    float acc = 0.0f;\n"
    "    for (int t = 0; t < K / TS; t++) {\n"
    "        As[r][c] = A[row * K + t * TS + c];\n"
    "        Bs[r][c] = B[(t * TS + r) * N + col];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < TS; k++)\n"
    "            acc += As[r][k] * Bs[k][c];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    C[row * N + col] = acc;\n"
    "}\n"
    "kernel void sgemm_flat(int M, int N, int K, global const float *A, global const float *B, global float *C)\n"
    "{\n"
    "    local float As[TS * TS];\n"
    "    local float Bs[TS * TS];\n"
    "    int r = get_local_id(1), c = get_local_id(0);\n"
    "    int row = get_global_id(1), col = get_global_id(0);\n"
    "    float acc = 0.0f;\n"
    "    for (int t = 0; t < K / TS; t++) {\n"
    "        As[r * TS + c] = A[row * K + t * TS + c];\n"
    "        Bs[r * TS + c] = B[(t * TS + r) * N + col];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int k = 0; k < TS; k++)\n"
    "            acc = mad(As[r * TS + k], Bs[k * TS + c], acc);\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    C[row * N + col] = acc;\n"
    "}\n";

static void test_sgemm(void)
{
    /* C[M][N] = A[M][K] B[K][N]; not square, so swapped indices show */
    enum { M = 256, N = 192, K = 224 };
    float *A = malloc(M * K * sizeof(float)), *B = malloc(K * N * sizeof(float)), *C = malloc(M * N * sizeof(float));
    double *want = malloc(M * N * sizeof(double)), *scale = malloc(M * N * sizeof(double));
    for (int i = 0; i < M * K; i++)
        A[i] = rnd_float();
    for (int i = 0; i < K * N; i++)
        B[i] = rnd_float();
    for (int i = 0; i < M; i++)
        for (int j = 0; j < N; j++) {
            double s = 0, a = 0;
            for (int k = 0; k < K; k++) {
                s += (double)A[i * K + k] * B[k * N + j];
                a += fabs((double)A[i * K + k] * B[k * N + j]);
            }
            want[i * N + j] = s;
            scale[i * N + j] = a;
        }
    cl_program p = build(SRC_SGEMM, NULL);
    const char *names[] = {"sgemm_tile2d", "sgemm_flat"};
    cl_mem mA = buffer(M * K * sizeof(float), A), mB = buffer(K * N * sizeof(float), B);
    for (int t = 0; t < 2; t++) {
        cl_kernel k = kernel(p, names[t]);
        cl_mem mC = filled(M * N * sizeof(float), 0xff); /* NaNs */
        cl_int m = M, n = N, kk = K;
        ARG(k, 0, m);
        ARG(k, 1, n);
        ARG(k, 2, kk);
        ARG(k, 3, mA);
        ARG(k, 4, mB);
        ARG(k, 5, mC);
        size_t global[2] = {N, M}, local[2] = {16, 16};
        run(k, 2, NULL, global, local);
        read_back(mC, M * N * sizeof(float), C);
        int bad = 0;
        for (int i = 0; i < M * N; i++) {
            double tol = 1e-5 * scale[i] + 1e-6; /* K * 2^-24 relative to the sum of |terms| is ~1.3e-5 */
            if (!(fabs(C[i] - want[i]) <= tol) && bad++ < 5)
                EXPECT(0, "%s: C[%d][%d] = %.9g, expected %.9g", names[t], i / N, i % N, C[i], want[i]);
        }
        EXPECT(bad == 0, "%s: %d wrong elements", names[t], bad);
        clReleaseMemObject(mC);
        clReleaseKernel(k);
    }
    clReleaseMemObject(mA);
    clReleaseMemObject(mB);
    clReleaseProgram(p);
    free(A);
    free(B);
    free(C);
    free(want);
    free(scale);
}

/* --- histogram with global atomics ---------------------------------------------------------- */

static const char *SRC_HIST =
    "kernel void hist(global const uchar *data, global uint *bins, uint n)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    if (i < n)\n"
    "        atomic_inc(&bins[data[i]]);\n"
    "}\n"
    /* every work-item takes a ticket: the old values must be 0..n-1, each once */
    "kernel void tickets(volatile global uint *counter, global uint *got)\n"
    "{\n"
    "    got[get_global_id(0)] = atomic_inc(counter);\n"
    "}\n"
    "kernel void minmax(global const int *v, volatile global int *out)\n"
    "{\n"
    "    int x = v[get_global_id(0)];\n"
    "    atomic_min(&out[0], x);\n"
    "    atomic_max(&out[1], x);\n"
    "    atomic_add(&out[2], x);\n"
    "    atomic_xor(&out[3], x);\n"
    "}\n";

static void test_histogram(void)
{
    enum { N = 1 << 20, T = 50000 };
    unsigned char *data = malloc(N);
    cl_uint bins[256], want[256] = {0};
    for (int i = 0; i < N; i++) {
        uint32_t r = rnd() % 256;
        data[i] = (unsigned char)(r * r / 256); /* skewed towards low bins: many collisions */
        want[data[i]]++;
    }
    cl_program p = build(SRC_HIST, NULL);
    cl_kernel k = kernel(p, "hist");
    cl_mem md = buffer(N, data), mb = filled(sizeof bins, 0);
    cl_uint n = N - 5; /* the last 5 are not counted */
    for (int i = N - 5; i < N; i++)
        want[data[i]]--;
    ARG(k, 0, md);
    ARG(k, 1, mb);
    ARG(k, 2, n);
    size_t global = N, local = 128;
    run(k, 1, NULL, &global, &local);
    read_back(mb, sizeof bins, bins);
    int bad = 0;
    for (int b = 0; b < 256; b++)
        if (bins[b] != want[b] && bad++ < 5)
            EXPECT(0, "bin %d = %u, expected %u", b, bins[b], want[b]);
    EXPECT(bad == 0, "%d wrong bins", bad);
    clReleaseKernel(k);
    clReleaseMemObject(md);
    clReleaseMemObject(mb);

    k = kernel(p, "tickets");
    cl_mem counter = filled(sizeof(cl_uint), 0), got = filled(T * sizeof(cl_uint), 0xff);
    ARG(k, 0, counter);
    ARG(k, 1, got);
    global = T;
    run(k, 1, NULL, &global, NULL);
    cl_uint *g = malloc(T * sizeof(cl_uint)), c = 0;
    unsigned char *seen = calloc(T, 1);
    read_back(got, T * sizeof(cl_uint), g);
    read_back(counter, sizeof c, &c);
    EXPECT(c == T, "counter %u, expected %u", c, (unsigned)T);
    bad = 0;
    for (int i = 0; i < T; i++) {
        if (g[i] >= T || seen[g[i]]++)
            bad++;
    }
    EXPECT(bad == 0, "%d tickets out of range or repeated", bad);
    clReleaseKernel(k);
    clReleaseMemObject(counter);
    clReleaseMemObject(got);
    free(g);
    free(seen);

    k = kernel(p, "minmax");
    enum { V = 4099 };
    cl_int v[V], init[4] = {INT32_MAX, INT32_MIN, 0, 0}, res[4], wmin = INT32_MAX, wmax = INT32_MIN, wsum = 0, wxor = 0;
    for (int i = 0; i < V; i++) {
        v[i] = (cl_int)(rnd() % 2000001) - 1000000;
        wmin = v[i] < wmin ? v[i] : wmin;
        wmax = v[i] > wmax ? v[i] : wmax;
        wsum += v[i];
        wxor ^= v[i];
    }
    cl_mem mv = buffer(sizeof v, v), mo = buffer(sizeof init, init);
    ARG(k, 0, mv);
    ARG(k, 1, mo);
    global = V;
    run(k, 1, NULL, &global, NULL);
    read_back(mo, sizeof res, res);
    EXPECT(res[0] == wmin && res[1] == wmax && res[2] == wsum && res[3] == wxor,
           "atomic min/max/add/xor %d %d %d %d, expected %d %d %d %d", res[0], res[1], res[2], res[3], wmin, wmax,
           wsum, wxor);
    clReleaseKernel(k);
    clReleaseMemObject(mv);
    clReleaseMemObject(mo);
    clReleaseProgram(p);
    free(data);
}

/* --- n-body with float4 ----------------------------------------------------------------------- */

static const char *SRC_NBODY =
    "#define TILE 64\n"
    "kernel void accel(global const float4 *pos, global float4 *acc, uint n, float eps2)\n"
    "{\n"
    "    local float4 tile[TILE];\n"
    "    size_t i = get_global_id(0);\n"
    "    float4 p = pos[i];\n"
    "    float4 a = (float4)(0.0f);\n"
    "    for (uint base = 0; base < n; base += TILE) {\n"
    "        tile[get_local_id(0)] = pos[base + get_local_id(0)];\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "        for (int j = 0; j < TILE; j++) {\n"
    "            float4 q = tile[j];\n"
    "            float4 d = (float4)(q.xyz - p.xyz, 0.0f);\n"
    "            float inv = rsqrt(dot(d, d) + eps2);\n"
    "            a += d * (q.w * inv * inv * inv);\n"
    "        }\n"
    "        barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    }\n"
    "    acc[i] = (float4)(a.xyz, p.w);\n"
    "}\n";

static void test_nbody(void)
{
    enum { N = 1024 };
    cl_float4 *pos = malloc(N * sizeof(cl_float4)), *acc = malloc(N * sizeof(cl_float4));
    for (int i = 0; i < N; i++) {
        pos[i].s[0] = rnd_float() * 10;
        pos[i].s[1] = rnd_float() * 10;
        pos[i].s[2] = rnd_float() * 10;
        pos[i].s[3] = 0.5f + (rnd() % 100) / 100.0f; /* mass */
    }
    cl_program p = build(SRC_NBODY, NULL);
    cl_kernel k = kernel(p, "accel");
    cl_mem mp = buffer(N * sizeof(cl_float4), pos), ma = filled(N * sizeof(cl_float4), 0);
    cl_uint n = N;
    cl_float eps2 = 0.01f;
    ARG(k, 0, mp);
    ARG(k, 1, ma);
    ARG(k, 2, n);
    ARG(k, 3, eps2);
    size_t global = N, local = 64;
    run(k, 1, NULL, &global, &local);
    read_back(ma, N * sizeof(cl_float4), acc);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        double a[3] = {0, 0, 0}, mag[3] = {0, 0, 0};
        for (int j = 0; j < N; j++) {
            double d[3], r2 = eps2;
            for (int c = 0; c < 3; c++) {
                d[c] = (double)pos[j].s[c] - pos[i].s[c];
                r2 += d[c] * d[c];
            }
            double f = pos[j].s[3] / (r2 * sqrt(r2));
            for (int c = 0; c < 3; c++) {
                a[c] += d[c] * f;
                mag[c] += fabs(d[c] * f);
            }
        }
        for (int c = 0; c < 3; c++)
            if (!(fabs(acc[i].s[c] - a[c]) <= 2e-5 * mag[c] + 1e-6) && bad++ < 5) /* rsqrt: 2 ulp, cubed */
                EXPECT(0, "body %d axis %d: %.9g, expected %.9g (scale %.3g)", i, c, acc[i].s[c], a[c], mag[c]);
        if (acc[i].s[3] != pos[i].s[3] && bad++ < 5)
            EXPECT(0, "body %d: w %.9g, expected %.9g", i, acc[i].s[3], pos[i].s[3]);
    }
    EXPECT(bad == 0, "%d wrong accelerations", bad);
    clReleaseMemObject(mp);
    clReleaseMemObject(ma);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(pos);
    free(acc);
}

/* --- Mandelbrot -------------------------------------------------------------------------------- */

static const char *SRC_MANDEL =
    "kernel void mandel(global int *out, float x0, float y0, float step, int maxit)\n"
    "{\n"
    "    int px = get_global_id(0), py = get_global_id(1), w = get_global_size(0);\n"
    "    float cr = x0 + px * step, ci = y0 + py * step, zr = 0.0f, zi = 0.0f;\n"
    "    int it = 0;\n"
    "    while (it < maxit && zr * zr + zi * zi <= 4.0f) {\n"
    "        float t = zr * zr - zi * zi + cr;\n"
    "        zi = 2.0f * zr * zi + ci;\n"
    "        zr = t;\n"
    "        it++;\n"
    "    }\n"
    "    out[py * w + px] = it;\n"
    "}\n";

static void test_mandelbrot(void)
{
    enum { W = 384, H = 256, MAXIT = 200 };
    cl_float x0 = -2.25f, y0 = -1.25f, step = 2.5f / H;
    cl_int maxit = MAXIT;
    cl_program p = build(SRC_MANDEL, NULL);
    cl_kernel k = kernel(p, "mandel");
    cl_mem mo = filled(W * H * sizeof(cl_int), 0xff);
    ARG(k, 0, mo);
    ARG(k, 1, x0);
    ARG(k, 2, y0);
    ARG(k, 3, step);
    ARG(k, 4, maxit);
    size_t global[2] = {W, H}, local[2] = {16, 8};
    run(k, 2, NULL, global, local);
    cl_int *out = malloc(W * H * sizeof(cl_int));
    read_back(mo, W * H * sizeof(cl_int), out);
    int mismatch = 0, inside = 0, wild = 0;
    for (int py = 0; py < H; py++)
        for (int px = 0; px < W; px++) {
            float cr = x0 + px * step, ci = y0 + py * step, zr = 0, zi = 0;
            int it = 0;
            while (it < MAXIT && zr * zr + zi * zi <= 4.0f) {
                float t = zr * zr - zi * zi + cr;
                zi = 2.0f * zr * zi + ci;
                zr = t;
                it++;
            }
            int got = out[py * W + px];
            inside += it == MAXIT;
            mismatch += got != it;
            wild += got < 1 || got > MAXIT;
        }
    EXPECT(wild == 0, "%d iteration counts outside [1, %d]", wild, MAXIT);
    EXPECT(mismatch * 100 < W * H, "%d of %d pixels differ from the host (more than 1%%)", mismatch, W * H);
    EXPECT(inside > W * H / 10 && inside < W * H / 2, "%d pixels inside the set", inside);
    printf("mandelbrot: %d of %d pixels differ from the host\n", mismatch, W * H);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(out);
}

/* --- a 2-D stencil with a global work offset ---------------------------------------------------- */

static const char *SRC_STENCIL =
    "kernel void stencil(global const float *in, global float *out, volatile global uint *info)\n"
    "{\n"
    "    size_t x = get_global_id(0), y = get_global_id(1), w = get_global_size(0) + 2;\n"
    "    out[y * w + x] = 0.5f * in[y * w + x]\n"
    "        + 0.125f * (in[y * w + x - 1] + in[y * w + x + 1] + in[(y - 1) * w + x] + in[(y + 1) * w + x]);\n"
    "    for (uint d = 0; d < 2; d++)\n"
    "        if (get_group_id(d) * get_local_size(d) + get_local_id(d) + get_global_offset(d) != get_global_id(d))\n"
    "            atomic_inc(&info[2]);\n"
    "    if (get_local_id(0) == 0 && get_local_id(1) == 0)\n"
    "        atomic_inc(&info[3]);\n"
    "    if (x == 1 && y == 1) {\n"
    "        info[0] = get_global_offset(0);\n"
    "        info[1] = get_global_offset(1);\n"
    "    }\n"
    "}\n";

static void test_stencil_offset(void)
{
    enum { W = 130, H = 66 }; /* the interior, 128 x 64, is enqueued with offset (1, 1) */
    float *in = malloc(W * H * sizeof(float)), *out = malloc(W * H * sizeof(float));
    for (int i = 0; i < W * H; i++)
        in[i] = (float)(rnd() % 64) / 8.0f;
    cl_program p = build(SRC_STENCIL, NULL);
    cl_kernel k = kernel(p, "stencil");
    float sentinel = -7.0f;
    cl_mem mi = buffer(W * H * sizeof(float), in), mo = buffer(W * H * sizeof(float), NULL);
    REQUIRE_OK(clEnqueueFillBuffer(queue, mo, &sentinel, sizeof sentinel, 0, W * H * sizeof(float), 0, NULL, NULL));
    cl_mem info = filled(4 * sizeof(cl_uint), 0);
    ARG(k, 0, mi);
    ARG(k, 1, mo);
    ARG(k, 2, info);
    size_t offset[2] = {1, 1}, global[2] = {W - 2, H - 2}, local[2] = {16, 8};
    run(k, 2, offset, global, local);
    read_back(mo, W * H * sizeof(float), out);
    int bad = 0;
    for (int y = 0; y < H; y++)
        for (int x = 0; x < W; x++) {
            float want = sentinel;
            if (x > 0 && y > 0 && x < W - 1 && y < H - 1)
                want = 0.5f * in[y * W + x] +
                       0.125f * (in[y * W + x - 1] + in[y * W + x + 1] + in[(y - 1) * W + x] + in[(y + 1) * W + x]);
            if (out[y * W + x] != want && bad++ < 5) /* eighths: exact in float */
                EXPECT(0, "out[%d][%d] = %g, expected %g", y, x, out[y * W + x], want);
        }
    EXPECT(bad == 0, "%d wrong cells", bad);
    cl_uint inf[4];
    read_back(info, sizeof inf, inf);
    EXPECT(inf[0] == 1 && inf[1] == 1, "get_global_offset (%u, %u), expected (1, 1)", inf[0], inf[1]);
    EXPECT(inf[2] == 0, "%u work-items with group * size + local id + offset != global id", inf[2]);
    EXPECT(inf[3] == (W - 2) / 16 * (H - 2) / 8, "%u work-groups, expected %d", inf[3], (W - 2) / 16 * (H - 2) / 8);
    clReleaseMemObject(mi);
    clReleaseMemObject(mo);
    clReleaseMemObject(info);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(in);
    free(out);
}

/* --- structs by value ---------------------------------------------------------------------------- */

typedef struct {
    cl_float scale;
    cl_int shift;
    cl_float2 offset;
} params_t;

typedef struct {
    cl_int id;
    cl_float4 v; /* 16-byte aligned: 12 bytes of padding before it */
    cl_uint tag;
    cl_float w;
} padded_t;

#define STRUCT_APPLY \
    "typedef struct { float scale; int shift; float2 offset; } params_t;\n" \
    "kernel void apply(global const float2 *in, global float2 *out, params_t p)\n" \
    "{\n" \
    "    size_t i = get_global_id(0);\n" \
    "    out[i] = in[i] * p.scale + p.offset + (float2)((float)p.shift);\n" \
    "}\n"
#define STRUCT_UNPACK \
    "typedef struct { int id; float4 v; uint tag; float w; } padded_t;\n" \
    "kernel void unpack(int before, padded_t s, int after, global float *out)\n" \
    "{\n" \
    "    out[0] = (float)before;\n" \
    "    out[1] = (float)s.id;\n" \
    "    out[2] = s.v.x; out[3] = s.v.y; out[4] = s.v.z; out[5] = s.v.w;\n" \
    "    out[6] = (float)s.tag;\n" \
    "    out[7] = s.w;\n" \
    "    out[8] = (float)after;\n" \
    "}\n"

/* apply's {float, int, float2} on every element */
static void check_apply(cl_program p)
{
    enum { N = 1000 };
    cl_float2 in[N], out[N];
    for (int i = 0; i < N; i++) {
        in[i].s[0] = (float)i / 4.0f;
        in[i].s[1] = -(float)(i % 37);
    }
    cl_kernel k = kernel(p, "apply");
    cl_mem mi = buffer(sizeof in, in), mo = filled(sizeof out, 0);
    params_t prm = {0.5f, 3, {{1.25f, -2.5f}}};
    EXPECT(sizeof(params_t) == 16, "sizeof params_t %zu", sizeof(params_t));
    ARG(k, 0, mi);
    ARG(k, 1, mo);
    ARG(k, 2, prm);
    size_t global = N;
    cl_int err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL);
    EXPECT(err == CL_SUCCESS, "apply: clEnqueueNDRangeKernel returned %d", err);
    REQUIRE_OK(clFinish(queue));
    read_back(mo, sizeof out, out);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        float wx = in[i].s[0] * 0.5f + 1.25f + 3.0f, wy = in[i].s[1] * 0.5f - 2.5f + 3.0f; /* exact */
        if ((out[i].s[0] != wx || out[i].s[1] != wy) && bad++ < 5)
            EXPECT(0, "out[%d] = (%g, %g), expected (%g, %g)", i, out[i].s[0], out[i].s[1], wx, wy);
    }
    EXPECT(bad == 0, "apply: %d wrong results", bad);
    clReleaseMemObject(mi);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
}

/* unpack's fields of a struct with padding, between two scalar arguments */
static void check_unpack(cl_program p)
{
    cl_kernel k = kernel(p, "unpack");
    padded_t s;
    memset(&s, 0xAB, sizeof s); /* garbage in the padding */
    s.id = -42;
    s.v.s[0] = 1.5f;
    s.v.s[1] = -2.25f;
    s.v.s[2] = 1024.0f;
    s.v.s[3] = 0.125f;
    s.tag = 77;
    s.w = 3.75f;
    EXPECT(sizeof(padded_t) == 48, "sizeof padded_t %zu", sizeof(padded_t));
    cl_int before = 11, after = -13;
    float got[9], want[9] = {11, -42, 1.5f, -2.25f, 1024.0f, 0.125f, 77, 3.75f, -13};
    cl_mem mo = filled(sizeof got, 0);
    ARG(k, 0, before);
    ARG(k, 1, s);
    ARG(k, 2, after);
    ARG(k, 3, mo);
    cl_int err = clEnqueueTask(queue, k, 0, NULL, NULL);
    EXPECT(err == CL_SUCCESS, "unpack: clEnqueueTask returned %d", err);
    REQUIRE_OK(clFinish(queue));
    read_back(mo, sizeof got, got);
    for (int i = 0; i < 9; i++)
        EXPECT(got[i] == want[i], "padded struct field %d = %g, expected %g", i, got[i], want[i]);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
}

static void test_struct_arg(void)
{
    cl_program p = build(STRUCT_APPLY, NULL);
    check_apply(p);
    clReleaseProgram(p);
    p = build(STRUCT_UNPACK, NULL);
    check_unpack(p);
    clReleaseProgram(p);
}

/* both kernels in one program (known failure: see test_kernels_c.py) */
static void test_struct_arg_shared_program(void)
{
    cl_program p = build(STRUCT_APPLY STRUCT_UNPACK, NULL);
    check_unpack(p);
    check_apply(p);
    clReleaseProgram(p);
}

/* --- printf --------------------------------------------------------------------------------------- */

static const char *SRC_PRINTF =
    "kernel void say(global const int *v)\n"
    "{\n"
    "    int i = get_global_id(0);\n"
    "    printf(\"vkcl-printf item %d of %d: value=%d half=%.2f\\n\", i, (int)get_global_size(0), v[i], v[i] / 2.0f);\n"
    "    if (i == 2)\n"
    "        printf(\"vkcl-printf %s %u %x %c|%5d|%-4d|\\n\", \"literal\", 4000000000u, 255, 'Z', 42, 7);\n"
    "}\n";

static void test_printf(void)
{
    cl_int v[4] = {10, 21, 32, 43};
    cl_program p = build(SRC_PRINTF, NULL);
    cl_kernel k = kernel(p, "say");
    cl_mem mv = buffer(sizeof v, v);
    ARG(k, 0, mv);
    size_t global = 4;
    printf("host: before enqueue\n");
    fflush(stdout); /* vkcl writes to fd 1 directly */
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    REQUIRE_OK(clFinish(queue));
    printf("host: after finish\n");
    clReleaseMemObject(mv);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

/* --- grids: 3-D, more than 65535 groups, non-uniform, a task -------------------------------------- */

static const char *SRC_GRID =
    "kernel void ids3(global uint *out)\n"
    "{\n"
    "    size_t x = get_global_id(0) - get_global_offset(0), y = get_global_id(1) - get_global_offset(1),\n"
    "           z = get_global_id(2) - get_global_offset(2);\n"
    "    size_t i = (z * get_global_size(1) + y) * get_global_size(0) + x;\n"
    "    global uint *o = out + 8 * i;\n"
    "    o[0] = get_global_id(0); o[1] = get_global_id(1); o[2] = get_global_id(2);\n"
    "    o[3] = get_global_size(0); o[4] = get_global_size(1); o[5] = get_global_size(2);\n"
    "    o[6] = get_work_dim();\n"
    "    uint ok = 1;\n"
    "    for (uint d = 0; d < 3; d++) {\n"
    "        ok &= get_group_id(d) * get_local_size(d) + get_local_id(d) + get_global_offset(d) == get_global_id(d);\n"
    "        ok &= get_num_groups(d) * get_local_size(d) == get_global_size(d);\n"
    "        ok &= get_local_id(d) < get_local_size(d);\n"
    "    }\n"
    "    o[7] = ok;\n"
    "}\n"
    "kernel void big(global uint *out, global uint *flags)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    out[i] = (uint)i;\n"
    "    flags[i] = (get_group_id(0) == i) + 2 * (get_num_groups(0) == get_global_size(0))\n"
    "               + 4 * (get_local_id(0) == 0) + 8 * (get_local_size(0) == 1);\n"
    "}\n"
    "kernel void serial_sum(global const int *in, uint n, global int *out)\n"
    "{\n"
    "    int s = 0;\n"
    "    for (uint i = 0; i < n; i++)\n"
    "        s += in[i] * (int)(i % 7);\n"
    "    out[0] = s;\n"
    "    out[1] = get_global_size(0) * 100 + get_local_size(0) * 10 + get_work_dim();\n"
    "    out[2] = get_global_id(0) + get_group_id(0) + get_num_groups(0) * 10;\n"
    "}\n";

static void check_ids3(cl_kernel k, const size_t *offset, const size_t *global, const size_t *local)
{
    size_t n = global[0] * global[1] * global[2];
    cl_mem mo = filled(n * 8 * sizeof(cl_uint), 0xff);
    ARG(k, 0, mo);
    run(k, 3, offset, global, local);
    cl_uint *o = malloc(n * 8 * sizeof(cl_uint));
    read_back(mo, n * 8 * sizeof(cl_uint), o);
    size_t off[3] = {0, 0, 0};
    if (offset)
        memcpy(off, offset, sizeof off);
    int bad = 0;
    for (size_t z = 0; z < global[2]; z++)
        for (size_t y = 0; y < global[1]; y++)
            for (size_t x = 0; x < global[0]; x++) {
                cl_uint *e = o + 8 * ((z * global[1] + y) * global[0] + x);
                cl_uint want[8] = {x + off[0], y + off[1], z + off[2], global[0], global[1], global[2], 3, 1};
                if (memcmp(e, want, sizeof want) != 0 && bad++ < 5)
                    EXPECT(0, "global %zux%zux%zu item (%zu,%zu,%zu): ids (%u,%u,%u) sizes (%u,%u,%u) dim %u ok %u", global[0],
                           global[1], global[2], x, y, z, e[0], e[1], e[2], e[3], e[4], e[5], e[6], e[7]);
            }
    EXPECT(bad == 0, "global %zux%zux%zu: %d wrong work-items", global[0], global[1], global[2], bad);
    clReleaseMemObject(mo);
    free(o);
}

static void test_ndrange_3d(void)
{
    cl_program p = build(SRC_GRID, NULL);
    cl_kernel k = kernel(p, "ids3");
    size_t g1[3] = {10, 6, 4}, g2[3] = {7, 5, 3}, g3[3] = {33, 17, 9}, g4[3] = {64, 2, 2};
    check_ids3(k, NULL, g1, NULL);
    check_ids3(k, NULL, g2, NULL);
    check_ids3(k, NULL, g3, NULL);
    size_t off[3] = {5, 100, 7}, l4[3] = {16, 2, 1};
    check_ids3(k, off, g4, l4);
    check_ids3(k, off, g2, NULL);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

static void test_big_grid(void)
{
    enum { G = 65535 * 2 + 7 };
    cl_program p = build(SRC_GRID, NULL);
    cl_kernel k = kernel(p, "big");
    cl_mem mo = filled(G * sizeof(cl_uint), 0xff), mf = filled(G * sizeof(cl_uint), 0);
    ARG(k, 0, mo);
    ARG(k, 1, mf);
    size_t global = G, local = 1;
    run(k, 1, NULL, &global, &local);
    cl_uint *o = malloc(G * sizeof(cl_uint)), *f = malloc(G * sizeof(cl_uint));
    read_back(mo, G * sizeof(cl_uint), o);
    read_back(mf, G * sizeof(cl_uint), f);
    int bad = 0;
    for (cl_uint i = 0; i < G; i++)
        if ((o[i] != i || f[i] != 15) && bad++ < 5)
            EXPECT(0, "item %u: out %u flags %u (1 group id, 2 num groups, 4 local id, 8 local size)", i, o[i], f[i]);
    EXPECT(bad == 0, "%d wrong work-items of %d", bad, G);

    /* the same with an offset that puts the ids past 65535 groups too */
    size_t offset = 70000;
    cl_mem big = filled((G + offset) * sizeof(cl_uint), 0xff), bigf = filled((G + offset) * sizeof(cl_uint), 0);
    ARG(k, 0, big);
    ARG(k, 1, bigf);
    run(k, 1, &offset, &global, &local);
    cl_uint *o2 = malloc((G + offset) * sizeof(cl_uint)), *f2 = malloc((G + offset) * sizeof(cl_uint));
    read_back(big, (G + offset) * sizeof(cl_uint), o2);
    read_back(bigf, (G + offset) * sizeof(cl_uint), f2);
    bad = 0;
    for (cl_uint i = 0; i < G + offset; i++) {
        cl_uint want_o = i < offset ? 0xffffffffu : i, want_f = i < offset ? 0 : 14; /* group id != global id */
        if ((o2[i] != want_o || f2[i] != want_f) && bad++ < 5)
            EXPECT(0, "offset run, item %u: out %u flags %u", i, o2[i], f2[i]);
    }
    EXPECT(bad == 0, "offset run: %d wrong work-items", bad);
    clReleaseMemObject(mo);
    clReleaseMemObject(mf);
    clReleaseMemObject(big);
    clReleaseMemObject(bigf);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(o);
    free(f);
    free(o2);
    free(f2);
}

static const char *SRC_NONUNIFORM =
    "kernel void sizes(global uint *out)\n"
    "{\n"
    "    size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);\n"
    "    global uint *o = out + 8 * i;\n"
    "    o[0] = get_local_size(0); o[1] = get_local_size(1);\n"
    "    o[2] = get_group_id(0); o[3] = get_group_id(1);\n"
    "    o[4] = get_enqueued_local_size(0); o[5] = get_enqueued_local_size(1);\n"
    "    o[6] = get_num_groups(0) * 100 + get_num_groups(1);\n"
    "    o[7] = get_local_id(1) * 1000 + get_local_id(0);\n"
    "}\n";

static void check_nonuniform(cl_kernel k, cl_uint dims, const size_t *global, const size_t *local)
{
    size_t g[2] = {global[0], dims > 1 ? global[1] : 1}, l[2] = {local[0], dims > 1 ? local[1] : 1};
    size_t n = g[0] * g[1];
    cl_mem mo = filled(n * 8 * sizeof(cl_uint), 0xff);
    ARG(k, 0, mo);
    cl_int err = clEnqueueNDRangeKernel(queue, k, dims, NULL, global, local, 0, NULL, NULL);
    EXPECT(err == CL_SUCCESS, "non-uniform %zux%zu / %zux%zu: %d", g[0], g[1], l[0], l[1], err);
    REQUIRE_OK(clFinish(queue));
    cl_uint *o = malloc(n * 8 * sizeof(cl_uint));
    read_back(mo, n * 8 * sizeof(cl_uint), o);
    size_t ng[2] = {(g[0] + l[0] - 1) / l[0], (g[1] + l[1] - 1) / l[1]};
    int bad = 0;
    for (size_t y = 0; y < g[1]; y++)
        for (size_t x = 0; x < g[0]; x++) {
            size_t gx = x / l[0], gy = y / l[1];
            cl_uint want[8] = {gx == ng[0] - 1 ? g[0] - gx * l[0] : l[0], gy == ng[1] - 1 ? g[1] - gy * l[1] : l[1],
                               gx, gy, l[0], l[1], ng[0] * 100 + ng[1], (y % l[1]) * 1000 + x % l[0]};
            if (want[0] > l[0])
                want[0] = l[0];
            if (want[1] > l[1])
                want[1] = l[1];
            cl_uint *e = o + 8 * (y * g[0] + x);
            if (memcmp(e, want, sizeof want) != 0 && bad++ < 5)
                EXPECT(0, "item (%zu,%zu): local size (%u,%u) group (%u,%u) enqueued (%u,%u) groups %u local id %u; "
                          "expected (%u,%u) (%u,%u) (%u,%u) %u %u", x, y, e[0], e[1], e[2], e[3], e[4], e[5], e[6],
                       e[7], want[0], want[1], want[2], want[3], want[4], want[5], want[6], want[7]);
        }
    EXPECT(bad == 0, "non-uniform %zux%zu / %zux%zu: %d wrong work-items", g[0], g[1], l[0], l[1], bad);
    clReleaseMemObject(mo);
    free(o);
}

static void test_non_uniform(void)
{
    cl_program p = build(SRC_NONUNIFORM, "-cl-std=CL2.0");
    cl_kernel k = kernel(p, "sizes");
    size_t g1 = 1000, l1 = 64; /* 15 groups of 64, the last of 40 */
    check_nonuniform(k, 1, &g1, &l1);
    size_t g2[2] = {100, 30}, l2[2] = {16, 8};
    check_nonuniform(k, 2, g2, l2);
    size_t g3[2] = {5, 3}, l3[2] = {8, 8}; /* one group, smaller than the enqueued size */
    check_nonuniform(k, 2, g3, l3);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

static void test_task(void)
{
    enum { N = 777 };
    cl_int in[N], out[3], want = 0;
    for (int i = 0; i < N; i++) {
        in[i] = (cl_int)(rnd() % 1000) - 500;
        want += in[i] * (i % 7);
    }
    cl_program p = build(SRC_GRID, NULL);
    cl_kernel k = kernel(p, "serial_sum");
    cl_mem mi = buffer(sizeof in, in), mo = filled(sizeof out, 0xff);
    cl_uint n = N;
    ARG(k, 0, mi);
    ARG(k, 1, n);
    ARG(k, 2, mo);
    cl_event ev;
    REQUIRE_OK(clEnqueueTask(queue, k, 0, NULL, &ev));
    REQUIRE_OK(clWaitForEvents(1, &ev));
    cl_command_type type = 0;
    REQUIRE_OK(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    EXPECT(type == CL_COMMAND_TASK || type == CL_COMMAND_NDRANGE_KERNEL, "command type %#x", type);
    clReleaseEvent(ev);
    read_back(mo, sizeof out, out);
    EXPECT(out[0] == want, "task sum %d, expected %d", out[0], want);
    EXPECT(out[1] == 111, "global size * 100 + local size * 10 + work dim = %d, expected 111", out[1]);
    EXPECT(out[2] == 10, "global id + group id + num groups * 10 = %d, expected 10", out[2]);
    clReleaseMemObject(mi);
    clReleaseMemObject(mo);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

/* --- arguments captured at enqueue -------------------------------------------------------------- */

static const char *SRC_CAPTURE =
    "kernel void put(global int *out, int v, int base, local int *scratch)\n"
    "{\n"
    "    uint l = get_local_id(0);\n"
    "    scratch[l] = v + (int)l;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[base + get_global_id(0)] = scratch[get_local_size(0) - 1 - l];\n"
    "}\n";

static void test_arg_capture(void)
{
    enum { N = 256 };
    cl_program p = build(SRC_CAPTURE, NULL);
    cl_kernel k = kernel(p, "put");
    cl_mem a = filled(2 * N * sizeof(cl_int), 0), b = filled(N * sizeof(cl_int), 0);
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err);
    REQUIRE_OK(err);
    size_t global = N, local = 64;
    /* 1: into a at 0, value 100; held back by the user event so nothing runs before the changes */
    cl_int v = 100, base = 0;
    ARG(k, 0, a);
    ARG(k, 1, v);
    ARG(k, 2, base);
    REQUIRE_OK(clSetKernelArg(k, 3, 64 * sizeof(cl_int), NULL));
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 1, &gate, NULL));
    /* 2: into a at N, value 200, another local size */
    v = 200;
    base = N;
    ARG(k, 1, v);
    ARG(k, 2, base);
    local = 32;
    REQUIRE_OK(clSetKernelArg(k, 3, 32 * sizeof(cl_int), NULL));
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    /* 3: into b, value 300, and a buffer released by the application while queued */
    v = 300;
    base = 0;
    ARG(k, 0, b);
    ARG(k, 1, v);
    ARG(k, 2, base);
    local = 16;
    REQUIRE_OK(clSetKernelArg(k, 3, 16 * sizeof(cl_int), NULL));
    REQUIRE_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    /* changes after the last enqueue affect nothing */
    v = -1;
    base = 5;
    ARG(k, 0, a);
    ARG(k, 1, v);
    ARG(k, 2, base);
    cl_int *rb = malloc(N * sizeof(cl_int)), *ra = malloc(2 * N * sizeof(cl_int));
    REQUIRE_OK(clEnqueueReadBuffer(queue, b, CL_FALSE, 0, N * sizeof(cl_int), rb, 0, NULL, NULL));
    clReleaseMemObject(b); /* the queued commands keep it */
    REQUIRE_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    REQUIRE_OK(clFinish(queue));
    read_back(a, 2 * N * sizeof(cl_int), ra);
    int bad = 0;
    for (int i = 0; i < N; i++) {
        int want1 = 100 + 63 - i % 64, want2 = 200 + 31 - i % 32, want3 = 300 + 15 - i % 16;
        if ((ra[i] != want1 || ra[N + i] != want2 || rb[i] != want3) && bad++ < 5)
            EXPECT(0, "item %d: %d %d %d, expected %d %d %d", i, ra[i], ra[N + i], rb[i], want1, want2, want3);
    }
    EXPECT(bad == 0, "%d wrong items", bad);
    clReleaseEvent(gate);
    clReleaseMemObject(a);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(ra);
    free(rb);
}

/* --- many arguments: more than push constants hold -------------------------------------------- */

static const char *SRC_MANY =
    /* more arguments of mixed sizes and alignments */
    "kernel void mixed(global float *o, float f0, global const float *p0, long l0, int i0, float4 v0,\n"
    "                  global const float *p1, uchar c0, short s0, ulong u0, int i1, global const float *p2,\n"
    "                  float f1, int i2, global const float *p3, uint i3, global int *oi, char c1)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    o[i] = f0 * p0[i] + p1[i] * v0.x + p2[i] * v0.y + p3[i] * v0.z + v0.w + f1;\n"
    "    oi[i] = (int)l0 + i0 * 10 + c0 * 100 + s0 * 1000 + (int)(u0 >> 32) * 10000 + i1 + i2 + (int)i3 + c1\n"
    "            + (int)i;\n"
    "}\n";

/* many(a0 .. a{n-1}, out0, out1, k0 .. k5): n + 2 global pointers and 6 ints. clspv passes
 * them as push constants while they fit in maxPushConstantsSize (128 bytes on lavapipe, 256 on
 * NVIDIA), and in a uniform buffer beyond: 10 inputs is 120 bytes, 30 inputs 280. */
enum { MANY_MAX = 30, MANY_N = 4096 };

static void check_many(int inputs)
{
    char src[8192];
    int len = sprintf(src, "kernel void many(");
    for (int j = 0; j < inputs; j++)
        len += sprintf(src + len, "global const uint *a%d, ", j);
    len += sprintf(src + len, "global uint *out0, global uint *out1, int k0, int k1, int k2, int k3, int k4, int k5)\n"
                              "{\n    size_t i = get_global_id(0);\n    uint s = 0;\n");
    for (int j = 0; j < inputs; j++)
        len += sprintf(src + len, "    s += a%d[i] * %du;\n", j, 2 * j + 1);
    sprintf(src + len, "    out0[i] = s;\n"
                       "    out1[i] = (uint)(k0 + k1 * 10 + k2 * 100 + k3 * 1000 + k4 * 10000 + k5 * 100000)"
                       " + a%d[i] - a0[i];\n}\n", inputs - 1);
    cl_program p = build(src, NULL);
    cl_kernel k = kernel(p, "many");
    cl_mem in[MANY_MAX];
    cl_uint *host[MANY_MAX], *o0 = malloc(MANY_N * sizeof(cl_uint)), *o1 = malloc(MANY_N * sizeof(cl_uint));
    for (int j = 0; j < inputs; j++) {
        host[j] = malloc(MANY_N * sizeof(cl_uint));
        for (int i = 0; i < MANY_N; i++)
            host[j][i] = (cl_uint)(i * (j + 1) + j * 1000003u);
        in[j] = buffer(MANY_N * sizeof(cl_uint), host[j]);
        ARG(k, j, in[j]);
    }
    cl_mem out0 = filled(MANY_N * sizeof(cl_uint), 0), out1 = filled(MANY_N * sizeof(cl_uint), 0);
    ARG(k, inputs, out0);
    ARG(k, inputs + 1, out1);
    cl_int ks[6] = {1, 2, 3, 4, 5, 6};
    for (int j = 0; j < 6; j++)
        ARG(k, inputs + 2 + j, ks[j]);
    size_t global = MANY_N;
    run(k, 1, NULL, &global, NULL);
    read_back(out0, MANY_N * sizeof(cl_uint), o0);
    read_back(out1, MANY_N * sizeof(cl_uint), o1);
    int bad = 0;
    for (int i = 0; i < MANY_N; i++) {
        cl_uint sum = 0;
        for (int j = 0; j < inputs; j++)
            sum += host[j][i] * (cl_uint)(2 * j + 1);
        cl_uint t = 654321u + host[inputs - 1][i] - host[0][i];
        if ((o0[i] != sum || o1[i] != t) && bad++ < 5)
            EXPECT(0, "%d inputs, item %d: %u %u, expected %u %u", inputs, i, o0[i], o1[i], sum, t);
    }
    EXPECT(bad == 0, "%d inputs: %d wrong items", inputs, bad);
    for (int j = 0; j < inputs; j++) {
        clReleaseMemObject(in[j]);
        free(host[j]);
    }
    clReleaseMemObject(out0);
    clReleaseMemObject(out1);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(o0);
    free(o1);
}

static void test_many_args(void)
{
    enum { N = MANY_N };
    check_many(10); /* 12 pointers + 6 ints */
    check_many(14); /* 16 pointers + 6 ints: 152 bytes */
    check_many(30); /* 32 pointers + 6 ints: 280 bytes */

    cl_program p = build(SRC_MANY, NULL);
    size_t global = N;
    int bad;
    /* mixed: 18 arguments of every size */
    cl_kernel k = kernel(p, "mixed");
    float *pf[4], *of = malloc(N * sizeof(float));
    cl_int *oi = malloc(N * sizeof(cl_int));
    cl_mem mpf[4];
    for (int j = 0; j < 4; j++) {
        pf[j] = malloc(N * sizeof(float));
        for (int i = 0; i < N; i++)
            pf[j][i] = (float)((i * (j + 3)) % 97) / 4.0f;
        mpf[j] = buffer(N * sizeof(float), pf[j]);
    }
    cl_mem mof = filled(N * sizeof(float), 0), moi = filled(N * sizeof(cl_int), 0);
    cl_float f0 = 1.5f, f1 = -0.25f;
    cl_long l0 = 0x100000005LL;
    cl_int i0 = 6, i1 = 100000, i2 = -200000;
    cl_float4 v0 = {{2.0f, -1.0f, 0.5f, 8.0f}};
    cl_uchar c0 = 250;
    cl_short s0 = -3;
    cl_ulong u0 = 7ULL << 32;
    cl_uint i3 = 3000000;
    cl_char c1 = -100;
    ARG(k, 0, mof);
    ARG(k, 1, f0);
    ARG(k, 2, mpf[0]);
    ARG(k, 3, l0);
    ARG(k, 4, i0);
    ARG(k, 5, v0);
    ARG(k, 6, mpf[1]);
    ARG(k, 7, c0);
    ARG(k, 8, s0);
    ARG(k, 9, u0);
    ARG(k, 10, i1);
    ARG(k, 11, mpf[2]);
    ARG(k, 12, f1);
    ARG(k, 13, i2);
    ARG(k, 14, mpf[3]);
    ARG(k, 15, i3);
    ARG(k, 16, moi);
    ARG(k, 17, c1);
    run(k, 1, NULL, &global, NULL);
    read_back(mof, N * sizeof(float), of);
    read_back(moi, N * sizeof(cl_int), oi);
    bad = 0;
    for (int i = 0; i < N; i++) {
        double wf = 1.5 * pf[0][i] + pf[1][i] * 2.0 - pf[2][i] + pf[3][i] * 0.5 + 8.0 - 0.25;
        cl_int wi = 5 + 60 + 25000 - 3000 + 70000 + 100000 - 200000 + 3000000 - 100 + i;
        if ((fabs(of[i] - wf) > 1e-5 * (fabs(wf) + 1) || oi[i] != wi) && bad++ < 5)
            EXPECT(0, "mixed item %d: %.9g %d, expected %.9g %d", i, of[i], oi[i], wf, wi);
    }
    EXPECT(bad == 0, "mixed: %d wrong items", bad);
    for (int j = 0; j < 4; j++) {
        clReleaseMemObject(mpf[j]);
        free(pf[j]);
    }
    clReleaseMemObject(mof);
    clReleaseMemObject(moi);
    clReleaseKernel(k);
    clReleaseProgram(p);
    free(of);
    free(oi);
}

/* --- the errors of clEnqueueNDRangeKernel --------------------------------------------------------- */

#define WITH_LOCAL \
    "kernel void with_local(global int *out, local int *l)\n" \
    "{\n" \
    "    l[get_local_id(0)] = 3 + (int)get_local_id(0);\n" \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n" \
    "    out[get_global_id(0)] = l[get_local_size(0) - 1 - get_local_id(0)];\n" \
    "}\n"
#define STATIC_LOCAL \
    "kernel void static_local(global int *out)\n" \
    "{\n" \
    "    local int t[256];\n" \
    "    t[get_local_id(0)] = 1;\n" \
    "    barrier(CLK_LOCAL_MEM_FENCE);\n" \
    "    out[get_global_id(0)] = t[0];\n" \
    "}\n"

/* with_local, with a __local argument of `bytes`, in program p: runs and computes */
static void check_full_local(cl_program p, size_t bytes)
{
    cl_kernel k = kernel(p, "with_local");
    cl_mem m = filled(64 * sizeof(cl_int), 0);
    ARG(k, 0, m);
    REQUIRE_OK(clSetKernelArg(k, 1, bytes, NULL));
    size_t g = 64, l = 64;
    cl_int err = clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL);
    EXPECT(err == CL_SUCCESS, "a __local argument of %zu bytes: %d", bytes, err);
    REQUIRE_OK(clFinish(queue));
    cl_int out[64];
    read_back(m, sizeof out, out);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += out[i] != 3 + 63 - i;
    EXPECT(bad == 0, "a __local argument of %zu bytes: %d wrong results", bytes, bad);
    clReleaseMemObject(m);
    clReleaseKernel(k);
}

static const char *SRC_ERRORS =
    "kernel void fill(global int *out, int v) { out[get_global_id(0)] = v; }\n"
    "__attribute__((reqd_work_group_size(8, 4, 1)))\n"
    "kernel void fixed(global int *out) { out[get_global_id(1) * get_global_size(0) + get_global_id(0)] = 1; }\n"
    WITH_LOCAL
    "kernel void static_and_arg(global int *out, local int *l)\n"
    "{\n"
    "    local int tile[16][16];\n"
    "    tile[get_local_id(0) % 16][get_local_id(0) / 16] = 1;\n"
    "    l[get_local_id(0)] = 2;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[get_global_id(0)] = tile[0][0] + l[0];\n"
    "}\n";

static void test_errors(void)
{
    cl_program p = build(SRC_ERRORS, NULL);
    cl_kernel k = kernel(p, "fill");
    cl_mem m = filled(4096 * sizeof(cl_int), 0);
    cl_int v = 5;
    size_t g1[3] = {64, 1, 1}, l1[3] = {64, 1, 1};

    /* CL_INVALID_KERNEL_ARGS: nothing set, then only the first argument */
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    ARG(k, 0, m);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    EXPECT_ERR(clEnqueueTask(queue, k, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    ARG(k, 1, v);
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, g1, l1, 0, NULL, NULL));

    /* CL_INVALID_WORK_DIMENSION */
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 0, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_WORK_DIMENSION);
    size_t g4[4] = {4, 1, 1, 1};
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 4, NULL, g4, NULL, 0, NULL, NULL), CL_INVALID_WORK_DIMENSION);

    /* OpenCL 3.0: a NULL global_work_size succeeds trivially (as a zero global size does) */
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, NULL, NULL, 0, NULL, NULL));
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, NULL, l1, 0, NULL, NULL));

    /* CL_INVALID_WORK_GROUP_SIZE: OpenCL C 1.2 needs uniform work-groups */
    size_t g100 = 100, l64 = 64;
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g100, &l64, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    size_t g2[2] = {64, 30}, l2[2] = {8, 4};
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 2, NULL, g2, l2, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    cl_program uniform = build(SRC_ERRORS, "-cl-std=CL2.0 -cl-uniform-work-group-size");
    cl_kernel ku = kernel(uniform, "fill");
    ARG(ku, 0, m);
    ARG(ku, 1, v);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, ku, 1, NULL, &g100, &l64, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    clReleaseKernel(ku);
    clReleaseProgram(uniform);
    size_t zero_local[2] = {8, 0}, g2b[2] = {64, 32};
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 2, NULL, g2b, zero_local, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    /* ... more work-items than CL_DEVICE_MAX_WORK_GROUP_SIZE, each dimension within its maximum */
    size_t max_wg = device_size(CL_DEVICE_MAX_WORK_GROUP_SIZE), max_items[3];
    REQUIRE_OK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof max_items, max_items, NULL));
    size_t lbig[3] = {max_items[0] < max_wg ? max_items[0] : max_wg, 1, 1};
    lbig[1] = max_wg / lbig[0] + 1;
    if (lbig[1] <= max_items[1]) {
        size_t gbig[3] = {lbig[0], lbig[1], 1};
        EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 2, NULL, gbig, lbig, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
        EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 3, NULL, gbig, lbig, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    } else {
        EXPECT(0, "cannot build a local size over %zu within (%zu, %zu)", max_wg, max_items[0], max_items[1]);
    }
    /* ... a local size other than reqd_work_group_size(8, 4, 1) */
    cl_kernel fixed = kernel(p, "fixed");
    ARG(fixed, 0, m);
    size_t gf[2] = {32, 16}, lf_bad[2] = {4, 8}, lf_ok[2] = {8, 4}, lf_1d = 8;
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, fixed, 2, NULL, gf, lf_bad, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, fixed, 1, NULL, gf, &lf_1d, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    EXPECT_OK(clEnqueueNDRangeKernel(queue, fixed, 2, NULL, gf, lf_ok, 0, NULL, NULL));
    EXPECT_OK(clEnqueueNDRangeKernel(queue, fixed, 2, NULL, gf, NULL, 0, NULL, NULL)); /* NULL: the required size */
    size_t gf_odd[2] = {30, 16}; /* not a multiple of the required size */
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, fixed, 2, NULL, gf_odd, NULL, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);

    /* CL_INVALID_WORK_ITEM_SIZE: local[0] beyond CL_DEVICE_MAX_WORK_ITEM_SIZES[0] */
    size_t litem[3] = {max_items[0] + 1, 1, 1}, gitem[3] = {max_items[0] + 1, 1, 1};
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 3, NULL, gitem, litem, 0, NULL, NULL), CL_INVALID_WORK_ITEM_SIZE);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, gitem, litem, 0, NULL, NULL), CL_INVALID_WORK_ITEM_SIZE);

    /* CL_INVALID_GLOBAL_OFFSET: offset + global beyond size_t */
    size_t off_bad = SIZE_MAX - 10, g16 = 16;
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, &off_bad, &g16, NULL, 0, NULL, NULL), CL_INVALID_GLOBAL_OFFSET);
    size_t off3[3] = {0, SIZE_MAX, 0}, g3[3] = {4, 4, 4};
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 3, off3, g3, NULL, 0, NULL, NULL), CL_INVALID_GLOBAL_OFFSET);

    /* CL_OUT_OF_RESOURCES: more local memory than CL_DEVICE_LOCAL_MEM_SIZE */
    cl_ulong local_mem = device_ulong(CL_DEVICE_LOCAL_MEM_SIZE);
    cl_kernel wl = kernel(p, "with_local");
    ARG(wl, 0, m);
    EXPECT_OK(clSetKernelArg(wl, 1, (size_t)local_mem + 4, NULL));
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, wl, 1, NULL, g1, l1, 0, NULL, NULL), CL_OUT_OF_RESOURCES);
    EXPECT_OK(clSetKernelArg(wl, 1, 64 * sizeof(cl_int), NULL));
    EXPECT_OK(clEnqueueNDRangeKernel(queue, wl, 1, NULL, g1, l1, 0, NULL, NULL));
    cl_program alone = build(WITH_LOCAL, NULL); /* exactly the device's size, in a program of its own: runs */
    check_full_local(alone, (size_t)local_mem);
    clReleaseProgram(alone);
    cl_kernel sa = kernel(p, "static_and_arg"); /* 1 KiB of its own, plus the argument */
    ARG(sa, 0, m);
    EXPECT_OK(clSetKernelArg(sa, 1, (size_t)local_mem - 512, NULL));
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, sa, 1, NULL, g1, l1, 0, NULL, NULL), CL_OUT_OF_RESOURCES);
    EXPECT_OK(clSetKernelArg(sa, 1, 256, NULL));
    EXPECT_OK(clEnqueueNDRangeKernel(queue, sa, 1, NULL, g1, l1, 0, NULL, NULL));

    /* CL_INVALID_KERNEL / CL_INVALID_COMMAND_QUEUE: NULL and handles of another type */
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, NULL, 1, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, (cl_kernel)ctx, 1, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, (cl_kernel)m, 1, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
    EXPECT_ERR(clEnqueueTask(queue, (cl_kernel)p, 0, NULL, NULL), CL_INVALID_KERNEL);
    EXPECT_ERR(clEnqueueNDRangeKernel(NULL, k, 1, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clEnqueueNDRangeKernel((cl_command_queue)ctx, k, 1, NULL, g1, NULL, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clEnqueueNDRangeKernel((cl_command_queue)k, k, 1, NULL, g1, NULL, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clEnqueueTask((cl_command_queue)m, k, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE);

    /* CL_INVALID_CONTEXT: the kernel's context is not the queue's */
    cl_int err;
    cl_context ctx2 = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    REQUIRE_OK(err);
    cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx2, device, NULL, &err);
    REQUIRE_OK(err);
    EXPECT_ERR(clEnqueueNDRangeKernel(q2, k, 1, NULL, g1, NULL, 0, NULL, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueTask(q2, k, 0, NULL, NULL), CL_INVALID_CONTEXT);
    /* ... and an event of another context in the wait list */
    cl_event other = clCreateUserEvent(ctx2, &err);
    REQUIRE_OK(err);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, g1, NULL, 1, &other, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, g1, NULL, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, g1, NULL, 0, &other, NULL), CL_INVALID_EVENT_WAIT_LIST);
    clSetUserEventStatus(other, CL_COMPLETE);
    clReleaseEvent(other);
    clReleaseCommandQueue(q2);
    clReleaseContext(ctx2);

    /* the queue still works after all this, and the successful runs above wrote what they should */
    REQUIRE_OK(clFinish(queue));
    cl_int first[64];
    read_back(m, sizeof first, first);
    int bad = 0;
    for (int i = 0; i < 64; i++)
        bad += first[i] != 3; /* the last kernel to run, static_and_arg, writes 1 + 2 */
    EXPECT(bad == 0, "%d unexpected values after the successful enqueues (first %d)", bad, first[0]);
    clReleaseKernel(k);
    clReleaseKernel(fixed);
    clReleaseKernel(wl);
    clReleaseKernel(sa);
    clReleaseMemObject(m);
    clReleaseProgram(p);
}

/* a __local argument that fills the device's local memory, in a program where another kernel has
 * a static __local array (known failure: see test_kernels_c.py) */
static void test_local_mem_other_kernel(void)
{
    cl_program p = build(WITH_LOCAL STATIC_LOCAL, NULL);
    check_full_local(p, (size_t)device_ulong(CL_DEVICE_LOCAL_MEM_SIZE));
    check_full_local(p, (size_t)device_ulong(CL_DEVICE_LOCAL_MEM_SIZE) - 64);
    clReleaseProgram(p);
}

/* a global size with a 0 dimension: nothing runs, the command completes (OpenCL 2.1+) */
static void test_empty_range(void)
{
    cl_program p = build(SRC_ERRORS, NULL);
    cl_kernel k = kernel(p, "fill");
    cl_mem m = filled(256 * sizeof(cl_int), 0);
    cl_int v = 9, err;
    ARG(k, 0, m);
    ARG(k, 1, v);
    cl_event gate = clCreateUserEvent(ctx, &err);
    REQUIRE_OK(err);
    size_t g0 = 0, g2[2] = {16, 0}, l2[2] = {8, 8}, g3[3] = {0, 4, 4};
    cl_event ev[4];
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g0, NULL, 1, &gate, &ev[0]));
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 2, NULL, g2, l2, 0, NULL, &ev[1]));
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 3, NULL, g3, NULL, 0, NULL, &ev[2]));
    size_t off = 3;
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, &off, &g0, NULL, 0, NULL, &ev[3]));
    cl_int status = 99;
    REQUIRE_OK(clGetEventInfo(ev[0], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    EXPECT(status > CL_COMPLETE, "the empty range completed before its wait list: status %d", status);
    REQUIRE_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clWaitForEvents(4, ev));
    for (int i = 0; i < 4; i++) {
        cl_command_type type = 0;
        REQUIRE_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        REQUIRE_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
        EXPECT(status == CL_COMPLETE && type == CL_COMMAND_NDRANGE_KERNEL, "event %d: status %d type %#x", i, status,
               type);
        clReleaseEvent(ev[i]);
    }
    cl_int out[256];
    read_back(m, sizeof out, out);
    int touched = 0;
    for (int i = 0; i < 256; i++)
        touched += out[i] != 0;
    EXPECT(touched == 0, "%d elements written by empty NDRanges", touched);
    /* the errors other than the size are still reported */
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 0, NULL, &g0, NULL, 0, NULL, NULL), CL_INVALID_WORK_DIMENSION);
    cl_kernel unset = kernel(p, "fill");
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, unset, 1, NULL, &g0, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    clReleaseKernel(unset);
    clReleaseEvent(gate);
    clReleaseMemObject(m);
    clReleaseKernel(k);
    clReleaseProgram(p);
}

/* --- main ------------------------------------------------------------------------------------------- */

static const struct {
    const char *name;
    void (*fn)(void);
} SECTIONS[] = {
    {"vector_add", test_vector_add},
    {"saxpy", test_saxpy},
    {"reduction", test_reduction},
    {"scan", test_scan},
    {"sgemm", test_sgemm},
    {"histogram", test_histogram},
    {"nbody", test_nbody},
    {"mandelbrot", test_mandelbrot},
    {"stencil_offset", test_stencil_offset},
    {"struct_arg", test_struct_arg},
    {"struct_arg_shared_program", test_struct_arg_shared_program},
    {"printf", test_printf},
    {"ndrange_3d", test_ndrange_3d},
    {"big_grid", test_big_grid},
    {"non_uniform", test_non_uniform},
    {"task", test_task},
    {"arg_capture", test_arg_capture},
    {"many_args", test_many_args},
    {"errors", test_errors},
    {"local_mem_other_kernel", test_local_mem_other_kernel},
    {"empty_range", test_empty_range},
};

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: kernels SECTION\n");
        return 2;
    }
    harness_open(&device, &ctx, &queue);
    int found = 0;
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++)
        if (strcmp(argv[1], SECTIONS[i].name) == 0) {
            printf("-- %s\n", SECTIONS[i].name);
            SECTIONS[i].fn();
            found = 1;
        }
    if (!found) {
        printf("FAIL unknown section %s\n", argv[1]);
        return 2;
    }
    REQUIRE_OK(clFinish(queue));
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return harness_result();
}
