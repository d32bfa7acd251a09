/* What tests/icd/c/c_events.c and c_events_more.c share: the context, queue and program of
 * every section, the kernels (bump, step), and the checks of results, statuses, times and event
 * info. */
#ifndef VKCL_TEST_C_EVENTS_H
#define VKCL_TEST_C_EVENTS_H
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clEnqueueWaitForEvents */
#include "harness.h"
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

#define N 1024          /* counters per buffer; every NDRange is N work-items, local size NULL */
#define BOGUS 0x4242    /* a param_name no event query knows */

static cl_device_id device;
static cl_context ctx;
static cl_command_queue queue;
static cl_program program;
static size_t G = N;

static const char *SRC =
    "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }\n"
    "kernel void step(global const int *a, global int *b) { size_t i = get_global_id(0); b[i] = a[i] + 1; }\n";

static inline cl_command_queue new_queue(cl_context c, int profiling)
{
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(c, device, profiling ? props : NULL, &err);
    REQUIRE_OK(err);
    return q;
}

static inline cl_kernel kernel_of(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    REQUIRE_OK(err);
    return k;
}

/* N zeroed ints in context `c`, filled (and finished) through `q`. */
static inline cl_mem zeros_in(cl_context c, cl_command_queue q)
{
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    REQUIRE_OK(err);
    int zero = 0;
    REQUIRE_OK(clEnqueueFillBuffer(q, m, &zero, sizeof zero, 0, N * sizeof(int), 0, NULL, NULL));
    REQUIRE_OK(clFinish(q));
    return m;
}
static inline cl_mem zeros(void) { return zeros_in(ctx, queue); }

static inline cl_kernel bump_in(cl_program p, cl_mem c)
{
    cl_kernel k = kernel_of(p, "bump");
    REQUIRE_OK(clSetKernelArg(k, 0, sizeof c, &c));
    return k;
}
static inline cl_kernel bump_on(cl_mem c) { return bump_in(program, c); }

/* The first launch of `k` on `q` (Python's), finished: the next ones are the fast path's. */
static inline void warm(cl_command_queue q, cl_kernel k)
{
    REQUIRE_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &G, NULL, 0, NULL, NULL));
    REQUIRE_OK(clFinish(q));
}

/* A repeated launch asking for an event. */
static inline cl_event launch(cl_command_queue q, cl_kernel k)
{
    cl_event e = NULL;
    EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &G, NULL, 0, NULL, &e));
    return e;
}

static inline cl_int status_of(cl_event e)
{
    cl_int s = -12345;
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
    return s;
}
static inline int valid_status(cl_int s) { return s == CL_QUEUED || s == CL_SUBMITTED || s == CL_RUNNING || s == CL_COMPLETE; }

/* Polls the status of `e` (its queue flushed) until CL_COMPLETE, up to 5 s. */
static inline void poll_complete(cl_event e, const char *what)
{
    cl_int s = -12345;
    for (int spin = 0; spin < 500 && (s = status_of(e)) != CL_COMPLETE; spin++)
        usleep(10000);
    EXPECT(s == CL_COMPLETE, "%s: status %d 5 s after clFlush (no wait)", what, s);
}

static inline void expect_complete(cl_event *ev, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        cl_int s = status_of(ev[i]);
        EXPECT(s == CL_COMPLETE, "%s: event %d of %d has status %d", what, i, n, s);
    }
}

static inline void release_all(cl_event *ev, int n)
{
    for (int i = 0; i < n; i++)
        EXPECT_OK(clReleaseEvent(ev[i]));
}

/* Every element of `m` (N ints) is `want`, read through `q` with a blocking read. */
static inline void expect_all(cl_command_queue q, cl_mem m, int want, const char *what)
{
    static int h[N];
    REQUIRE_OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, sizeof h, h, 0, NULL, NULL));
    size_t bad = 0, first = N;
    for (size_t i = 0; i < N; i++)
        if (h[i] != want && bad++ == 0)
            first = i;
    EXPECT(bad == 0, "%s: %zu of %d elements wrong, [%zu] = %d, expected %d", what, bad, N, first,
           first < N ? h[first] : 0, want);
}

/* A complete profiled event's five times: nonzero, QUEUED <= SUBMIT <= START <= END <= COMPLETE,
 * each with param_value_size_ret 8. Returns them in t (when not NULL). */
