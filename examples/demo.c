/* vkcl demo: an ordinary OpenCL program, linked with -lOpenCL, that finds the vkcl
 * platform through the ICD loader and creates a context on every vkcl device. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <string.h>

#define CHECK(call)                                                              \
    do {                                                                         \
        cl_int err_ = (call);                                                    \
        if (err_ != CL_SUCCESS) {                                                \
            fprintf(stderr, "%s:%d: %s failed: %d\n", __FILE__, __LINE__, #call, err_); \
            return 1;                                                            \
        }                                                                        \
    } while (0)

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
