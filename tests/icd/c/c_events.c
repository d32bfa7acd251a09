/* Events of fast launches (icd/fast_path.c) through the ICD loader. After a first launch of a
 * kernel (taken by Python), repeated launches with the same arguments and NDRange are recorded
 * by C; when they ask for an event, C may make that event itself (a "C event", VKCL_C_EVENTS=1)
 * and answer retain/release, clGetEventInfo, clGetEventProfilingInfo and clWaitForEvents, while
 * any other use makes Python adopt it. Whatever path an event takes, the application must see
 * the OpenCL 3.0 semantics: every section checks them, and every kernel's result on the host.
 *
 * Usage: c_events SECTION; each section is one pytest test (test_c_events.py), run with
 * VKCL_C_EVENTS=1 and =0. Every section warms the fast path first (warm(): one launch of the
 * kernel with the same arguments and NDRange as the later ones, then clFinish). */
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

static cl_command_queue new_queue(cl_context c, int profiling)
{
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(c, device, profiling ? props : NULL, &err);
    REQUIRE_OK(err);
    return q;
}

static cl_kernel kernel_of(cl_program p, const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(p, name, &err);
    REQUIRE_OK(err);
    return k;
}

/* N zeroed ints in context `c`, filled (and finished) through `q`. */
static cl_mem zeros_in(cl_context c, cl_command_queue q)
{
    cl_int err;
    cl_mem m = clCreateBuffer(c, CL_MEM_READ_WRITE, N * sizeof(int), NULL, &err);
    REQUIRE_OK(err);
    int zero = 0;
    REQUIRE_OK(clEnqueueFillBuffer(q, m, &zero, sizeof zero, 0, N * sizeof(int), 0, NULL, NULL));
    REQUIRE_OK(clFinish(q));
    return m;
}
static cl_mem zeros(void) { return zeros_in(ctx, queue); }

static cl_kernel bump_in(cl_program p, cl_mem c)
{
    cl_kernel k = kernel_of(p, "bump");
    REQUIRE_OK(clSetKernelArg(k, 0, sizeof c, &c));
    return k;
}
static cl_kernel bump_on(cl_mem c) { return bump_in(program, c); }

/* The first launch of `k` on `q` (Python's), finished: the next ones are the fast path's. */
static void warm(cl_command_queue q, cl_kernel k)
{
    REQUIRE_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &G, NULL, 0, NULL, NULL));
    REQUIRE_OK(clFinish(q));
}

/* A repeated launch asking for an event. */
static cl_event launch(cl_command_queue q, cl_kernel k)
{
    cl_event e = NULL;
    EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &G, NULL, 0, NULL, &e));
    return e;
}

static cl_int status_of(cl_event e)
{
    cl_int s = -12345;
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL));
    return s;
}
static int valid_status(cl_int s) { return s == CL_QUEUED || s == CL_SUBMITTED || s == CL_RUNNING || s == CL_COMPLETE; }

/* Polls the status of `e` (its queue flushed) until CL_COMPLETE, up to 5 s. */
static void poll_complete(cl_event e, const char *what)
{
    cl_int s = -12345;
    for (int spin = 0; spin < 500 && (s = status_of(e)) != CL_COMPLETE; spin++)
        usleep(10000);
    EXPECT(s == CL_COMPLETE, "%s: status %d 5 s after clFlush (no wait)", what, s);
}

static void expect_complete(cl_event *ev, int n, const char *what)
{
    for (int i = 0; i < n; i++) {
        cl_int s = status_of(ev[i]);
        EXPECT(s == CL_COMPLETE, "%s: event %d of %d has status %d", what, i, n, s);
    }
}

static void release_all(cl_event *ev, int n)
{
    for (int i = 0; i < n; i++)
        EXPECT_OK(clReleaseEvent(ev[i]));
}

/* Every element of `m` (N ints) is `want`, read through `q` with a blocking read. */
static void expect_all(cl_command_queue q, cl_mem m, int want, const char *what)
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
static void expect_times(cl_event e, const char *what, int i, cl_ulong *t_out)
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
static void expect_times_list(cl_event *ev, int n, const char *what)
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
static void expect_info(cl_event e, cl_command_queue q, const char *what)
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

/* 1. clGetEventInfo of launches' events on a plain and a profiling queue: pending (nothing
 * flushed) and complete; the error cases (bad name, too small a size, NULL event) on a second
 * event, whose queries must then answer the same; a reference count kept through CL_EVENT_CONTEXT
 * (Python's); after clFlush alone, the status reaches CL_COMPLETE. */
