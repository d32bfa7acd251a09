/* Queues and events through the ICD loader: queue properties and their errors, several queues
 * at once, user events gating work on two queues, error propagation, callbacks (on a vkcl
 * thread), markers and barriers in out-of-order queues, clEnqueueWaitForEvents, profiling. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clEnqueueWaitForEvents, clEnqueueMarker, clEnqueueBarrier */
#include "harness.h"
#include <pthread.h>
#include <stdint.h>
#include <time.h>

static cl_context ctx;
static cl_device_id device;
static pthread_t main_thread;

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

static cl_mem make(size_t size)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, size, NULL, &err);
    REQUIRE_OK(err);
    return m;
}

static cl_command_queue make_queue(cl_command_queue_properties props)
{
    cl_int err;
    cl_queue_properties list[] = {CL_QUEUE_PROPERTIES, props, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, list, &err);
    REQUIRE_OK(err);
    return q;
}

static cl_int status_of(cl_event ev)
{
    cl_int s = 99;
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof s, &s, NULL);
    return s;
}

/* every byte of [0, n) of buffer m equals v (read on queue q, blocking) */
static int all_equal(cl_command_queue q, cl_mem m, size_t n, unsigned char v)
{
    unsigned char *buf = malloc(n);
    REQUIRE_OK(clEnqueueReadBuffer(q, m, CL_TRUE, 0, n, buf, 0, NULL, NULL));
    int ok = 1;
    for (size_t i = 0; i < n; i++)
        ok &= buf[i] == v;
    free(buf);
    return ok;
}

/* 1. Queue creation: properties and their errors. */
static void test_queue_properties(void)
{
    cl_int err;
    cl_command_queue q;
    q = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    EXPECT(q != NULL && err == CL_SUCCESS, "NULL properties: %d", err);
    if (q)
        clReleaseCommandQueue(q);
    cl_command_queue_properties ok_bits[] = {0, CL_QUEUE_PROFILING_ENABLE, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
                                             CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE};
    for (int i = 0; i < 4; i++) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, ok_bits[i], 0};
        q = clCreateCommandQueueWithProperties(ctx, device, props, &err);
        EXPECT(q != NULL && err == CL_SUCCESS, "properties %#llx: %d", (unsigned long long)ok_bits[i], err);
        if (q)
            clReleaseCommandQueue(q);
        q = clCreateCommandQueue(ctx, device, ok_bits[i], &err);
        EXPECT(q != NULL && err == CL_SUCCESS, "clCreateCommandQueue %#llx: %d", (unsigned long long)ok_bits[i], err);
        if (q)
            clReleaseCommandQueue(q);
    }
    struct { cl_queue_properties props[6]; cl_int expect; const char *what; } bad[] = {
        {{CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0},
         CL_INVALID_QUEUE_PROPERTIES, "on-device queue"},
        {{CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE | CL_QUEUE_ON_DEVICE_DEFAULT | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE,
          0}, CL_INVALID_QUEUE_PROPERTIES, "default on-device queue"},
        {{CL_QUEUE_PROPERTIES, CL_QUEUE_ON_DEVICE_DEFAULT, 0}, CL_INVALID_VALUE, "ON_DEVICE_DEFAULT alone"},
        {{CL_QUEUE_PROPERTIES, (cl_queue_properties)1 << 30, 0}, CL_INVALID_VALUE, "unknown property bit"},
        {{0x7777, 0, 0}, CL_INVALID_VALUE, "unknown property"},
        {{CL_QUEUE_SIZE, 1024, 0}, CL_INVALID_VALUE, "CL_QUEUE_SIZE on a host queue"},
        {{CL_QUEUE_PROPERTIES, 0, CL_QUEUE_PROPERTIES, 0, 0}, CL_INVALID_VALUE, "a property twice"},
    };
    for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
        q = clCreateCommandQueueWithProperties(ctx, device, bad[i].props, &err);
        EXPECT(q == NULL && err == bad[i].expect, "%s: %d, expected %d", bad[i].what, err, bad[i].expect);
    }
    q = clCreateCommandQueue(ctx, device, (cl_command_queue_properties)1 << 30, &err);
    EXPECT(q == NULL && err == CL_INVALID_VALUE, "clCreateCommandQueue unknown bit: %d", err);
    q = clCreateCommandQueueWithProperties((cl_context)device, device, NULL, &err);
    EXPECT(q == NULL && err == CL_INVALID_CONTEXT, "not a context: %d", err);
    q = clCreateCommandQueueWithProperties(ctx, (cl_device_id)ctx, NULL, &err);
    EXPECT(q == NULL && err == CL_INVALID_DEVICE, "not a device: %d", err);
    EXPECT_ERR(clRetainCommandQueue(NULL), CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clReleaseCommandQueue((cl_command_queue)ctx), CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clFlush(NULL), CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clFinish((cl_command_queue)device), CL_INVALID_COMMAND_QUEUE);
}

