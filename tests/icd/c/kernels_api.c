/* Kernel objects through the ICD loader: creation, cloning, the exact errors of
 * clSetKernelArg, and every kernel query (info, argument info, work-group and sub-group info).
 * Usage: kernels_api SECTION; each section is one pytest test (test_kernels_api.py). */
#include "harness.h"
#include <time.h>

#define N 64

static cl_device_id device;
static cl_context ctx;
static cl_command_queue queue;

typedef struct {
    cl_int a;
    cl_float b;
} pair_t;

static const char *SRC =
    "typedef struct { int a; float b; } pair_t;\n"
    "__attribute__((reqd_work_group_size(8, 4, 1)))\n"
    "kernel void fixed(global int *out)\n"
    "{\n"
    "    size_t i = get_global_id(1) * get_global_size(0) + get_global_id(0);\n"
    "    out[i] = (int)(get_local_size(0) * 100 + get_local_size(1));\n"
    "}\n"
    "kernel void args(global float *g, constant int *c, local float *l, int pod, float4 vec,\n"
    "                 global const volatile int *restrict qv, ulong big, pair_t s)\n"
    "{\n"
    "    size_t i = get_global_id(0);\n"
    "    l[get_local_id(0)] = vec.x;\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    g[i] = l[get_local_id(0)] + c[i] + pod + qv[i] + (float)big + s.a + s.b + vec.w;\n"
    "}\n"
    "kernel void with_local_array(global int *out)\n"
    "{\n"
    "    local int tmp[64];\n"
    "    tmp[get_local_id(0)] = (int)get_global_id(0);\n"
    "    barrier(CLK_LOCAL_MEM_FENCE);\n"
    "    out[get_global_id(0)] = tmp[get_local_size(0) - 1 - get_local_id(0)];\n"
    "}\n"
    "kernel void unused(global int *p, int x, local int *l, float4 v) { }\n"
    "kernel void fill(global int *out, int v) { out[get_global_id(0)] = v; }\n"
    "kernel void with_private_array(global float *o, int j)\n"
    "{\n"
    "    float t[16]; float4 u[5];\n"
    "    for (int i = 0; i < 16; i++) t[i] = o[i] * i;\n"
    "    for (int i = 0; i < 5; i++) u[i] = (float4)(o[i + 16]);\n"
    "    o[0] = t[j & 15] + u[j % 5].y;\n"
    "}\n"
    "__attribute__((work_group_size_hint(16, 1, 1))) __attribute__((vec_type_hint(float4)))\n"
    "kernel void hinted(global int *out) { out[get_global_id(0)] = 1; }\n";

static cl_program program;      /* built with -cl-kernel-arg-info */
static cl_program program_bare; /* built without */

static cl_program build(const char *options)
{
    cl_int err;
    cl_program p = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
    REQUIRE_OK(err);
    cl_int rc = clBuildProgram(p, 0, NULL, options, NULL, NULL);
    if (rc != CL_SUCCESS) {
        char log[8192] = {0};
        clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        printf("FAIL clBuildProgram: %d\n%s\n", rc, log);
        exit(1);
    }
    return p;
}

static cl_kernel kernel(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    if (k == NULL || err != CL_SUCCESS) {
        printf("FAIL clCreateKernel(%s): %d\n", name, err);
        exit(1);
    }
    return k;
}

static cl_mem buffer(cl_context c, size_t size)
{
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, size, NULL, &err);
    REQUIRE_OK(err);
    return m;
}

/* Run `fill`-like kernel k (its arguments set) over N items and count out[i] != want. */
static int count_not(cl_kernel k, cl_mem out, int want)
{
    size_t global = N;
    int data[N];
    memset(data, 0xff, sizeof data);
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL));
    EXPECT_OK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += data[i] != want;
    return bad;
}

static char *kernel_string(cl_kernel k, cl_kernel_info param)
{
    size_t n = 0;
    EXPECT_OK(clGetKernelInfo(k, param, 0, NULL, &n));
    char *s = calloc(n + 1, 1);
    EXPECT_OK(clGetKernelInfo(k, param, n, s, NULL));
    EXPECT(n >= 1 && strlen(s) == n - 1, "kernel info %#x: size %zu, length %zu", param, n, strlen(s));
    return s;
}

/* --- sections ------------------------------------------------------------------------------ */

