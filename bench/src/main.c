/* clbench: command line, platform and device selection, and the table of measurement groups.
 *
 *   clbench --list                       platforms and devices (tab separated)
 *   clbench --names                      every group with its measurement names and units
 *   clbench --platform vkcl [--only bandwidth,sgemm] [--quick] [size options]
 *
 * See bench/README.md. */
#define _POSIX_C_SOURCE 200809L
#include "clbench.h"

#include <ctype.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

typedef struct {
    const char *name;
    void (*run)(bench *b);
    const char *measurements;   /* "name:unit name:unit ..." */
} group;

static const group GROUPS[] = {
    {"build_cold", group_build_cold, "platform_init:ms build_cold:ms build_same_process:ms"},
    {"build_warm", group_build_warm, "build_warm:ms"},
    {"bandwidth", group_bandwidth,
     "copy_float:GB/s copy_float.wall:GB/s copy_float4:GB/s copy_float4.wall:GB/s "
     "triad_float:GB/s triad_float.wall:GB/s triad_float4:GB/s triad_float4.wall:GB/s"},
    {"local", group_local, "local_mem:GB/s"},
    {"compute", group_compute,
     "mad_float:GFLOP/s mad_float4:GFLOP/s mad_double:GFLOP/s mad_half:GFLOP/s mad_int:GOP/s dot_int8:GOP/s"},
    {"latency", group_latency, "launch_dispatch:us launch_roundtrip:us"},
    {"transfer", group_transfer,
     "write_blocking:GB/s write_nonblocking:GB/s read_blocking:GB/s read_nonblocking:GB/s "
     "write_pinned_blocking:GB/s write_pinned_nonblocking:GB/s read_pinned_blocking:GB/s "
     "read_pinned_nonblocking:GB/s map_read:GB/s map_write:GB/s write_64k:GB/s read_64k:GB/s "
     "write_pinned_64k:GB/s read_pinned_64k:GB/s write_1m:GB/s read_1m:GB/s write_pinned_1m:GB/s "
     "read_pinned_1m:GB/s"},
    {"small_writes", group_small_writes, "small_writes:ms"},
    {"sgemm", group_sgemm, "sgemm:GFLOP/s sgemm.wall:GFLOP/s"},
    {"reduction", group_reduction, "reduction:GB/s reduction.wall:GB/s"},
    {"transpose", group_transpose, "transpose:GB/s transpose.wall:GB/s"},
    {"stencil", group_stencil, "stencil:GB/s stencil.wall:GB/s"},
    {"histogram", group_histogram, "histogram:GB/s histogram.wall:GB/s"},
};
#define N_GROUPS (sizeof GROUPS / sizeof GROUPS[0])

static void usage(void)
{
    fprintf(stderr,
            "usage: clbench --list | --names | --platform NAME [options]\n"
            "  --platform S      platform whose CL_PLATFORM_NAME contains S (case-insensitive)\n"
            "  --device N        device index in that platform (default: first GPU, else first)\n"
            "  --only G,G        groups to run (default all; see --names)\n"
            "  --quick           small sizes (CPU devices such as lavapipe or PoCL)\n"
            "  --runs N          timed runs per measurement, best reported\n"
            "  --bw-mib N        copy: MiB per buffer; triad: 3 buffers of N/3 MiB\n"
            "  --xfer-mib N      host<->device transfer size\n"
            "  --sgemm-n N       SGEMM N x N x N (multiple of 32)\n"
            "  --reduce-log2 K   reduction of 2^K floats\n"
            "  --transpose-n N   transpose N x N floats (multiple of 32)\n"
            "  --stencil-n N     stencil N x N floats (multiple of 16)\n"
            "  --hist-log2 K     histogram of 2^K bytes\n"
            "  --dispatch-n N    --roundtrip-n N   --small-n N   --small-bytes N\n"
            "  --target-ms X     kernel duration the compute/local calibration aims at\n"
            "  --warmup-ms X     back-to-back launches before a short kernel is timed\n");
}

