/* Large host copies on several threads: staged transfers copy between vkcl's staging memory and
 * the application's pages, and one thread moves ~10 GB/s where a discrete GPU moves ~50 GB/s
 * over PCIe. Called from Python (vkcl/native.py); cffi releases the GIL around the call. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define VKCL_COPY_MAX_THREADS 16
#define VKCL_COPY_MIN_SLICE (1u << 20)  /* smaller slices are not worth a thread */

struct vkcl_copy_slice {
    char *dst;
    const char *src;
    size_t n;
};

static void *vkcl_copy_slice_run(void *arg)
{
    struct vkcl_copy_slice *s = arg;
    memcpy(s->dst, s->src, s->n);
    return NULL;
}

void vkcl_host_copy(void *dst, const void *src, size_t n, int threads)
{
    if (threads > VKCL_COPY_MAX_THREADS)
        threads = VKCL_COPY_MAX_THREADS;
    if (threads > (int)(n / VKCL_COPY_MIN_SLICE))
        threads = (int)(n / VKCL_COPY_MIN_SLICE);
    if (threads <= 1) {
        memcpy(dst, src, n);
        return;
    }
    struct vkcl_copy_slice slices[VKCL_COPY_MAX_THREADS];
    pthread_t tids[VKCL_COPY_MAX_THREADS];
    int started[VKCL_COPY_MAX_THREADS];
    size_t per = ((n / (size_t)threads) + 4095) & ~(size_t)4095;  /* whole pages per thread */
    for (int i = 0; i < threads; i++) {
        size_t off = per * (size_t)i;
        slices[i].dst = (char *)dst + off;
        slices[i].src = (const char *)src + off;
        slices[i].n = off >= n ? 0 : (n - off < per ? n - off : per);
        /* slice 0 runs on the calling thread; a thread that cannot start runs here too */
        started[i] = i > 0 && slices[i].n && pthread_create(&tids[i], NULL, vkcl_copy_slice_run, &slices[i]) == 0;
    }
    vkcl_copy_slice_run(&slices[0]);
    for (int i = 1; i < threads; i++) {
        if (started[i])
            pthread_join(tids[i], NULL);
        else if (slices[i].n)
            vkcl_copy_slice_run(&slices[i]);
    }
}