static void info(void)
{
    for (int prof = 0; prof < 2; prof++) {
        cl_command_queue q = prof ? new_queue(ctx, 1) : queue;
        const char *what = prof ? "profiling queue" : "plain queue";
        cl_mem c = zeros();
        cl_kernel k = bump_on(c);
        warm(q, k);
        cl_event ev[4];
        for (int i = 0; i < 4; i++)
            ev[i] = launch(q, k);
        expect_info(ev[0], q, what);  /* before any flush */
        /* errors on ev[1]: each must leave it working */
        cl_int s;
        cl_command_queue eq;
        EXPECT_ERR(clGetEventInfo(ev[1], BOGUS, sizeof s, &s, NULL), CL_INVALID_VALUE);
        EXPECT_ERR(clGetEventInfo(ev[1], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s - 1, &s, NULL), CL_INVALID_VALUE);
        EXPECT_ERR(clGetEventInfo(ev[1], CL_EVENT_COMMAND_EXECUTION_STATUS, 0, &s, NULL), CL_INVALID_VALUE);
        EXPECT_ERR(clGetEventInfo(ev[1], CL_EVENT_COMMAND_QUEUE, sizeof eq - 1, &eq, NULL), CL_INVALID_VALUE);
        expect_info(ev[1], q, prof ? "profiling queue, after errors" : "plain queue, after errors");
        EXPECT_ERR(clGetEventInfo(NULL, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL), CL_INVALID_EVENT);
        EXPECT_ERR(clRetainEvent(NULL), CL_INVALID_EVENT);
        EXPECT_ERR(clReleaseEvent(NULL), CL_INVALID_EVENT);
        /* retained twice, then CL_EVENT_CONTEXT: the count stays 3 */
        cl_uint refs = 0;
        cl_context cc = NULL;
        EXPECT_OK(clRetainEvent(ev[2]));
        EXPECT_OK(clRetainEvent(ev[2]));
        EXPECT_OK(clGetEventInfo(ev[2], CL_EVENT_CONTEXT, sizeof cc, &cc, NULL));
        EXPECT_OK(clGetEventInfo(ev[2], CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
        EXPECT(cc == ctx && refs == 3, "%s: retained twice, then its context: reference count %u", what, refs);
        EXPECT_OK(clReleaseEvent(ev[2]));
        EXPECT_OK(clReleaseEvent(ev[2]));
        /* flushed, never waited for: the status still gets to CL_COMPLETE */
        EXPECT_OK(clFlush(q));
        poll_complete(ev[3], what);
        EXPECT_OK(clFinish(q));
        expect_complete(ev, 4, what);
        expect_info(ev[3], q, prof ? "profiling queue, complete" : "plain queue, complete");
        release_all(ev, 4);
        expect_all(q, c, 5, what);
        clReleaseKernel(k);
        clReleaseMemObject(c);
        if (prof)
            clReleaseCommandQueue(q);
    }
}

/* 2. clGetEventProfilingInfo: CL_PROFILING_INFO_NOT_AVAILABLE before completion (right after
 * the enqueue, nothing flushed) and on a plain queue, complete or not; five ordered times after
 * clFinish, the same after the errors of a bad name and too small a size and after CL_EVENT_CONTEXT
 * (which Python answers); after clFlush alone, the event completes and has its times. */
static void profiling(void)
{
    static const cl_profiling_info info[5] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                              CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END,
                                              CL_PROFILING_COMMAND_COMPLETE};
    cl_command_queue pq = new_queue(ctx, 1);
    cl_mem c = zeros();
    cl_kernel k = bump_on(c);
    warm(pq, k);
    enum { M = 8 };
    cl_event ev[M];
    for (int i = 0; i < M; i++) {
        ev[i] = launch(pq, k);
        cl_ulong t = 0;
        for (int w = 0; w < 5; w++)
            EXPECT_ERR(clGetEventProfilingInfo(ev[i], info[w], sizeof t, &t, NULL), CL_PROFILING_INFO_NOT_AVAILABLE);
    }
    EXPECT_OK(clFinish(pq));
    expect_complete(ev, M, "profiled launches after clFinish");
    expect_times_list(ev, M, "profiled launch");
    cl_ulong before[4][5], after[5];
    for (int i = 0; i < 4; i++)
        expect_times(ev[i], "profiled launch", i, before[i]);
    size_t size = 0;
    EXPECT_OK(clGetEventProfilingInfo(ev[0], CL_PROFILING_COMMAND_END, 0, NULL, &size));
    EXPECT(size == sizeof(cl_ulong), "size query of CL_PROFILING_COMMAND_END: %zu", size);
    cl_ulong t = 0;
    EXPECT_ERR(clGetEventProfilingInfo(ev[1], BOGUS, sizeof t, &t, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetEventProfilingInfo(ev[2], CL_PROFILING_COMMAND_START, sizeof t - 1, &t, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetEventProfilingInfo(ev[2], CL_PROFILING_COMMAND_START, 4, &t, NULL), CL_INVALID_VALUE);
    cl_context cc = NULL;
    EXPECT_OK(clGetEventInfo(ev[3], CL_EVENT_CONTEXT, sizeof cc, &cc, NULL));
    for (int i = 1; i < 4; i++) {  /* the same times after a bad name, too small a size, its context */
        expect_times(ev[i], "after an error or CL_EVENT_CONTEXT", i, after);
        EXPECT(memcmp(before[i], after, sizeof after) == 0, "launch %d: times changed: start %llu -> %llu", i,
               (unsigned long long)before[i][2], (unsigned long long)after[2]);
    }
    EXPECT_ERR(clGetEventProfilingInfo(NULL, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL), CL_INVALID_EVENT);
    release_all(ev, M);
    /* flushed, never waited for: complete in time, then with its times */
    ev[0] = launch(pq, k);
    EXPECT_OK(clFlush(pq));
    poll_complete(ev[0], "profiled launch, flushed");
    expect_times(ev[0], "profiled launch, flushed", 0, NULL);
    EXPECT_OK(clReleaseEvent(ev[0]));
    /* a plain queue: never available, complete or not */
    cl_kernel k2 = bump_on(c);
    warm(queue, k2);
    cl_event e = launch(queue, k2);
    EXPECT_ERR(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
    EXPECT_OK(clFinish(queue));
    EXPECT(status_of(e) == CL_COMPLETE, "plain queue's launch complete after clFinish");
    for (int w = 0; w < 5; w++)
        EXPECT_ERR(clGetEventProfilingInfo(e, info[w], sizeof t, &t, NULL), CL_PROFILING_INFO_NOT_AVAILABLE);
    EXPECT_OK(clReleaseEvent(e));
    expect_all(queue, c, 1 + M + 1 + 2, "profiled and plain launches");
    clReleaseKernel(k);
    clReleaseKernel(k2);
    clReleaseMemObject(c);
    clReleaseCommandQueue(pq);
}

/* 3. clWaitForEvents: of one event, of ten of one open batch, of events of two queues at once,
 * of a launch's and a marker's, of a complete one; events of two contexts (CL_INVALID_CONTEXT),
 * no events (CL_INVALID_VALUE). */
static void wait_events(void)
{
    cl_mem c = zeros();
    cl_kernel k = bump_on(c);
    warm(queue, k);
    int total = 1;
    cl_event e = launch(queue, k);
    EXPECT_OK(clWaitForEvents(1, &e));
    expect_complete(&e, 1, "waited for");
    EXPECT_OK(clWaitForEvents(1, &e));  /* already complete */
    EXPECT_OK(clReleaseEvent(e));
    total += 1;
    enum { M = 10 };
    cl_event ev[2 * M];
    for (int i = 0; i < M; i++)
        ev[i] = launch(queue, k);
    EXPECT_OK(clWaitForEvents(M, ev));
    expect_complete(ev, M, "ten of one batch");
    release_all(ev, M);
    total += M;
    /* two in-order queues of the context, their events interleaved in one list */
    cl_command_queue q2 = new_queue(ctx, 0);
    cl_mem c2 = zeros();
    cl_kernel k2 = bump_on(c2);
    warm(q2, k2);
    for (int i = 0; i < M; i++) {
        ev[2 * i] = launch(queue, k);
        ev[2 * i + 1] = launch(q2, k2);
    }
    EXPECT_OK(clWaitForEvents(2 * M, ev));
    expect_complete(ev, 2 * M, "two queues' events");
    release_all(ev, 2 * M);
    total += M;
    /* a launch's event with a marker's (Python's) of the other queue */
    ev[0] = launch(queue, k);
    ev[1] = launch(q2, k2);
    EXPECT_OK(clEnqueueMarkerWithWaitList(q2, 0, NULL, &ev[2]));
    EXPECT_OK(clWaitForEvents(3, ev));
    expect_complete(ev, 3, "a launch's and a marker's");
    release_all(ev, 3);
    total += 1;
    /* two contexts */
    cl_int err;
    cl_context ctx2 = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    REQUIRE_OK(err);
    cl_program p2 = clCreateProgramWithSource(ctx2, 1, &SRC, NULL, &err);
    REQUIRE_OK(err);
    REQUIRE_OK(clBuildProgram(p2, 1, &device, NULL, NULL, NULL));
    cl_command_queue qx = new_queue(ctx2, 0);
    cl_mem cx = zeros_in(ctx2, qx);
    cl_kernel kx = bump_in(p2, cx);
    warm(qx, kx);
    ev[0] = launch(queue, k);
    ev[1] = launch(qx, kx);
    EXPECT_ERR(clWaitForEvents(2, ev), CL_INVALID_CONTEXT);
    EXPECT_OK(clWaitForEvents(1, &ev[1]));
    EXPECT_OK(clWaitForEvents(1, &ev[0]));
    expect_complete(ev, 2, "events of two contexts, each waited for alone");
    total += 1;
    EXPECT_ERR(clWaitForEvents(0, ev), CL_INVALID_VALUE);
    EXPECT_ERR(clWaitForEvents(1, NULL), CL_INVALID_VALUE);
    release_all(ev, 2);
    expect_all(queue, c, total, "launches waited for");
    expect_all(q2, c2, 1 + M + 1, "the second queue's launches");
    expect_all(qx, cx, 2, "the second context's launches");
    clReleaseKernel(kx);
    clReleaseMemObject(cx);
    clReleaseCommandQueue(qx);
    clReleaseProgram(p2);
    clReleaseContext(ctx2);
    clReleaseKernel(k2);
    clReleaseMemObject(c2);
    clReleaseCommandQueue(q2);
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* 4. Events released right after the enqueue (nothing flushed): 500 on a plain queue, 200 on a
 * profiling one, a fill (Python's) among them now and then; retained, then released twice;
 * released ones among kept ones in one batch. */
static void release_early(void)
{
    for (int prof = 0; prof < 2; prof++) {
        cl_command_queue q = prof ? new_queue(ctx, 1) : queue;
        int m = prof ? 200 : 500;
        cl_mem c = zeros(), scratch = zeros();
        cl_kernel k = bump_on(c);
        warm(q, k);
        int zero = 0;
        for (int i = 0; i < m; i++) {
            EXPECT_OK(clReleaseEvent(launch(q, k)));
            if (i % 100 == 50)  /* a command of Python's in the batch of released events */
                EXPECT_OK(clEnqueueFillBuffer(q, scratch, &zero, sizeof zero, 0, 64, 0, NULL, NULL));
        }
        EXPECT_OK(clFinish(q));
        clReleaseMemObject(scratch);
        expect_all(q, c, 1 + m, prof ? "released early, profiling queue" : "released early");
        cl_event e = launch(q, k);
        cl_uint refs = 0;
        EXPECT_OK(clRetainEvent(e));
        EXPECT_OK(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
        EXPECT(refs == 2, "retained: reference count %u", refs);
        EXPECT_OK(clReleaseEvent(e));
        EXPECT_OK(clGetEventInfo(e, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
        EXPECT(refs == 1, "released once: reference count %u", refs);
        EXPECT_OK(clReleaseEvent(e));
        /* every other event kept: the kept ones complete, with times on the profiling queue */
        cl_event kept[20];
        for (int i = 0; i < 40; i++) {
            cl_event x = launch(q, k);
            if (i % 2)
                EXPECT_OK(clReleaseEvent(x));
            else
                kept[i / 2] = x;
        }
        EXPECT_OK(clWaitForEvents(1, &kept[19]));
        expect_complete(kept, 20, "kept among released");
        if (prof)
            expect_times_list(kept, 20, "kept among released");
        release_all(kept, 20);
        EXPECT_OK(clFinish(q));
        expect_all(q, c, 1 + m + 1 + 40, "released and kept");
        clReleaseKernel(k);
        clReleaseMemObject(c);
        if (prof)
            clReleaseCommandQueue(q);
    }
}

/* 5. A launch's event (pending or complete) in the wait list of a launch on a second queue, of a
 * read, of a marker and a barrier (other queue and own), of clEnqueueWaitForEvents, of a launch
 * on its own queue: what follows sees its result; a marker without a wait list follows it. */
static void wait_list(void)
{
    cl_mem a = zeros(), b = zeros();
    cl_command_queue q2 = new_queue(ctx, 0);
    cl_kernel bump = bump_on(a), step = kernel_of(program, "step");
    REQUIRE_OK(clSetKernelArg(step, 0, sizeof a, &a));
    REQUIRE_OK(clSetKernelArg(step, 1, sizeof b, &b));
    warm(queue, bump);  /* a = 1 */
    warm(q2, step);     /* b = 2 */
    int av = 1;
    static int h[N];
    for (int r = 0; r < 10; r++) {
        /* several fast launches, the last with an event; b = a + 1 on q2 after it */
        for (int i = 0; i < 4; i++)
            EXPECT_OK(clEnqueueNDRangeKernel(queue, bump, 1, NULL, &G, NULL, 0, NULL, NULL));
        cl_event e = launch(queue, bump), after = NULL;
        av += 5;
        if (r % 2)  /* complete before it is waited for */
            EXPECT_OK(clFinish(queue));
        else  /* the spec's requirement for an event waited for by another queue */
            EXPECT_OK(clFlush(queue));
        EXPECT_OK(clEnqueueNDRangeKernel(q2, step, 1, NULL, &G, NULL, 1, &e, &after));
        EXPECT_OK(clWaitForEvents(1, &after));
        EXPECT(status_of(e) == CL_COMPLETE, "round %d: the awaited launch complete after its dependent", r);
        expect_all(q2, b, av + 1, "a kernel on a second queue after the launch it waited for");
        EXPECT_OK(clReleaseEvent(after));
        EXPECT_OK(clReleaseEvent(e));
    }
    /* a read waiting for a launch */
    for (int r = 0; r < 5; r++) {
        cl_event e = launch(queue, bump);
        av += 1;
        EXPECT_OK(clFlush(queue));
        EXPECT_OK(clEnqueueReadBuffer(q2, a, CL_TRUE, 0, sizeof h, h, 1, &e, NULL));
        EXPECT(h[0] == av && h[N - 1] == av, "round %d: a read after the launch it waited for: %d, expected %d", r,
               h[0], av);
        EXPECT(status_of(e) == CL_COMPLETE, "round %d: the awaited launch complete after the read", r);
        EXPECT_OK(clReleaseEvent(e));
    }
    /* markers with a wait list, on the other queue and on the launch's own; one without */
    for (int own = 0; own < 3; own++) {
        cl_command_queue mq = own ? queue : q2;
        cl_event e = launch(queue, bump), m = NULL;
        av += 1;
        EXPECT_OK(clFlush(queue));
        EXPECT_OK(clEnqueueMarkerWithWaitList(mq, own < 2, own < 2 ? &e : NULL, &m));
        EXPECT_OK(clWaitForEvents(1, &m));
        EXPECT(status_of(m) == CL_COMPLETE && status_of(e) == CL_COMPLETE,
               "marker %d: complete, and the launch it waited for", own);
        cl_command_type type = 0;
        EXPECT_OK(clGetEventInfo(m, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
        EXPECT(type == CL_COMMAND_MARKER, "marker's type %#x", type);
        EXPECT_OK(clReleaseEvent(m));
        EXPECT_OK(clReleaseEvent(e));
    }
    /* barriers with a wait list, then a step on q2 (b = a + 1) after each */
    for (int own = 0; own < 2; own++) {
        cl_command_queue bq = own ? queue : q2;
        cl_event e = launch(queue, bump), bar = NULL;
        av += 1;
        EXPECT_OK(clFlush(queue));
        EXPECT_OK(clEnqueueBarrierWithWaitList(bq, 1, &e, &bar));
        if (own)
            EXPECT_OK(clFlush(queue));
        EXPECT_OK(clEnqueueNDRangeKernel(q2, step, 1, NULL, &G, NULL, own, own ? &bar : NULL, NULL));
        EXPECT_OK(clFinish(q2));
        EXPECT(status_of(bar) == CL_COMPLETE && status_of(e) == CL_COMPLETE,
               "barrier on %s queue complete with the launch it waited for", own ? "its own" : "another");
        expect_all(q2, b, av + 1, own ? "a step after the launch's queue's barrier" : "a step after a barrier");
        EXPECT_OK(clReleaseEvent(bar));
        EXPECT_OK(clReleaseEvent(e));
    }
    /* clEnqueueWaitForEvents, and a launch on the same queue waiting for its predecessor */
    cl_event e = launch(queue, bump), e2 = NULL;
    av += 1;
    EXPECT_OK(clFlush(queue));
    EXPECT_OK(clEnqueueWaitForEvents(q2, 1, &e));
    EXPECT_OK(clEnqueueNDRangeKernel(q2, step, 1, NULL, &G, NULL, 0, NULL, NULL));
    EXPECT_OK(clFinish(q2));
    expect_all(q2, b, av + 1, "a step after clEnqueueWaitForEvents");
    EXPECT_OK(clEnqueueNDRangeKernel(queue, bump, 1, NULL, &G, NULL, 1, &e, &e2));
    EXPECT_OK(clFinish(queue));
    av += 1;
    cl_event both[2] = {e, e2};
    expect_complete(both, 2, "a launch waiting for its own queue's previous one");
    release_all(both, 2);
    expect_all(queue, a, av, "every bump ran once");
    clReleaseKernel(bump);
    clReleaseKernel(step);
    clReleaseCommandQueue(q2);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
}

/* A callback registered for `type` on event `want`: how often it ran, and in what order. */
struct cb_record { cl_event want; cl_int type; int calls, bad, seq; };
static int cb_seq;

static void CL_CALLBACK on_event(cl_event e, cl_int status, void *user)
{
    struct cb_record *r = user;
    cl_int now = -12345;  /* calls back in: at least as far as the callback's status */
    cl_int err = clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof now, &now, NULL);
    if (e != r->want || status != r->type || err != CL_SUCCESS || now < CL_COMPLETE || now > status)
        __atomic_add_fetch(&r->bad, 1, __ATOMIC_SEQ_CST);
    __atomic_store_n(&r->seq, __atomic_add_fetch(&cb_seq, 1, __ATOMIC_SEQ_CST), __ATOMIC_SEQ_CST);
    __atomic_add_fetch(&r->calls, 1, __ATOMIC_SEQ_CST);
}

static void set_callback(struct cb_record *r, cl_event e, cl_int type)
{
    r->want = e;
    r->type = type;
    EXPECT_OK(clSetEventCallback(e, type, on_event, r));
}

/* Up to 5 s for each record's callback; then each ran exactly once, with its event and status. */
static void expect_callbacks(struct cb_record *r, int n, const char *what)
{
    for (int spin = 0; spin < 500; spin++) {
        int done = 1;
        for (int i = 0; i < n; i++)
            done &= __atomic_load_n(&r[i].calls, __ATOMIC_SEQ_CST) >= 1;
        if (done)
            break;
        usleep(10000);
    }
    usleep(50000);  /* a second call would come now */
    for (int i = 0; i < n; i++)
        EXPECT(__atomic_load_n(&r[i].calls, __ATOMIC_SEQ_CST) == 1 && __atomic_load_n(&r[i].bad, __ATOMIC_SEQ_CST) == 0,
               "%s %d: callback ran %d times, %d with the wrong event or status", what, i, r[i].calls, r[i].bad);
}

/* 6. clSetEventCallback on launches' events: SUBMITTED, RUNNING and COMPLETE on a pending one (in
 * that order), COMPLETE on 50 of one batch, on one only flushed (never waited for), on one
 * released at once, and COMPLETE and SUBMITTED on a complete one: each runs once with its status
 * (and can query the event); the errors; CL_EVENT_CONTEXT of a pending one. */
static void callback(void)
{
    cl_mem c = zeros();
    cl_kernel k = bump_on(c);
    warm(queue, k);
    static struct cb_record three[3], many[50], flushed, released, late[2];
    cl_event e = launch(queue, k);
    set_callback(&three[0], e, CL_SUBMITTED);
    set_callback(&three[1], e, CL_RUNNING);
    set_callback(&three[2], e, CL_COMPLETE);
    EXPECT_OK(clFinish(queue));
    expect_callbacks(three, 3, "SUBMITTED, RUNNING, COMPLETE");
    EXPECT(three[0].seq < three[1].seq && three[1].seq < three[2].seq, "callback order %d %d %d", three[0].seq,
           three[1].seq, three[2].seq);
    EXPECT_OK(clReleaseEvent(e));
    for (int i = 0; i < 50; i++)
        set_callback(&many[i], launch(queue, k), CL_COMPLETE);
    EXPECT_OK(clFlush(queue));
    EXPECT_OK(clWaitForEvents(1, &many[49].want));
    expect_callbacks(many, 50, "one of 50 in a batch");
    for (int i = 0; i < 50; i++)
        EXPECT_OK(clReleaseEvent(many[i].want));
    set_callback(&flushed, launch(queue, k), CL_COMPLETE);
    EXPECT_OK(clFlush(queue));
    expect_callbacks(&flushed, 1, "flushed, never waited for");
    EXPECT_OK(clReleaseEvent(flushed.want));
    set_callback(&released, launch(queue, k), CL_COMPLETE);
    EXPECT_OK(clReleaseEvent(released.want));
    EXPECT_OK(clFinish(queue));
    expect_callbacks(&released, 1, "released after its callback was set");
    e = launch(queue, k);
    EXPECT_OK(clFinish(queue));
    EXPECT(status_of(e) == CL_COMPLETE, "complete before its callback is set");
    set_callback(&late[0], e, CL_COMPLETE);
    set_callback(&late[1], e, CL_SUBMITTED);
    expect_callbacks(late, 2, "complete when set");
    EXPECT_ERR(clSetEventCallback(e, CL_COMPLETE, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clSetEventCallback(e, CL_QUEUED, on_event, late), CL_INVALID_VALUE);
    EXPECT_ERR(clSetEventCallback(e, 12345, on_event, late), CL_INVALID_VALUE);
    EXPECT_OK(clReleaseEvent(e));
    /* CL_EVENT_CONTEXT of a pending launch's event; its other answers after */
    e = launch(queue, k);
    cl_context cc = NULL;
    EXPECT_OK(clGetEventInfo(e, CL_EVENT_CONTEXT, sizeof cc, &cc, NULL));
    EXPECT(cc == ctx, "CL_EVENT_CONTEXT of a pending launch's event: %p", (void *)cc);
    expect_info(e, queue, "after CL_EVENT_CONTEXT");
    EXPECT_OK(clFinish(queue));
    expect_complete(&e, 1, "after CL_EVENT_CONTEXT");
    EXPECT_OK(clReleaseEvent(e));
    expect_all(queue, c, 1 + 1 + 50 + 1 + 1 + 1 + 1, "launches with callbacks");
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* 7. On a profiling queue: launches' events in a batch with a fill and a copy (Python's) in
 * between, complete by clFinish, clWaitForEvents of all or of the last; 200 and 600 (past the
 * batch limit of 256) in one go. Results, statuses and ordered times of all. */
static void mixed(void)
{
    cl_command_queue pq = new_queue(ctx, 1);
    cl_mem c = zeros(), d = zeros();
    cl_kernel k = bump_on(c);
    warm(pq, k);
    cl_event ev[15];
    for (int r = 0; r < 3; r++) {
        int fill = 100 * (r + 1);
        for (int i = 0; i < 5; i++)
            ev[i] = launch(pq, k);
        EXPECT_OK(clEnqueueFillBuffer(pq, c, &fill, sizeof fill, 0, N * sizeof(int), 0, NULL, NULL));
        for (int i = 5; i < 10; i++)
            ev[i] = launch(pq, k);
        EXPECT_OK(clEnqueueCopyBuffer(pq, c, d, 0, 0, N * sizeof(int), 0, NULL, NULL));
        for (int i = 10; i < 15; i++)
            ev[i] = launch(pq, k);
        if (r == 0)
            EXPECT_OK(clFinish(pq));
        else
            EXPECT_OK(clWaitForEvents(r == 1 ? 15 : 1, r == 1 ? ev : &ev[14]));
        expect_complete(ev, 15, r == 0 ? "with a fill and a copy, clFinish"
                                        : r == 1 ? "with a fill and a copy, all waited for" : "the last waited for");
        expect_times_list(ev, 15, "with a fill and a copy");
        release_all(ev, 15);
        expect_all(pq, c, fill + 10, "filled between launches");
        expect_all(pq, d, fill + 5, "copied between launches");
    }
    int total = 310;
    static const int counts[2] = {200, 600};
    for (int j = 0; j < 2; j++) {
        int m = counts[j];
        cl_event *many = malloc(m * sizeof *many);
        for (int i = 0; i < m; i++)
            many[i] = launch(pq, k);
        if (j == 0)
            EXPECT_OK(clFinish(pq));
        else
            EXPECT_OK(clWaitForEvents(m, many));
        expect_complete(many, m, j == 0 ? "200 in a batch" : "600, past the batch limit");
        expect_times_list(many, m, j == 0 ? "200 in a batch" : "600, past the batch limit");
        release_all(many, m);
        free(many);
        total += m;
        expect_all(pq, c, total, "many launches with events");
    }
    clReleaseKernel(k);
    clReleaseMemObject(c);
    clReleaseMemObject(d);
    clReleaseCommandQueue(pq);
}

/* 8. Events outliving their queue: finished, then the queue released; and the queue released
 * with their launches unflushed, then waited for. Statuses, context, type, times, results. */
static void queue_release(void)
{
    for (int flushed = 1; flushed >= 0; flushed--)
        for (int prof = 0; prof < 2; prof++) {
            char what[64];
            snprintf(what, sizeof what, "%s queue released %s", prof ? "profiling" : "plain",
                     flushed ? "after clFinish" : "unflushed");
            cl_command_queue q = new_queue(ctx, prof);
            cl_mem c = zeros();
            cl_kernel k = bump_on(c);
            warm(q, k);
            enum { M = 20 };
            cl_event ev[M];
            for (int i = 0; i < M; i++)
                ev[i] = launch(q, k);
            if (flushed)
                EXPECT_OK(clFinish(q));
            EXPECT_OK(clReleaseCommandQueue(q));
            if (!flushed)
                EXPECT_OK(clWaitForEvents(M, ev));
            expect_complete(ev, M, what);
            for (int i = 0; i < M; i++) {
                cl_context cc = NULL;
                cl_command_type type = 0;
                cl_command_queue eq = NULL;  /* the released queue's handle, or NULL once it is gone */
                EXPECT_OK(clGetEventInfo(ev[i], CL_EVENT_CONTEXT, sizeof cc, &cc, NULL));
                EXPECT_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
                EXPECT_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_QUEUE, sizeof eq, &eq, NULL));
                EXPECT(cc == ctx && type == CL_COMMAND_NDRANGE_KERNEL && (eq == q || eq == NULL), "%s, event %d: context %p, type %#x, queue %p (%p)",
                       what, i, (void *)cc, type, (void *)eq, (void *)q);
            }
            if (prof)
                expect_times_list(ev, M, what);
            EXPECT_OK(clWaitForEvents(M, ev));
            release_all(ev, M);
            expect_all(queue, c, 1 + M, what);
            clReleaseKernel(k);
            clReleaseMemObject(c);
        }
}

struct worker { cl_command_queue q; cl_kernel k; cl_mem c; int prof, last_only; char fail[160]; };

/* 300 launches with events; every 5, a wait on all five (even threads) or on the last only
 * (odd threads: in order, the other four are complete then too), then their release. */
static void *work(void *arg)
{
    struct worker *w = arg;
    cl_event ev[5];
    for (int i = 0; i < 300; i++) {
        if (clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &G, NULL, 0, NULL, &ev[i % 5]) != CL_SUCCESS) {
            snprintf(w->fail, sizeof w->fail, "launch %d failed", i);
            return NULL;
        }
        if (i % 5 != 4)
            continue;
        cl_int err = w->last_only ? clWaitForEvents(1, &ev[4]) : clWaitForEvents(5, ev);
        for (int j = 0; j < 5; j++) {
            cl_int s = -12345;
            cl_ulong t0 = 0, t1 = 0;
            cl_int e2 = clGetEventInfo(ev[j], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
            if (w->prof) {
                e2 |= clGetEventProfilingInfo(ev[j], CL_PROFILING_COMMAND_START, sizeof t0, &t0, NULL);
                e2 |= clGetEventProfilingInfo(ev[j], CL_PROFILING_COMMAND_END, sizeof t1, &t1, NULL);
            }
            if (err != CL_SUCCESS || e2 != CL_SUCCESS || s != CL_COMPLETE || t1 < t0 || (w->prof && !t0)) {
                snprintf(w->fail, sizeof w->fail, "launch %d: wait %d, query %d, status %d, start %llu end %llu",
                         i - 4 + j, err, e2, s, (unsigned long long)t0, (unsigned long long)t1);
                return NULL;
            }
            clReleaseEvent(ev[j]);
        }
    }
    return NULL;
}

struct waiter { cl_event *ev; int n; cl_int err; };

static void *wait_some(void *arg)
{
    struct waiter *w = arg;
    w->err = clWaitForEvents(w->n, w->ev);
    return NULL;
}

/* 9. Four threads, each its own queue (two plain, two profiling), waiting for all five events or
 * the last one, checking and releasing them. Then three threads waiting for parts of one queue's
 * open batch (clWaitForEvents flushes) while this one calls clFinish. */
static void threads(void)
{
    enum { T = 4 };
    struct worker w[T];
    pthread_t th[T];
    for (int t = 0; t < T; t++) {
        memset(&w[t], 0, sizeof w[t]);
        w[t].prof = t >= 2;
        w[t].last_only = t % 2;
        w[t].q = new_queue(ctx, w[t].prof);
        w[t].c = zeros();
        w[t].k = bump_on(w[t].c);
        warm(w[t].q, w[t].k);
    }
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, work, &w[t]);
    for (int t = 0; t < T; t++) {
        pthread_join(th[t], NULL);
        EXPECT(w[t].fail[0] == 0, "thread %d: %s", t, w[t].fail);
    }
    for (int t = 0; t < T; t++) {
        expect_all(w[t].q, w[t].c, 301, "each thread's counters");
        clReleaseCommandQueue(w[t].q);
        clReleaseKernel(w[t].k);
        clReleaseMemObject(w[t].c);
    }
    cl_mem c = zeros();
    cl_kernel k = bump_on(c);
    warm(queue, k);
    enum { R = 20, W = 3, M = 20 };
    for (int r = 0; r < R; r++) {
        cl_event ev[W * M];
        struct waiter ws[W];
        for (int i = 0; i < W * M; i++)
            ev[i] = launch(queue, k);
        for (int t = 0; t < W; t++) {
            ws[t] = (struct waiter){ev + t * M, M, -12345};
            pthread_create(&th[t], NULL, wait_some, &ws[t]);
        }
        EXPECT_OK(clFinish(queue));
        for (int t = 0; t < W; t++) {
            pthread_join(th[t], NULL);
            EXPECT(ws[t].err == CL_SUCCESS, "round %d: waiter %d got %d", r, t, ws[t].err);
        }
        expect_complete(ev, W * M, "waited for by three threads");
        release_all(ev, W * M);
    }
    expect_all(queue, c, 1 + R * W * M, "launches waited for by three threads");
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* 10. A launch held behind a user event (and a launch's event), with launches with events after
 * it on the same profiling queue: none complete (and no times) until the user event is set;
 * then all complete, in order, with a callback set while held, and the results right. */
static void user_event(void)
{
    cl_command_queue pq = new_queue(ctx, 1);
    cl_mem c = zeros();
    cl_kernel k = bump_on(c);
    warm(pq, k);
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err);
    REQUIRE_OK(err);
    enum { M = 22 };
    cl_event ev[M];
    ev[0] = launch(pq, k);  /* before the gate: may complete */
    cl_event wl[2] = {gate, ev[0]};
    EXPECT_OK(clEnqueueNDRangeKernel(pq, k, 1, NULL, &G, NULL, 2, wl, &ev[1]));
    for (int i = 2; i < M; i++)
        ev[i] = launch(pq, k);
    static struct cb_record held;
    set_callback(&held, ev[M / 2], CL_COMPLETE);
    EXPECT_OK(clFlush(pq));
    usleep(100000);
    for (int i = 1; i < M; i++) {
        cl_int s = status_of(ev[i]);
        cl_ulong t = 0;
        EXPECT(valid_status(s) && s != CL_COMPLETE, "held launch %d: status %d", i, s);
        EXPECT_ERR(clGetEventProfilingInfo(ev[i], CL_PROFILING_COMMAND_END, sizeof t, &t, NULL),
                   CL_PROFILING_INFO_NOT_AVAILABLE);
    }
    EXPECT(__atomic_load_n(&held.calls, __ATOMIC_SEQ_CST) == 0, "no callback while held");
    cl_command_queue other = new_queue(ctx, 0);
    cl_int first = 0;
    EXPECT_OK(clEnqueueReadBuffer(other, c, CL_TRUE, 0, sizeof first, &first, 0, NULL, NULL));
    EXPECT(first == 1 || first == 2, "nothing past the user event ran: %d (1 or 2)", first);
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clFinish(pq));
    expect_complete(ev, M, "after the user event completed");
    expect_times_list(ev, M, "held launches");
    expect_callbacks(&held, 1, "set while held");
    cl_command_type type = 0;
    EXPECT_OK(clGetEventInfo(gate, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    EXPECT(type == CL_COMMAND_USER && status_of(gate) == CL_COMPLETE, "the user event: type %#x", type);
    release_all(ev, M);
    EXPECT_OK(clReleaseEvent(gate));
    expect_all(pq, c, 1 + M, "everything ran once the user event completed");
    clReleaseCommandQueue(other);
    clReleaseKernel(k);
    clReleaseMemObject(c);
    clReleaseCommandQueue(pq);
}

static const struct {
    const char *name;
    void (*fn)(void);
} SECTIONS[] = {
    {"info", info},           {"profiling", profiling}, {"wait", wait_events},{"release_early", release_early},
    {"wait_list", wait_list}, {"callback", callback},   {"mixed", mixed},     {"queue_release", queue_release},
    {"threads", threads},     {"user_event", user_event},
};

int main(int argc, char **argv)
{
    if (argc != 2) {
        printf("usage: c_events SECTION\n");
        return 2;
    }
    harness_open(&device, &ctx, &queue);
    cl_int err;
    program = clCreateProgramWithSource(ctx, 1, &SRC, NULL, &err);
    REQUIRE_OK(err);
    REQUIRE_OK(clBuildProgram(program, 1, &device, NULL, NULL, NULL));
    for (size_t i = 0; i < sizeof SECTIONS / sizeof SECTIONS[0]; i++)
        if (strcmp(argv[1], SECTIONS[i].name) == 0) {
            printf("-- %s\n", SECTIONS[i].name);
            SECTIONS[i].fn();
            clReleaseProgram(program);
            clReleaseCommandQueue(queue);
            clReleaseContext(ctx);
            return harness_result();
        }
    printf("FAIL unknown section %s\n", argv[1]);
    return 1;
}