static void set_defaults(options *o, int quick)
{
    o->quick = quick;
    o->runs = quick ? 3 : 5;
    o->bw_mib = quick ? 32 : 1024;
    o->xfer_mib = quick ? 32 : 256;
    o->sgemm_n = quick ? 512 : 4096;
    o->reduce_log2 = quick ? 22 : 28;
    o->transpose_n = quick ? 1024 : 8192;
    o->stencil_n = quick ? 1024 : 8192;
    o->hist_log2 = quick ? 22 : 28;
    o->dispatch_n = quick ? 2000 : 10000;
    o->roundtrip_n = quick ? 300 : 2000;
    o->small_n = 10000;
    o->small_bytes = 256;
    o->target_ms = quick ? 30 : 50;
    o->warmup_ms = quick ? 20 : 500;
}

static int ci_contains(const char *hay, const char *needle)
{
    size_t n = strlen(needle);
    for (; *hay; hay++) {
        if (strncasecmp(hay, needle, n) == 0) return 1;
    }
    return n == 0;
}

static char *platform_str(cl_platform_id p, cl_platform_info what, char *buf, size_t size)
{
    buf[0] = 0;
    clGetPlatformInfo(p, what, size, buf, NULL);
    return buf;
}

static char *device_str(cl_device_id d, cl_device_info what, char *buf, size_t size)
{
    buf[0] = 0;
    clGetDeviceInfo(d, what, size, buf, NULL);
    for (char *c = buf; *c; c++) {
        if (*c == '\t' || *c == '\n') *c = ' ';
    }
    return buf;
}

static const char *type_name(cl_device_type t)
{
    if (t & CL_DEVICE_TYPE_GPU) return "GPU";
    if (t & CL_DEVICE_TYPE_CPU) return "CPU";
    if (t & CL_DEVICE_TYPE_ACCELERATOR) return "ACCELERATOR";
    return "OTHER";
}

static int list_platforms(void)
{
    cl_uint np = 0;
    cl_platform_id ps[32];
    cl_int err = clGetPlatformIDs(32, ps, &np);
    if (err != CL_SUCCESS && err != -1001 /* CL_PLATFORM_NOT_FOUND_KHR */) {
        fprintf(stderr, "clGetPlatformIDs: %s (%d)\n", cl_err_name(err), err);
        return 1;
    }
    char a[1024], v[1024], c[1024];
    for (cl_uint i = 0; i < np && i < 32; i++) {
        printf("PLATFORM\t%u\t%s\t%s\t%s\n", i, platform_str(ps[i], CL_PLATFORM_NAME, a, sizeof a),
               platform_str(ps[i], CL_PLATFORM_VERSION, v, sizeof v),
               platform_str(ps[i], CL_PLATFORM_VENDOR, c, sizeof c));
        cl_uint nd = 0;
        cl_device_id ds[16];
        if (clGetDeviceIDs(ps[i], CL_DEVICE_TYPE_ALL, 16, ds, &nd) != CL_SUCCESS) nd = 0;
        for (cl_uint j = 0; j < nd && j < 16; j++) {
            cl_device_type t = 0;
            clGetDeviceInfo(ds[j], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            printf("DEVICE\t%u\t%u\t%s\t%s\t%s\t%s\n", i, j, device_str(ds[j], CL_DEVICE_NAME, a, sizeof a),
                   type_name(t), device_str(ds[j], CL_DRIVER_VERSION, v, sizeof v),
                   device_str(ds[j], CL_DEVICE_VERSION, c, sizeof c));
        }
    }
    return 0;
}

static void print_names(void)
{
    for (size_t g = 0; g < N_GROUPS; g++) printf("GROUP %s %s\n", GROUPS[g].name, GROUPS[g].measurements);
}

/* Report every measurement of `g` that the group did not report, with b->reason. */
static void fill_missing(bench *b, const group *g)
{
    if (!b->reason[0]) fail(b, "the measurement reported nothing");
    report_fail_rest(b, g->measurements);
}

static int has_ext(cl_device_id d, const char *ext)
{
    size_t size = 0;
    if (clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, 0, NULL, &size) != CL_SUCCESS) return 0;
    char *s = malloc(size + 1);
    s[0] = 0;
    clGetDeviceInfo(d, CL_DEVICE_EXTENSIONS, size, s, NULL);
    s[size] = 0;
    int found = 0;
    size_t n = strlen(ext);
    for (char *p = strstr(s, ext); p; p = strstr(p + 1, ext)) {
        if ((p == s || p[-1] == ' ') && (p[n] == 0 || p[n] == ' ')) found = 1;
    }
    free(s);
    return found;
}

