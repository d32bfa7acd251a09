/* The launch fast path (icd/fast_path.c) through the ICD loader: repeated launches that C
 * records without Python, mixed with everything that must take them back to Python. Every
 * kernel counts or copies, and the host checks each element.
 *
 * Usage: launch_fast SECTION; each section is one pytest test (test_launch_fast.py). */
#include "harness.h"
#include <pthread.h>
#include <stdint.h>
#include <unistd.h>

static cl_device_id device;
static cl_context ctx;
static cl_command_queue queue;

static const char *SRC =
    "kernel void bump(global int *c) { c[get_global_id(0)] += 1; }\n"
    "kernel void add(global int *c, int s) { c[get_global_id(0)] += s; }\n"
    "kernel void step(global const int *a, global int *b) { size_t i = get_global_id(0); b[i] = a[i] + 1; }\n";

static cl_program program;

static cl_kernel kernel(const char *name)
{
    cl_int err;
    cl_kernel k = clCreateKernel(program, name, &err);
    REQUIRE_OK(err);
    return k;
}

static cl_mem zeros(size_t n)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, n * sizeof(int), NULL, &err);
    REQUIRE_OK(err);
    int zero = 0;
    REQUIRE_OK(clEnqueueFillBuffer(queue, m, &zero, sizeof zero, 0, n * sizeof(int), 0, NULL, NULL));
    return m;
}

/* The "bump" kernel on counters `c`. */
static cl_kernel bump_kernel(cl_mem c)
{
    cl_kernel k = kernel("bump");
    REQUIRE_OK(clSetKernelArg(k, 0, sizeof c, &c));
    return k;
}

/* Every element of `m` (n ints) is `want`. */
static void expect_all(cl_command_queue q, cl_mem m, size_t n, int want, const char *what)
{
    int *h = malloc(n * sizeof *h);
    REQUIRE_OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n * sizeof *h, h, 0, NULL, NULL));
    size_t bad = 0, first = n;
    for (size_t i = 0; i < n; i++)
        if (h[i] != want && bad++ == 0)
            first = i;
    EXPECT(bad == 0, "%s: %zu of %zu elements wrong, [%zu] = %d, expected %d", what, bad, n, first,
           first < n ? h[first] : 0, want);
    free(h);
}

/* Back-to-back launches, one clFinish; NULL and explicit local sizes, 1-3 dimensions. */
static void repeat(void)
{
    const size_t n = 4096;
    cl_mem c = zeros(n);
    cl_kernel k = bump_kernel(c);
    size_t g = n, l = 64;
    for (int i = 0; i < 1000; i++)
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    EXPECT_OK(clFinish(queue));
    expect_all(queue, c, n, 1000, "1000 launches, NULL local size");
    for (int i = 0; i < 600; i++)  /* past the batch limit (256): Python submits in between */
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &l, 0, NULL, NULL));
    EXPECT_OK(clFinish(queue));
    expect_all(queue, c, n, 1600, "600 more, local size 64");
    size_t g2[2] = {n, 1}, g3[3] = {n, 1, 1};  /* the kernel indexes by get_global_id(0) */
    for (int i = 0; i < 50; i++) {
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 2, NULL, g2, NULL, 0, NULL, NULL));
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 3, NULL, g3, NULL, 0, NULL, NULL));
    }
    EXPECT_OK(clFinish(queue));
    expect_all(queue, c, n, 1700, "2-D and 3-D launches alternating");
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* Enqueue + clFinish, one at a time; a blocking read in between now and then. */
static void round_trip(void)
{
    const size_t n = 256;
    cl_mem c = zeros(n);
    cl_kernel k = bump_kernel(c);
    size_t g = n;
    for (int i = 1; i <= 500; i++) {
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        EXPECT_OK(clFinish(queue));
        if (i % 125 == 0)
            expect_all(queue, c, n, i, "round trips");
    }
    EXPECT_OK(clFinish(queue));
    EXPECT_OK(clFinish(queue));  /* nothing pending: returns at once */
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* Arguments set between launches are the ones each launch uses: ping-pong buffers and a
 * changing scalar. */
static void args_change(void)
{
    const size_t n = 1024;
    cl_mem a = zeros(n), b = zeros(n);
    cl_kernel k = kernel("step");
    size_t g = n;
    for (int i = 0; i < 300; i++) {
        cl_mem src = i % 2 ? b : a, dst = i % 2 ? a : b;
        REQUIRE_OK(clSetKernelArg(k, 0, sizeof src, &src));
        REQUIRE_OK(clSetKernelArg(k, 1, sizeof dst, &dst));
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));  /* same args again */
    }
    EXPECT_OK(clFinish(queue));
    /* each iteration writes src+1 into dst (twice, the same value): after 300, a holds 300 */
    expect_all(queue, a, n, 300, "ping-pong");
    cl_mem c = zeros(n);
    cl_kernel add = kernel("add");
    REQUIRE_OK(clSetKernelArg(add, 0, sizeof c, &c));
    int total = 0;
    for (int s = 1; s <= 20; s++) {
        REQUIRE_OK(clSetKernelArg(add, 1, sizeof s, &s));
        for (int r = 0; r < 5; r++, total += s)
            EXPECT_OK(clEnqueueNDRangeKernel(queue, add, 1, NULL, &g, NULL, 0, NULL, NULL));
    }
    EXPECT_OK(clFinish(queue));
    expect_all(queue, c, n, total, "a scalar changed every 5 launches");
    clReleaseKernel(k);
    clReleaseKernel(add);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
}