static inline void expect_times(cl_event e, const char *what, int i, cl_ulong *t_out)
{
    static const cl_profiling_info info[5] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                              CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END,
                                              CL_PROFILING_COMMAND_COMPLETE};
    cl_ulong t[5] = {0};
    int ok = 1;
    for (int w = 0; w < 5; w++) {
        size_t size = 0;
        EXPECT_OK(clGetEventProfilingInfo(e, info[w], sizeof t[w], &t[w], &size));
        ok &= size == sizeof(cl_ulong) && t[w] > 0 && (w == 0 || t[w - 1] <= t[w]);
    }
    EXPECT(ok, "%s %d: queued %llu submit %llu start %llu end %llu complete %llu", what, i,
           (unsigned long long)t[0], (unsigned long long)t[1], (unsigned long long)t[2], (unsigned long long)t[3],
           (unsigned long long)t[4]);
    if (t_out)
        memcpy(t_out, t, sizeof t);
}

/* Complete events of one in-order profiling queue, in enqueue order: each one's times are in
 * order, and QUEUED and END never go back from one to the next (C's and Python's clocks agree). */
static inline void expect_times_list(cl_event *ev, int n, const char *what)
{
    cl_ulong prev[5] = {0}, t[5];
    int back = 0, first = -1;
    for (int i = 0; i < n; i++) {
        expect_times(ev[i], what, i, t);
        if (i > 0 && (t[0] < prev[0] || t[3] < prev[3]) && back++ == 0)
            first = i;
        memcpy(prev, t, sizeof t);
    }
    EXPECT(back == 0, "%s: %d of %d events queued or ended before the previous one (first %d)", what, back, n, first);
}

/* The five clGetEventInfo queries of event `e` (a kernel launch on `q`, its reference count 1):
 * the value, param_value_size_ret, a size query with NULL param_value, a larger param_value_size;
 * the reference count goes to 2 with clRetainEvent and back with clReleaseEvent. */
static inline void expect_info(cl_event e, cl_command_queue q, const char *what)
{
    size_t size = 0;
    cl_command_queue eq = NULL;
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, &size));
    EXPECT(eq == q && size == sizeof eq, "%s: CL_EVENT_COMMAND_QUEUE %p (size %zu)", what, (void *)eq, size);
    cl_command_type type = 0;
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_TYPE, sizeof type, &type, &size));
    EXPECT(type == CL_COMMAND_NDRANGE_KERNEL && size == sizeof type, "%s: CL_EVENT_COMMAND_TYPE %#x (size %zu)",
           what, type, size);
    cl_int s = -12345;
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, &size));
    EXPECT(valid_status(s) && size == sizeof s, "%s: status %d (size %zu)", what, s, size);
    cl_ulong big = 0;  /* a larger buffer is fine: size_ret is still the value's */
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof big, &big, &size));
    EXPECT(size == sizeof(cl_int), "%s: status into 8 bytes: size %zu", what, size);
    cl_uint refs = 0;
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, &size));
    EXPECT(refs == 1 && size == sizeof refs, "%s: reference count %u (size %zu), expected 1", what, refs, size);
    EXPECT_OK(clRetainEvent(e));
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 2, "%s: reference count %u after clRetainEvent", what, refs);
    EXPECT_OK(clReleaseEvent(e));
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 1, "%s: reference count %u after clReleaseEvent", what, refs);
    static const struct { cl_event_info p; size_t size; } sizes[] = {
        {CL_EVENT_COMMAND_QUEUE, sizeof(cl_command_queue)}, {CL_EVENT_COMMAND_TYPE, sizeof(cl_command_type)},
        {CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof(cl_int)}, {CL_EVENT_REFERENCE_COUNT, sizeof(cl_uint)},
        {CL_EVENT_CONTEXT, sizeof(cl_context)}};
    for (int i = 0; i < 5; i++) {
        size = 0;
        EXPECT_OK(clGetEventInfo(e, sizes[i].p, 0, NULL, &size));
        EXPECT(size == sizes[i].size, "%s: size query of %#x: %zu, expected %zu", what, sizes[i].p, size, sizes[i].size);
    }
    cl_context c = NULL;  /* last: Python's (adopts a C event) */
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_CONTEXT, sizeof c, &c, &size));
    EXPECT(c == ctx && size == sizeof c, "%s: CL_EVENT_CONTEXT %p (size %zu)", what, (void *)c, size);
}

/* Run the section argv[1] names (of n), on the shared context, queue and program. */
static inline int run_section(int argc, char **argv, const struct harness_section *sections, size_t n)
{
    return harness_run_section(argc, argv, sections, n, SRC, &device, &ctx, &queue, &program);
}

#endif
