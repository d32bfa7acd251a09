/* clbench: result lines, error reasons, and the small helpers every group uses. */
#define _POSIX_C_SOURCE 200809L
#include "clbench.h"

#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

/* ---- which names this process has reported (main fills in the missing ones) ---- */
#define MAX_REPORTED 256
static char reported[MAX_REPORTED][64];
static int n_reported;

static void mark_reported(const char *name)
{
    if (n_reported < MAX_REPORTED) {
        snprintf(reported[n_reported++], sizeof reported[0], "%s", name);
    }
}

int was_reported(const char *name)
{
    for (int i = 0; i < n_reported; i++) {
        if (strcmp(reported[i], name) == 0) return 1;
    }
    return 0;
}

void report(bench *b, const char *name, const char *unit, double value, const char *extra_fmt, ...)
{
    (void)b;
    char extra[256] = "";
    if (extra_fmt) {
        va_list ap;
        va_start(ap, extra_fmt);
        vsnprintf(extra, sizeof extra, extra_fmt, ap);
        va_end(ap);
    }
    printf("RESULT name=%s unit=%s value=%.6g ok=1%s%s\n", name, unit, value, extra[0] ? " " : "", extra);
    fflush(stdout);
    fprintf(stderr, "  %-28s %12.4g %-8s %s\n", name, value, unit, extra);
    mark_reported(name);
}

void report_fail(bench *b, const char *name, const char *unit)
{
    const char *why = b->reason[0] ? b->reason : "failed (no reason recorded)";
    printf("RESULT name=%s unit=%s value=0 ok=0 reason=%s\n", name, unit, why);
    fflush(stdout);
    fprintf(stderr, "  %-28s FAILED: %s\n", name, why);
    mark_reported(name);
}

void report_fail_rest(bench *b, const char *names_units)
{
    char list[1024];
    snprintf(list, sizeof list, "%s", names_units);
    for (char *save = NULL, *tok = strtok_r(list, " ", &save); tok; tok = strtok_r(NULL, " ", &save)) {
        char *colon = strchr(tok, ':');
        if (colon) *colon = 0;
        if (!was_reported(tok)) report_fail(b, tok, colon ? colon + 1 : "");
    }
}

void report_skip(const char *name, const char *why)
{
    printf("SKIP name=%s reason=%s\n", name, why);
    fflush(stdout);
    fprintf(stderr, "  %-28s skipped: %s\n", name, why);
    mark_reported(name);
}

void fail(bench *b, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(b->reason, sizeof b->reason, fmt, ap);
    va_end(ap);
    /* One line: the reason is the rest of a RESULT line. */
    for (char *p = b->reason; *p; p++) {
        if (*p == '\n' || *p == '\r') *p = ' ';
    }
}

const char *cl_err_name(cl_int err)
{
    switch (err) {
#define E(x) case x: return #x;
        E(CL_SUCCESS) E(CL_DEVICE_NOT_FOUND) E(CL_DEVICE_NOT_AVAILABLE) E(CL_COMPILER_NOT_AVAILABLE)
        E(CL_MEM_OBJECT_ALLOCATION_FAILURE) E(CL_OUT_OF_RESOURCES) E(CL_OUT_OF_HOST_MEMORY)
        E(CL_PROFILING_INFO_NOT_AVAILABLE) E(CL_MEM_COPY_OVERLAP) E(CL_BUILD_PROGRAM_FAILURE)
        E(CL_MAP_FAILURE) E(CL_MISALIGNED_SUB_BUFFER_OFFSET)
        E(CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST) E(CL_COMPILE_PROGRAM_FAILURE)
        E(CL_LINKER_NOT_AVAILABLE) E(CL_LINK_PROGRAM_FAILURE) E(CL_INVALID_VALUE)
        E(CL_INVALID_DEVICE_TYPE) E(CL_INVALID_PLATFORM) E(CL_INVALID_DEVICE) E(CL_INVALID_CONTEXT)
        E(CL_INVALID_QUEUE_PROPERTIES) E(CL_INVALID_COMMAND_QUEUE) E(CL_INVALID_HOST_PTR)
        E(CL_INVALID_MEM_OBJECT) E(CL_INVALID_BINARY) E(CL_INVALID_BUILD_OPTIONS)
        E(CL_INVALID_PROGRAM) E(CL_INVALID_PROGRAM_EXECUTABLE) E(CL_INVALID_KERNEL_NAME)
        E(CL_INVALID_KERNEL_DEFINITION) E(CL_INVALID_KERNEL) E(CL_INVALID_ARG_INDEX)
        E(CL_INVALID_ARG_VALUE) E(CL_INVALID_ARG_SIZE) E(CL_INVALID_KERNEL_ARGS)
        E(CL_INVALID_WORK_DIMENSION) E(CL_INVALID_WORK_GROUP_SIZE) E(CL_INVALID_WORK_ITEM_SIZE)
        E(CL_INVALID_GLOBAL_OFFSET) E(CL_INVALID_EVENT_WAIT_LIST) E(CL_INVALID_EVENT)
        E(CL_INVALID_OPERATION) E(CL_INVALID_BUFFER_SIZE) E(CL_INVALID_GLOBAL_WORK_SIZE)
        E(CL_INVALID_PROPERTY) E(CL_INVALID_COMPILER_OPTIONS) E(CL_INVALID_LINKER_OPTIONS)
#undef E
    default: return "unknown error";
    }
}