static int destroyed;
static void CL_CALLBACK on_destroy(cl_mem m, void *user)
{
    (void)m;
    (void)user;
    __atomic_store_n(&destroyed, 1, __ATOMIC_SEQ_CST);
}

/* A buffer released right after launches that read it is still there when they run; its
 * destructor callback runs once they are done. The kernel released with launches pending too. */
static void release_pending(void)
{
    const size_t n = 1 << 16;
    cl_mem src = zeros(n), dst = zeros(n);
    int seven = 7;
    REQUIRE_OK(clEnqueueFillBuffer(queue, src, &seven, sizeof seven, 0, n * sizeof(int), 0, NULL, NULL));
    REQUIRE_OK(clFinish(queue));
    REQUIRE_OK(clSetMemObjectDestructorCallback(src, on_destroy, NULL));
    cl_kernel k = kernel("step");
    REQUIRE_OK(clSetKernelArg(k, 0, sizeof src, &src));
    REQUIRE_OK(clSetKernelArg(k, 1, sizeof dst, &dst));
    size_t g = n;
    for (int i = 0; i < 20; i++)
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    EXPECT_OK(clReleaseMemObject(src));
    EXPECT_OK(clReleaseKernel(k));
    EXPECT_OK(clFinish(queue));
    expect_all(queue, dst, n, 8, "dst after its source was released with launches pending");
    for (int i = 0; i < 200 && !__atomic_load_n(&destroyed, __ATOMIC_SEQ_CST); i++)
        usleep(10000);
    EXPECT(__atomic_load_n(&destroyed, __ATOMIC_SEQ_CST), "the released buffer's destructor callback ran");
    clReleaseMemObject(dst);
}

/* Launches mixed with transfers, markers and events: in-order semantics hold across the two
 * paths, and a launch that asks for an event gets one that completes after the earlier ones. */
