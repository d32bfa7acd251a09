/* Programs through the ICD loader, continued: clCompileProgram with headers and
 * clLinkProgram of objects and libraries, asynchronous builds, builds from several threads,
 * and every program query with the remaining errors.
 * Usage: program_link SECTION; each section is one pytest test (test_programs.py). */
#include "program_util.h"

/* clCompileProgram with embedded headers, clLinkProgram of two objects, a library. */
static void test_link(void)
{
    cl_int err;
    cl_program my_h = from_source("#define SCALE 5\nint helper(int x);\n");
    cl_program other_h = from_source("#define OTHER 3\n");
    cl_program main_p = from_source("#include \"my.h\"\n#include \"inc/other.h\"\n"
                                    "kernel void k(global int *out) { int i = (int)get_global_id(0); "
                                    "out[i] = helper(i) * SCALE + OTHER; }\n");
    cl_program helper_p = from_source("int helper(int x) { return x + 1; }\n");
    cl_program headers[2] = {my_h, other_h};
    const char *names[2] = {"my.h", "inc/other.h"};

    /* without its headers the compile fails, and the log names the missing file */
    EXPECT_ERR(clCompileProgram(main_p, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_COMPILE_PROGRAM_FAILURE);
    EXPECT(build_status(main_p) == CL_BUILD_ERROR, "status %d", build_status(main_p));
    EXPECT(log_contains(main_p, "my.h"), "the log names the missing header");

    EXPECT_OK(clCompileProgram(main_p, 1, &device, "-DUNUSED", 2, headers, names, NULL, NULL));
    EXPECT(build_status(main_p) == CL_BUILD_SUCCESS, "status %d", build_status(main_p));
    EXPECT(binary_type(main_p) == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, "type %u", binary_type(main_p));
    char *echoed = build_string(main_p, CL_PROGRAM_BUILD_OPTIONS);
    EXPECT(strcmp(echoed, "-DUNUSED") == 0, "compile options echoed \"%s\"", echoed);
    free(echoed);
    size_t nk;
    EXPECT_ERR(clGetProgramInfo(main_p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_INVALID_PROGRAM_EXECUTABLE);
    EXPECT(clCreateKernel(main_p, "k", &err) == NULL && err == CL_INVALID_PROGRAM_EXECUTABLE, "kernel of an object: %d",
           err);

    /* linking needs compiled inputs: a source program is CL_INVALID_OPERATION */
    cl_program both[2] = {main_p, helper_p};
    EXPECT(clLinkProgram(ctx, 0, NULL, NULL, 2, both, NULL, NULL, &err) == NULL && err == CL_INVALID_OPERATION,
           "link of an uncompiled program: err %d", err);
    EXPECT_OK(clCompileProgram(helper_p, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL));

    cl_program exe = clLinkProgram(ctx, 0, NULL, NULL, 2, both, NULL, NULL, &err);
    EXPECT(exe != NULL && err == CL_SUCCESS, "link of two objects: err %d", err);
    if (exe) {
        EXPECT(binary_type(exe) == CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "type %u", binary_type(exe));
        EXPECT(build_status(exe) == CL_BUILD_SUCCESS, "status %d", build_status(exe));
        run_check(exe, "k", 0, 5, 8);
        clReleaseProgram(exe);
    }

    /* a library of the helper, then linked with the main object */
    cl_program lib = clLinkProgram(ctx, 1, &device, "-create-library", 1, &helper_p, NULL, NULL, &err);
    EXPECT(lib != NULL && err == CL_SUCCESS, "-create-library: err %d", err);
    if (lib) {
        EXPECT(binary_type(lib) == CL_PROGRAM_BINARY_TYPE_LIBRARY, "library type %u", binary_type(lib));
        EXPECT_ERR(clGetProgramInfo(lib, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_INVALID_PROGRAM_EXECUTABLE);
        cl_program with_lib[2] = {main_p, lib};
        exe = clLinkProgram(ctx, 0, NULL, NULL, 2, with_lib, NULL, NULL, &err);
        EXPECT(exe != NULL && err == CL_SUCCESS, "link with a library: err %d", err);
        if (exe) {
            run_check(exe, "k", 0, 5, 8);
            clReleaseProgram(exe);
        }
        /* a library of a library and an object, with -enable-link-options */
        cl_program lib2 = clLinkProgram(ctx, 0, NULL, "-create-library -enable-link-options -cl-fast-relaxed-math",
                                        2, with_lib, NULL, NULL, &err);
        EXPECT(lib2 != NULL && err == CL_SUCCESS, "library of a library: err %d", err);
        if (lib2) {
            exe = clLinkProgram(ctx, 0, NULL, NULL, 1, &lib2, NULL, NULL, &err);
            EXPECT(exe != NULL && err == CL_SUCCESS, "link of a library alone: err %d", err);
            if (exe) {
                run_check(exe, "k", 0, 5, 8);
                clReleaseProgram(exe);
            }
            clReleaseProgram(lib2);
        }
        clReleaseProgram(lib);
    }

    /* argument errors */
    EXPECT(clLinkProgram(ctx, 0, NULL, NULL, 0, both, NULL, NULL, &err) == NULL && err == CL_INVALID_VALUE,
           "no inputs: err %d", err);
    EXPECT(clLinkProgram(ctx, 0, NULL, NULL, 2, NULL, NULL, NULL, &err) == NULL && err == CL_INVALID_VALUE,
           "NULL inputs: err %d", err);
    EXPECT(clLinkProgram(ctx, 0, NULL, NULL, 2, both, NULL, (void *)1, &err) == NULL && err == CL_INVALID_VALUE,
           "user_data without pfn_notify: err %d", err);
    EXPECT(clLinkProgram(NULL, 0, NULL, NULL, 2, both, NULL, NULL, &err) == NULL && err == CL_INVALID_CONTEXT,
           "NULL context: err %d", err);
    cl_program not_program = (cl_program)ctx;
    EXPECT(clLinkProgram(ctx, 0, NULL, NULL, 1, &not_program, NULL, NULL, &err) == NULL && err == CL_INVALID_PROGRAM,
           "not a program: err %d", err);
    EXPECT_ERR(clCompileProgram(main_p, 0, NULL, NULL, 1, NULL, names, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clCompileProgram(main_p, 0, NULL, NULL, 0, headers, NULL, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clCompileProgram(main_p, 0, NULL, NULL, 1, headers, NULL, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clCompileProgram(main_p, 0, NULL, NULL, 0, NULL, names, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clCompileProgram(NULL, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_INVALID_PROGRAM);
    EXPECT_ERR(clCompileProgram(main_p, 0, NULL, NULL, 0, NULL, NULL, NULL, (void *)1), CL_INVALID_VALUE);

    clReleaseProgram(my_h);
    clReleaseProgram(other_h);
    clReleaseProgram(main_p);
    clReleaseProgram(helper_p);
}

/* --- asynchronous builds ------------------------------------------------------------------- */

struct notice {
    pthread_mutex_t lock;
    int calls;
    cl_program program;
    pthread_t thread;
    cl_build_status status; /* read inside the callback */
};

static void CL_CALLBACK on_built(cl_program program, void *user_data)
{
    struct notice *n = user_data;
    cl_build_status s = 99;
    clGetProgramBuildInfo(program, device, CL_PROGRAM_BUILD_STATUS, sizeof s, &s, NULL);
    pthread_mutex_lock(&n->lock);
    n->calls++;
    n->program = program;
    n->thread = pthread_self();
    n->status = s;
    pthread_mutex_unlock(&n->lock);
}

/* Wait (at most 60 s) for the callback; 1 when it came. */
static int wait_notice(struct notice *n)
{
    for (int i = 0; i < 6000; i++) {
        pthread_mutex_lock(&n->lock);
        int calls = n->calls;
        pthread_mutex_unlock(&n->lock);
        if (calls)
            return 1;
        sleep_ms(10);
    }
    return 0;
}

static void check_notice(struct notice *n, cl_program expected, cl_build_status status, const char *what)
{
    EXPECT(wait_notice(n), "%s: the callback was never called", what);
    sleep_ms(50); /* a second call would come now */
    EXPECT(n->calls == 1, "%s: %d calls", what, n->calls);
    EXPECT(n->program == expected, "%s: the callback got another program", what);
    EXPECT(!pthread_equal(n->thread, pthread_self()), "%s: called on the application's thread", what);
    EXPECT(n->status == status, "%s: status %d inside the callback", what, n->status);
    if (expected)
        EXPECT(build_status(expected) == status, "%s: status %d after the callback", what, build_status(expected));
}

static void test_async(void)
{
    struct notice n = {PTHREAD_MUTEX_INITIALIZER, 0, NULL, 0, 0};
    cl_program p = from_source(OFFSET_SRC);
    EXPECT_OK(clBuildProgram(p, 0, NULL, "-DOFFSET=1", on_built, &n));
    check_notice(&n, p, CL_BUILD_SUCCESS, "async build");
    run_check(p, "scale", 2, 2, 1);

    /* a failed asynchronous build: the call succeeds, the status says what happened */
    memset(&n, 0, sizeof n);
    pthread_mutex_init(&n.lock, NULL);
    cl_program bad = from_source(SYNTAX_ERROR_SRC);
    cl_int rc = clBuildProgram(bad, 0, NULL, NULL, on_built, &n);
    EXPECT(rc == CL_SUCCESS || rc == CL_BUILD_PROGRAM_FAILURE, "async failing build: %d", rc);
    check_notice(&n, bad, CL_BUILD_ERROR, "async failing build");
    EXPECT(log_contains(bad, "undeclared_thing"), "async failing build: log");

    /* compile and link */
    memset(&n, 0, sizeof n);
    pthread_mutex_init(&n.lock, NULL);
    cl_program obj = from_source(OFFSET_SRC);
    EXPECT_OK(clCompileProgram(obj, 0, NULL, "-DOFFSET=3", 0, NULL, NULL, on_built, &n));
    check_notice(&n, obj, CL_BUILD_SUCCESS, "async compile");
    memset(&n, 0, sizeof n);
    pthread_mutex_init(&n.lock, NULL);
    cl_int err;
    cl_program linked = clLinkProgram(ctx, 0, NULL, NULL, 1, &obj, on_built, &n, &err);
    EXPECT(linked != NULL && err == CL_SUCCESS, "async link: err %d", err);
    check_notice(&n, linked, CL_BUILD_SUCCESS, "async link");
    if (linked) {
        run_check(linked, "scale", 3, 3, 3);
        clReleaseProgram(linked);
    }
    /* while an asynchronous rebuild runs (one that takes a while: many kernels, not cached),
     * the program has no executable and cannot be rebuilt or linked */
    static char big[64 * 1024];
    size_t len = (size_t)snprintf(big, sizeof big, "kernel void k(global int *out, int k) { out[get_global_id(0)] = k; }\n"
                                  "#ifndef FAST\n");
    for (int i = 0; i < 30; i++)
        len += (size_t)snprintf(big + len, sizeof big - len,
                                "kernel void k%d(global float *a) { size_t i = get_global_id(0); "
                                "a[i] = sin(a[i]) * cos(a[i + 1]) + exp(a[i + 2]) / (1.0f + a[i + %d]); }\n", i, i + 3);
    snprintf(big + len, sizeof big - len, "#endif\n");
    cl_program slow = from_source(big);
    EXPECT_OK(clBuildProgram(slow, 0, NULL, "-DFAST", NULL, NULL));
    run_check(slow, "k", 5, 0, 5);
    char salt[64];
    struct timespec ts;
    clock_gettime(CLOCK_REALTIME, &ts);
    snprintf(salt, sizeof salt, "-DSALT=%ld%ld", (long)ts.tv_sec, ts.tv_nsec);
    memset(&n, 0, sizeof n);
    pthread_mutex_init(&n.lock, NULL);
    EXPECT_OK(clBuildProgram(slow, 0, NULL, salt, on_built, &n));
    if (build_status(slow) == CL_BUILD_IN_PROGRESS) {
        size_t nk;
        EXPECT_ERR(clBuildProgram(slow, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
        EXPECT_ERR(clCompileProgram(slow, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
        EXPECT(clCreateKernel(slow, "k", &err) == NULL && err == CL_INVALID_PROGRAM_EXECUTABLE,
               "clCreateKernel during a rebuild: %d", err);
        cl_uint count = 9;
        EXPECT_ERR(clCreateKernelsInProgram(slow, 0, NULL, &count), CL_INVALID_PROGRAM_EXECUTABLE);
        EXPECT_ERR(clGetProgramInfo(slow, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_INVALID_PROGRAM_EXECUTABLE);
        EXPECT(clLinkProgram(ctx, 0, NULL, NULL, 1, &slow, NULL, NULL, &err) == NULL && err == CL_INVALID_OPERATION,
               "link of a program being built: %d", err);
    } else {
        printf("note: the rebuild finished before it could be checked\n");
    }
    check_notice(&n, slow, CL_BUILD_SUCCESS, "slow async rebuild");
    size_t nk = 0;
    EXPECT_OK(clGetProgramInfo(slow, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL));
    EXPECT(nk == 31, "slow program: %zu kernels", nk);
    run_check(slow, "k", 6, 0, 6);
    clReleaseProgram(slow);

    /* the program may be released right after an asynchronous build starts */
    memset(&n, 0, sizeof n);
    pthread_mutex_init(&n.lock, NULL);
    cl_program gone = from_source(SCALE_SRC);
    EXPECT_OK(clBuildProgram(gone, 0, NULL, "-DGONE", on_built, &n));
    EXPECT_OK(clReleaseProgram(gone));
    EXPECT(wait_notice(&n), "released program: the callback was never called");
    clReleaseProgram(p);
    clReleaseProgram(bad);
    clReleaseProgram(obj);
}

/* Builds from several threads at once: each gets its own result (the compiler worker is
 * shared and serialises them). */
#define THREADS 4
static int thread_ok[THREADS];

static void *build_thread(void *arg)
{
    int t = (int)(size_t)arg;
    char opts[64];
    snprintf(opts, sizeof opts, "-DOFFSET=%d -DTHREAD_SALT=%d", t * 10, (int)getpid());
    cl_program p = from_source(OFFSET_SRC);
    for (int round = 0; round < 3; round++) {
        if (clBuildProgram(p, 0, NULL, opts, NULL, NULL) != CL_SUCCESS)
            return NULL;
    }
    cl_int err;
    cl_kernel k = clCreateKernel(p, "scale", &err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    int kk = t + 1, out[N];
    clSetKernelArg(k, 0, sizeof buf, &buf);
    clSetKernelArg(k, 1, sizeof kk, &kk);
    size_t global = N;
    int ok = clEnqueueNDRangeKernel(q, k, 1, NULL, &global, NULL, 0, NULL, NULL) == CL_SUCCESS &&
             clEnqueueReadBuffer(q, buf, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL) == CL_SUCCESS;
    for (int i = 0; ok && i < N; i++)
        ok = out[i] == i * kk + t * 10;
    thread_ok[t] = ok;
    clReleaseCommandQueue(q);
    clReleaseMemObject(buf);
    clReleaseKernel(k);
    clReleaseProgram(p);
    return NULL;
}

static void test_threads(void)
{
    pthread_t threads[THREADS];
    for (int t = 0; t < THREADS; t++)
        pthread_create(&threads[t], NULL, build_thread, (void *)(size_t)t);
    for (int t = 0; t < THREADS; t++)
        pthread_join(threads[t], NULL);
    for (int t = 0; t < THREADS; t++)
        EXPECT(thread_ok[t], "thread %d: build or result failed", t);
}

/* --- queries and the remaining errors ---------------------------------------------------- */

static void test_info(void)
{
    cl_int err;
    /* three strings: NUL-terminated (length 0), an exact length, and a length that cuts */
    const char *parts[3] = {"kernel void first(global int *out, int k) { out[get_global_id(0)] = k; }\n",
                            "kernel void second(global int *out, int k) { out[get_global_id(0)] = 2 * k; }\n",
                            "//not part of the program"};
    size_t lengths[3] = {0, strlen(parts[1]), 2};
    cl_program p = clCreateProgramWithSource(ctx, 3, parts, lengths, &err);
    EXPECT(p != NULL && err == CL_SUCCESS, "err %d", err);

    /* before a build */
    size_t n = 0, nk = 0;
    char names[128] = {0};
    EXPECT_ERR(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_INVALID_PROGRAM_EXECUTABLE);
    EXPECT_ERR(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL), CL_INVALID_PROGRAM_EXECUTABLE);
    EXPECT(clCreateKernel(p, "first", &err) == NULL && err == CL_INVALID_PROGRAM_EXECUTABLE, "err %d", err);
    cl_uint refs = 0, ndev = 0;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 1, "refcount %u", refs);
    EXPECT_OK(clRetainProgram(p));
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 2, "refcount after retain %u", refs);
    EXPECT_OK(clReleaseProgram(p));
    cl_context got_ctx = NULL;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_CONTEXT, sizeof got_ctx, &got_ctx, &n));
    EXPECT(got_ctx == ctx && n == sizeof(cl_context), "CL_PROGRAM_CONTEXT");
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_NUM_DEVICES, sizeof ndev, &ndev, NULL));
    EXPECT(ndev == 1, "num devices %u", ndev);
    cl_device_id got_dev = NULL;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_DEVICES, sizeof got_dev, &got_dev, &n));
    EXPECT(got_dev == device && n == sizeof(cl_device_id), "CL_PROGRAM_DEVICES");
    char source[512] = {0};
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_SOURCE, sizeof source, source, &n));
    char expected[512];
    snprintf(expected, sizeof expected, "%s%s//", parts[0], parts[1]);
    EXPECT(strcmp(source, expected) == 0 && n == strlen(expected) + 1, "CL_PROGRAM_SOURCE \"%s\" (%zu)", source, n);
    EXPECT_ERR(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 4, source, NULL), CL_INVALID_VALUE);
    n = 99;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &n));
    EXPECT(n == 0, "source program: IL size %zu", n);
    size_t bsize = 99;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize, NULL));
    EXPECT(bsize == 0, "before a build: binary size %zu", bsize);
    EXPECT_ERR(clGetProgramInfo(p, 0xdead, sizeof n, &n, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetProgramInfo(NULL, CL_PROGRAM_REFERENCE_COUNT, sizeof refs, &refs, NULL), CL_INVALID_PROGRAM);
    EXPECT_ERR(clGetProgramInfo(p, CL_PROGRAM_REFERENCE_COUNT, 2, &refs, NULL), CL_INVALID_VALUE);

    /* build info before a build */
    char *s = build_string(p, CL_PROGRAM_BUILD_LOG);
    EXPECT(s[0] == 0, "log before a build \"%s\"", s);
    free(s);
    s = build_string(p, CL_PROGRAM_BUILD_OPTIONS);
    EXPECT(s[0] == 0, "options before a build \"%s\"", s);
    free(s);

    EXPECT_OK(clBuildProgram(p, 0, NULL, "-cl-std=CL2.0", NULL, NULL));
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, &n));
    EXPECT(nk == 2 && n == sizeof(size_t), "num kernels %zu", nk);
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, &n));
    EXPECT((strcmp(names, "first;second") == 0 || strcmp(names, "second;first") == 0) && n == strlen(names) + 1,
           "kernel names \"%s\" (%zu)", names, n);
    EXPECT_ERR(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, 3, names, NULL), CL_INVALID_VALUE);
    cl_bool present = 7;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_SCOPE_GLOBAL_CTORS_PRESENT, sizeof present, &present, &n));
    EXPECT(present == CL_FALSE && n == sizeof(cl_bool), "ctors present %u", present);
    present = 7;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_SCOPE_GLOBAL_DTORS_PRESENT, sizeof present, &present, &n));
    EXPECT(present == CL_FALSE && n == sizeof(cl_bool), "dtors present %u", present);
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize, NULL));
    EXPECT(bsize > 0, "after a build: binary size %zu", bsize);
    /* CL_PROGRAM_BINARIES: a NULL entry is skipped */
    unsigned char *none[1] = {NULL};
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_BINARIES, sizeof none, none, &n));
    EXPECT(n == sizeof(void *), "binaries size %zu", n);
    run_check(p, "first", 9, 0, 9);
    run_check(p, "second", 9, 0, 18);

    /* every build info param */
    cl_build_status status;
    EXPECT_OK(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, &n));
    EXPECT(status == CL_BUILD_SUCCESS && n == sizeof status, "status %d", status);
    s = build_string(p, CL_PROGRAM_BUILD_OPTIONS);
    EXPECT(strcmp(s, "-cl-std=CL2.0") == 0, "options \"%s\"", s);
    free(s);
    free(build_string(p, CL_PROGRAM_BUILD_LOG));
    cl_program_binary_type type;
    EXPECT_OK(clGetProgramBuildInfo(p, device, CL_PROGRAM_BINARY_TYPE, sizeof type, &type, &n));
    EXPECT(type == CL_PROGRAM_BINARY_TYPE_EXECUTABLE && n == sizeof type, "type %u", type);
    size_t gsize = 99;
    EXPECT_OK(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_GLOBAL_VARIABLE_TOTAL_SIZE, sizeof gsize, &gsize, &n));
    EXPECT(gsize == 0 && n == sizeof(size_t), "global variable size %zu", gsize);
    EXPECT_ERR(clGetProgramBuildInfo(p, device, 0xdead, sizeof n, &n, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetProgramBuildInfo(p, device, CL_PROGRAM_BUILD_STATUS, 1, &status, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetProgramBuildInfo(p, NULL, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, NULL), CL_INVALID_DEVICE);
    EXPECT_ERR(clGetProgramBuildInfo(p, (cl_device_id)ctx, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, NULL),
               CL_INVALID_DEVICE);
    EXPECT_ERR(clGetProgramBuildInfo(NULL, device, CL_PROGRAM_BUILD_STATUS, sizeof status, &status, NULL),
               CL_INVALID_PROGRAM);

    /* kernels attached: no rebuild, compile; after their release, a rebuild works */
    cl_kernel k = clCreateKernel(p, "first", &err);
    EXPECT(k != NULL && err == CL_SUCCESS, "err %d", err);
    EXPECT_ERR(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
    EXPECT_ERR(clCompileProgram(p, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
    cl_kernel clone = clCloneKernel(k, &err);
    EXPECT_OK(clReleaseKernel(k));
    EXPECT_ERR(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
    EXPECT_OK(clReleaseKernel(clone));
    EXPECT_OK(clBuildProgram(p, 0, NULL, "-DREBUILT", NULL, NULL));
    run_check(p, "first", 4, 0, 4);

    /* a program without kernels builds and has none */
    cl_program empty = from_source("int unused_helper(int x) { return x + 1; }\n");
    EXPECT_OK(clBuildProgram(empty, 0, NULL, NULL, NULL, NULL));
    nk = 99;
    names[0] = 'x';
    EXPECT_OK(clGetProgramInfo(empty, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL));
    EXPECT_OK(clGetProgramInfo(empty, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, &n));
    EXPECT(nk == 0 && names[0] == 0 && n == 1, "no kernels: %zu \"%s\"", nk, names);
    cl_kernel ks[1];
    cl_uint nret = 99;
    EXPECT_OK(clCreateKernelsInProgram(empty, 1, ks, &nret));
    EXPECT(nret == 0, "no kernels: %u created", nret);
    clReleaseProgram(empty);

    /* clCreateProgramWithSource errors */
    const char *null_str = NULL;
    EXPECT(clCreateProgramWithSource(ctx, 0, parts, NULL, &err) == NULL && err == CL_INVALID_VALUE, "count 0: %d", err);
    EXPECT(clCreateProgramWithSource(ctx, 1, NULL, NULL, &err) == NULL && err == CL_INVALID_VALUE, "NULL strings: %d",
           err);
    EXPECT(clCreateProgramWithSource(ctx, 1, &null_str, NULL, &err) == NULL && err == CL_INVALID_VALUE,
           "a NULL string: %d", err);
    const char *with_null[2] = {parts[0], NULL};
    EXPECT(clCreateProgramWithSource(ctx, 2, with_null, NULL, &err) == NULL && err == CL_INVALID_VALUE,
           "second string NULL: %d", err);
    EXPECT(clCreateProgramWithSource(NULL, 1, parts, NULL, &err) == NULL && err == CL_INVALID_CONTEXT,
           "NULL context: %d", err);
    EXPECT(clCreateProgramWithSource((cl_context)p, 1, parts, NULL, &err) == NULL && err == CL_INVALID_CONTEXT,
           "not a context: %d", err);
    cl_program no_errcode = clCreateProgramWithSource(ctx, 1, parts, NULL, NULL);
    EXPECT(no_errcode != NULL, "NULL errcode_ret");
    clReleaseProgram(no_errcode);

    /* built-in kernels: there are none */
    EXPECT(clCreateProgramWithBuiltInKernels(ctx, 1, &device, "anything", &err) == NULL && err == CL_INVALID_VALUE,
           "built-in kernels: %d", err);
    EXPECT(clCreateProgramWithBuiltInKernels(ctx, 1, &device, "", &err) == NULL && err == CL_INVALID_VALUE,
           "built-in kernels, empty list: %d", err);
    EXPECT(clCreateProgramWithBuiltInKernels(ctx, 1, &device, NULL, &err) == NULL && err == CL_INVALID_VALUE,
           "built-in kernels, NULL names: %d", err);
    EXPECT(clCreateProgramWithBuiltInKernels(NULL, 1, &device, "x", &err) == NULL && err == CL_INVALID_CONTEXT,
           "built-in kernels, NULL context: %d", err);

    /* retain/release errors; unloading the compiler does not stop later builds */
    EXPECT_ERR(clRetainProgram(NULL), CL_INVALID_PROGRAM);
    EXPECT_ERR(clReleaseProgram((cl_program)ctx), CL_INVALID_PROGRAM);
    cl_platform_id platform = NULL;
    EXPECT_OK(clGetDeviceInfo(device, CL_DEVICE_PLATFORM, sizeof platform, &platform, NULL));
    EXPECT_OK(clUnloadPlatformCompiler(platform));
    EXPECT_OK(clUnloadCompiler());
    cl_program after = from_source(OFFSET_SRC);
    EXPECT_OK(clBuildProgram(after, 0, NULL, "-DOFFSET=-7 -DAFTER_UNLOAD", NULL, NULL));
    run_check(after, "scale", 1, 1, -7);
    clReleaseProgram(after);
    EXPECT_OK(clReleaseProgram(p));
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: program_link link|async|threads|info\n");
        return 2;
    }
    program_setup();
    const char *section = argv[1];
    if (strcmp(section, "link") == 0)
        test_link();
    else if (strcmp(section, "async") == 0)
        test_async();
    else if (strcmp(section, "threads") == 0)
        test_threads();
    else if (strcmp(section, "info") == 0)
        test_info();
    else {
        printf("FAIL unknown section %s\n", section);
        return 2;
    }
    return program_teardown();
}