/* clCreateKernel, clCreateKernelsInProgram, clCloneKernel, retain/release. */
static void test_create(void)
{
    cl_int err;
    cl_program unbuilt = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
    REQUIRE_OK(err);
    EXPECT(clCreateKernel(unbuilt, "fill", &err) == NULL && err == CL_INVALID_PROGRAM_EXECUTABLE, "unbuilt: %d", err);
    cl_uint n = 99;
    EXPECT_ERR(clCreateKernelsInProgram(unbuilt, 0, NULL, &n), CL_INVALID_PROGRAM_EXECUTABLE);
    clReleaseProgram(unbuilt);

    EXPECT(clCreateKernel(program, "no_such_kernel", &err) == NULL && err == CL_INVALID_KERNEL_NAME, "name: %d", err);
    EXPECT(clCreateKernel(program, "", &err) == NULL && err == CL_INVALID_KERNEL_NAME, "empty name: %d", err);
    EXPECT(clCreateKernel(program, "pair_t", &err) == NULL && err == CL_INVALID_KERNEL_NAME, "a type: %d", err);
    EXPECT(clCreateKernel(program, NULL, &err) == NULL && err == CL_INVALID_VALUE, "NULL name: %d", err);
    EXPECT(clCreateKernel(NULL, "fill", &err) == NULL && err == CL_INVALID_PROGRAM, "NULL program: %d", err);
    EXPECT(clCreateKernel((cl_program)ctx, "fill", &err) == NULL && err == CL_INVALID_PROGRAM, "not a program: %d", err);

    /* clCreateKernelsInProgram */
    EXPECT_OK(clCreateKernelsInProgram(program, 0, NULL, &n));
    EXPECT(n == 7, "%u kernels", n);
    cl_kernel ks[8] = {0};
    EXPECT_ERR(clCreateKernelsInProgram(program, 6, ks, NULL), CL_INVALID_VALUE);
    EXPECT(ks[0] == NULL, "nothing is created when the array is too small");
    EXPECT_ERR(clCreateKernelsInProgram(NULL, 8, ks, NULL), CL_INVALID_PROGRAM);
    cl_uint got = 0;
    EXPECT_OK(clCreateKernelsInProgram(program, 8, ks, &got));
    EXPECT(got == 7, "%u kernels created", got);
    char names[256] = {0};
    EXPECT_OK(clGetProgramInfo(program, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL));
    for (cl_uint i = 0; i < got && i < 8; i++) {
        char *name = kernel_string(ks[i], CL_KERNEL_FUNCTION_NAME);
        EXPECT(strstr(names, name) != NULL, "kernel %s is in \"%s\"", name, names);
        for (cl_uint j = 0; j < i; j++)
            EXPECT(ks[i] != ks[j], "distinct kernel objects");
        free(name);
        EXPECT_OK(clReleaseKernel(ks[i]));
    }

    /* retain / release */
    cl_kernel k = kernel(program, "fill");
    cl_uint refs = 0;
    EXPECT_OK(clRetainKernel(k));
    EXPECT_OK(clGetKernelInfo(k, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 2, "refcount %u", refs);
    EXPECT_OK(clReleaseKernel(k));
    EXPECT_ERR(clRetainKernel(NULL), CL_INVALID_KERNEL);
    EXPECT_ERR(clReleaseKernel((cl_kernel)ctx), CL_INVALID_KERNEL);

    /* clCloneKernel: the arguments are copied; later changes to either stay apart */
    cl_mem out1 = buffer(ctx, N * sizeof(int)), out2 = buffer(ctx, N * sizeof(int));
    int five = 5, six = 6, seven = 7;
    EXPECT_OK(clSetKernelArg(k, 0, sizeof out1, &out1));
    EXPECT_OK(clSetKernelArg(k, 1, sizeof five, &five));
    cl_kernel clone = clCloneKernel(k, &err);
    EXPECT(clone != NULL && err == CL_SUCCESS, "clCloneKernel: %d", err);
    if (clone) {
        EXPECT_OK(clSetKernelArg(k, 1, sizeof six, &six));
        EXPECT(count_not(clone, out1, 5) == 0, "the clone runs with the arguments it was cloned with");
        EXPECT(count_not(k, out1, 6) == 0, "the original runs with its new argument");
        EXPECT_OK(clSetKernelArg(clone, 0, sizeof out2, &out2));
        EXPECT_OK(clSetKernelArg(clone, 1, sizeof seven, &seven));
        EXPECT(count_not(clone, out2, 7) == 0, "the clone with new arguments");
        EXPECT(count_not(k, out1, 6) == 0, "the original is unchanged");
        char *name = kernel_string(clone, CL_KERNEL_FUNCTION_NAME);
        EXPECT(strcmp(name, "fill") == 0, "clone's name %s", name);
        free(name);
        EXPECT_OK(clGetKernelInfo(clone, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, NULL));
        EXPECT(refs == 1, "clone refcount %u", refs);
        cl_program prog = NULL;
        EXPECT_OK(clGetKernelInfo(clone, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL));
        EXPECT(prog == program, "clone's program");
        clReleaseKernel(clone);
    }
    EXPECT(clCloneKernel(NULL, &err) == NULL && err == CL_INVALID_KERNEL, "clone of NULL: %d", err);
    /* a clone of a kernel without arguments set has none set either */
    cl_kernel fresh = kernel(program, "fill");
    clone = clCloneKernel(fresh, &err);
    size_t global = N;
    if (clone) {
        EXPECT_ERR(clEnqueueNDRangeKernel(queue, clone, 1, NULL, &global, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
        clReleaseKernel(clone);
    }
    clReleaseKernel(fresh);
    EXPECT_OK(clReleaseKernel(k));

    /* a kernel keeps its program: released by the application first, the kernel still
     * runs and still names it */
    cl_program own = build(NULL);
    cl_kernel kept = kernel(own, "fill");
    EXPECT_OK(clReleaseProgram(own));
    cl_program prog = NULL;
    EXPECT_OK(clGetKernelInfo(kept, CL_KERNEL_PROGRAM, sizeof prog, &prog, NULL));
    EXPECT(prog == own, "CL_KERNEL_PROGRAM after the program's release: %p", (void *)prog);
    EXPECT_OK(clSetKernelArg(kept, 0, sizeof out2, &out2));
    EXPECT_OK(clSetKernelArg(kept, 1, sizeof five, &five));
    EXPECT(count_not(kept, out2, 5) == 0, "a kernel of a released program runs");
    EXPECT_OK(clReleaseKernel(kept));
    clReleaseMemObject(out1);
    clReleaseMemObject(out2);
}

/* clSetKernelArg: each error code the spec names, and what must be accepted. */
static void test_set_arg(void)
{
    cl_kernel k = kernel(program, "args");
    cl_mem g = buffer(ctx, N * 4), c = buffer(ctx, N * 4), qv = buffer(ctx, N * 4);
    cl_int pod = 1;
    cl_float4 vec = {{1, 2, 3, 4}};
    cl_ulong big = 1;
    pair_t s = {1, 2.0f};
    cl_mem null_mem = NULL;

    EXPECT_ERR(clSetKernelArg(k, 8, sizeof g, &g), CL_INVALID_ARG_INDEX);
    EXPECT_ERR(clSetKernelArg(k, 1000, sizeof g, &g), CL_INVALID_ARG_INDEX);
    EXPECT_ERR(clSetKernelArg(NULL, 0, sizeof g, &g), CL_INVALID_KERNEL);
    EXPECT_ERR(clSetKernelArg((cl_kernel)ctx, 0, sizeof g, &g), CL_INVALID_KERNEL);

    /* global pointer */
    EXPECT_ERR(clSetKernelArg(k, 0, 4, &g), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 0, sizeof g + 8, &g), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 0, 0, NULL), CL_INVALID_ARG_SIZE);
    cl_context not_mem = ctx;
    EXPECT_ERR(clSetKernelArg(k, 0, sizeof not_mem, &not_mem), CL_INVALID_MEM_OBJECT);
    cl_kernel not_mem2 = k;
    EXPECT_ERR(clSetKernelArg(k, 0, sizeof not_mem2, &not_mem2), CL_INVALID_MEM_OBJECT);
    EXPECT_OK(clSetKernelArg(k, 0, sizeof null_mem, &null_mem)); /* a NULL buffer */
    EXPECT_OK(clSetKernelArg(k, 0, sizeof g, NULL));             /* a NULL value: the same */
    cl_int err;
    cl_context other = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    REQUIRE_OK(err);
    cl_mem foreign = buffer(other, 64);
    EXPECT_ERR(clSetKernelArg(k, 0, sizeof foreign, &foreign), CL_INVALID_MEM_OBJECT);
    cl_buffer_region region = {0, 16};
    cl_mem sub = clCreateSubBuffer(g, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE_OK(err);
    EXPECT_OK(clSetKernelArg(k, 0, sizeof sub, &sub));
    EXPECT_OK(clSetKernelArg(k, 0, sizeof g, &g));

    /* constant pointer */
    EXPECT_ERR(clSetKernelArg(k, 1, 4, &c), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 1, sizeof not_mem, &not_mem), CL_INVALID_MEM_OBJECT);
    EXPECT_OK(clSetKernelArg(k, 1, sizeof c, &c));

    /* local */
    EXPECT_ERR(clSetKernelArg(k, 2, 0, NULL), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 2, 64, &g), CL_INVALID_ARG_VALUE);
    EXPECT_OK(clSetKernelArg(k, 2, 256, NULL));

    /* values */
    EXPECT_ERR(clSetKernelArg(k, 3, sizeof(cl_long), &big), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 3, 2, &pod), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 3, 0, &pod), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 3, sizeof pod, NULL), CL_INVALID_ARG_VALUE);
    EXPECT_OK(clSetKernelArg(k, 3, sizeof pod, &pod));
    EXPECT_ERR(clSetKernelArg(k, 4, 12, &vec), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 4, 32, &vec), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 4, sizeof vec, NULL), CL_INVALID_ARG_VALUE);
    EXPECT_OK(clSetKernelArg(k, 4, sizeof vec, &vec));
    EXPECT_ERR(clSetKernelArg(k, 5, 4, &qv), CL_INVALID_ARG_SIZE);
    EXPECT_OK(clSetKernelArg(k, 5, sizeof qv, &qv));
    EXPECT_ERR(clSetKernelArg(k, 6, 4, &big), CL_INVALID_ARG_SIZE);
    EXPECT_OK(clSetKernelArg(k, 6, sizeof big, &big));
    EXPECT_ERR(clSetKernelArg(k, 7, 4, &s), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(k, 7, sizeof s, NULL), CL_INVALID_ARG_VALUE);
    EXPECT_OK(clSetKernelArg(k, 7, sizeof s, &s));

    /* with every argument set, it runs: g[i] = 1 (vec.x) + 0 + 1 + 0 + 1 + 1 + 2 + 4 (vec.w) */
    float zeros[N] = {0}, got[N];
    EXPECT_OK(clEnqueueWriteBuffer(queue, c, CL_TRUE, 0, sizeof zeros, zeros, 0, NULL, NULL));
    EXPECT_OK(clEnqueueWriteBuffer(queue, qv, CL_TRUE, 0, sizeof zeros, zeros, 0, NULL, NULL));
    size_t global = N, local = 16;
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, &local, 0, NULL, NULL));
    EXPECT_OK(clEnqueueReadBuffer(queue, g, CL_TRUE, 0, sizeof got, got, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += got[i] != 10.0f;
    EXPECT(bad == 0, "args kernel: %d wrong values (g[0] = %g)", bad, got[0]);

    /* arguments the kernel never uses keep their declared types */
    cl_kernel u = kernel(program, "unused");
    cl_uint nargs = 0;
    EXPECT_OK(clGetKernelInfo(u, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
    EXPECT(nargs == 4, "unused: %u args", nargs);
    EXPECT_ERR(clSetKernelArg(u, 0, 4, &g), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(u, 0, sizeof not_mem, &not_mem), CL_INVALID_MEM_OBJECT);
    EXPECT_OK(clSetKernelArg(u, 0, sizeof g, &g));
    EXPECT_ERR(clSetKernelArg(u, 1, sizeof pod, NULL), CL_INVALID_ARG_VALUE);
    EXPECT_ERR(clSetKernelArg(u, 1, sizeof big, &big), CL_INVALID_ARG_SIZE);
    EXPECT_OK(clSetKernelArg(u, 1, sizeof pod, &pod));
    EXPECT_ERR(clSetKernelArg(u, 2, 0, NULL), CL_INVALID_ARG_SIZE);
    EXPECT_ERR(clSetKernelArg(u, 2, 16, &pod), CL_INVALID_ARG_VALUE);
    EXPECT_OK(clSetKernelArg(u, 2, 16, NULL));
    EXPECT_ERR(clSetKernelArg(u, 3, 12, &vec), CL_INVALID_ARG_SIZE);
    EXPECT_OK(clSetKernelArg(u, 3, sizeof vec, &vec));
    EXPECT_OK(clEnqueueNDRangeKernel(queue, u, 1, NULL, &global, NULL, 0, NULL, NULL));
    EXPECT_OK(clFinish(queue));

    clReleaseKernel(u);
    clReleaseKernel(k);
    clReleaseMemObject(sub);
    clReleaseMemObject(g);
    clReleaseMemObject(c);
    clReleaseMemObject(qv);
    clReleaseMemObject(foreign);
    clReleaseContext(other);
}

static volatile int destroyed;

static void CL_CALLBACK on_destroy(cl_mem m, void *user_data)
{
    (void)m;
    (void)user_data;
    destroyed = 1;
}

/* A kernel argument is not a reference the application counts: releasing the last handle of
 * a buffer set as an argument frees it and runs its destructor callback (the CTS's
 * retain_mem_object_set_kernel_arg waits for exactly that). Enqueueing the kernel with the
 * freed argument is then an error, never a launch with a dangling address. */
static void test_released_arg(void)
{
    cl_kernel k = kernel(program, "fill");
    cl_mem out = buffer(ctx, N * 4);
    cl_int v = 7;
    EXPECT_OK(clSetMemObjectDestructorCallback(out, on_destroy, NULL));
    EXPECT_OK(clSetKernelArg(k, 0, sizeof out, &out));
    EXPECT_OK(clSetKernelArg(k, 1, sizeof v, &v));
    EXPECT(count_not(k, out, 7) == 0, "fill before the release");
    EXPECT_OK(clReleaseMemObject(out));
    for (int i = 0; i < 1000 && !destroyed; i++)
        nanosleep(&(struct timespec){0, 5000000}, NULL);
    EXPECT(destroyed, "destructor callback of a released kernel argument never ran");
    size_t global = N;
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, &global, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    /* Setting a live buffer again makes the kernel launchable. */
    cl_mem again = buffer(ctx, N * 4);
    EXPECT_OK(clSetKernelArg(k, 0, sizeof again, &again));
    EXPECT(count_not(k, again, 7) == 0, "fill after setting a new buffer");
    clReleaseMemObject(again);
    clReleaseKernel(k);
}

/* clGetKernelInfo: every param. */
static void test_info(void)
{
    cl_kernel fixed = kernel(program, "fixed"), args = kernel(program, "args"), hinted = kernel(program, "hinted");
    size_t n = 0;
    char *s = kernel_string(fixed, CL_KERNEL_FUNCTION_NAME);
    EXPECT(strcmp(s, "fixed") == 0, "name %s", s);
    free(s);
    cl_uint nargs = 0;
    EXPECT_OK(clGetKernelInfo(args, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, &n));
    EXPECT(nargs == 8 && n == sizeof(cl_uint), "args: %u args", nargs);
    EXPECT_OK(clGetKernelInfo(fixed, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL));
    EXPECT(nargs == 1, "fixed: %u args", nargs);
    cl_uint refs = 0;
    EXPECT_OK(clGetKernelInfo(fixed, CL_KERNEL_REFERENCE_COUNT, sizeof refs, &refs, &n));
    EXPECT(refs == 1 && n == sizeof(cl_uint), "refcount %u", refs);
    cl_context got_ctx = NULL;
    EXPECT_OK(clGetKernelInfo(fixed, CL_KERNEL_CONTEXT, sizeof got_ctx, &got_ctx, &n));
    EXPECT(got_ctx == ctx && n == sizeof(cl_context), "context");
    cl_program got_prog = NULL;
    EXPECT_OK(clGetKernelInfo(fixed, CL_KERNEL_PROGRAM, sizeof got_prog, &got_prog, &n));
    EXPECT(got_prog == program && n == sizeof(cl_program), "program");
    s = kernel_string(fixed, CL_KERNEL_ATTRIBUTES);
    EXPECT(strcmp(s, "reqd_work_group_size(8,4,1)") == 0, "fixed: attributes \"%s\"", s);
    free(s);
    s = kernel_string(args, CL_KERNEL_ATTRIBUTES);
    EXPECT(strcmp(s, "") == 0, "args: attributes \"%s\"", s);
    free(s);
    s = kernel_string(hinted, CL_KERNEL_ATTRIBUTES);
    EXPECT(strstr(s, "work_group_size_hint(16,1,1)") && strstr(s, "vec_type_hint(float4)") && !strchr(s, '\n'),
           "hinted: attributes \"%s\"", s);
    free(s);
    EXPECT_ERR(clGetKernelInfo(fixed, 0xdead, sizeof n, &n, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetKernelInfo(fixed, CL_KERNEL_FUNCTION_NAME, 3, &n, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetKernelInfo(fixed, CL_KERNEL_NUM_ARGS, 2, &nargs, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetKernelInfo(NULL, CL_KERNEL_NUM_ARGS, sizeof nargs, &nargs, NULL), CL_INVALID_KERNEL);
    clReleaseKernel(fixed);
    clReleaseKernel(args);
    clReleaseKernel(hinted);
}

struct arg_expect {
    const char *name, *type;
    cl_kernel_arg_address_qualifier address;
    cl_kernel_arg_type_qualifier qualifiers;
};

/* clGetKernelArgInfo with and without -cl-kernel-arg-info. */
static void test_arg_info(void)
{
    static const struct arg_expect want[8] = {
        {"g", "float*", CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_TYPE_NONE},
        {"c", "int*", CL_KERNEL_ARG_ADDRESS_CONSTANT, CL_KERNEL_ARG_TYPE_CONST},
        {"l", "float*", CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_NONE},
        {"pod", "int", CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE},
        {"vec", "float4", CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE},
        {"qv", "int*", CL_KERNEL_ARG_ADDRESS_GLOBAL,
         CL_KERNEL_ARG_TYPE_CONST | CL_KERNEL_ARG_TYPE_VOLATILE | CL_KERNEL_ARG_TYPE_RESTRICT},
        {"big", "ulong", CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE},
        {"s", "pair_t", CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE},
    };
    cl_kernel k = kernel(program, "args");
    for (cl_uint i = 0; i < 8; i++) {
        char text[64] = {0};
        size_t n = 0;
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof text, text, &n));
        EXPECT(strcmp(text, want[i].name) == 0 && n == strlen(text) + 1, "arg %u: name \"%s\"", i, text);
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof text, text, &n));
        EXPECT(strcmp(text, want[i].type) == 0 && n == strlen(text) + 1, "arg %u: type \"%s\", expected \"%s\"", i,
               text, want[i].type);
        cl_kernel_arg_address_qualifier address = 0;
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address, &n));
        EXPECT(address == want[i].address && n == sizeof address, "arg %u: address %#x, expected %#x", i, address,
               want[i].address);
        cl_kernel_arg_access_qualifier access = 0;
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ACCESS_QUALIFIER, sizeof access, &access, &n));
        EXPECT(access == CL_KERNEL_ARG_ACCESS_NONE && n == sizeof access, "arg %u: access %#x", i, access);
        cl_kernel_arg_type_qualifier quals = 99;
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_QUALIFIER, sizeof quals, &quals, &n));
        EXPECT(quals == want[i].qualifiers && n == sizeof quals, "arg %u (%s): type qualifiers %#llx, expected %#llx",
               i, want[i].name, (unsigned long long)quals, (unsigned long long)want[i].qualifiers);
    }
    char text[64];
    EXPECT_ERR(clGetKernelArgInfo(k, 8, CL_KERNEL_ARG_NAME, sizeof text, text, NULL), CL_INVALID_ARG_INDEX);
    EXPECT_ERR(clGetKernelArgInfo(k, 0, 0xdead, sizeof text, text, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, 1, text, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetKernelArgInfo(NULL, 0, CL_KERNEL_ARG_NAME, sizeof text, text, NULL), CL_INVALID_KERNEL);
    clReleaseKernel(k);

    /* arguments the kernel never uses have their information too */
    static const struct arg_expect unused[4] = {
        {"p", "int*", CL_KERNEL_ARG_ADDRESS_GLOBAL, CL_KERNEL_ARG_TYPE_NONE},
        {"x", "int", CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE},
        {"l", "int*", CL_KERNEL_ARG_ADDRESS_LOCAL, CL_KERNEL_ARG_TYPE_NONE},
        {"v", "float4", CL_KERNEL_ARG_ADDRESS_PRIVATE, CL_KERNEL_ARG_TYPE_NONE},
    };
    k = kernel(program, "unused");
    for (cl_uint i = 0; i < 4; i++) {
        cl_kernel_arg_address_qualifier address = 0;
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_NAME, sizeof text, text, NULL));
        EXPECT(strcmp(text, unused[i].name) == 0, "unused arg %u: name \"%s\"", i, text);
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_TYPE_NAME, sizeof text, text, NULL));
        EXPECT(strcmp(text, unused[i].type) == 0, "unused arg %u: type \"%s\"", i, text);
        EXPECT_OK(clGetKernelArgInfo(k, i, CL_KERNEL_ARG_ADDRESS_QUALIFIER, sizeof address, &address, NULL));
        EXPECT(address == unused[i].address, "unused arg %u: address %#x", i, address);
    }
    clReleaseKernel(k);

    /* -cl-kernel-arg-info given to clCompileProgram: the linked program has the information;
     * without it, it does not */
    for (int with = 0; with < 2; with++) {
        cl_int err;
        cl_program obj = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
        REQUIRE_OK(err);
        EXPECT_OK(clCompileProgram(obj, 0, NULL, with ? "-cl-kernel-arg-info" : NULL, 0, NULL, NULL, NULL, NULL));
        cl_program linked = clLinkProgram(ctx, 0, NULL, NULL, 1, &obj, NULL, NULL, &err);
        EXPECT(linked != NULL && err == CL_SUCCESS, "link: %d", err);
        if (linked) {
            k = kernel(linked, "args");
            cl_int rc = clGetKernelArgInfo(k, 5, CL_KERNEL_ARG_NAME, sizeof text, text, NULL);
            if (with)
                EXPECT(rc == CL_SUCCESS && strcmp(text, "qv") == 0, "compiled with arg info: %d \"%s\"", rc, text);
            else
                EXPECT(rc == CL_KERNEL_ARG_INFO_NOT_AVAILABLE, "compiled without arg info: %d", rc);
            clReleaseKernel(k);
            clReleaseProgram(linked);
        }
        clReleaseProgram(obj);
    }

    /* built without -cl-kernel-arg-info */
    k = kernel(program_bare, "args");
    EXPECT_ERR(clGetKernelArgInfo(k, 0, CL_KERNEL_ARG_NAME, sizeof text, text, NULL), CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
    EXPECT_ERR(clGetKernelArgInfo(k, 3, CL_KERNEL_ARG_TYPE_NAME, sizeof text, text, NULL),
               CL_KERNEL_ARG_INFO_NOT_AVAILABLE);
    EXPECT_ERR(clGetKernelArgInfo(k, 8, CL_KERNEL_ARG_NAME, sizeof text, text, NULL), CL_INVALID_ARG_INDEX);
    clReleaseKernel(k);
}

