/* Threads through the ICD loader: 8 threads, each enqueueing 1,000 commands (write, copy,
 * read of small buffers) on its own queue, then 8 threads sharing one queue; every result is
 * checked. */
#include "harness.h"
#include <pthread.h>

enum { THREADS = 8, COMMANDS = 1000, N = 256, ROUNDS = COMMANDS / 3 + 1 };

static cl_context ctx;
static cl_device_id device;
static cl_command_queue shared_queue;

struct work {
    int id, shared, rounds;
    int failures;
    char error[200];
};

static void *run(void *arg)
{
    struct work *w = arg;
    cl_int err;
    cl_command_queue q = shared_queue;
    if (!w->shared) {
        cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, w->id % 2 ? CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE : 0,
                                       0};
        q = clCreateCommandQueueWithProperties(ctx, device, props, &err);
        if (err != CL_SUCCESS) {
            snprintf(w->error, sizeof w->error, "queue: %d", err);
            return NULL;
        }
    }
    int ooo = !w->shared && w->id % 2;
    cl_mem a = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * ROUNDS, NULL, &err);
    cl_mem b = clCreateBuffer(ctx, CL_MEM_READ_WRITE, N * ROUNDS, NULL, &err);
    unsigned char *src = malloc((size_t)N * ROUNDS), *dst = calloc((size_t)N, ROUNDS);
    for (int r = 0; r < w->rounds; r++) {
        unsigned char *s = src + (size_t)r * N, *d = dst + (size_t)r * N;
        for (int k = 0; k < N; k++)
            s[k] = (unsigned char)(k * 13 + r * 5 + w->id * 71);
        size_t off = (size_t)r * N;
        cl_event we = NULL, ce = NULL;
        int blocking = r % 8 == 0;
        /* Out-of-order and shared queues order the three by events. */
        err = clEnqueueWriteBuffer(q, a, blocking, off, N, s, 0, NULL, &we);
        if (err == CL_SUCCESS)
            err = clEnqueueCopyBuffer(q, a, b, off, off, N, 1, &we, &ce);
        if (err == CL_SUCCESS)
            err = clEnqueueReadBuffer(q, b, blocking, off, N, d, 1, &ce, NULL);
        clReleaseEvent(we);
        clReleaseEvent(ce);
        if (err != CL_SUCCESS) {
            snprintf(w->error, sizeof w->error, "thread %d round %d: %d", w->id, r, err);
            break;
        }
        if (blocking && memcmp(s, d, N) != 0)
            w->failures++;
        if (r % 50 == 49 && !ooo)
            clFlush(q);
    }
    err = clFinish(q); /* on a shared queue: the other threads' commands too */
    if (err != CL_SUCCESS)
        snprintf(w->error, sizeof w->error, "thread %d clFinish: %d", w->id, err);
    for (int r = 0; r < w->rounds; r++)
        if (memcmp(src + (size_t)r * N, dst + (size_t)r * N, N) != 0)
            w->failures++;
    clReleaseMemObject(a);
    clReleaseMemObject(b);
    if (!w->shared)
        clReleaseCommandQueue(q);
    free(src);
    free(dst);
    return NULL;
}

static void run_threads(int shared, int rounds)
{
    pthread_t t[THREADS];
    struct work w[THREADS];
    for (int i = 0; i < THREADS; i++) {
        memset(&w[i], 0, sizeof w[i]);
        w[i].id = i;
        w[i].shared = shared;
        w[i].rounds = rounds;
        pthread_create(&t[i], NULL, run, &w[i]);
    }
    for (int i = 0; i < THREADS; i++) {
        pthread_join(t[i], NULL);
        EXPECT(w[i].error[0] == 0, "%s", w[i].error);
        EXPECT(w[i].failures == 0, "%s thread %d: %d wrong results", shared ? "shared queue" : "own queue", i,
               w[i].failures);
    }
}

int main(void)
{
    harness_open(&device, &ctx, NULL);
    cl_int err;
    /* 1. every thread its own queue: ROUNDS x 3 >= 1,000 commands each */
    run_threads(0, ROUNDS);
    /* 2. all threads on one out-of-order queue */
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    shared_queue = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    REQUIRE_OK(err);
    run_threads(1, ROUNDS / 4);
    clReleaseCommandQueue(shared_queue);
    /* 3. and on one in-order queue */
    shared_queue = clCreateCommandQueueWithProperties(ctx, device, NULL, &err);
    REQUIRE_OK(err);
    run_threads(1, ROUNDS / 4);
    clReleaseCommandQueue(shared_queue);
    clReleaseContext(ctx);
    return harness_result();
}
