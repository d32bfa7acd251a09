/* Memory through the ICD loader, one scenario per argument:
 *   churn  10,000 buffer create/release cycles (with commands and events) leave VmRSS flat
 *   big    a 1 GiB buffer: write a pattern, read it back, fill, copy, map; compare
 *   exit   enqueue non-blocking work and return without clFinish or any release */
#include "harness.h"
#include <stdint.h>

static cl_context ctx;
static cl_device_id device;
static cl_command_queue queue;

static long vm_rss_kb(void)
{
    FILE *f = fopen("/proc/self/status", "r");
    char line[256];
    long kb = -1;
    while (f && fgets(line, sizeof line, f))
        if (sscanf(line, "VmRSS: %ld kB", &kb) == 1)
            break;
    if (f)
        fclose(f);
    return kb;
}

static cl_mem make(cl_mem_flags flags, size_t size, void *host)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, size, host, &err);
    if (err != CL_SUCCESS) {
        printf("FAIL clCreateBuffer(%zu): %d\n", size, err);
        exit(1);
    }
    return m;
}

/* One create/use/release cycle: a mix of sizes, flags, sub-buffers, commands and events. */
static void cycle(int i, unsigned char *host)
{
    size_t size = (size_t)4096 << (i % 6); /* 4 KiB .. 128 KiB */
    cl_mem m;
    switch (i % 4) {
    case 0:
        m = make(CL_MEM_READ_WRITE, size, NULL);
        break;
    case 1:
        m = make(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, size, host);
        break;
    case 2:
        m = make(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, size, host);
        break;
    default:
        m = make(CL_MEM_ALLOC_HOST_PTR, size, NULL);
        break;
    }
    cl_event ev = NULL;
    cl_int err = CL_SUCCESS;
    if (i % 3 == 0) {
        err = clEnqueueWriteBuffer(queue, m, CL_FALSE, 0, 256, host, 0, NULL, &ev);
    } else if (i % 3 == 1) {
        cl_buffer_region r = {0, 1024};
        cl_mem sub = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
        if (sub) {
            unsigned char v = (unsigned char)i;
            err = clEnqueueFillBuffer(queue, sub, &v, 1, 0, 1024, 0, NULL, &ev);
            clReleaseMemObject(sub);
        }
    } else {
        void *p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 0, 64, 0, NULL, NULL, &err);
        if (p)
            err = clEnqueueUnmapMemObject(queue, m, p, 0, NULL, &ev);
    }
    if (err != CL_SUCCESS) {
        printf("FAIL cycle %d: %d\n", i, err);
        exit(1);
    }
    /* released while its command may still be pending */
    clReleaseMemObject(m);
    if (ev)
        clReleaseEvent(ev);
    if (i % 100 == 99)
        clFinish(queue);
}

static void churn(void)
{
    static unsigned char host[128 * 1024] __attribute__((aligned(4096)));
    memset(host, 7, sizeof host);
    for (int i = 0; i < 1000; i++) /* warm up: pools, caches, the interpreter's arenas */
        cycle(i, host);
    clFinish(queue);
    long before = vm_rss_kb();
    for (int i = 0; i < 10000; i++)
        cycle(i, host);
    clFinish(queue);
    long after = vm_rss_kb();
    printf("VmRSS before %ld kB, after %ld kB, growth %ld kB\n", before, after, after - before);
    EXPECT(before > 0 && after - before < 12 * 1024, "VmRSS grew by %ld kB over 10,000 cycles", after - before);
    /* and the memory is really back: a buffer of most of the heap still fits */
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    cl_int err;
    cl_mem big = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)max_alloc / 2, NULL, &err);
    EXPECT(big != NULL && err == CL_SUCCESS, "half of max alloc after the churn: %d", err);
    if (big)
        clReleaseMemObject(big);
}

static inline uint32_t pattern(size_t word) { return (uint32_t)(word * 2654435761u) ^ 0xa5a5a5a5u; }