void cl_fail(bench *b, const char *file, int line, const char *call, cl_int err)
{
    /* "clEnqueueNDRangeKernel(q, ...)" -> "clEnqueueNDRangeKernel" */
    char fn[64];
    size_t n = strcspn(call, "(");
    snprintf(fn, sizeof fn, "%.*s", (int)(n < sizeof fn ? n : sizeof fn - 1), call);
    const char *base = strrchr(file, '/');
    fail(b, "%s returned %s (%d) at %s:%d", fn, cl_err_name(err), err, base ? base + 1 : file, line);
}

double now_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

cl_program build_program(bench *b, const char *src, const char *options)
{
    cl_int err;
    cl_program prog = clCreateProgramWithSource(b->ctx, 1, &src, NULL, &err);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clCreateProgramWithSource", err);
        return NULL;
    }
    err = clBuildProgram(prog, 1, &b->device, options, NULL, NULL);
    if (err != CL_SUCCESS) {
        char log[4096] = "";
        clGetProgramBuildInfo(prog, b->device, CL_PROGRAM_BUILD_LOG, sizeof log - 1, log, NULL);
        fprintf(stderr, "build log:\n%s\n", log);
        fail(b, "clBuildProgram returned %s (%d); log: %.400s", cl_err_name(err), err, log);
        clReleaseProgram(prog);
        return NULL;
    }
    return prog;
}

cl_kernel make_kernel(bench *b, cl_program prog, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(prog, name, &err);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clCreateKernel", err);
        return NULL;
    }
    return k;
}

cl_mem make_buffer(bench *b, cl_mem_flags flags, size_t size, void *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(b->ctx, flags, size, host, &err);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clCreateBuffer", err);
        fail(b, "%s (size %zu bytes)", b->reason, size);
        return NULL;
    }
    return m;
}

static int event_times(bench *b, cl_event ev, cl_profiling_info which, cl_ulong *t)
{
    cl_int err = clGetEventProfilingInfo(ev, which, sizeof *t, t, NULL);
    if (err != CL_SUCCESS) {
        cl_fail(b, __FILE__, __LINE__, "clGetEventProfilingInfo", err);
        return -1;
    }
    return 0;
}

double events_span_ms(bench *b, cl_event first, cl_event last)
{
    cl_ulong t0, t1;
    if (event_times(b, first, CL_PROFILING_COMMAND_START, &t0) ||
        event_times(b, last, CL_PROFILING_COMMAND_END, &t1)) {
        return -1;
    }
    if (t1 < t0) {
        fail(b, "profiling: COMMAND_END %llu before COMMAND_START %llu",
             (unsigned long long)t1, (unsigned long long)t0);
        return -1;
    }
    return (t1 - t0) * 1e-6;
}

double event_ms(bench *b, cl_event ev)
{
    return events_span_ms(b, ev, ev);
}

void *xmalloc(size_t size)
{
    void *p = NULL;
    if (posix_memalign(&p, 4096, size ? size : 1) != 0) {
        fprintf(stderr, "out of host memory (%zu bytes)\n", size);
        exit(3);
    }
    return p;
}

void rel_mem(cl_mem *m) { if (*m) clReleaseMemObject(*m); *m = NULL; }
void rel_kernel(cl_kernel *k) { if (*k) clReleaseKernel(*k); *k = NULL; }
void rel_program(cl_program *p) { if (*p) clReleaseProgram(*p); *p = NULL; }
void rel_event(cl_event *e) { if (*e) clReleaseEvent(*e); *e = NULL; }

