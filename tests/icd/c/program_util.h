/* Shared by the program tests (programs.c, program_link.c): a context and queue on the vkcl
 * device, kernel sources, and helpers that build, query and run programs. */
#ifndef VKCL_TEST_PROGRAM_UTIL_H
#define VKCL_TEST_PROGRAM_UTIL_H
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clUnloadCompiler */
#include "harness.h"
#include <pthread.h>
#include <time.h>
#include <unistd.h>

/* Each program uses some of what follows: no unused warnings for the rest. */
#define SHARED static __attribute__((unused))
#define N 64

static cl_device_id device;
static cl_context ctx;
static cl_command_queue queue;

/* out[i] = i * k */
SHARED const char *SCALE_SRC =
    "kernel void scale(global int *out, int k) { size_t i = get_global_id(0); out[i] = (int)i * k; }\n";
/* out[i] = i * k + OFFSET: OFFSET comes from the build options */
SHARED const char *OFFSET_SRC =
    "kernel void scale(global int *out, int k) { size_t i = get_global_id(0); out[i] = (int)i * k + OFFSET; }\n";
/* tests/kernels/syntax_error.cl */
SHARED const char *SYNTAX_ERROR_SRC =
    "kernel void broken(global int *a)\n"
    "{\n"
    "    a[get_global_id(0)] = undeclared_thing\n"
    "}\n";
/* tests/kernels/crash_clspv.cl: clang accepts it, clspv aborts (a pointer loaded from global memory) */
SHARED const char *CRASH_SRC =
    "kernel void crash(global uintptr_t *p)\n"
    "{\n"
    "    global int *global *pp = (global int *global *)p[0];\n"
    "    **pp = 1;\n"
    "}\n";
/* a typical kernel for the cache timings: a tiled matrix product with local memory */
SHARED const char *SGEMM_SRC =
    "#define T 16\n"
    "kernel void sgemm(global const float *A, global const float *B, global float *C, int M, int N, int K) {\n"
    "  local float As[T][T], Bs[T][T];\n"
    "  int r = get_local_id(1), c = get_local_id(0);\n"
    "  int row = get_global_id(1), col = get_global_id(0);\n"
    "  float acc = 0.0f;\n"
    "  for (int t = 0; t < K; t += T) {\n"
    "    As[r][c] = A[row * K + t + c];\n"
    "    Bs[r][c] = B[(t + r) * N + col];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    for (int k = 0; k < T; k++) acc += As[r][k] * Bs[k][c];\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "  }\n"
    "  if (row < M && col < N) C[row * N + col] = acc;\n"
    "}\n";

/* --- helpers ------------------------------------------------------------------------------- */

SHARED double now_ms(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

SHARED void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

SHARED cl_program from_source(const char *src)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    if (p == NULL || err != CL_SUCCESS) {
        printf("FAIL clCreateProgramWithSource: %d\n", err);
        exit(1);
    }
    return p;
}

/* A build info string (malloc'ed, never NULL). */
SHARED char *build_string(cl_program p, cl_program_build_info param)
{
    size_t n = 0;
    EXPECT_OK(clGetProgramBuildInfo(p, device, param, 0, NULL, &n));
    char *s = calloc(n + 1, 1);
    EXPECT_OK(clGetProgramBuildInfo(p, device, param, n, s, NULL));
    EXPECT(n >= 1 && strlen(s) == n - 1, "build info %#x: size %zu, string length %zu", param, n, strlen(s));
    return s;
}

SHARED cl_build_status build_status(cl_program p)
{
    cl_build_status s = 99;
    EXPECT_OK(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof s, &s, NULL));
    return s;
}

SHARED cl_program_binary_type binary_type(cl_program p)
{
    cl_program_binary_type t = 99;
    EXPECT_OK(clGetProgramBuildInfo(p, device, CL_PROGRAM_BINARY_TYPE, sizeof t, &t, NULL));
    return t;
}

SHARED int log_contains(cl_program p, const char *needle)
{
    char *log = build_string(p, CL_PROGRAM_BUILD_LOG);
    int found = strstr(log, needle) != NULL;
    if (!found)
        printf("  build log (looking for \"%s\"):\n%s\n", needle, log);
    free(log);
    return found;
}

/* Run kernel `name` of p over N items with arguments (out, k) (only out when it takes one
 * argument); 1 when every out[i] == i * mul + add. */
SHARED int run_check(cl_program p, const char *name, int k, int mul, int add)
{
    cl_int err;
    cl_kernel kern = clCreateKernel(p, name, &err);
    EXPECT(kern != NULL && err == CL_SUCCESS, "clCreateKernel(%s): %d", name, err);
    if (kern == NULL)
        return 0;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    REQUIRE_OK(err);
    cl_uint nargs = 0;
    EXPECT_OK(clGetKernelInfo(kern, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
    EXPECT_OK(clSetKernelArg(kern, 0, sizeof buf, &buf));
    if (nargs > 1)
        EXPECT_OK(clSetKernelArg(kern, 1, sizeof k, &k));
    size_t global = N;
    int out[N];
    memset(out, 0xff, sizeof out);
    EXPECT_OK(clEnqueueNDRangeKernel(queue, kern, 1, NULL, &global, NULL, 0, NULL, NULL));
    EXPECT_OK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < N; i++) {
        if (out[i] != i * mul + add) {
            if (!bad)
                printf("  %s: out[%d] = %d, expected %d\n", name, i, out[i], i * mul + add);
            bad++;
        }
    }
    EXPECT(bad == 0, "kernel %s: %d wrong values", name, bad);
    clReleaseMemObject(buf);
    clReleaseKernel(kern);
    return bad == 0;
}

/* The program's binary for our device (malloc'ed), its size in *size. */
SHARED unsigned char *get_binary(cl_program p, size_t *size)
{
    size_t sizes[1] = {0}, ret = 0;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof sizes, sizes, &ret));
    EXPECT(ret == sizeof(size_t), "CL_PROGRAM_BINARY_SIZES: size %zu", ret);
    unsigned char *bin = malloc(sizes[0] ? sizes[0] : 1);
    unsigned char *ptrs[1] = {bin};
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof ptrs, ptrs, &ret));
    EXPECT(ret == sizeof(unsigned char *), "CL_PROGRAM_BINARIES: size %zu", ret);
    *size = sizes[0];
    return bin;
}

SHARED cl_program from_binary(const unsigned char *bin, size_t size, cl_int *status, cl_int *err)
{
    *status = 12345;
    return clCreateProgramWithBinary(ctx, 1, &device, &size, &bin, status, err);
}

/* The vkcl device, a context and an in-order queue on it. */
static inline void program_setup(void)
{
    device = vkcl_device(vkcl_platform());
    cl_int err;
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    REQUIRE_OK(err);
    queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    REQUIRE_OK(err);
}

static inline int program_teardown(void)
{
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return harness_result();
}
#endif