/* 2. Several queues of one device working at once, in-order and out-of-order. */
static void test_several_queues(void)
{
    enum { Q = 4, N = 1 << 16, ROUNDS = 20 };
    cl_command_queue qs[Q];
    cl_mem a[Q], b[Q];
    static unsigned char host[Q][ROUNDS][N / 4];
    static unsigned char out[Q][ROUNDS][N / 4];
    for (int i = 0; i < Q; i++) {
        qs[i] = make_queue(i % 2 ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0);
        a[i] = make(N);
        b[i] = make(N);
    }
    /* Each round: write a quarter of a, copy it into b, read it back; every queue in turn,
     * nothing finished until the end. Out-of-order queues chain the three by events. */
    for (int r = 0; r < ROUNDS; r++)
        for (int i = 0; i < Q; i++) {
            size_t off = (size_t)(r % 4) * (N / 4);
            for (int k = 0; k < N / 4; k++)
                host[i][r][k] = (unsigned char)(k * 31 + r * 7 + i);
            cl_event w, c;
            REQUIRE_OK(clEnqueueWriteBuffer(qs[i], a[i], CL_FALSE, off, N / 4, host[i][r], 0, NULL, &w));
            REQUIRE_OK(clEnqueueCopyBuffer(qs[i], a[i], b[i], off, off, N / 4, 1, &w, &c));
            REQUIRE_OK(clEnqueueReadBuffer(qs[i], b[i], CL_FALSE, off, N / 4, out[i][r], 1, &c, NULL));
            /* out-of-order: the next round's write to the same quarter must wait for this read */
            REQUIRE_OK(clEnqueueBarrierWithWaitList(qs[i], 0, NULL, NULL));
            clReleaseEvent(w);
            clReleaseEvent(c);
        }
    for (int i = 0; i < Q; i++)
        EXPECT_OK(clFinish(qs[i]));
    for (int i = 0; i < Q; i++)
        for (int r = 0; r < ROUNDS; r++)
            EXPECT(memcmp(host[i][r], out[i][r], N / 4) == 0, "queue %d round %d", i, r);
    for (int i = 0; i < Q; i++) {
        clReleaseMemObject(a[i]);
        clReleaseMemObject(b[i]);
        clReleaseCommandQueue(qs[i]);
    }
}

struct later { cl_event ev; cl_int status; };

static void *set_later(void *arg)
{
    struct later *l = arg;
    sleep_ms(100);
    clSetUserEventStatus(l->ev, l->status);
    return NULL;
}