/* clGetKernelWorkGroupInfo and clGetKernelSubGroupInfo. */
static void test_work_group_info(void)
{
    size_t dev_max = 0;
    cl_uint max_sub_groups = 0;
    EXPECT_OK(clGetDeviceInfo(device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof dev_max, &dev_max, NULL));
    EXPECT_OK(clGetDeviceInfo(device, CL_DEVICE_MAX_NUM_SUB_GROUPS, sizeof max_sub_groups, &max_sub_groups, NULL));
    cl_kernel fixed = kernel(program, "fixed"), args = kernel(program, "args");
    cl_kernel arr = kernel(program, "with_local_array"), fill = kernel(program, "fill");
    cl_kernel all[4] = {fixed, args, arr, fill};
    for (int i = 0; i < 4; i++) {
        size_t wg = 0, n = 0, multiple = 0;
        EXPECT_OK(clGetKernelWorkGroupInfo(all[i], device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, &n));
        EXPECT(wg > 0 && wg <= dev_max && n == sizeof(size_t), "kernel %d: work-group size %zu", i, wg);
        EXPECT_OK(clGetKernelWorkGroupInfo(all[i], NULL, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
        EXPECT_OK(clGetKernelWorkGroupInfo(all[i], device, CL_KERNEL_PREFERRED_WORK_GROUP_SIZE_MULTIPLE,
                                           sizeof multiple, &multiple, &n));
        EXPECT(multiple > 0 && multiple <= wg && n == sizeof(size_t), "kernel %d: multiple %zu", i, multiple);
        cl_ulong priv = 99, local = 99;
        EXPECT_OK(clGetKernelWorkGroupInfo(all[i], device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof priv, &priv, &n));
        EXPECT(n == sizeof(cl_ulong), "private mem size: size %zu", n);
        EXPECT_OK(clGetKernelWorkGroupInfo(all[i], device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, &n));
        EXPECT(n == sizeof(cl_ulong), "local mem size: size %zu", n);
        size_t global[3];
        EXPECT_ERR(clGetKernelWorkGroupInfo(all[i], device, CL_KERNEL_GLOBAL_WORK_SIZE, sizeof global, global, NULL),
                   CL_INVALID_VALUE);
    }
    size_t cwg[3] = {9, 9, 9}, n = 0;
    EXPECT_OK(clGetKernelWorkGroupInfo(fixed, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, &n));
    EXPECT(cwg[0] == 8 && cwg[1] == 4 && cwg[2] == 1 && n == sizeof cwg, "fixed: %zu %zu %zu", cwg[0], cwg[1], cwg[2]);
    EXPECT_OK(clGetKernelWorkGroupInfo(fill, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof cwg, cwg, NULL));
    EXPECT(cwg[0] == 0 && cwg[1] == 0 && cwg[2] == 0, "fill: %zu %zu %zu", cwg[0], cwg[1], cwg[2]);
    EXPECT_ERR(clGetKernelWorkGroupInfo(fixed, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, 8, cwg, NULL),
               CL_INVALID_VALUE);
    size_t wg = 0;
    EXPECT_OK(clGetKernelWorkGroupInfo(fixed, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    EXPECT(wg == 32, "fixed: work-group size %zu, not its required 8 x 4 x 1", wg);
    EXPECT_OK(clGetKernelWorkGroupInfo(fill, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    EXPECT(wg == dev_max, "fill: work-group size %zu, not the device's %zu", wg, dev_max);

    /* private memory: the private arrays a kernel keeps as arrays (16 floats, 5 float4s) */
    cl_kernel priv = kernel(program, "with_private_array");
    cl_ulong private_bytes = 99;
    EXPECT_OK(clGetKernelWorkGroupInfo(priv, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_bytes,
                                       &private_bytes, NULL));
    EXPECT(private_bytes == 16 * 4 + 5 * 16, "with_private_array: private mem %llu",
           (unsigned long long)private_bytes);
    EXPECT_OK(clGetKernelWorkGroupInfo(fill, device, CL_KERNEL_PRIVATE_MEM_SIZE, sizeof private_bytes,
                                       &private_bytes, NULL));
    EXPECT(private_bytes == 0, "fill: private mem %llu", (unsigned long long)private_bytes);
    clReleaseKernel(priv);

    /* local memory: the kernel's own __local arrays, plus the __local arguments as set */
    cl_ulong local = 0, local2 = 0;
    EXPECT_OK(clGetKernelWorkGroupInfo(arr, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL));
    EXPECT(local >= 64 * sizeof(int), "with_local_array: local mem %llu", (unsigned long long)local);
    EXPECT_OK(clSetKernelArg(args, 2, 128, NULL));
    EXPECT_OK(clGetKernelWorkGroupInfo(args, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local, &local, NULL));
    EXPECT(local >= 128, "args with 128 local bytes: %llu", (unsigned long long)local);
    EXPECT_OK(clSetKernelArg(args, 2, 1024, NULL));
    EXPECT_OK(clGetKernelWorkGroupInfo(args, device, CL_KERNEL_LOCAL_MEM_SIZE, sizeof local2, &local2, NULL));
    EXPECT(local2 == local + 896, "args with 1024 local bytes: %llu (was %llu)", (unsigned long long)local2,
           (unsigned long long)local);

    /* errors */
    EXPECT_ERR(clGetKernelWorkGroupInfo(fill, device, 0xdead, sizeof wg, &wg, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetKernelWorkGroupInfo(fill, device, CL_KERNEL_WORK_GROUP_SIZE, 4, &wg, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetKernelWorkGroupInfo(fill, (cl_device_id)ctx, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
               CL_INVALID_DEVICE);
    EXPECT_ERR(clGetKernelWorkGroupInfo(NULL, device, CL_KERNEL_WORK_GROUP_SIZE, sizeof wg, &wg, NULL),
               CL_INVALID_KERNEL);

    /* sub-groups */
    if (max_sub_groups == 0) {
        /* spec: CL_INVALID_OPERATION when the device does not support sub-groups */
        size_t in1[1] = {64}, out = 0;
        EXPECT_ERR(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof in1, in1,
                                           sizeof out, &out, NULL), CL_INVALID_OPERATION);
    } else {
        size_t in1[1] = {64}, in2[2] = {16, 4}, out = 0, sizes[3] = {9, 9, 9};
        size_t sg_max = 0;
        EXPECT_OK(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, sizeof in1, in1,
                                          sizeof sg_max, &sg_max, &n));
        EXPECT(sg_max >= 1 && sg_max <= 64 && n == sizeof(size_t), "max sub-group size %zu", sg_max);
        EXPECT_OK(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_SUB_GROUP_COUNT_FOR_NDRANGE, sizeof in2, in2,
                                          sizeof out, &out, NULL));
        EXPECT(out == (64 + sg_max - 1) / sg_max, "sub-group count for 16x4: %zu (size %zu)", out, sg_max);
        size_t count = 2;
        EXPECT_OK(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_LOCAL_SIZE_FOR_SUB_GROUP_COUNT, sizeof count, &count,
                                          sizeof sizes, sizes, &n));
        EXPECT(sizes[0] == 2 * sg_max && sizes[1] == 1 && sizes[2] == 1 && n == sizeof sizes,
               "local size for 2 sub-groups: %zu %zu %zu (%zu bytes)", sizes[0], sizes[1], sizes[2], n);
        EXPECT_OK(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, NULL, sizeof out, &out, NULL));
        EXPECT(out >= 1 && out <= max_sub_groups, "max sub-groups %zu", out);
        out = 99;
        EXPECT_OK(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_COMPILE_NUM_SUB_GROUPS, 0, NULL, sizeof out, &out,
                                          NULL));
        EXPECT(out == 0, "compile sub-groups %zu", out);
        EXPECT_ERR(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, 0, NULL,
                                           sizeof out, &out, NULL), CL_INVALID_VALUE);
        EXPECT_ERR(clGetKernelSubGroupInfo(fill, device, CL_KERNEL_MAX_SUB_GROUP_SIZE_FOR_NDRANGE, 5, in1,
                                           sizeof out, &out, NULL), CL_INVALID_VALUE);
        EXPECT_ERR(clGetKernelSubGroupInfo(fill, device, 0xdead, sizeof in1, in1, sizeof out, &out, NULL),
                   CL_INVALID_VALUE);
        EXPECT_ERR(clGetKernelSubGroupInfo(NULL, device, CL_KERNEL_MAX_NUM_SUB_GROUPS, 0, NULL, sizeof out, &out,
                                           NULL), CL_INVALID_KERNEL);
    }
    clReleaseKernel(fixed);
    clReleaseKernel(args);
    clReleaseKernel(arr);
    clReleaseKernel(fill);
}

/* What clEnqueueNDRangeKernel checks about the kernel: unset arguments, the required
 * work-group size. */
static void test_enqueue(void)
{
    cl_kernel fill = kernel(program, "fill"), fixed = kernel(program, "fixed");
    cl_mem out = buffer(ctx, N * sizeof(int));
    size_t global = N;
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, fill, 1, NULL, &global, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    EXPECT_OK(clSetKernelArg(fill, 0, sizeof out, &out));
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, fill, 1, NULL, &global, NULL, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    EXPECT_ERR(clEnqueueTask(queue, fill, 0, NULL, NULL), CL_INVALID_KERNEL_ARGS);
    int v = 3;
    EXPECT_OK(clSetKernelArg(fill, 1, sizeof v, &v));
    EXPECT(count_not(fill, out, 3) == 0, "fill with every argument set");

    /* reqd_work_group_size(8, 4, 1) */
    EXPECT_OK(clSetKernelArg(fixed, 0, sizeof out, &out));
    size_t g2[2] = {16, 4}, l_ok[2] = {8, 4}, l_bad[2] = {4, 4};
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, fixed, 2, NULL, g2, l_bad, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    EXPECT_OK(clEnqueueNDRangeKernel(queue, fixed, 2, NULL, g2, l_ok, 0, NULL, NULL));
    int data[N];
    EXPECT_OK(clEnqueueReadBuffer(queue, out, CL_TRUE, 0, sizeof data, data, 0, NULL, NULL));
    int bad = 0;
    for (int i = 0; i < N; i++)
        bad += data[i] != 804;
    EXPECT(bad == 0, "fixed: %d wrong values (data[0] = %d)", bad, data[0]);
    clReleaseMemObject(out);
    clReleaseKernel(fill);
    clReleaseKernel(fixed);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: kernels_api create|set_arg|released_arg|info|arg_info|work_group_info|enqueue\n");
        return 2;
    }
    harness_open(&device, &ctx, &queue);
    program = build("-cl-kernel-arg-info");
    program_bare = build(NULL);

    const char *section = argv[1];
    if (strcmp(section, "create") == 0)
        test_create();
    else if (strcmp(section, "set_arg") == 0)
        test_set_arg();
    else if (strcmp(section, "released_arg") == 0)
        test_released_arg();
    else if (strcmp(section, "info") == 0)
        test_info();
    else if (strcmp(section, "arg_info") == 0)
        test_arg_info();
    else if (strcmp(section, "work_group_info") == 0)
        test_work_group_info();
    else if (strcmp(section, "enqueue") == 0)
        test_enqueue();
    else {
        printf("FAIL unknown section %s\n", section);
        return 2;
    }
    clReleaseProgram(program);
    clReleaseProgram(program_bare);
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return harness_result();
}