static void big(void)
{
    const size_t GiB = (size_t)1 << 30, CHUNK = (size_t)64 << 20;
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, GiB, NULL, &err);
    EXPECT(m != NULL && err == CL_SUCCESS, "1 GiB buffer: %d", err);
    if (!m)
        return;
    uint32_t *chunk = malloc(CHUNK), *back = malloc(CHUNK);
    /* write: alternate blocking (direct where the memory is host-visible) and non-blocking (staged) */
    for (size_t off = 0; off < GiB; off += CHUNK) {
        for (size_t w = 0; w < CHUNK / 4; w++)
            chunk[w] = pattern(off / 4 + w);
        int blocking = (off / CHUNK) % 2 == 0;
        EXPECT_OK(clEnqueueWriteBuffer(queue, m, blocking, off, CHUNK, chunk, 0, NULL, NULL));
        if (!blocking)
            EXPECT_OK(clFinish(queue)); /* chunk is reused */
    }
    /* read back and compare */
    size_t bad = 0;
    for (size_t off = 0; off < GiB; off += CHUNK) {
        int blocking = (off / CHUNK) % 3 != 0;
        EXPECT_OK(clEnqueueReadBuffer(queue, m, blocking, off, CHUNK, back, 0, NULL, NULL));
        if (!blocking)
            EXPECT_OK(clFinish(queue));
        for (size_t w = 0; w < CHUNK / 4; w++)
            bad += back[w] != pattern(off / 4 + w);
    }
    EXPECT(bad == 0, "%zu words differ after the round trip", bad);
    /* copy the first half onto the second, fill the first, check both ends of each half */
    EXPECT_OK(clEnqueueCopyBuffer(queue, m, m, 0, GiB / 2, GiB / 2, 0, NULL, NULL));
    uint32_t word = 0x01020304;
    EXPECT_OK(clEnqueueFillBuffer(queue, m, &word, 4, 0, GiB / 2, 0, NULL, NULL));
    uint32_t *p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, GiB / 2 - CHUNK, 2 * CHUNK, 0, NULL, NULL, &err);
    EXPECT(p != NULL && err == CL_SUCCESS, "map: %d", err);
    if (p) {
        size_t fill_bad = 0, copy_bad = 0;
        for (size_t w = 0; w < CHUNK / 4; w++)
            fill_bad += p[w] != word;
        for (size_t w = 0; w < CHUNK / 4; w++)
            copy_bad += p[CHUNK / 4 + w] != pattern(w);
        EXPECT(fill_bad == 0 && copy_bad == 0, "after fill and copy: %zu, %zu words differ", fill_bad, copy_bad);
        EXPECT_OK(clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL));
    }
    EXPECT_OK(clEnqueueReadBuffer(queue, m, CL_TRUE, GiB - CHUNK, CHUNK, back, 0, NULL, NULL));
    bad = 0;
    for (size_t w = 0; w < CHUNK / 4; w++)
        bad += back[w] != pattern((GiB / 2 - CHUNK) / 4 + w);
    EXPECT(bad == 0, "end of the copied half: %zu words differ", bad);
    clReleaseMemObject(m);
    free(chunk);
    free(back);
    long rss = vm_rss_kb();
    printf("VmRSS at the end %ld kB\n", rss);
}

/* Non-blocking work of every kind in flight, a command held on a user event that is never
 * set, callbacks registered; then return from main with nothing finished or released. */
static void CL_CALLBACK on_complete(cl_event ev, cl_int status, void *user_data)
{
    (void)ev;
    (void)status;
    (void)user_data;
}

static void leave_work_behind(void)
{
    static unsigned char host[4 << 20], out[4 << 20];
    cl_int err;
    cl_mem a = make(CL_MEM_READ_WRITE, sizeof host, NULL), b = make(CL_MEM_READ_WRITE, sizeof host, NULL);
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES, CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue ooo = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    cl_event gate = clCreateUserEvent(ctx, &err), ev;
    for (int i = 0; i < 20; i++) {
        EXPECT_OK(clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, sizeof host, host, 0, NULL, NULL));
        EXPECT_OK(clEnqueueCopyBuffer(queue, a, b, 0, 0, sizeof host, 0, NULL, NULL));
        EXPECT_OK(clEnqueueReadBuffer(queue, b, CL_FALSE, 0, sizeof out, out, 0, NULL, &ev));
        EXPECT_OK(clSetEventCallback(ev, CL_COMPLETE, on_complete, NULL));
        EXPECT_OK(clEnqueueFillBuffer(ooo, b, &i, 4, 0, sizeof host, 0, NULL, NULL));
    }
    EXPECT_OK(clEnqueueCopyBuffer(ooo, b, a, 0, 0, 4096, 1, &gate, NULL));
    EXPECT_OK(clEnqueueReadBuffer(queue, a, CL_FALSE, 0, 4096, out, 1, &gate, NULL));
    void *p = clEnqueueMapBuffer(queue, a, CL_FALSE, CL_MAP_WRITE, 0, 4096, 0, NULL, NULL, &err);
    EXPECT(p != NULL, "map: %d", err);
    clFlush(ooo); /* one queue flushed, the other not */
}

int main(int argc, char **argv)
{
    const char *mode = argc > 1 ? argv[1] : "";
    harness_open(&device, &ctx, &queue);
    if (strcmp(mode, "churn") == 0) {
        churn();
    } else if (strcmp(mode, "big") == 0) {
        big();
    } else if (strcmp(mode, "exit") == 0) {
        leave_work_behind();
        return harness_result(); /* no clFinish, no release */
    } else {
        printf("FAIL usage: memory churn|big|exit\n");
        return 2;
    }
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return harness_result();
}
