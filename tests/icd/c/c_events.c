/* Events of fast launches (icd/fast_path.c) through the ICD loader. After a first launch of a
 * kernel (taken by Python), repeated launches with the same arguments and NDRange are recorded
 * by C; when they ask for an event, C may make that event itself (a "C event", VKCL_C_EVENTS=1)
 * and answer retain/release, clGetEventInfo, clGetEventProfilingInfo and clWaitForEvents, while
 * any other use makes Python adopt it. Whatever path an event takes, the application must see
 * the OpenCL 3.0 semantics: every section checks them, and every kernel's result on the host.
 *
 * Usage: c_events SECTION (sections 1-5 here, 6-10 in c_events_more.c); each section is one
 * pytest test (test_c_events.py), run with
 * VKCL_C_EVENTS=1 and =0. Every section warms the fast path first (warm(): one launch of the
 * kernel with the same arguments and NDRange as the later ones, then clFinish). */
#include "c_events.h"

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

static const struct harness_section SECTIONS[] = {
    {"info", info}, {"profiling", profiling}, {"wait", wait_events}, {"release_early", release_early},
    {"wait_list", wait_list},
};

int main(int argc, char **argv) { return run_section(argc, argv, SECTIONS, sizeof SECTIONS / sizeof SECTIONS[0]); }
