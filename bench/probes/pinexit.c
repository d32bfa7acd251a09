/* Pinned transfers, then exit() with everything still alive: blocking writes and reads of 256 MiB
 * between a mapped CL_MEM_ALLOC_HOST_PTR buffer and a device buffer (best of 5, GB/s, checked),
 * and the process's exit with the context, queue, buffers and mapping never released (on vkcl
 * with CUDA copies: CUDA started in the process, its exit handlers and vkcl's both run).
 * Run it many times in a row to see that every exit is clean. Argument: the platform's name. */
#include "probe.h"

#define SIZE (256u << 20)

int main(int argc, char **argv)
{
    cl_device_id dev = probe_device(argc > 1 ? argv[1] : "vkcl");
    cl_int err;
    cl_context ctx = clCreateContext(NULL, 1, &dev, NULL, NULL, &err);
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, dev, NULL, &err);
    cl_mem buf = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SIZE, NULL, &err);
    cl_mem pin = clCreateBuffer(ctx, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, SIZE, NULL, &err);
    unsigned *p = clEnqueueMapBuffer(q, pin, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, SIZE, 0, NULL, NULL, &err);
    if (!p) {
        printf("map failed: %d\n", err);
        return 1;
    }
    double best[2] = {1e9, 1e9};
    for (int r = 0; r < 5; r++) {
        for (size_t i = 0; i < SIZE / 4; i++)
            p[i] = (unsigned)(i * 2654435761u + r);
        double t = now();
        err = clEnqueueWriteBuffer(q, buf, CL_TRUE, 0, SIZE, p, 0, NULL, NULL);
        t = now() - t;
        best[0] = t < best[0] ? t : best[0];
        memset(p, 0, SIZE);
        t = now();
        err |= clEnqueueReadBuffer(q, buf, CL_TRUE, 0, SIZE, p, 0, NULL, NULL);
        t = now() - t;
        best[1] = t < best[1] ? t : best[1];
        for (size_t i = 0; i < SIZE / 4; i += 4099)
            if (err || p[i] != (unsigned)(i * 2654435761u + r)) {
                printf("WRONG at %zu (err %d)\n", i, err);
                return 1;
            }
    }
    printf("pinned write %.1f read %.1f GB/s\n", SIZE / best[0] / 1e9, SIZE / best[1] / 1e9);
    return 0;  /* nothing released */
}