/* 3. A user event gates commands on two queues: nothing runs before it is set. */
static void test_user_event_gates_two_queues(void)
{
    enum { N = 4096 };
    cl_int err;
    cl_command_queue qa = make_queue(0), qb = make_queue(0), qc = make_queue(0);
    cl_mem x = make(N), y = make(N), z = make(N);
    unsigned char zero = 0, ones[N];
    memset(ones, 1, N);
    clEnqueueFillBuffer(qc, x, &zero, 1, 0, N, 0, NULL, NULL);
    clEnqueueFillBuffer(qc, y, &zero, 1, 0, N, 0, NULL, NULL);
    clEnqueueFillBuffer(qc, z, &zero, 1, 0, N, 0, NULL, NULL);
    clFinish(qc);

    cl_event gate = clCreateUserEvent(ctx, &err);
    REQUIRE_OK(err);
    cl_event wa, cb, after;
    /* queue A: write x (gated), then an ungated fill of z that an in-order queue holds too */
    EXPECT_OK(clEnqueueWriteBuffer(qa, x, CL_FALSE, 0, N, ones, 1, &gate, &wa));
    unsigned char two = 2;
    EXPECT_OK(clEnqueueFillBuffer(qa, z, &two, 1, 0, N, 0, NULL, &after));
    /* queue B: copy x -> y once A's write is done (an event of another queue, not yet run) */
    EXPECT_OK(clEnqueueCopyBuffer(qb, x, y, 0, 0, N, 1, &wa, &cb));
    EXPECT_OK(clFlush(qa));
    EXPECT_OK(clFlush(qb));
    sleep_ms(150);
    EXPECT(all_equal(qc, x, N, 0) && all_equal(qc, y, N, 0) && all_equal(qc, z, N, 0), "work ran before the gate");
    cl_int s = status_of(wa);
    EXPECT(s == CL_QUEUED || s == CL_SUBMITTED, "gated write status %d", s);
    s = status_of(cb);
    EXPECT(s == CL_QUEUED || s == CL_SUBMITTED, "dependent copy status %d", s);
    s = status_of(after);
    EXPECT(s == CL_QUEUED || s == CL_SUBMITTED, "in-order follower status %d", s);

    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clWaitForEvents(1, &cb)); /* waiting on B's event alone must be enough */
    EXPECT(all_equal(qc, x, N, 1) && all_equal(qc, y, N, 1), "data after the gate opened");
    EXPECT_OK(clFinish(qa));
    EXPECT(all_equal(qc, z, N, 2), "in-order follower ran");
    EXPECT(status_of(wa) == CL_COMPLETE && status_of(cb) == CL_COMPLETE && status_of(after) == CL_COMPLETE,
           "statuses after the gate: %d %d %d", status_of(wa), status_of(cb), status_of(after));
    clReleaseEvent(wa);
    clReleaseEvent(cb);
    clReleaseEvent(after);
    clReleaseEvent(gate);

    /* One user event gating a command in each of two queues; blocking reads after it is set. */
    gate = clCreateUserEvent(ctx, &err);
    cl_event e1, e2;
    unsigned char three = 3, four = 4;
    EXPECT_OK(clEnqueueFillBuffer(qa, x, &three, 1, 0, N, 1, &gate, &e1));
    EXPECT_OK(clEnqueueFillBuffer(qb, y, &four, 1, 0, N, 1, &gate, &e2));
    EXPECT_OK(clFlush(qa));
    EXPECT_OK(clFlush(qb));
    sleep_ms(50);
    EXPECT(all_equal(qc, x, N, 1) && all_equal(qc, y, N, 1), "two queues: ran before the gate");
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    unsigned char got[N];
    EXPECT_OK(clEnqueueReadBuffer(qa, x, CL_TRUE, 0, N, got, 0, NULL, NULL));
    EXPECT(got[0] == 3 && got[N - 1] == 3, "two queues: x %d", got[0]);
    EXPECT_OK(clEnqueueReadBuffer(qb, y, CL_TRUE, 0, N, got, 1, &e1, NULL));
    EXPECT(got[0] == 4 && got[N - 1] == 4, "two queues: y %d", got[0]);
    clReleaseEvent(e1);
    clReleaseEvent(e2);
    clReleaseEvent(gate);

    /* A blocking read waits for a user event another thread sets; then one it fails. */
    for (int fail = 0; fail < 2; fail++) {
        gate = clCreateUserEvent(ctx, &err);
        unsigned char seven = 7;
        EXPECT_OK(clEnqueueFillBuffer(qb, y, &seven, 1, 0, N, 1, &gate, &e1));
        struct later l = {gate, fail ? -3 : CL_COMPLETE};
        pthread_t t;
        pthread_create(&t, NULL, set_later, &l);
        memset(got, 0, N);
        err = clEnqueueReadBuffer(qa, y, CL_TRUE, 0, N, got, 1, &e1, NULL);
        if (fail)
            EXPECT(err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST && got[0] == 0,
                   "blocking read after a failed gate: %d", err);
        else
            EXPECT(err == CL_SUCCESS && got[0] == 7 && got[N - 1] == 7, "blocking read: %d, %d", err, got[0]);
        pthread_join(t, NULL);
        clReleaseEvent(e1);
        clReleaseEvent(gate);
    }

    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseMemObject(z);
    clReleaseCommandQueue(qa);
    clReleaseCommandQueue(qb);
    clReleaseCommandQueue(qc);
}