/* Platform, device, context and profiling queue; 0 on success, else b->reason says why. */
static int setup(bench *b, const char *want_platform, int want_device)
{
    double t0 = now_s();
    cl_uint np = 0;
    cl_platform_id ps[32];
    cl_int err = clGetPlatformIDs(32, ps, &np);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clGetPlatformIDs", err);
        return -1;
    }
    char name[1024];
    b->platform = NULL;
    for (cl_uint i = 0; i < np && i < 32 && !b->platform; i++) {
        if (ci_contains(platform_str(ps[i], CL_PLATFORM_NAME, name, sizeof name), want_platform)) {
            b->platform = ps[i];
        }
    }
    if (!b->platform) {
        fail(b, "no platform named like '%s' among %u platforms", want_platform, np);
        return -1;
    }
    cl_uint nd = 0;
    cl_device_id ds[16];
    err = clGetDeviceIDs(b->platform, CL_DEVICE_TYPE_ALL, 16, ds, &nd);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clGetDeviceIDs", err);
        return -1;
    }
    if (want_device >= 0) {
        if ((cl_uint)want_device >= nd) {
            fail(b, "device %d requested, the platform has %u", want_device, nd);
            return -1;
        }
        b->device = ds[want_device];
    } else {
        b->device = ds[0];
        for (cl_uint j = nd; j-- > 0;) {
            cl_device_type t = 0;
            clGetDeviceInfo(ds[j], CL_DEVICE_TYPE, sizeof t, &t, NULL);
            if (t & CL_DEVICE_TYPE_GPU) b->device = ds[j];
        }
    }
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)b->platform, 0};
    b->ctx = clCreateContext(props, 1, &b->device, NULL, NULL, &err);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clCreateContext", err);
        return -1;
    }
    cl_queue_properties qp[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    b->q = clCreateCommandQueueWithProperties(b->ctx, b->device, qp, &err);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clCreateCommandQueueWithProperties", err);
        return -1;
    }
    b->init_ms = (now_s() - t0) * 1e3;
    clGetDeviceInfo(b->device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof b->max_alloc, &b->max_alloc, NULL);
    clGetDeviceInfo(b->device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof b->global_mem, &b->global_mem, NULL);
    clGetDeviceInfo(b->device, CL_DEVICE_LOCAL_MEM_SIZE, sizeof b->local_mem, &b->local_mem, NULL);
    clGetDeviceInfo(b->device, CL_DEVICE_MAX_COMPUTE_UNITS, sizeof b->compute_units, &b->compute_units, NULL);
    clGetDeviceInfo(b->device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof b->max_wg, &b->max_wg, NULL);
    if (b->compute_units == 0) b->compute_units = 1;
    if (b->max_wg == 0) b->max_wg = 1;
    cl_device_type type = 0;
    clGetDeviceInfo(b->device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    b->is_gpu = (type & CL_DEVICE_TYPE_GPU) != 0;
    b->fp64 = has_ext(b->device, "cl_khr_fp64");
    b->fp16 = has_ext(b->device, "cl_khr_fp16");
    b->int_dot = has_ext(b->device, "cl_khr_integer_dot_product");
    return 0;
}

static void print_info(bench *b)
{
    char s[2048];
    printf("INFO platform_name=%s\n", platform_str(b->platform, CL_PLATFORM_NAME, s, sizeof s));
    printf("INFO platform_version=%s\n", platform_str(b->platform, CL_PLATFORM_VERSION, s, sizeof s));
    printf("INFO platform_vendor=%s\n", platform_str(b->platform, CL_PLATFORM_VENDOR, s, sizeof s));
    printf("INFO device_name=%s\n", device_str(b->device, CL_DEVICE_NAME, s, sizeof s));
    printf("INFO device_version=%s\n", device_str(b->device, CL_DEVICE_VERSION, s, sizeof s));
    printf("INFO driver_version=%s\n", device_str(b->device, CL_DRIVER_VERSION, s, sizeof s));
    cl_device_type t = 0;
    clGetDeviceInfo(b->device, CL_DEVICE_TYPE, sizeof t, &t, NULL);
    printf("INFO device_type=%s\n", type_name(t));
    printf("INFO compute_units=%u\n", b->compute_units);
    printf("INFO max_mem_alloc=%llu\n", (unsigned long long)b->max_alloc);
    printf("INFO global_mem=%llu\n", (unsigned long long)b->global_mem);
    printf("INFO local_mem=%llu\n", (unsigned long long)b->local_mem);
    printf("INFO max_work_group_size=%zu\n", b->max_wg);
    printf("INFO fp64=%d\nINFO fp16=%d\n", b->fp64, b->fp16);
    fflush(stdout);
    fprintf(stderr, "platform: %s\n", platform_str(b->platform, CL_PLATFORM_NAME, s, sizeof s));
    fprintf(stderr, "device:   %s\n", device_str(b->device, CL_DEVICE_NAME, s, sizeof s));
}

