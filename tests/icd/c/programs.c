/* Programs through the ICD loader: build success and failure, build options, a compiler
 * crash, binaries, IL programs, include directories and the compile cache.
 * Usage: programs SECTION [ARG]; each section is one pytest test (test_programs.py).
 * Compiling and linking, asynchronous builds and the queries are in program_link.c. */
#include "program_util.h"

/* A failed build (clang's diagnostics in the log), a good one (options echoed), and the
 * argument errors of clBuildProgram. */
static void test_build(void)
{
    cl_program bad = from_source(SYNTAX_ERROR_SRC);
    EXPECT(build_status(bad) == CL_BUILD_NONE, "before a build: status %d", build_status(bad));
    EXPECT(binary_type(bad) == CL_PROGRAM_BINARY_TYPE_NONE, "before a build: binary type %u", binary_type(bad));
    EXPECT_ERR(clBuildProgram(bad, 0, NULL, "", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
    EXPECT(build_status(bad) == CL_BUILD_ERROR, "after a failed build: status %d", build_status(bad));
    EXPECT(log_contains(bad, "error: use of undeclared identifier 'undeclared_thing'"), "clang's message in the log");
    EXPECT(binary_type(bad) == CL_PROGRAM_BINARY_TYPE_NONE, "failed build: binary type %u", binary_type(bad));
    cl_int err;
    EXPECT(clCreateKernel(bad, "broken", &err) == NULL && err == CL_INVALID_PROGRAM_EXECUTABLE, "err %d", err);
    size_t nk;
    EXPECT_ERR(clGetProgramInfo(bad, CL_PROGRAM_NUM_KERNELS, sizeof nk, &nk, NULL), CL_INVALID_PROGRAM_EXECUTABLE);
    size_t bsize = 99;
    EXPECT_OK(clGetProgramInfo(bad, CL_PROGRAM_BINARY_SIZES, sizeof bsize, &bsize, NULL));
    EXPECT(bsize == 0, "failed build: binary size %zu", bsize);
    /* the same program builds once the options define what was missing */
    EXPECT_OK(clBuildProgram(bad, 0, NULL, "-Dundeclared_thing=7;", NULL, NULL));
    EXPECT(build_status(bad) == CL_BUILD_SUCCESS, "rebuilt: status %d", build_status(bad));
    run_check(bad, "broken", 0, 0, 7);
    EXPECT_OK(clReleaseProgram(bad));

    cl_program good = from_source(OFFSET_SRC);
    const char *opts = "-DOFFSET=5  -cl-mad-enable -cl-std=CL1.2";
    EXPECT_OK(clBuildProgram(good, 1, &device, opts, NULL, NULL));
    EXPECT(build_status(good) == CL_BUILD_SUCCESS, "status %d", build_status(good));
    char *echoed = build_string(good, CL_PROGRAM_BUILD_OPTIONS);
    EXPECT(strcmp(echoed, opts) == 0, "CL_PROGRAM_BUILD_OPTIONS \"%s\"", echoed);
    free(echoed);
    EXPECT(binary_type(good) == CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "binary type %u", binary_type(good));
    free(build_string(good, CL_PROGRAM_BUILD_LOG));
    run_check(good, "scale", 3, 3, 5);
    /* a rebuild with other options replaces the executable */
    EXPECT_OK(clBuildProgram(good, 0, NULL, "-DOFFSET=-2", NULL, NULL));
    run_check(good, "scale", 2, 2, -2);
    /* NULL options: an empty string */
    EXPECT_OK(clBuildProgram(good, 0, NULL, "-DOFFSET=1", NULL, NULL));
    cl_program plain = from_source(SCALE_SRC);
    EXPECT_OK(clBuildProgram(plain, 0, NULL, NULL, NULL, NULL));
    echoed = build_string(plain, CL_PROGRAM_BUILD_OPTIONS);
    EXPECT(strcmp(echoed, "") == 0, "NULL options echoed as \"%s\"", echoed);
    free(echoed);

    /* argument errors */
    EXPECT_ERR(clBuildProgram(NULL, 0, NULL, NULL, NULL, NULL), CL_INVALID_PROGRAM);
    EXPECT_ERR(clBuildProgram((cl_program)ctx, 0, NULL, NULL, NULL, NULL), CL_INVALID_PROGRAM);
    EXPECT_ERR(clBuildProgram(good, 1, NULL, NULL, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clBuildProgram(good, 0, &device, NULL, NULL, NULL), CL_INVALID_VALUE);
    cl_device_id not_a_device = (cl_device_id)ctx;
    EXPECT_ERR(clBuildProgram(good, 1, &not_a_device, NULL, NULL, NULL), CL_INVALID_DEVICE);
    EXPECT_ERR(clBuildProgram(good, 0, NULL, NULL, NULL, (void *)1), CL_INVALID_VALUE);
    EXPECT_OK(clReleaseProgram(good));
    EXPECT_OK(clReleaseProgram(plain));
}

/* Unknown or misplaced options: the right CL_INVALID_*_OPTIONS, and the process lives on. */
static void test_options(void)
{
    static const char *bad_build[] = {"-no-such-option", "-cl-std=CL4.0", "-create-library", "-D", "-I",
                                      "-cl-fast-relaxed-math --bogus", "-enable-link-options", "-cl-std",
                                      "-D'1x'", "\"unterminated"};
    cl_program p = from_source(OFFSET_SRC);
    for (size_t i = 0; i < sizeof bad_build / sizeof *bad_build; i++) {
        EXPECT_ERR(clBuildProgram(p, 0, NULL, bad_build[i], NULL, NULL), CL_INVALID_BUILD_OPTIONS);
        cl_build_status s = build_status(p);
        EXPECT(s == CL_BUILD_NONE || s == CL_BUILD_ERROR, "after bad options \"%s\": status %d", bad_build[i], s);
    }
    EXPECT_ERR(clCompileProgram(p, 0, NULL, "-no-such-option", 0, NULL, NULL, NULL, NULL),
               CL_INVALID_COMPILER_OPTIONS);
    EXPECT_ERR(clCompileProgram(p, 0, NULL, "-create-library", 0, NULL, NULL, NULL, NULL),
               CL_INVALID_COMPILER_OPTIONS);
    EXPECT_ERR(clCompileProgram(p, 0, NULL, "-cl-std=CL9.0", 0, NULL, NULL, NULL, NULL),
               CL_INVALID_COMPILER_OPTIONS);

    /* a compiled object to link */
    EXPECT_OK(clCompileProgram(p, 0, NULL, "-DOFFSET=4", 0, NULL, NULL, NULL, NULL));
    static const char *bad_link[] = {"-no-such-option", "-DOFFSET=1", "-cl-std=CL2.0", "-I/tmp",
                                     "-enable-link-options", "-cl-mad-enable"};
    for (size_t i = 0; i < sizeof bad_link / sizeof *bad_link; i++) {
        cl_int err = 0;
        cl_program linked = clLinkProgram(ctx, 0, NULL, bad_link[i], 1, &p, NULL, NULL, &err);
        EXPECT(linked == NULL && err == CL_INVALID_LINKER_OPTIONS, "link options \"%s\": err %d", bad_link[i], err);
    }
    cl_int err;
    cl_program linked = clLinkProgram(ctx, 0, NULL, "-cl-fast-relaxed-math -cl-no-signed-zeros", 1, &p, NULL,
                                      NULL, &err);
    EXPECT(linked != NULL && err == CL_SUCCESS, "link with math options: err %d", err);
    if (linked) {
        run_check(linked, "scale", 3, 3, 4);
        clReleaseProgram(linked);
    }

    /* -Werror: what the CTS builds with it (int tid = get_global_id(0)) succeeds with an empty
     * log; a warning clang shows by default fails the build */
    cl_program sample = from_source("__kernel void sample_test(__global int *src, __global int *dst)\n"
                                    "{\n    int  tid = get_global_id(0);\n\n    dst[tid] = src[tid];\n\n}");
    EXPECT_OK(clBuildProgram(sample, 0, NULL, "-Werror", NULL, NULL));
    char *sample_log = build_string(sample, CL_PROGRAM_BUILD_LOG);
    EXPECT(sample_log[0] == 0, "-Werror build log \"%s\"", sample_log);
    free(sample_log);
    clReleaseProgram(sample);
    cl_program warns = from_source("kernel void k(global char *d) { char c = 300; d[0] = c; }\n");
    EXPECT_OK(clBuildProgram(warns, 0, NULL, NULL, NULL, NULL));
    EXPECT(log_contains(warns, "warning: implicit conversion from 'int' to 'char' changes value"), "the warning");
    EXPECT_ERR(clBuildProgram(warns, 0, NULL, "-Werror", NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
    EXPECT(log_contains(warns, "error: implicit conversion from 'int' to 'char' changes value"), "as an error");
    EXPECT_OK(clBuildProgram(warns, 0, NULL, "-Werror -w", NULL, NULL));
    clReleaseProgram(warns);

    /* after all that, an ordinary build works */
    EXPECT_OK(clBuildProgram(p, 0, NULL, "-DOFFSET=9 -cl-fast-relaxed-math -w -Werror -cl-kernel-arg-info",
                             NULL, NULL));
    run_check(p, "scale", 5, 5, 9);
    EXPECT_OK(clBuildProgram(p, 0, NULL, "-D OFFSET=8 -cl-std=CL3.0 -cl-opt-disable", NULL, NULL));
    run_check(p, "scale", 5, 5, 8);
    EXPECT_OK(clReleaseProgram(p));
}

/* clspv aborts on this kernel: only its worker process dies; the build fails with a log that
 * says so, and the next build works. */
static void test_crash(void)
{
    cl_program p = from_source(CRASH_SRC);
    EXPECT_ERR(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
    EXPECT(build_status(p) == CL_BUILD_ERROR, "status %d", build_status(p));
    EXPECT(log_contains(p, "crashed"), "the log says the compiler crashed");
    EXPECT(binary_type(p) == CL_PROGRAM_BINARY_TYPE_NONE, "binary type %u", binary_type(p));

    cl_program good = from_source(SCALE_SRC);
    EXPECT_OK(clBuildProgram(good, 0, NULL, NULL, NULL, NULL));
    run_check(good, "scale", 6, 6, 0);

    /* not remembered as a success anywhere: the same crash again, then a good build again */
    EXPECT_ERR(clCompileProgram(p, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_SUCCESS);
    cl_int err;
    cl_program linked = clLinkProgram(ctx, 0, NULL, NULL, 1, &p, NULL, NULL, &err);
    /* spec: a failed link returns a valid program object, whose build log says why */
    EXPECT(linked != NULL && err == CL_LINK_PROGRAM_FAILURE, "link of the crashing kernel: err %d", err);
    if (linked) {
        cl_build_status st;
        EXPECT_OK(clGetProgramBuildInfo(linked, device, CL_PROGRAM_BUILD_STATUS, sizeof st, &st, NULL));
        EXPECT(st == CL_BUILD_ERROR, "failed link status %d", st);
        clReleaseProgram(linked);
    }
    EXPECT_ERR(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
    EXPECT(log_contains(p, "crashed"), "the log says the compiler crashed (second time)");
    EXPECT_OK(clBuildProgram(good, 0, NULL, "-DUNUSED=1", NULL, NULL));
    run_check(good, "scale", 7, 7, 0);
    clReleaseProgram(p);
    clReleaseProgram(good);
}

/* Executables, compiled objects and libraries through CL_PROGRAM_BINARIES and
 * clCreateProgramWithBinary; corrupt and foreign binaries. */
static void test_binaries(void)
{
    cl_int err, status;
    cl_program src = from_source(OFFSET_SRC);
    EXPECT_OK(clBuildProgram(src, 0, NULL, "-DOFFSET=100", NULL, NULL));
    size_t size;
    unsigned char *bin = get_binary(src, &size);
    EXPECT(size > 64, "executable binary of %zu bytes", size);

    /* an executable: build (no compile) and run */
    cl_program p = from_binary(bin, size, &status, &err);
    EXPECT(p != NULL && err == CL_SUCCESS && status == CL_SUCCESS, "from binary: err %d status %d", err, status);
    EXPECT(binary_type(p) == CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "loaded executable: binary type %u", binary_type(p));
    EXPECT(build_status(p) == CL_BUILD_NONE, "before clBuildProgram: status %d", build_status(p));
    size_t n = 99;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, NULL, &n));
    EXPECT(n <= 1, "binary program: source size %zu", n);
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &n));
    EXPECT(n == 0, "binary program: IL size %zu", n);
    EXPECT_OK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
    EXPECT(build_status(p) == CL_BUILD_SUCCESS, "status %d", build_status(p));
    run_check(p, "scale", 3, 3, 100);
    size_t size2;
    unsigned char *bin2 = get_binary(p, &size2);
    EXPECT(size2 == size && memcmp(bin, bin2, size) == 0, "the binary survives a round trip (%zu, %zu)", size, size2);
    free(bin2);
    clReleaseProgram(p);

    /* binary_status may be NULL */
    const unsigned char *cbin = bin;
    p = clCreateProgramWithBinary(ctx, 1, &device, &size, &cbin, NULL, &err);
    EXPECT(p != NULL && err == CL_SUCCESS, "NULL binary_status: err %d", err);
    if (p) {
        EXPECT_OK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
        run_check(p, "scale", 1, 1, 100);
        /* a binary program has no source to compile */
        EXPECT_ERR(clCompileProgram(p, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL), CL_INVALID_OPERATION);
        clReleaseProgram(p);
    }

    /* corrupt, truncated and foreign binaries */
    unsigned char *bad = malloc(size);
    memcpy(bad, bin, size);
    bad[size / 2] ^= 0x5a;
    p = from_binary(bad, size, &status, &err);
    EXPECT(p == NULL && err == CL_INVALID_BINARY && status == CL_INVALID_BINARY, "corrupt: err %d status %d", err, status);
    p = from_binary(bin, size - 1, &status, &err);
    EXPECT(p == NULL && err == CL_INVALID_BINARY && status == CL_INVALID_BINARY, "truncated: err %d status %d", err, status);
    static const unsigned char elf[64] = {0x7f, 'E', 'L', 'F', 2, 1, 1};
    p = from_binary(elf, sizeof elf, &status, &err);
    EXPECT(p == NULL && err == CL_INVALID_BINARY && status == CL_INVALID_BINARY, "ELF: err %d status %d", err, status);
    static const unsigned char spirv[20] = {0x03, 0x02, 0x23, 0x07, 0, 0, 1, 0};
    p = from_binary(spirv, sizeof spirv, &status, &err);
    EXPECT(p == NULL && err == CL_INVALID_BINARY && status == CL_INVALID_BINARY, "SPIR-V: err %d status %d", err, status);
    free(bad);

    /* argument errors */
    size_t zero = 0;
    const unsigned char *null_bin = NULL;
    EXPECT(clCreateProgramWithBinary(ctx, 1, &device, &zero, &cbin, &status, &err) == NULL && err == CL_INVALID_VALUE,
           "length 0: err %d", err);
    EXPECT(clCreateProgramWithBinary(ctx, 1, &device, &size, &null_bin, &status, &err) == NULL &&
           err == CL_INVALID_VALUE, "NULL binary: err %d", err);
    EXPECT(clCreateProgramWithBinary(ctx, 0, NULL, &size, &cbin, &status, &err) == NULL && err == CL_INVALID_VALUE,
           "no device: err %d", err);
    EXPECT(clCreateProgramWithBinary(ctx, 1, &device, NULL, &cbin, &status, &err) == NULL && err == CL_INVALID_VALUE,
           "NULL lengths: err %d", err);
    cl_device_id not_a_device = (cl_device_id)ctx;
    EXPECT(clCreateProgramWithBinary(ctx, 1, &not_a_device, &size, &cbin, &status, &err) == NULL &&
           err == CL_INVALID_DEVICE, "not a device: err %d", err);
    EXPECT(clCreateProgramWithBinary(NULL, 1, &device, &size, &cbin, &status, &err) == NULL &&
           err == CL_INVALID_CONTEXT, "NULL context: err %d", err);
    unsigned char *one[1] = {NULL};
    EXPECT_ERR(clGetProgramInfo(src, CL_PROGRAM_BINARIES, sizeof one - 1, one, NULL), CL_INVALID_VALUE);
    free(bin);
    clReleaseProgram(src);

    /* a compiled object: binary type COMPILED_OBJECT, linked or built into an executable */
    cl_program obj = from_source(OFFSET_SRC);
    EXPECT_OK(clCompileProgram(obj, 0, NULL, "-DOFFSET=20", 0, NULL, NULL, NULL, NULL));
    EXPECT(binary_type(obj) == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, "compiled: binary type %u", binary_type(obj));
    bin = get_binary(obj, &size);
    EXPECT(size > 0, "object binary of %zu bytes", size);
    p = from_binary(bin, size, &status, &err);
    EXPECT(p != NULL && err == CL_SUCCESS && status == CL_SUCCESS, "object from binary: err %d status %d", err, status);
    if (p) {
        EXPECT(binary_type(p) == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, "loaded object: type %u", binary_type(p));
        cl_program linked = clLinkProgram(ctx, 1, &device, NULL, 1, &p, NULL, NULL, &err);
        EXPECT(linked != NULL && err == CL_SUCCESS, "link of a loaded object: err %d", err);
        if (linked) {
            EXPECT(binary_type(linked) == CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "linked: type %u", binary_type(linked));
            run_check(linked, "scale", 2, 2, 20);
            clReleaseProgram(linked);
        }
        /* clBuildProgram of a compiled object links it */
        EXPECT_OK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
        EXPECT(binary_type(p) == CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "built object: type %u", binary_type(p));
        run_check(p, "scale", 4, 4, 20);
        clReleaseProgram(p);
    }
    free(bin);

    /* a library: binary type LIBRARY, linked with an object into an executable */
    cl_program helper = from_source("int helper(int x) { return x * 10 + 1; }\n");
    EXPECT_OK(clCompileProgram(helper, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL));
    cl_program lib = clLinkProgram(ctx, 0, NULL, "-create-library", 1, &helper, NULL, NULL, &err);
    EXPECT(lib != NULL && err == CL_SUCCESS, "-create-library: err %d", err);
    cl_program user = from_source("int helper(int x);\n"
                                  "kernel void use(global int *out)\n"
                                  "{ size_t i = get_global_id(0); out[i] = helper((int)i); }\n");
    EXPECT_OK(clCompileProgram(user, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL));
    if (lib) {
        EXPECT(binary_type(lib) == CL_PROGRAM_BINARY_TYPE_LIBRARY, "library: type %u", binary_type(lib));
        bin = get_binary(lib, &size);
        p = from_binary(bin, size, &status, &err);
        EXPECT(p != NULL && err == CL_SUCCESS && status == CL_SUCCESS, "library from binary: err %d status %d", err,
               status);
        if (p) {
            EXPECT(binary_type(p) == CL_PROGRAM_BINARY_TYPE_LIBRARY, "loaded library: type %u", binary_type(p));
            cl_program inputs[2] = {user, p};
            cl_program linked = clLinkProgram(ctx, 0, NULL, NULL, 2, inputs, NULL, NULL, &err);
            EXPECT(linked != NULL && err == CL_SUCCESS, "link with a loaded library: err %d", err);
            if (linked) {
                run_check(linked, "use", 0, 10, 1);
                clReleaseProgram(linked);
            }
            clReleaseProgram(p);
        }
        free(bin);
        clReleaseProgram(lib);
    }
    clReleaseProgram(helper);
    clReleaseProgram(user);
    clReleaseProgram(obj);
}

static unsigned char *read_file(const char *path, size_t *size)
{
    FILE *f = fopen(path, "rb");
    if (!f) {
        printf("FAIL cannot open %s\n", path);
        exit(1);
    }
    fseek(f, 0, SEEK_END);
    *size = (size_t)ftell(f);
    fseek(f, 0, SEEK_SET);
    unsigned char *data = malloc(*size);
    if (fread(data, 1, *size, f) != *size)
        exit(1);
    fclose(f);
    return data;
}

/* An OpenCL SPIR-V module made by clang-15 + llvm-spirv-15 (its kernel: out[i] = i * k + 11). */
static void test_il(const char *path)
{
    size_t size;
    unsigned char *il = read_file(path, &size);
    cl_int err;
    cl_program p = clCreateProgramWithIL(ctx, il, size, &err);
    EXPECT(p != NULL && err == CL_SUCCESS, "clCreateProgramWithIL: err %d", err);
    if (p == NULL)
        return;
    size_t n = 0;
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_IL, 0, NULL, &n));
    EXPECT(n == size, "CL_PROGRAM_IL size %zu, expected %zu", n, size);
    unsigned char *back = malloc(size);
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_IL, size, back, NULL));
    EXPECT(memcmp(back, il, size) == 0, "CL_PROGRAM_IL returns the IL");
    free(back);
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_SOURCE, 0, NULL, &n));
    EXPECT(n <= 1, "IL program: source size %zu", n);
    EXPECT_OK(clBuildProgram(p, 0, NULL, NULL, NULL, NULL));
    EXPECT(build_status(p) == CL_BUILD_SUCCESS, "status %d", build_status(p));
    EXPECT(binary_type(p) == CL_PROGRAM_BINARY_TYPE_EXECUTABLE, "binary type %u", binary_type(p));
    char names[64] = {0};
    EXPECT_OK(clGetProgramInfo(p, CL_PROGRAM_KERNEL_NAMES, sizeof names, names, NULL));
    EXPECT(strcmp(names, "scale") == 0, "kernel names \"%s\"", names);
    run_check(p, "scale", 4, 4, 11);
    /* with build options too */
    EXPECT_OK(clBuildProgram(p, 0, NULL, "-cl-fast-relaxed-math", NULL, NULL));
    run_check(p, "scale", 2, 2, 11);

    /* an IL program compiled, then linked */
    cl_program q = clCreateProgramWithIL(ctx, il, size, &err);
    EXPECT(q != NULL && err == CL_SUCCESS, "second IL program: err %d", err);
    if (q) {
        EXPECT_OK(clCompileProgram(q, 0, NULL, NULL, 0, NULL, NULL, NULL, NULL));
        EXPECT(binary_type(q) == CL_PROGRAM_BINARY_TYPE_COMPILED_OBJECT, "compiled IL: type %u", binary_type(q));
        cl_program linked = clLinkProgram(ctx, 0, NULL, NULL, 1, &q, NULL, NULL, &err);
        EXPECT(linked != NULL && err == CL_SUCCESS, "link of compiled IL: err %d", err);
        if (linked) {
            run_check(linked, "scale", 3, 3, 11);
            clReleaseProgram(linked);
        }
        clReleaseProgram(q);
    }
    clReleaseProgram(p);

    /* bad IL: CL_INVALID_VALUE */
    static const cl_uint shader[] = {0x07230203, 0x00010000, 0, 1, 0, (2 << 16) | 17, 1, (3 << 16) | 14, 0, 1};
    static const cl_uint garbage[] = {0xdeadbeef, 1, 2, 3, 4, 5, 6, 7};
    EXPECT(clCreateProgramWithIL(ctx, shader, sizeof shader, &err) == NULL && err == CL_INVALID_VALUE,
           "Vulkan (Shader) SPIR-V: err %d", err);
    EXPECT(clCreateProgramWithIL(ctx, garbage, sizeof garbage, &err) == NULL && err == CL_INVALID_VALUE,
           "garbage: err %d", err);
    EXPECT(clCreateProgramWithIL(ctx, il, size - 3, &err) == NULL && err == CL_INVALID_VALUE,
           "length not a multiple of 4: err %d", err);
    EXPECT(clCreateProgramWithIL(ctx, il, 12, &err) == NULL && err == CL_INVALID_VALUE, "header only: err %d", err);
    EXPECT(clCreateProgramWithIL(ctx, NULL, size, &err) == NULL && err == CL_INVALID_VALUE, "NULL IL: err %d", err);
    EXPECT(clCreateProgramWithIL(ctx, il, 0, &err) == NULL && err == CL_INVALID_VALUE, "length 0: err %d", err);
    EXPECT(clCreateProgramWithIL(NULL, il, size, &err) == NULL && err == CL_INVALID_CONTEXT, "no context: err %d", err);
    free(il);
}

