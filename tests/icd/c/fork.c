/* fork() after vkcl has run a kernel (tests/icd/test_fork.py): the child exits at once, or
 * calls OpenCL and gets an error (never success, never a hang); the parent goes on unaffected.
 *   fork exit     the child calls exit(0) at once
 *   fork call     the child calls OpenCL, then exit(0)
 *   fork before   fork() before vkcl started: the child uses OpenCL normally */
#include "harness.h"
#include <sys/wait.h>
#include <unistd.h>

static const char *SRC = "kernel void inc(global int *a) { a[get_global_id(0)] += 1; }";

/* Runs inc once over n ints starting at 0; returns how many came back as 1. */
static int run_inc(cl_device_id device)
{
    enum { n = 256 };
    cl_int err, host[n] = {0};
    cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    if (err != CL_SUCCESS)
        return -1;
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    cl_program p = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
    EXPECT_OK(clBuildProgram(p, 1, &device, "", NULL, NULL));
    cl_kernel k = clCreateKernel(p, "inc", &err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof host, host, &err);
    EXPECT_OK(clSetKernelArg(k, 0, sizeof b, &b));
    size_t global = n;
    EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    EXPECT_OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, sizeof host, host, 0, NULL, NULL));
    clReleaseMemObject(b);
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseCommandQueue(q);
    clReleaseContext(ctx);
    int ones = 0;
    for (int i = 0; i < n; i++)
        ones += host[i] == 1;
    return ones;
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "exit";
    if (strcmp(mode, "before") == 0) {
        pid_t pid = fork();
        if (pid == 0) {  /* nothing of vkcl ran before the fork: the child has a working platform */
            int ones = run_inc(vkcl_device(vkcl_platform()));
            exit(ones == 256 && harness_failures == 0 ? 0 : 3);
        }
        int status;
        waitpid(pid, &status, 0);
        EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
        EXPECT(run_inc(vkcl_device(vkcl_platform())) == 256, "parent after the child");
        return harness_result();
    }
    cl_device_id device = vkcl_device(vkcl_platform());
    EXPECT(run_inc(device) == 256, "parent before the fork");
    fflush(stdout);
    pid_t pid = fork();
    if (pid == 0) {
        if (strcmp(mode, "call") == 0) {
            cl_int err = CL_SUCCESS;
            cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
            cl_uint n = 0;
            cl_int err2 = clGetDeviceIDs(NULL, CL_DEVICE_TYPE_ALL, 0, NULL, &n);
            /* an error, and nothing made */
            exit(ctx == NULL && err != CL_SUCCESS && err2 != CL_SUCCESS ? 0 : 4);
        }
        exit(0);
    }
    int status;
    waitpid(pid, &status, 0);
    EXPECT(WIFEXITED(status) && WEXITSTATUS(status) == 0, "child status %d", status);
    EXPECT(run_inc(device) == 256, "parent after the child");
    return harness_result();
}