static int wants(const char *only, const char *name)
{
    if (!only) return 1;
    char list[512];
    snprintf(list, sizeof list, "%s", only);
    for (char *save = NULL, *tok = strtok_r(list, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
        if (strcmp(tok, name) == 0) return 1;
    }
    return 0;
}

int main(int argc, char **argv)
{
    static bench bb;
    bench *b = &bb;
    const char *platform = NULL, *only = NULL;
    int device = -1, quick = 0;
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--quick") == 0) quick = 1;
        if (strcmp(argv[i], "--list") == 0) return list_platforms();
        if (strcmp(argv[i], "--names") == 0) {
            print_names();
            return 0;
        }
        if (strcmp(argv[i], "--help") == 0 || strcmp(argv[i], "-h") == 0) {
            usage();
            return 0;
        }
    }
    set_defaults(&b->opt, quick);
    options *o = &b->opt;
    for (int i = 1; i < argc; i++) {
        const char *a = argv[i];
        if (strcmp(a, "--quick") == 0) continue;
        if (i + 1 >= argc) {
            usage();
            fprintf(stderr, "%s needs a value\n", a);
            return 2;
        }
        const char *v = argv[++i];
        long n = atol(v);
        if (strcmp(a, "--platform") == 0) platform = v;
        else if (strcmp(a, "--device") == 0) device = (int)n;
        else if (strcmp(a, "--only") == 0) only = v;
        else if (strcmp(a, "--runs") == 0) o->runs = (int)n;
        else if (strcmp(a, "--bw-mib") == 0) o->bw_mib = (size_t)n;
        else if (strcmp(a, "--xfer-mib") == 0) o->xfer_mib = (size_t)n;
        else if (strcmp(a, "--sgemm-n") == 0) o->sgemm_n = (int)n;
        else if (strcmp(a, "--reduce-log2") == 0) o->reduce_log2 = (int)n;
        else if (strcmp(a, "--transpose-n") == 0) o->transpose_n = (int)n;
        else if (strcmp(a, "--stencil-n") == 0) o->stencil_n = (int)n;
        else if (strcmp(a, "--hist-log2") == 0) o->hist_log2 = (int)n;
        else if (strcmp(a, "--dispatch-n") == 0) o->dispatch_n = (int)n;
        else if (strcmp(a, "--roundtrip-n") == 0) o->roundtrip_n = (int)n;
        else if (strcmp(a, "--small-n") == 0) o->small_n = (int)n;
        else if (strcmp(a, "--small-bytes") == 0) o->small_bytes = (int)n;
        else if (strcmp(a, "--target-ms") == 0) o->target_ms = atof(v);
        else if (strcmp(a, "--warmup-ms") == 0) o->warmup_ms = atof(v);
        else {
            usage();
            fprintf(stderr, "unknown option %s\n", a);
            return 2;
        }
    }
    if (!platform) {
        usage();
        return 2;
    }
    if (o->runs < 1) o->runs = 1;
    if (setup(b, platform, device) != 0) {
        fprintf(stderr, "setup failed: %s\n", b->reason);
        char why[sizeof b->reason];
        snprintf(why, sizeof why, "setup: %s", b->reason);
        for (size_t g = 0; g < N_GROUPS; g++) {
            if (!wants(only, GROUPS[g].name)) continue;
            fail(b, "%s", why);
            fill_missing(b, &GROUPS[g]);
        }
        return 1;
    }
    print_info(b);
    for (size_t g = 0; g < N_GROUPS; g++) {
        if (!wants(only, GROUPS[g].name)) continue;
        fprintf(stderr, "== %s\n", GROUPS[g].name);
        b->reason[0] = 0;
        GROUPS[g].run(b);
        fill_missing(b, &GROUPS[g]);
    }
    clReleaseCommandQueue(b->q);
    clReleaseContext(b->ctx);
    return 0;
}
