/* fork() after vkcl has run a kernel (tests/icd/test_fork.py): the child exits at once, or
 * calls OpenCL and gets an error (never success, never a hang); the parent goes on unaffected.
 *   fork exit     the child calls exit(0) at once
 *   fork call     the child calls OpenCL, then exit(0)
 *   fork before   fork() before vkcl started: the child uses OpenCL normally */
#include "harness.h"
#include <sys/wait.h>
#include <unistd.h>

/* A kernel run in a context of its own: how many of its 256 values came back right. */
static int run_inc(cl_device_id device)
{
    return harness_increment_in_new_context(device, 256);
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
