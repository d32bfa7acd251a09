/* A kernel that reads through a NULL pointer on a GPU (tests/icd/test_device_lost.py): NVIDIA's
 * driver loses the device. vkcl reports the failure (clFinish or the event: a negative status,
 * never success, never a hang), the application releases everything, and a new context runs a
 * correct kernel. Not on a CPU device: lavapipe runs kernels in the process, where the read
 * would crash it ("SKIP" is printed). */
#include "harness.h"

static const char *SRC =
    "kernel void bad(global int *o, ulong addr) { o[get_global_id(0)] = *(global volatile int *)addr; }\n"
    "kernel void inc(global int *a) { a[get_global_id(0)] += 1; }\n";

static int run_inc(cl_device_id device)
{
    return harness_increment_in_new_context(device, 1024) == 1024;
}

int main(void)
{
    cl_device_id device = vkcl_device(vkcl_platform());
    cl_device_type type;
    REQUIRE_OK(clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    if (!(type & CL_DEVICE_TYPE_GPU)) {
        printf("SKIP: not a GPU\n");
        return 0;
    }
    EXPECT(run_inc(device), "a kernel before the fault");
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
    REQUIRE_OK(clBuildProgram(p, 1, &device, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, "bad", &err);
    cl_mem o = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 4096, NULL, &err);
    cl_ulong null_address = 0;
    EXPECT_OK(clSetKernelArg(k, 0, sizeof o, &o));
    EXPECT_OK(clSetKernelArg(k, 1, sizeof null_address, &null_address));
    size_t global = 1024;
    cl_event ev;
    EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, &ev));
    cl_int finish = clFinish(q);
    cl_int status = 1;
    EXPECT_OK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    printf("clFinish %d, event status %d\n", finish, status);
    EXPECT(finish != CL_SUCCESS || status < 0, "the fault was not reported");
    EXPECT(status != CL_COMPLETE, "the faulting kernel's event says CL_COMPLETE");
    clReleaseEvent(ev);
    clReleaseMemObject(o);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    EXPECT(run_inc(device), "a new context after the fault");
    return harness_result();
}