static void mixed(void)
{
    const size_t n = 512;
    cl_mem c = zeros(n);
    cl_kernel k = bump_kernel(c);
    size_t g = n;
    int *h = malloc(n * sizeof *h);
    for (int round = 1; round <= 20; round++) {
        for (int i = 0; i < 10; i++)
            EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        cl_event ev = NULL;
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, &ev));  /* the Python path */
        EXPECT_OK(clEnqueueReadBuffer(queue, c, CL_FALSE, 0, n * sizeof *h, h, 0, NULL, NULL));
        cl_event marker = NULL;
        EXPECT_OK(clEnqueueMarkerWithWaitList(queue, 0, NULL, &marker));
        EXPECT_OK(clWaitForEvents(1, &marker));
        cl_int status = 0;
        EXPECT_OK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        EXPECT(status == CL_COMPLETE, "round %d: the launch's event is complete after the marker", round);
        size_t bad = 0;
        for (size_t i = 0; i < n; i++)
            bad += h[i] != 11 * round;
        EXPECT(bad == 0, "round %d: %zu elements differ from %d after launches, a read and a marker", round, bad,
               11 * round);
        clReleaseEvent(ev);
        clReleaseEvent(marker);
    }
    free(h);
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* A launch held behind a user event holds every later launch of the in-order queue. */
static void user_event_gate(void)
{
    const size_t n = 256;
    cl_mem c = zeros(n);
    REQUIRE_OK(clFinish(queue));
    cl_kernel k = bump_kernel(c);
    size_t g = n;
    for (int i = 0; i < 5; i++)  /* prepared for the fast path */
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    EXPECT_OK(clFinish(queue));
    cl_int err;
    cl_event gate = clCreateUserEvent(ctx, &err);
    REQUIRE_OK(err);
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 1, &gate, NULL));
    for (int i = 0; i < 50; i++)
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    EXPECT_OK(clFlush(queue));
    usleep(50000);
    cl_command_queue other = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    REQUIRE_OK(err);
    expect_all(other, c, n, 5, "nothing ran past the user event");
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clFinish(queue));
    expect_all(queue, c, n, 56, "everything ran once the user event completed");
    clReleaseEvent(gate);
    clReleaseCommandQueue(other);
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* One kernel launched alternately on two queues, and queues of several threads at once. */
static void two_queues(void)
{
    const size_t n = 256;
    cl_mem c = zeros(n);
    REQUIRE_OK(clFinish(queue));
    cl_int err;
    cl_command_queue q2 = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    REQUIRE_OK(err);
    cl_kernel k = bump_kernel(c);
    size_t g = n;
    for (int i = 0; i < 100; i++) {
        cl_command_queue q = (i / 10) % 2 ? q2 : queue;
        EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        if (i % 10 == 9)
            EXPECT_OK(clFinish(q));
    }
    expect_all(queue, c, n, 100, "launches alternating between two queues");
    clReleaseCommandQueue(q2);
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

struct worker { cl_command_queue q; cl_kernel k; cl_mem c; int launches; };

static void *work(void *arg)
{
    struct worker *w = arg;
    size_t g = 128;
    for (int i = 0; i < w->launches; i++) {
        if (clEnqueueNDRangeKernel(w->q, w->k, 1, NULL, &g, NULL, 0, NULL, NULL) != CL_SUCCESS)
            return (void *)1;
        if (i % 97 == 0 && clFinish(w->q) != CL_SUCCESS)
            return (void *)1;
    }
    return clFinish(w->q) == CL_SUCCESS ? NULL : (void *)1;
}

static void threads(void)
{
    enum { T = 4 };
    struct worker w[T];
    pthread_t th[T];
    cl_int err;
    for (int t = 0; t < T; t++) {
        w[t].q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
        REQUIRE_OK(err);
        w[t].k = kernel("bump");
        w[t].c = zeros(128);
        w[t].launches = 1500 + 100 * t;
        REQUIRE_OK(clSetKernelArg(w[t].k, 0, sizeof w[t].c, &w[t].c));
    }
    REQUIRE_OK(clFinish(queue));
    for (int t = 0; t < T; t++)
        pthread_create(&th[t], NULL, work, &w[t]);
    for (int t = 0; t < T; t++) {
        void *rc;
        pthread_join(th[t], &rc);
        EXPECT(rc == NULL, "thread %d: every call succeeded", t);
    }
    for (int t = 0; t < T; t++) {
        expect_all(w[t].q, w[t].c, 128, w[t].launches, "each thread's counter");
        clReleaseCommandQueue(w[t].q);
        clReleaseKernel(w[t].k);
        clReleaseMemObject(w[t].c);
    }
}

/* Launches that ask for an event (C records them, Python makes the event): each event
 * completes, names its queue and command type; a profiling queue's still gets its times. */
static void events(void)
{
    enum { N = 100 };
    const size_t n = 256;
    cl_mem c = zeros(n);
    cl_kernel k = bump_kernel(c);
    size_t g = n;
    cl_event ev[N];
    for (int i = 0; i < N; i++)
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, &ev[i]));
    EXPECT_OK(clWaitForEvents(1, &ev[N - 1]));
    for (int i = 0; i < N; i++) {
        cl_int status = 1;
        cl_command_type type = 0;
        cl_command_queue q = NULL;
        EXPECT_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
        EXPECT_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
        EXPECT_OK(clGetEventInfo(ev[i], CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL));
        EXPECT(status == CL_COMPLETE && type == CL_COMMAND_NDRANGE_KERNEL && q == queue,
               "event %d: status %d, type %#x, its queue", i, status, type);
        clReleaseEvent(ev[i]);
    }
    expect_all(queue, c, n, N, "launches with events");
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue pq = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    REQUIRE_OK(err);
    for (int i = 0; i < 5; i++) {
        cl_event e;
        EXPECT_OK(clEnqueueNDRangeKernel(pq, k, 1, NULL, &g, NULL, 0, NULL, &e));
        EXPECT_OK(clWaitForEvents(1, &e));
        cl_ulong start = 0, end = 0;
        EXPECT_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
        EXPECT_OK(clGetEventProfilingInfo(e, CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
        EXPECT(start > 0 && end >= start, "profiled launch %d: start %llu, end %llu", i, (unsigned long long)start,
               (unsigned long long)end);
        clReleaseEvent(e);
    }
    expect_all(pq, c, n, N + 5, "and on a profiling queue");
    clReleaseCommandQueue(pq);
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

static int callbacks_complete;
static void CL_CALLBACK on_complete(cl_event e, cl_int status, void *user)
{
    (void)e;
    (void)user;
    if (status == CL_COMPLETE)
        __atomic_add_fetch(&callbacks_complete, 1, __ATOMIC_SEQ_CST);
}

/* A second queue on the device, with profiling. */
static cl_command_queue profiling_queue(void)
{
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_PROFILING_ENABLE, 0};
    cl_command_queue pq = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    REQUIRE_OK(err);
    return pq;
}

/* A profiled event's four times are set and in order. */
static void expect_times_in_order(cl_event e, const char *what, int i)
{
    cl_ulong t[4] = {0};
    const cl_profiling_info info[4] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                       CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END};
    for (int w = 0; w < 4; w++)
        EXPECT_OK(clGetEventProfilingInfo(e, info[w], sizeof t[w], &t[w], NULL));
    EXPECT(t[0] > 0 && t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3], "%s %d: queued %llu submit %llu start %llu end %llu",
           what, i, (unsigned long long)t[0], (unsigned long long)t[1], (unsigned long long)t[2],
           (unsigned long long)t[3]);
}

