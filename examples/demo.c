/* vkcl demo: an ordinary OpenCL program, linked with -lOpenCL, that finds the vkcl
 * platform through the ICD loader and, on every vkcl device, builds an OpenCL C kernel,
 * runs it and checks its result on the host. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cl_int err_ = (call);                                                    \
        if (err_ != CL_SUCCESS) {                                                \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, err_); \
            return 1;                                                            \
        }                                                                        \
    } while (0)

static const char *source =
    "kernel void saxpy(float a, global const float *x, global float *y) {\n"
    "    size_t i = get_global_id(0);\n"
    "    y[i] = a * x[i] + y[i];\n"
    "}\n";

/* y = 2x + y on `device`, checked element by element. */
static int run_saxpy(cl_context ctx, cl_device_id device)
{
    enum { N = 1 << 20 };
    float *x = malloc(N * sizeof *x), *y = malloc(N * sizeof *y), *out = malloc(N * sizeof *out);
    for (int i = 0; i < N; i++) {
        x[i] = (float)i;
        y[i] = (float)(N - i);
    }
    cl_int err;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    CHECK(err);
    cl_program prog = clCreateProgramWithSource(ctx, 1, &source, NULL, &err);
    CHECK(err);
    if (clBuildProgram(prog, 1, &device, NULL, NULL, NULL) != CL_SUCCESS) {
        char log[4096];
        clGetProgramBuildInfo(prog, device, CL_PROGRAM_BUILD_LOG, sizeof log, log, NULL);
        fprintf(stderr, "build failed:\n%s\n", log);
        return 1;
    }
    cl_kernel k = clCreateKernel(prog, "saxpy", &err);
    CHECK(err);
    cl_mem bx = clCreateBuffer(ctx, CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N * sizeof *x, x, &err);
    CHECK(err);
    cl_mem by = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, N * sizeof *y, y, &err);
    CHECK(err);
    float a = 2.0f;
    CHECK(clSetKernelArg(k, 0, sizeof a, &a));
    CHECK(clSetKernelArg(k, 1, sizeof bx, &bx));
    CHECK(clSetKernelArg(k, 2, sizeof by, &by));
    size_t global = N;
    CHECK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    CHECK(clEnqueueReadBuffer(q, by, CL_TRUE, 0, N * sizeof *out, out, 0, NULL, NULL));
    int wrong = 0;
    for (int i = 0; i < N; i++)
        wrong += fabsf(out[i] - (2.0f * x[i] + y[i])) > 1e-3f * fabsf(2.0f * x[i] + y[i]);
    printf("  saxpy on %d elements: %s (y[12345] = %.1f, expected %.1f)\n", N, wrong ? "WRONG" : "correct",
           out[12345], 2.0f * x[12345] + y[12345]);
    clReleaseMemObject(bx);
    clReleaseMemObject(by);
    clReleaseKernel(k);
    clReleaseProgram(prog);
    clReleaseCommandQueue(q);
    free(x);
    free(y);
    free(out);
    return wrong != 0;
}

int main(void)
{
    cl_uint num_platforms = 0;
    CHECK(clGetPlatformIDs(0, NULL, &num_platforms));
    cl_platform_id platforms[16];
    CHECK(clGetPlatformIDs(num_platforms < 16 ? num_platforms : 16, platforms, NULL));

    int found = 0;
    for (cl_uint p = 0; p < num_platforms && p < 16; p++) {
        char name[256], version[256];
        CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_NAME, sizeof name, name, NULL));
        if (strcmp(name, "vkcl") != 0)
            continue;
        found = 1;
        CHECK(clGetPlatformInfo(platforms[p], CL_PLATFORM_VERSION, sizeof version, version, NULL));
        printf("platform: %s (%s)\n", name, version);

        cl_uint num_devices = 0;
        CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, 0, NULL, &num_devices));
        cl_device_id devices[16];
        CHECK(clGetDeviceIDs(platforms[p], CL_DEVICE_TYPE_ALL, num_devices < 16 ? num_devices : 16, devices, NULL));
        for (cl_uint d = 0; d < num_devices && d < 16; d++) {
            char dev_name[256];
            cl_ulong mem = 0;
            cl_uint units = 0;
            CHECK(clGetDeviceInfo(devices[d], CL_DEVICE_NAME, sizeof dev_name, dev_name, NULL));
            CHECK(clGetDeviceInfo(devices[d], CL_DEVICE_GLOBAL_MEM_SIZE, sizeof mem, &mem, NULL));
            CHECK(clGetDeviceInfo(devices[d], CL_DEVICE_MAX_COMPUTE_UNITS, sizeof units, &units, NULL));
            cl_int err;
            cl_context ctx = clCreateContext(NULL, 1, &devices[d], NULL, NULL, &err);
            CHECK(err);
            cl_uint ctx_devices = 0;
            CHECK(clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof ctx_devices, &ctx_devices, NULL));
            printf("device %u: %s, %llu MiB, %u compute units: context created (%u device)\n", d, dev_name,
                   (unsigned long long)(mem >> 20), units, ctx_devices);
            if (run_saxpy(ctx, devices[d]))
                return 1;
            CHECK(clReleaseContext(ctx));
        }
    }
    if (!found) {
        fprintf(stderr, "no vkcl platform found: is OCL_ICD_VENDORS set?\n");
        return 1;
    }
    printf("demo: OK\n");
    return 0;
}
