/* Events of fast launches through the ICD loader, sections 6-10 (tests/icd/c/c_events.c has
 * the others and says what they all check): callbacks, mixed batches, queues released before
 * their events, threads, user events.
 *
 * Usage: c_events_more SECTION; each section is one pytest test (test_c_events.py). */
#include "c_events.h"
#include <pthread.h>

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

static const struct harness_section SECTIONS[] = {
    {"callback", callback}, {"mixed", mixed}, {"queue_release", queue_release}, {"threads", threads},
    {"user_event", user_event},
};

int main(int argc, char **argv) { return run_section(argc, argv, SECTIONS, sizeof SECTIONS / sizeof SECTIONS[0]); }