/* Wait (up to 5 s) until `want` completion callbacks have run, and check they all did. */
static void expect_callbacks(int want)
{
    for (int spin = 0; spin < 500 && __atomic_load_n(&callbacks_complete, __ATOMIC_SEQ_CST) < want; spin++)
        usleep(10000);
    EXPECT(callbacks_complete == want, "%d of %d completion callbacks", callbacks_complete, want);
}

/* Round trips whose launch asks for an event, on a plain and a profiling queue: C records the
 * launch (and its timestamps), clFinish runs the batch in C and Python completes the events.
 * Each event is complete when clFinish returns, its callback runs, its times are in order; a
 * batch with more profiled launches than the queue has timestamp queries still times them all. */
static void events_finish(void)
{
    enum { N = 200, MANY = 1500 };
    const size_t n = 256;
    cl_mem c = zeros(n);
    cl_kernel k = bump_kernel(c);
    size_t g = n;
    cl_command_queue pq = profiling_queue();
    cl_command_queue qs[2] = {queue, pq};
    int total = 0;
    for (int which = 0; which < 2; which++) {
        cl_command_queue q = qs[which];
        for (int i = 0; i < N; i++) {
            cl_event e;
            EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &e));
            if (i % 3 == 1)  /* and one without an event in the same batch */
                EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, NULL));
            EXPECT_OK(clSetEventCallback(e, CL_COMPLETE, on_complete, NULL));
            EXPECT_OK(clFinish(q));
            total += 1 + (i % 3 == 1);
            cl_int status = 1;
            EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
            EXPECT(status == CL_COMPLETE, "queue %d, round trip %d: status %d after clFinish", which, i, status);
            if (q == pq)
                expect_times_in_order(e, "round trip", i);
            clReleaseEvent(e);
        }
    }
    static cl_event many[MANY];
    for (int i = 0; i < MANY; i++)
        EXPECT_OK(clEnqueueNDRangeKernel(pq, k, 1, NULL, &g, NULL, 0, NULL, &many[i]));
    EXPECT_OK(clFinish(pq));
    total += MANY;
    for (int i = 0; i < MANY; i++) {
        cl_ulong start = 0, end = 0;
        EXPECT_OK(clGetEventProfilingInfo(many[i], CL_PROFILING_COMMAND_START, sizeof start, &start, NULL));
        EXPECT_OK(clGetEventProfilingInfo(many[i], CL_PROFILING_COMMAND_END, sizeof end, &end, NULL));
        EXPECT(start > 0 && end >= start, "launch %d of %d in flight: start %llu, end %llu", i, MANY,
               (unsigned long long)start, (unsigned long long)end);
        clReleaseEvent(many[i]);
    }
    expect_callbacks(2 * N);
    expect_all(queue, c, n, total, "every launch ran once");
    clReleaseCommandQueue(pq);
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* clWaitForEvents of a fast launch's event (C runs the batch when it holds only fast launches):
 * on a plain and a profiling queue, the event is complete with its callback and times; waiting
 * on the first of two events, on an event of another queue's open batch, on one already
 * complete, on one whose batch holds a command of Python's, and on a released one (an error). */