/* 4. A negative user-event status fails every command that depends on it. */
static void test_error_propagation(void)
{
    enum { N = 1024 };
    cl_int err;
    cl_command_queue qa = make_queue(0), qb = make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE);
    cl_mem x = make(N), y = make(N);
    unsigned char five = 5, six = 6, got[N];
    clEnqueueFillBuffer(qa, x, &five, 1, 0, N, 0, NULL, NULL);
    clEnqueueFillBuffer(qa, y, &five, 1, 0, N, 0, NULL, NULL);
    clFinish(qa);

    cl_event gate = clCreateUserEvent(ctx, &err);
    cl_event fa, fb, chained, marker;
    EXPECT_OK(clEnqueueFillBuffer(qa, x, &six, 1, 0, N, 1, &gate, &fa));
    EXPECT_OK(clEnqueueFillBuffer(qb, y, &six, 1, 0, N, 1, &gate, &fb));
    EXPECT_OK(clEnqueueCopyBuffer(qb, x, y, 0, 0, N, 1, &fa, &chained)); /* depends on a failing command */
    EXPECT_OK(clEnqueueMarkerWithWaitList(qb, 1, &fb, &marker));
    EXPECT_OK(clFlush(qa));
    EXPECT_OK(clFlush(qb));
    EXPECT_OK(clSetUserEventStatus(gate, -1234));
    /* a blocking read that depends on the failed event */
    EXPECT_ERR(clEnqueueReadBuffer(qa, x, CL_TRUE, 0, N, got, 1, &gate, NULL),
               CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    EXPECT_ERR(clEnqueueReadBuffer(qb, y, CL_TRUE, 0, N, got, 1, &fb, NULL),
               CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    void *p = clEnqueueMapBuffer(qb, y, CL_TRUE, CL_MAP_READ, 0, N, 1, &fb, NULL, &err);
    EXPECT(p == NULL && err == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "blocking map: %d", err);
    cl_event all[4] = {fa, fb, chained, marker};
    EXPECT_ERR(clWaitForEvents(4, all), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    EXPECT(status_of(gate) == -1234, "user event status %d", status_of(gate));
    for (int i = 0; i < 4; i++)
        EXPECT(status_of(all[i]) < 0, "dependent %d status %d", i, status_of(all[i]));
    EXPECT(status_of(fa) == CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST, "status %d", status_of(fa));
    EXPECT_OK(clFinish(qa));
    EXPECT_OK(clFinish(qb));
    EXPECT(all_equal(qa, x, N, 5) && all_equal(qa, y, N, 5), "failed commands must not run");
    /* the queues keep working */
    EXPECT_OK(clEnqueueFillBuffer(qa, x, &six, 1, 0, N, 0, NULL, NULL));
    EXPECT(all_equal(qa, x, N, 6), "queue works after a failure");
    for (int i = 0; i < 4; i++)
        clReleaseEvent(all[i]);
    clReleaseEvent(gate);
    clReleaseMemObject(x);
    clReleaseMemObject(y);
    clReleaseCommandQueue(qa);
    clReleaseCommandQueue(qb);
}

/* 5. clSetUserEventStatus and clWaitForEvents errors. */
static void test_user_event_errors(void)
{
    cl_int err;
    cl_event u = clCreateUserEvent(ctx, &err);
    EXPECT_ERR(clSetUserEventStatus(u, CL_SUBMITTED), CL_INVALID_VALUE);
    EXPECT_ERR(clSetUserEventStatus(u, CL_RUNNING), CL_INVALID_VALUE);
    EXPECT_ERR(clSetUserEventStatus(u, 42), CL_INVALID_VALUE);
    EXPECT_OK(clSetUserEventStatus(u, CL_COMPLETE));
    EXPECT_ERR(clSetUserEventStatus(u, CL_COMPLETE), CL_INVALID_OPERATION);
    EXPECT_ERR(clSetUserEventStatus(u, -5), CL_INVALID_OPERATION);
    cl_event v = clCreateUserEvent(ctx, &err);
    EXPECT_OK(clSetUserEventStatus(v, -5));
    EXPECT_ERR(clSetUserEventStatus(v, CL_COMPLETE), CL_INVALID_OPERATION);
    EXPECT_ERR(clWaitForEvents(1, &v), CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST);
    EXPECT_OK(clWaitForEvents(1, &u));

    cl_command_queue q = make_queue(0);
    cl_event marker;
    EXPECT_OK(clEnqueueMarkerWithWaitList(q, 0, NULL, &marker));
    EXPECT_ERR(clSetUserEventStatus(marker, CL_COMPLETE), CL_INVALID_EVENT);
    EXPECT_ERR(clSetUserEventStatus(NULL, CL_COMPLETE), CL_INVALID_EVENT);
    EXPECT_ERR(clSetUserEventStatus((cl_event)q, CL_COMPLETE), CL_INVALID_EVENT);
    EXPECT_ERR(clWaitForEvents(0, &marker), CL_INVALID_VALUE);
    EXPECT_ERR(clWaitForEvents(1, NULL), CL_INVALID_VALUE);
    cl_event bogus[2] = {marker, (cl_event)q};
    EXPECT_ERR(clWaitForEvents(2, bogus), CL_INVALID_EVENT);
    EXPECT_OK(clWaitForEvents(1, &marker));
    cl_event w = clCreateUserEvent(NULL, &err);
    EXPECT(w == NULL && err == CL_INVALID_CONTEXT, "user event without context: %d", err);
    clReleaseEvent(marker);
    clReleaseEvent(u);
    clReleaseEvent(v);
    clReleaseCommandQueue(q);
}

/* 6. Callbacks: each status it was registered for, on a vkcl thread, also once complete. */
#define MAX_CB 64
static struct {
    int type, status, on_main, query_status;
    cl_event event;
} calls[MAX_CB];
static int ncalls;
static pthread_mutex_t calls_lock = PTHREAD_MUTEX_INITIALIZER;

static void CL_CALLBACK on_event(cl_event ev, cl_int status, void *user_data)
{
    cl_int now = 99;
    clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof now, &now, NULL); /* calls back in */
    pthread_mutex_lock(&calls_lock);
    if (ncalls < MAX_CB) {
        calls[ncalls].type = (int)(intptr_t)user_data;
        calls[ncalls].status = status;
        calls[ncalls].on_main = pthread_equal(pthread_self(), main_thread);
        calls[ncalls].query_status = now;
        calls[ncalls].event = ev;
    }
    ncalls++;
    pthread_mutex_unlock(&calls_lock);
}

static int calls_now(void)
{
    pthread_mutex_lock(&calls_lock);
    int n = ncalls;
    pthread_mutex_unlock(&calls_lock);
    return n;
}

static int wait_calls(int n)
{
    for (int t = 0; t < 5000 && calls_now() < n; t += 5)
        sleep_ms(5);
    return calls_now();
}

static void test_callbacks(void)
{
    cl_int err;
    cl_command_queue q = make_queue(0);
    cl_mem m = make(4096);
    cl_event gate = clCreateUserEvent(ctx, &err), ev;
    unsigned char one = 1;
    EXPECT_OK(clEnqueueFillBuffer(q, m, &one, 1, 0, 4096, 1, &gate, &ev));
    EXPECT_OK(clSetEventCallback(ev, CL_COMPLETE, on_event, (void *)(intptr_t)CL_COMPLETE));
    EXPECT_OK(clSetEventCallback(ev, CL_RUNNING, on_event, (void *)(intptr_t)CL_RUNNING));
    EXPECT_OK(clSetEventCallback(ev, CL_SUBMITTED, on_event, (void *)(intptr_t)CL_SUBMITTED));
    EXPECT_OK(clSetEventCallback(gate, CL_COMPLETE, on_event, (void *)(intptr_t)100));
    EXPECT_ERR(clSetEventCallback(ev, CL_QUEUED, on_event, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clSetEventCallback(ev, 42, on_event, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clSetEventCallback(ev, CL_COMPLETE, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clSetEventCallback((cl_event)q, CL_COMPLETE, on_event, NULL), CL_INVALID_EVENT);
    EXPECT_OK(clFlush(q));
    sleep_ms(100);
    /* Only CL_SUBMITTED may have been reached while the gate is closed. */
    pthread_mutex_lock(&calls_lock);
    for (int i = 0; i < ncalls && i < MAX_CB; i++)
        EXPECT(calls[i].type == CL_SUBMITTED, "callback for %d before the gate opened", calls[i].type);
    pthread_mutex_unlock(&calls_lock);
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clWaitForEvents(1, &ev));
    EXPECT(wait_calls(4) == 4, "%d callbacks", calls_now());
    int seen = 0;
    for (int i = 0; i < 4; i++) {
        int want = calls[i].type == 100 ? CL_COMPLETE : calls[i].type;
        EXPECT(calls[i].status == want, "callback for %d got status %d", calls[i].type, calls[i].status);
        EXPECT(!calls[i].on_main, "callback for %d ran on the application's thread", calls[i].type);
        EXPECT(calls[i].query_status <= calls[i].status, "clGetEventInfo in a callback: %d",
               calls[i].query_status);
        seen |= calls[i].type == 100 ? 8 : 1 << calls[i].type;
    }
    EXPECT(seen == (1 | 2 | 4 | 8), "callback types seen %#x", seen);
    /* SUBMITTED before RUNNING before COMPLETE on the command's event */
    int order[3] = {-1, -1, -1};
    for (int i = 0; i < 4; i++)
        if (calls[i].type < 3)
            order[calls[i].type] = i;
    EXPECT(order[CL_SUBMITTED] < order[CL_RUNNING] && order[CL_RUNNING] < order[CL_COMPLETE],
           "callback order %d %d %d", order[2], order[1], order[0]);

    /* registered after completion: still called, with the registered status, not inline */
    ncalls = 0;
    EXPECT_OK(clSetEventCallback(ev, CL_COMPLETE, on_event, (void *)(intptr_t)CL_COMPLETE));
    EXPECT_OK(clSetEventCallback(ev, CL_SUBMITTED, on_event, (void *)(intptr_t)CL_SUBMITTED));
    EXPECT(wait_calls(2) == 2, "%d callbacks after completion", calls_now());
    for (int i = 0; i < 2; i++) {
        EXPECT(calls[i].status == calls[i].type, "late callback for %d got %d", calls[i].type, calls[i].status);
        EXPECT(!calls[i].on_main, "late callback ran on the application's thread");
    }

    /* the event may be released before its callback runs: the callback still gets it */
    ncalls = 0;
    cl_event gate2 = clCreateUserEvent(ctx, &err), ev2;
    EXPECT_OK(clEnqueueFillBuffer(q, m, &one, 1, 0, 4096, 1, &gate2, &ev2));
    EXPECT_OK(clSetEventCallback(ev2, CL_COMPLETE, on_event, (void *)(intptr_t)CL_COMPLETE));
    clReleaseEvent(ev2);
    EXPECT_OK(clSetUserEventStatus(gate2, CL_COMPLETE));
    EXPECT(wait_calls(1) == 1 && calls[0].status == CL_COMPLETE && calls[0].event == ev2,
           "callback of a released event: %d calls", calls_now());

    /* a failed command: its callbacks get the error */
    ncalls = 0;
    cl_event gate3 = clCreateUserEvent(ctx, &err), ev3;
    EXPECT_OK(clEnqueueFillBuffer(q, m, &one, 1, 0, 4096, 1, &gate3, &ev3));
    EXPECT_OK(clSetEventCallback(ev3, CL_COMPLETE, on_event, (void *)(intptr_t)CL_COMPLETE));
    EXPECT_OK(clSetEventCallback(ev3, CL_SUBMITTED, on_event, (void *)(intptr_t)CL_SUBMITTED));
    EXPECT_OK(clSetUserEventStatus(gate3, -77));
    EXPECT(wait_calls(2) == 2, "%d callbacks of a failed command", calls_now());
    for (int i = 0; i < 2; i++)
        EXPECT(calls[i].status < 0, "failed command callback %d got %d", calls[i].type, calls[i].status);

    clFinish(q);
    clReleaseEvent(ev);
    clReleaseEvent(ev3);
    clReleaseEvent(gate);
    clReleaseEvent(gate2);
    clReleaseEvent(gate3);
    clReleaseMemObject(m);
    clReleaseCommandQueue(q);
}

/* 7. Markers, barriers and clEnqueueWaitForEvents in an out-of-order queue. */
static void test_markers_and_barriers(void)
{
    enum { N = 4096 };
    cl_int err;
    cl_command_queue q = make_queue(CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), qc = make_queue(0);
    cl_mem a = make(N), b = make(N), c = make(N);
    unsigned char v1 = 1, v2 = 2, v3 = 3, v0 = 0;
    clEnqueueFillBuffer(qc, a, &v0, 1, 0, N, 0, NULL, NULL);
    clEnqueueFillBuffer(qc, b, &v0, 1, 0, N, 0, NULL, NULL);
    clEnqueueFillBuffer(qc, c, &v0, 1, 0, N, 0, NULL, NULL);
    clFinish(qc);

    cl_event gate = clCreateUserEvent(ctx, &err);
    cl_event fa, fb, m_all, m_b, barrier_b, fc;
    EXPECT_OK(clEnqueueFillBuffer(q, a, &v1, 1, 0, N, 1, &gate, &fa));   /* gated */
    EXPECT_OK(clEnqueueFillBuffer(q, b, &v2, 1, 0, N, 0, NULL, &fb));    /* independent */
    EXPECT_OK(clEnqueueMarkerWithWaitList(q, 0, NULL, &m_all));          /* waits for both */
    EXPECT_OK(clEnqueueMarkerWithWaitList(q, 1, &fb, &m_b));             /* waits for fb only */
    EXPECT_OK(clEnqueueBarrierWithWaitList(q, 1, &fb, &barrier_b));      /* fb only, blocks later commands */
    EXPECT_OK(clEnqueueFillBuffer(q, c, &v3, 1, 0, N, 0, NULL, &fc));    /* after the barrier */
    EXPECT_OK(clFlush(q));
    /* Out of order: what does not depend on the gate completes while it is closed. */
    EXPECT_OK(clWaitForEvents(1, &m_b));
    EXPECT_OK(clWaitForEvents(1, &barrier_b));
    EXPECT_OK(clWaitForEvents(1, &fc));
    EXPECT(status_of(fb) == CL_COMPLETE, "independent fill %d", status_of(fb));
    EXPECT(all_equal(qc, b, N, 2) && all_equal(qc, c, N, 3), "independent work done");
    sleep_ms(50);
    EXPECT(status_of(m_all) > CL_COMPLETE, "marker without wait list complete before the gate: %d",
           status_of(m_all));
    EXPECT(status_of(fa) > CL_COMPLETE && all_equal(qc, a, N, 0), "gated fill ran: %d", status_of(fa));
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clWaitForEvents(1, &m_all));
    EXPECT(status_of(fa) == CL_COMPLETE && all_equal(qc, a, N, 1), "marker completed before what it waits for");
    cl_event evs[] = {fa, fb, m_all, m_b, barrier_b, fc};
    for (int i = 0; i < 6; i++)
        clReleaseEvent(evs[i]);
    clReleaseEvent(gate);

    /* A barrier without a wait list holds back what follows until everything before it ran. */
    gate = clCreateUserEvent(ctx, &err);
    cl_event bar, after;
    EXPECT_OK(clEnqueueFillBuffer(q, a, &v2, 1, 0, N, 1, &gate, &fa));
    EXPECT_OK(clEnqueueBarrierWithWaitList(q, 0, NULL, &bar));
    EXPECT_OK(clEnqueueFillBuffer(q, b, &v3, 1, 0, N, 0, NULL, &after));
    EXPECT_OK(clFlush(q));
    sleep_ms(100);
    EXPECT(status_of(bar) > CL_COMPLETE && status_of(after) > CL_COMPLETE && all_equal(qc, b, N, 2),
           "work after a barrier ran before it: %d %d", status_of(bar), status_of(after));
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clWaitForEvents(1, &after));
    EXPECT(all_equal(qc, a, N, 2) && all_equal(qc, b, N, 3), "after the barrier");
    clReleaseEvent(fa);
    clReleaseEvent(bar);
    clReleaseEvent(after);
    clReleaseEvent(gate);

    /* clEnqueueWaitForEvents: later commands wait for the listed events */
    gate = clCreateUserEvent(ctx, &err);
    EXPECT_OK(clEnqueueWaitForEvents(q, 1, &gate));
    EXPECT_OK(clEnqueueFillBuffer(q, c, &v1, 1, 0, N, 0, NULL, &after));
    EXPECT_OK(clFlush(q));
    sleep_ms(100);
    EXPECT(status_of(after) > CL_COMPLETE && all_equal(qc, c, N, 3), "ran before clEnqueueWaitForEvents' event");
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clWaitForEvents(1, &after));
    EXPECT(all_equal(qc, c, N, 1), "after clEnqueueWaitForEvents");
    EXPECT_ERR(clEnqueueWaitForEvents(q, 0, &gate), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueWaitForEvents(q, 1, NULL), CL_INVALID_VALUE);
    cl_event bogus = (cl_event)q;
    EXPECT_ERR(clEnqueueWaitForEvents(q, 1, &bogus), CL_INVALID_EVENT);
    clReleaseEvent(after);
    clReleaseEvent(gate);

    /* the OpenCL 1.1 forms */
    cl_event mk;
    EXPECT_OK(clEnqueueFillBuffer(q, a, &v3, 1, 0, N, 0, NULL, NULL));
    EXPECT_OK(clEnqueueMarker(q, &mk));
    EXPECT_OK(clWaitForEvents(1, &mk));
    EXPECT(all_equal(qc, a, N, 3), "clEnqueueMarker waits for earlier commands");
    EXPECT_ERR(clEnqueueMarker(q, NULL), CL_INVALID_VALUE);
    EXPECT_OK(clEnqueueBarrier(q));
    cl_command_type type = 0;
    clGetEventInfo(mk, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
    EXPECT(type == CL_COMMAND_MARKER, "marker type %#x", type);
    clReleaseEvent(mk);

    /* clFinish on an out-of-order queue waits for commands that were held */
    gate = clCreateUserEvent(ctx, &err);
    EXPECT_OK(clEnqueueFillBuffer(q, a, &v1, 1, 0, N, 1, &gate, NULL));
    EXPECT_OK(clEnqueueFillBuffer(q, b, &v1, 1, 0, N, 0, NULL, NULL));
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clFinish(q));
    EXPECT(all_equal(qc, a, N, 1) && all_equal(qc, b, N, 1), "clFinish");
    clReleaseEvent(gate);

    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseMemObject(c);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(qc);
}