/* Build timings for the cache test: prints "first_ms X" (the first build in this process,
 * worker start included), "miss_ms X" (another program, worker warm, not cached) and
 * "again_ms X" (the first program again, from the cache). */
static void test_cache(void)
{
    const char *opts = "-cl-mad-enable";
    cl_program p = from_source(SGEMM_SRC);
    double t0 = now_ms();
    EXPECT_OK(clBuildProgram(p, 0, NULL, opts, NULL, NULL));
    double first = now_ms() - t0;

    char other[64];
    snprintf(other, sizeof other, "-cl-mad-enable -DSALT=%d", (int)getpid());
    cl_program q = from_source(SGEMM_SRC);
    t0 = now_ms();
    EXPECT_OK(clBuildProgram(q, 0, NULL, other, NULL, NULL));
    double miss = now_ms() - t0;

    cl_program r = from_source(SGEMM_SRC);
    t0 = now_ms();
    EXPECT_OK(clBuildProgram(r, 0, NULL, opts, NULL, NULL));
    double again = now_ms() - t0;
    printf("first_ms %.2f\nmiss_ms %.2f\nagain_ms %.2f\n", first, miss, again);

    /* what came from the cache runs like what was compiled */
    cl_int err;
    cl_kernel k = clCreateKernel(r, "sgemm", &err);
    EXPECT(k != NULL && err == CL_SUCCESS, "clCreateKernel: %d", err);
    size_t wg[3] = {0};
    EXPECT_OK(clGetKernelWorkGroupInfo(k, device, CL_KERNEL_COMPILE_WORK_GROUP_SIZE, sizeof wg, wg, NULL));
    clReleaseKernel(k);
    clReleaseProgram(p);
    clReleaseProgram(q);
    clReleaseProgram(r);
}