static void events_wait(void)
{
    enum { N = 200 };
    const size_t n = 256;
    cl_mem c = zeros(n);
    cl_kernel k = bump_kernel(c);
    size_t g = n;
    cl_int err;
    cl_command_queue pq = profiling_queue();
    cl_command_queue qs[2] = {queue, pq};
    int total = 0, callbacks_before = __atomic_load_n(&callbacks_complete, __ATOMIC_SEQ_CST);
    for (int which = 0; which < 2; which++) {
        cl_command_queue q = qs[which], other = qs[1 - which];
        for (int i = 0; i < N; i++) {
            cl_event e, e2 = NULL, o = NULL;
            EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &e));
            EXPECT_OK(clSetEventCallback(e, CL_COMPLETE, on_complete, NULL));
            if (i % 3 == 1)  /* a second launch with an event after it: wait on the first */
                EXPECT_OK(clEnqueueNDRangeKernel(q, k, 1, NULL, &g, NULL, 0, NULL, &e2));
            if (i % 5 == 2)  /* the other queue has an open batch with an event of its own */
                EXPECT_OK(clEnqueueNDRangeKernel(other, k, 1, NULL, &g, NULL, 0, NULL, &o));
            if (i % 7 == 3) {  /* a command of Python's in the same batch: the wait is Python's */
                int zero = 0;
                cl_mem scratch = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
                EXPECT_OK(err);
                EXPECT_OK(clEnqueueFillBuffer(q, scratch, &zero, sizeof zero, 0, 64, 0, NULL, NULL));
                clReleaseMemObject(scratch);
            }
            EXPECT_OK(clWaitForEvents(1, &e));
            total += 1 + (e2 != NULL) + (o != NULL);
            cl_int status = 1;
            EXPECT_OK(clGetEventInfo(e, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
            EXPECT(status == CL_COMPLETE, "queue %d, wait %d: status %d after clWaitForEvents", which, i, status);
            if (q == pq)
                expect_times_in_order(e, "wait", i);
            EXPECT_OK(clWaitForEvents(1, &e));  /* already complete */
            if (e2) {
                EXPECT_OK(clWaitForEvents(1, &e2));
                clReleaseEvent(e2);
            }
            if (o) {
                EXPECT_OK(clWaitForEvents(1, &o));
                clReleaseEvent(o);
            }
            clReleaseEvent(e);
        }
    }
    /* A released event whose batch is still open is no longer a valid event. */
    cl_event gone;
    EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, &gone));
    EXPECT_OK(clReleaseEvent(gone));
    EXPECT(clWaitForEvents(1, &gone) == CL_INVALID_EVENT, "clWaitForEvents of a released event");
    total += 1;
    EXPECT_OK(clFinish(queue));
    expect_callbacks(callbacks_before + 2 * N);
    expect_all(queue, c, n, total, "every launch ran once");
    clReleaseCommandQueue(pq);
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