/* 8. Profiling: ordered times on a profiling queue, CL_PROFILING_INFO_NOT_AVAILABLE elsewhere. */
static void test_profiling(void)
{
    enum { N = 1 << 16 };
    cl_int err;
    cl_command_queue q = make_queue(CL_QUEUE_PROFILING_ENABLE), plain = make_queue(0);
    cl_mem a = make(N), b = make(N);
    static unsigned char host[N];
    cl_event evs[6];
    EXPECT_OK(clEnqueueWriteBuffer(q, a, CL_TRUE, 0, N, host, 0, NULL, &evs[0]));
    EXPECT_OK(clEnqueueWriteBuffer(q, a, CL_FALSE, 0, N, host, 0, NULL, &evs[1]));
    EXPECT_OK(clEnqueueCopyBuffer(q, a, b, 0, 0, N, 0, NULL, &evs[2]));
    EXPECT_OK(clEnqueueReadBuffer(q, b, CL_FALSE, 0, N, host, 0, NULL, &evs[3]));
    EXPECT_OK(clEnqueueMarkerWithWaitList(q, 0, NULL, &evs[4]));
    EXPECT_OK(clEnqueueReadBuffer(q, b, CL_TRUE, 0, N, host, 0, NULL, &evs[5]));
    EXPECT_OK(clFinish(q));
    cl_profiling_info params[] = {CL_PROFILING_COMMAND_QUEUED, CL_PROFILING_COMMAND_SUBMIT,
                                  CL_PROFILING_COMMAND_START, CL_PROFILING_COMMAND_END,
                                  CL_PROFILING_COMMAND_COMPLETE};
    for (int i = 0; i < 6; i++) {
        cl_ulong t[5] = {0};
        for (int k = 0; k < 5; k++)
            EXPECT_OK(clGetEventProfilingInfo(evs[i], params[k], sizeof t[k], &t[k], NULL));
        EXPECT(t[0] > 0 && t[0] <= t[1] && t[1] <= t[2] && t[2] <= t[3] && t[3] <= t[4],
               "command %d: %llu %llu %llu %llu %llu", i, (unsigned long long)t[0], (unsigned long long)t[1],
               (unsigned long long)t[2], (unsigned long long)t[3], (unsigned long long)t[4]);
        if (i > 0 && i != 4 && i != 5) { /* a marker's times are those of its batch's completion */
            cl_ulong prev_end = 0;
            clGetEventProfilingInfo(evs[i - 1], CL_PROFILING_COMMAND_END, sizeof prev_end, &prev_end, NULL);
            EXPECT(t[2] + 1000000 >= prev_end, "in-order command %d starts long before %d ended", i, i - 1);
        }
    }
    cl_ulong t;
    EXPECT_ERR(clGetEventProfilingInfo(evs[0], 0xdead, sizeof t, &t, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetEventProfilingInfo(evs[0], CL_PROFILING_COMMAND_START, 4, &t, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetEventProfilingInfo((cl_event)q, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL),
               CL_INVALID_EVENT);
    for (int i = 0; i < 6; i++)
        clReleaseEvent(evs[i]);

    /* not a profiling queue, a user event, a command not complete yet */
    cl_event ev;
    EXPECT_OK(clEnqueueCopyBuffer(plain, a, b, 0, 0, N, 0, NULL, &ev));
    EXPECT_OK(clWaitForEvents(1, &ev));
    EXPECT_ERR(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof t, &t, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
    clReleaseEvent(ev);
    cl_event user = clCreateUserEvent(ctx, &err);
    EXPECT_ERR(clGetEventProfilingInfo(user, CL_PROFILING_COMMAND_QUEUED, sizeof t, &t, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
    EXPECT_OK(clEnqueueCopyBuffer(q, a, b, 0, 0, N, 1, &user, &ev));
    EXPECT_ERR(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
    clSetUserEventStatus(user, CL_COMPLETE);
    EXPECT_OK(clWaitForEvents(1, &ev));
    EXPECT_OK(clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL));
    EXPECT_ERR(clGetEventProfilingInfo(user, CL_PROFILING_COMMAND_END, sizeof t, &t, NULL),
               CL_PROFILING_INFO_NOT_AVAILABLE);
    clReleaseEvent(ev);
    clReleaseEvent(user);

    /* device and host timers: the same clock as the profiling times, moving forward */
    cl_ulong dev_t = 0, host_t = 0, host2 = 0, dev2 = 0;
    EXPECT_OK(clGetDeviceAndHostTimer(device, &dev_t, &host_t));
    EXPECT_OK(clGetHostTimer(device, &host2));
    EXPECT_OK(clGetDeviceAndHostTimer(device, &dev2, &host2));
    EXPECT(dev_t > 0 && host_t > 0 && dev2 >= dev_t && host2 >= host_t, "timers %llu %llu %llu %llu",
           (unsigned long long)dev_t, (unsigned long long)host_t, (unsigned long long)dev2,
           (unsigned long long)host2);
    EXPECT_OK(clEnqueueCopyBuffer(q, a, b, 0, 0, N, 0, NULL, &ev));
    EXPECT_OK(clWaitForEvents(1, &ev));
    cl_ulong start = 0;
    clGetEventProfilingInfo(ev, CL_PROFILING_COMMAND_START, sizeof start, &start, NULL);
    EXPECT(start >= dev2, "a command started after the device timer read: %llu < %llu", (unsigned long long)start,
           (unsigned long long)dev2);
    clReleaseEvent(ev);
    EXPECT_ERR(clGetDeviceAndHostTimer(device, NULL, &host_t), CL_INVALID_VALUE);
    EXPECT_ERR(clGetDeviceAndHostTimer(device, &dev_t, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetHostTimer(device, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetDeviceAndHostTimer((cl_device_id)ctx, &dev_t, &host_t), CL_INVALID_DEVICE);
    EXPECT_ERR(clGetHostTimer((cl_device_id)ctx, &host_t), CL_INVALID_DEVICE);

    clReleaseMemObject(a);
    clReleaseMemObject(b);
    clReleaseCommandQueue(q);
    clReleaseCommandQueue(plain);
}

static const struct { const char *name; void (*run)(void); } TESTS[] = {
    {"queue_properties", test_queue_properties}, {"several_queues", test_several_queues},
    {"user_event_gates", test_user_event_gates_two_queues}, {"error_propagation", test_error_propagation},
    {"user_event_errors", test_user_event_errors}, {"callbacks", test_callbacks},
    {"markers_barriers", test_markers_and_barriers}, {"profiling", test_profiling},
};

/* `events [name...]`: the named tests, or all of them. */
int main(int argc, char **argv)
{
    main_thread = pthread_self();
    harness_open(&device, &ctx, NULL);
    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        int wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], TESTS[i].name) == 0;
        if (wanted) {
            printf("-- %s\n", TESTS[i].name);
            TESTS[i].run();
        }
    }
    clReleaseContext(ctx);
    return harness_result();
}