size_t pick_wg(bench *b, cl_kernel k, size_t want)
{
    size_t kmax = 0;
    if (clGetKernelWorkGroupInfo(k, b->device, CL_KERNEL_WORK_GROUP_SIZE, sizeof kmax, &kmax, NULL)
        != CL_SUCCESS || kmax == 0) {
        kmax = b->max_wg;
    }
    size_t wg = want;
    while (wg > kmax || wg > b->max_wg) wg /= 2;
    return wg ? wg : 1;
}

size_t fill_groups(bench *b)
{
    size_t groups = (size_t)b->compute_units * 8, least = b->is_gpu ? 1024 : 16;
    return groups < least ? least : groups;
}

uint64_t rng_next(uint64_t *s)
{
    /* splitmix64 */
    uint64_t z = (*s += 0x9E3779B97F4A7C15ull);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ull;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBull;
    return z ^ (z >> 31);
}

float rng_float(uint64_t *s)
{
    return (float)(rng_next(s) >> 40) * (1.0f / 16777216.0f);
}

size_t clamp_alloc(bench *b, size_t bytes, size_t align)
{
    if (bytes > b->max_alloc) {
        fprintf(stderr, "  (%zu bytes exceeds CL_DEVICE_MAX_MEM_ALLOC_SIZE: using %llu)\n", bytes,
                (unsigned long long)b->max_alloc);
        bytes = b->max_alloc;
    }
    bytes -= bytes % align;
    return bytes;
}

double run_kernel(bench *b, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local,
                  double *wall)
{
    cl_event ev = NULL;
    double ms = -1;
    double t0 = now_s();
    TRY(b, clEnqueueNDRangeKernel(b->q, k, dims, NULL, global, local, 0, NULL, &ev));
    TRY(b, clFinish(b->q));
    if (wall) *wall = (now_s() - t0) * 1e3;
    ms = event_ms(b, ev);
fail:
    rel_event(&ev);
    return ms;
}

int warm_up(bench *b, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local)
{
    double t0 = now_s();
    do {
        for (int i = 0; i < 8; i++)
            TRY(b, clEnqueueNDRangeKernel(b->q, k, dims, NULL, global, local, 0, NULL, NULL));
        TRY(b, clFinish(b->q));
    } while ((now_s() - t0) * 1e3 < b->opt.warmup_ms);
    return 0;
fail:
    return -1;
}

int calibrate_iters(bench *b, cl_kernel k, cl_uint iters_arg, size_t global, size_t local, int start,
                    int cap)
{
    int iters = start;
    TRY(b, clSetKernelArg(k, iters_arg, sizeof iters, &iters));
    if (run_kernel(b, k, 1, &global, &local, NULL) < 0) return -1;   /* warm-up: the first launch */
    for (;;) {
        TRY(b, clSetKernelArg(k, iters_arg, sizeof iters, &iters));
        double ms = run_kernel(b, k, 1, &global, &local, NULL);
        if (ms < 0) return -1;
        if (ms >= b->opt.target_ms * 0.5 || iters >= cap) break;
        double grow = ms > 0 ? b->opt.target_ms / ms : 16;
        if (grow > 16) grow = 16;
        if (grow < 2) grow = 2;
        long next = (long)(iters * grow);
        iters = next > cap ? cap : (int)next;
    }
    return iters;
fail:
    return -1;
}

double best_of(bench *b, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local, int runs,
               double *wall)
{
    double best = 1e30, best_wall = 1e30;
    for (int r = 0; r < runs; r++) {
        double w = 0;
        double ms = run_kernel(b, k, dims, global, local, &w);
        if (ms < 0) return -1;
        if (ms < best) best = ms;
        if (w < best_wall) best_wall = w;
    }
    if (wall) *wall = best_wall;
    return best;
}

int check_floats(bench *b, const char *what, const float *got, size_t n, float (*expect)(size_t i))
{
    size_t bad = 0, first = 0;
    for (size_t i = 0; i < n; i++) {
        if (got[i] != expect(i)) {
            if (!bad) first = i;
            bad++;
        }
    }
    if (!bad) return 0;
    fail(b, "wrong result: %s[%zu] = %.9g, expected %.9g (%zu of %zu values wrong)", what, first,
         got[first], expect(first), bad, n);
    return -1;
}
