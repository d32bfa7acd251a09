/* A tiny check harness for the C programs the tests run through the ICD loader.
 * Each failed check prints "FAIL file:line: ..."; main returns harness_result(). */
#ifndef VKCL_TEST_HARNESS_H
#define VKCL_TEST_HARNESS_H
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#include <CL/cl.h>
#include <CL/cl_ext.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static int harness_failures;
static int harness_checks;

#define EXPECT(cond, ...)                                                 \
    do {                                                                  \
        harness_checks++;                                                 \
        if (!(cond)) {                                                    \
            harness_failures++;                                           \
            printf("FAIL %s:%d: %s: ", __FILE__, __LINE__, #cond);        \
            printf(__VA_ARGS__);                                          \
            printf("\n");                                                 \
        }                                                                 \
    } while (0)

#define EXPECT_ERR(call, expected)                                        \
    do {                                                                  \
        cl_int got_ = (call);                                             \
        EXPECT(got_ == (expected), "%s returned %d, expected %d (%s)",    \
               #call, got_, (int)(expected), #expected);                  \
    } while (0)

#define EXPECT_OK(call) EXPECT_ERR(call, CL_SUCCESS)

#define REQUIRE_OK(call)                                                  \
    do {                                                                  \
        cl_int got_ = (call);                                             \
        if (got_ != CL_SUCCESS) {                                         \
            printf("FAIL %s:%d: %s returned %d\n", __FILE__, __LINE__, #call, got_); \
            exit(1);                                                      \
        }                                                                 \
    } while (0)

static inline int harness_result(void)
{
    printf("%d checks, %d failed\n", harness_checks, harness_failures);
    return harness_failures ? 1 : 0;
}

/* The vkcl platform and its first device (exits when missing). */
static inline cl_platform_id vkcl_platform(void)
{
    cl_platform_id platforms[16];
    cl_uint n = 0;
    REQUIRE_OK(clGetPlatformIDs(16, platforms, &n));
    for (cl_uint i = 0; i < n && i < 16; i++) {
        char name[64] = {0};
        clGetPlatformInfo(platforms[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        if (strcmp(name, "vkcl") == 0)
            return platforms[i];
    }
    printf("FAIL no vkcl platform\n");
    exit(1);
}

static inline cl_device_id vkcl_device(cl_platform_id platform)
{
    cl_device_id device;
    REQUIRE_OK(clGetDeviceIDs(platform, CL_DEVICE_TYPE_ALL, 1, &device, NULL));
    return device;
}

/* The usual start of a test program: vkcl's first device, a context on it and, when `queue`
 * is not NULL, an in-order queue (exits on failure). */
static inline void harness_open(cl_device_id *device, cl_context *ctx, cl_command_queue *queue)
{
    cl_int err;
    *device = vkcl_device(vkcl_platform());
    *ctx = clCreateContext(NULL, 1, device, NULL, NULL, &err);
    REQUIRE_OK(err);
    if (queue) {
        *queue = clCreateCommandQueueWithProperties(*ctx, *device, NULL, &err);
        REQUIRE_OK(err);
    }
}

/* A program of sections, each one pytest test: run the one argv[1] names, after harness_open and
 * building *program from `src` (the globals the sections use); then release those. */
struct harness_section {
    const char *name;
    void (*fn)(void);
};

static inline int harness_run_section(int argc, char **argv, const struct harness_section *sections, size_t n,
                                      const char *src, cl_device_id *device, cl_context *ctx,
                                      cl_command_queue *queue, cl_program *program)
{
    if (argc != 2) {
        printf("usage: %s SECTION\n", argv[0]);
        return 2;
    }
    harness_open(device, ctx, queue);
    cl_int err;
    *program = clCreateProgramWithSource(*ctx, 1, &src, NULL, &err);
    REQUIRE_OK(err);
    REQUIRE_OK(clBuildProgram(*program, 1, device, NULL, NULL, NULL));
    for (size_t i = 0; i < n; i++)
        if (strcmp(argv[1], sections[i].name) == 0) {
            printf("-- %s\n", sections[i].name);
            sections[i].fn();
            clReleaseProgram(*program);
            clReleaseCommandQueue(*queue);
            clReleaseContext(*ctx);
            return harness_result();
        }
    printf("FAIL unknown section %s\n", argv[1]);
    return 1;
}

/* In a context of its own on `device`: a kernel adds 1 to n ints holding 0..n-1; returns how
 * many came back right, or -1 when no context could be made (fork.c, device_lost.c). */
static inline int harness_increment_in_new_context(cl_device_id device, int n)
{
    static const char *src = "kernel void inc(global int *a) { a[get_global_id(0)] += 1; }";
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return -1;
    cl_int *host = malloc(n * sizeof *host);
    for (int i = 0; i < n; i++)
        host[i] = i;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
    EXPECT_OK(clBuildProgram(p, 1, &device, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, "inc", &err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, n * sizeof *host, host, &err);
    EXPECT_OK(clSetKernelArg(k, 0, sizeof b, &b));
    size_t global = (size_t)n;
    EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    EXPECT_OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, n * sizeof *host, host, 0, NULL, NULL));
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    int right = 0;
    for (int i = 0; i < n; i++)
        right += host[i] == i + 1;
    free(host);
    return right;
}

#endif
