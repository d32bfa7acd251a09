/* What every probe starts with: the OpenCL platform whose name contains a string, its first
 * device, a clock in seconds, and a comparison for qsort of doubles. */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

static inline double now(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec + t.tv_nsec * 1e-9;
}

static inline int cmp_double(const void *a, const void *b)
{
    double x = *(const double *)a, y = *(const double *)b;
    return x < y ? -1 : x > y;
}

/* The first device of the platform named like `want`; exits when there is none. */
static inline cl_device_id probe_device(const char *want)
{
    cl_platform_id ps[16];
    cl_uint np = 0;
    clGetPlatformIDs(16, ps, &np);
    for (cl_uint i = 0; i < np; i++) {
        char name[256] = "";
        clGetPlatformInfo(ps[i], CL_PLATFORM_NAME, sizeof name, name, NULL);
        cl_device_id d;
        if (strstr(name, want) && clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 1, &d, NULL) == CL_SUCCESS)
            return d;
    }
    printf("no platform named like %s\n", want);
    exit(1);
}