/* Small non-blocking writes without events (vkCmdUpdateBuffer from C): every byte lands, in
 * order with launches, in sub-buffers, with the spec's errors; a buffer released with writes
 * pending is still right where they land first. */
static void small_writes(void)
{
    enum { N = 2000, W = 4 };  /* N writes of W ints */
    cl_int err;
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * W * sizeof(int), NULL, &err);
    REQUIRE_OK(err);
    int *src = malloc(N * W * sizeof(int)), *back = malloc(N * W * sizeof(int));
    for (int i = 0; i < N * W; i++)
        src[i] = i * 7 + 3;
    for (int round = 0; round < 2; round++) {
        for (int i = 0; i < N; i++)
            EXPECT_OK(clEnqueueWriteBuffer(queue, buf, CL_FALSE, (size_t)i * W * sizeof(int), W * sizeof(int),
                                           src + i * W, 0, NULL, NULL));
        EXPECT_OK(clFinish(queue));
        EXPECT_OK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, N * W * sizeof(int), back, 0, NULL, NULL));
        EXPECT(memcmp(src, back, N * W * sizeof(int)) == 0, "round %d: %d small writes", round, N);
        for (int i = 0; i < N * W; i++)
            src[i] += 1;
    }
    /* in order with launches: write 5, bump, write 7 at 0, bump -> [0] = 8, the rest 6 */
    cl_kernel k = bump_kernel(buf);
    size_t g = 64;
    int five[64], seven = 7;
    for (int i = 0; i < 64; i++)
        five[i] = 5;
    for (int r = 0; r < 3; r++) {
        EXPECT_OK(clEnqueueWriteBuffer(queue, buf, CL_FALSE, 0, sizeof five, five, 0, NULL, NULL));
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
        EXPECT_OK(clEnqueueWriteBuffer(queue, buf, CL_FALSE, 0, sizeof seven, &seven, 0, NULL, NULL));
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    }
    EXPECT_OK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 0, 64 * sizeof(int), back, 0, NULL, NULL));
    int bad = back[0] != 8;
    for (int i = 1; i < 64; i++)
        bad += back[i] != 7;
    EXPECT(bad == 0, "writes and launches in order: [0] = %d (8), [1] = %d (7)", back[0], back[1]);
    /* a sub-buffer */
    cl_buffer_region region = {4096, 4096};
    cl_mem sub = clCreateSubBuffer(buf, CL_MEM_READ_WRITE, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    REQUIRE_OK(err);
    for (int r = 0; r < 3; r++)
        EXPECT_OK(clEnqueueWriteBuffer(queue, sub, CL_FALSE, 8 + 4 * r, sizeof seven, &seven, 0, NULL, NULL));
    EXPECT_OK(clEnqueueReadBuffer(queue, buf, CL_TRUE, 4096 + 8, 3 * sizeof(int), back, 0, NULL, NULL));
    EXPECT(back[0] == 7 && back[1] == 7 && back[2] == 7, "sub-buffer writes land at its origin");
    /* errors: out of range, unaligned sizes still work (Python), a read-only host view */
    EXPECT_ERR(clEnqueueWriteBuffer(queue, sub, CL_FALSE, 4094, 4, &seven, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueWriteBuffer(queue, buf, CL_FALSE, N * W * sizeof(int), 4, &seven, 0, NULL, NULL),
               CL_INVALID_VALUE);
    EXPECT_OK(clEnqueueWriteBuffer(queue, buf, CL_FALSE, 1, 3, &seven, 0, NULL, NULL));
    cl_mem ro = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_HOST_READ_ONLY, 64, NULL, &err);
    REQUIRE_OK(err);
    for (int r = 0; r < 3; r++)
        EXPECT_ERR(clEnqueueWriteBuffer(queue, ro, CL_FALSE, 0, 4, &seven, 0, NULL, NULL), CL_INVALID_OPERATION);
    EXPECT_OK(clFinish(queue));
    /* released with writes pending: a copy made before the release sees them */
    cl_mem dst = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, &err);
    REQUIRE_OK(err);
    for (int r = 0; r < 4; r++)
        EXPECT_OK(clEnqueueWriteBuffer(queue, sub, CL_FALSE, 4 * r, sizeof seven, &seven, 0, NULL, NULL));
    EXPECT_OK(clEnqueueCopyBuffer(queue, sub, dst, 0, 0, 16, 0, NULL, NULL));
    EXPECT_OK(clReleaseMemObject(sub));
    EXPECT_OK(clEnqueueReadBuffer(queue, dst, CL_TRUE, 0, 16, back, 0, NULL, NULL));
    EXPECT(back[0] == 7 && back[3] == 7, "writes to a released sub-buffer, copied before the release");
    clReleaseMemObject(ro);
    clReleaseMemObject(dst);
    clReleaseKernel(k);
    clReleaseMemObject(buf);
    free(src);
    free(back);
}