/* -I DIR: headers found on disk; a changed header is seen by the next build (such builds are
 * not served from the cache, whose key cannot cover files the compiler finds itself). */
static void write_header(const char *dir, int value)
{
    char path[4096];
    snprintf(path, sizeof path, "%s/inc_value.h", dir);
    FILE *f = fopen(path, "w");
    if (!f) {
        printf("FAIL cannot write %s\n", path);
        exit(1);
    }
    fprintf(f, "#define INC_VALUE %d\n", value);
    fclose(f);
}

static void test_include(const char *dir)
{
    char opts[4200];
    snprintf(opts, sizeof opts, "-I %s", dir);
    cl_program p = from_source("#include \"inc_value.h\"\n"
                               "kernel void scale(global int *out, int k)\n"
                               "{ out[get_global_id(0)] = (int)get_global_id(0) * k + INC_VALUE; }\n");
    write_header(dir, 1);
    EXPECT_OK(clBuildProgram(p, 0, NULL, opts, NULL, NULL));
    run_check(p, "scale", 2, 2, 1);
    write_header(dir, 2);
    EXPECT_OK(clBuildProgram(p, 0, NULL, opts, NULL, NULL));
    run_check(p, "scale", 2, 2, 2);
    snprintf(opts, sizeof opts, "-I%s -DEXTRA", dir);
    EXPECT_OK(clCompileProgram(p, 0, NULL, opts, 0, NULL, NULL, NULL, NULL));
    cl_int err;
    cl_program linked = clLinkProgram(ctx, 0, NULL, NULL, 1, &p, NULL, NULL, &err);
    EXPECT(linked != NULL && err == CL_SUCCESS, "link: %d", err);
    if (linked) {
        run_check(linked, "scale", 1, 1, 2);
        clReleaseProgram(linked);
    }
    /* without -I the header is not found */
    EXPECT_ERR(clBuildProgram(p, 0, NULL, NULL, NULL, NULL), CL_BUILD_PROGRAM_FAILURE);
    EXPECT(log_contains(p, "inc_value.h"), "the log names the header");
    clReleaseProgram(p);
}

int main(int argc, char **argv)
{
    if (argc < 2) {
        printf("usage: programs build|options|crash|binaries|il FILE|include DIR|cache\n");
        return 2;
    }
    program_setup();
    const char *section = argv[1];
    if (strcmp(section, "build") == 0)
        test_build();
    else if (strcmp(section, "options") == 0)
        test_options();
    else if (strcmp(section, "crash") == 0)
        test_crash();
    else if (strcmp(section, "binaries") == 0)
        test_binaries();
    else if (strcmp(section, "il") == 0 && argc > 2)
        test_il(argv[2]);
    else if (strcmp(section, "include") == 0 && argc > 2)
        test_include(argv[2]);
    else if (strcmp(section, "cache") == 0)
        test_cache();
    else {
        printf("FAIL unknown section %s\n", section);
        return 2;
    }
    return program_teardown();
}
