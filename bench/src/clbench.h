/* clbench: OpenCL benchmarks that check every result.
 *
 * Each measurement prints one line on stdout,
 *     RESULT name=<name> unit=<unit> value=<number> ok=1 [key=value ...]
 * or, when a call failed or the result was wrong,
 *     RESULT name=<name> unit=<unit> value=0 ok=0 reason=<text to the end of the line>
 * or, when the device lacks what the measurement needs,
 *     SKIP name=<name> reason=<text>
 * Everything meant for people goes to stderr. */
#ifndef CLBENCH_H
#define CLBENCH_H

#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <stddef.h>
#include <stdint.h>

typedef struct {
    int quick;
    int runs;                 /* timed runs per measurement (best is reported) */
    size_t bw_mib;            /* copy: MiB per buffer; triad: about this in total */
    size_t xfer_mib;          /* host <-> device transfers */
    int sgemm_n;
    int reduce_log2;          /* reduction of 2^k floats */
    int transpose_n;
    int stencil_n;
    int hist_log2;            /* histogram of 2^k bytes */
    int dispatch_n;           /* back-to-back empty kernels */
    int roundtrip_n;          /* enqueue + clFinish, one at a time */
    int small_n;              /* small non-blocking writes */
    int small_bytes;
    double target_ms;         /* kernel duration aimed at by the compute/local calibration */
    double warmup_ms;         /* back-to-back launches before a short kernel is timed */
} options;

typedef struct {
    options opt;
    cl_platform_id platform;
    cl_device_id device;
    cl_context ctx;
    cl_command_queue q;       /* in order, profiling enabled */
    cl_ulong max_alloc;
    cl_ulong global_mem;
    cl_ulong local_mem;
    cl_uint compute_units;
    size_t max_wg;
    int fp64, fp16, int_dot;
    int is_gpu;
    double init_ms;           /* clGetPlatformIDs .. queue created */
    char reason[600];         /* why the last failing step failed */
} bench;

/* ---- results (common.c) ---- */
void report(bench *b, const char *name, const char *unit, double value, const char *extra_fmt, ...);
void report_fail(bench *b, const char *name, const char *unit);
void report_skip(const char *name, const char *why);
/* report_fail for each "name:unit" of a space-separated list not reported yet. */
void report_fail_rest(bench *b, const char *names_units);
int was_reported(const char *name);
void fail(bench *b, const char *fmt, ...);
const char *cl_err_name(cl_int err);
void cl_fail(bench *b, const char *file, int line, const char *call, cl_int err);

/* TRY(b, call): a CL call returning cl_int; on error record the reason and goto fail. */
#define TRY(b, call)                                                     \
    do {                                                                 \
        cl_int err_ = (call);                                            \
        if (err_ != CL_SUCCESS) {                                        \
            cl_fail((b), __FILE__, __LINE__, #call, err_);               \
            goto fail;                                                   \
        }                                                                \
    } while (0)
/* TRYE(b, err, name): after a call that returned its error through errcode_ret. */
#define TRYE(b, err, name)                                               \
    do {                                                                 \
        if ((err) != CL_SUCCESS) {                                       \
            cl_fail((b), __FILE__, __LINE__, name, (err));               \
            goto fail;                                                   \
        }                                                                \
    } while (0)

/* ---- helpers (common.c) ---- */
double now_s(void);
/* Build `src` for the bench's device; NULL (and b->reason) on failure. */
cl_program build_program(bench *b, const char *src, const char *options);
cl_kernel make_kernel(bench *b, cl_program prog, const char *name);
cl_mem make_buffer(bench *b, cl_mem_flags flags, size_t size, void *host);
/* Profiled duration of a finished command in ms; < 0 (and b->reason) on failure. */
double event_ms(bench *b, cl_event ev);
/* Milliseconds from the start of `first` to the end of `last`. */
double events_span_ms(bench *b, cl_event first, cl_event last);
void *xmalloc(size_t size);   /* page aligned, exits on failure */
void rel_mem(cl_mem *m);
void rel_kernel(cl_kernel *k);
void rel_program(cl_program *p);
void rel_event(cl_event *e);
size_t pick_wg(bench *b, cl_kernel k, size_t want);
/* Work-groups for a kernel that should fill the device: 8 per compute unit, and at least 1024
 * on a GPU (so that a runtime reporting too few compute units still gets the same work). */
size_t fill_groups(bench *b);
uint64_t rng_next(uint64_t *state);
float rng_float(uint64_t *state);    /* uniform in [0, 1) */
/* Clamp a buffer size to the device's CL_DEVICE_MAX_MEM_ALLOC_SIZE, to a multiple of `align`. */
size_t clamp_alloc(bench *b, size_t bytes, size_t align);
/* Launch a kernel and wait: profiled time in ms (< 0 on failure), wall ms in *wall. */
double run_kernel(bench *b, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local,
                  double *wall);

/* Launch a kernel back to back for opt.warmup_ms of wall time, then wait; 0, or -1 on failure.
 * Short kernels are timed after this: GPU clocks fall when the device idles, and some drivers
 * (NVIDIA's Vulkan driver, unlike its CUDA-based OpenCL) raise them again only under sustained
 * load, so a burst of short launches after an idle second would measure the idle clock. */
int warm_up(bench *b, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local);

/* Find an iteration count (kernel argument `iters_arg`, an int, from `start` up to `cap`)
 * for which one launch takes about opt.target_ms; -1 (and b->reason) on failure. */
int calibrate_iters(bench *b, cl_kernel k, cl_uint iters_arg, size_t global, size_t local, int start,
                    int cap);
/* Best (smallest) of `runs` profiled launches in ms, wall-clock best in *wall; < 0 on failure. */
double best_of(bench *b, cl_kernel k, cl_uint dims, const size_t *global, const size_t *local, int runs,
               double *wall);
/* Check n floats against expect(i); 0 if equal, else -1 with b->reason naming the first bad one. */
int check_floats(bench *b, const char *what, const float *got, size_t n, float (*expect)(size_t i));

/* ---- measurement groups ---- */
void group_bandwidth(bench *b);
void group_local(bench *b);
void group_compute(bench *b);
void group_latency(bench *b);
void group_transfer(bench *b);
void group_small_writes(bench *b);
void group_sgemm(bench *b);
void group_reduction(bench *b);
void group_transpose(bench *b);
void group_stencil(bench *b);
void group_histogram(bench *b);
void group_build_cold(bench *b);
void group_build_warm(bench *b);

extern const char *sgemm_source;   /* apps.c: also the program the build group times */
int sgemm_verify_small(bench *b, cl_program prog);

#endif