/* Bad handles still get their errors (the fast path never takes a handle it does not know). */
static void errors(void)
{
    cl_mem c = zeros(64);
    cl_kernel k = bump_kernel(c);
    size_t g = 64;
    for (int i = 0; i < 3; i++)
        EXPECT_OK(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, NULL, 0, NULL, NULL));
    EXPECT_ERR(clEnqueueNDRangeKernel(NULL, k, 1, NULL, &g, NULL, 0, NULL, NULL), CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, NULL, 1, NULL, &g, NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
    /* handles of the other kind, both known to the fast path */
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, (cl_kernel)queue, 1, NULL, &g, NULL, 0, NULL, NULL), CL_INVALID_KERNEL);
    EXPECT_ERR(clEnqueueNDRangeKernel((cl_command_queue)k, k, 1, NULL, &g, NULL, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clFinish((cl_command_queue)k), CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 0, NULL, &g, NULL, 0, NULL, NULL), CL_INVALID_WORK_DIMENSION);
    size_t bad_local = 3;  /* 64 is not a multiple of 3 (OpenCL C 1.2: uniform groups) */
    EXPECT_ERR(clEnqueueNDRangeKernel(queue, k, 1, NULL, &g, &bad_local, 0, NULL, NULL), CL_INVALID_WORK_GROUP_SIZE);
    EXPECT_ERR(clFinish(NULL), CL_INVALID_COMMAND_QUEUE);
    EXPECT_OK(clFinish(queue));
    expect_all(queue, c, 64, 3, "only the valid launches ran");
    clReleaseKernel(k);
    clReleaseMemObject(c);
}

static const struct harness_section SECTIONS[] = {
    {"repeat", repeat},       {"round_trip", round_trip}, {"args_change", args_change},
    {"release_pending", release_pending}, {"mixed", mixed}, {"user_event_gate", user_event_gate},
    {"two_queues", two_queues}, {"threads", threads},       {"errors", errors},
    {"events", events},         {"small_writes", small_writes}, {"events_finish", events_finish},
    {"events_wait", events_wait},
};

int main(int argc, char **argv)
{
    return harness_run_section(argc, argv, SECTIONS, sizeof SECTIONS / sizeof SECTIONS[0], SRC, &device, &ctx, &queue,
                               &program);
}
