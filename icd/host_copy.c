/* Large host copies on several threads: staged transfers copy between vkcl's staging memory and
 * the application's pages, and one thread moves ~10 GB/s where a discrete GPU moves ~50 GB/s
 * over PCIe. Called from Python (vkcl/native.py; cffi releases the GIL around the call) and from
 * C's blocking transfers (fast_path.c).
 *
 * The helper threads are started once and kept: starting a thread per copy cost more than a
 * 1 MiB copy gains from it. One copy runs at a time; the caller copies slices too, and returns
 * when every slice is done. A forked child starts its own helpers when it first needs them. */
#include <pthread.h>
#include <stddef.h>
#include <string.h>

#define VKCL_COPY_MAX_THREADS 16
#define VKCL_COPY_MIN_SLICE (256u << 10)  /* smaller slices are not worth waking a thread */

static struct {
    pthread_mutex_t job;       /* one copy at a time */
    pthread_mutex_t m;         /* the fields below */
    pthread_cond_t work, done;
    int helpers;               /* started */
    char *dst;
    const char *src;
    size_t n, per;             /* bytes, and bytes per slice (whole pages) */
    int slices, next, pending; /* slices of this copy; the next one to take; not yet copied */
} vkcl_copy = {PTHREAD_MUTEX_INITIALIZER, PTHREAD_MUTEX_INITIALIZER, PTHREAD_COND_INITIALIZER,
               PTHREAD_COND_INITIALIZER, 0, NULL, NULL, 0, 0, 0, 0, 0};

/* Copy slice `i` of the current copy; called without the lock. */
static void vkcl_copy_slice(int i)
{
    size_t off = vkcl_copy.per * (size_t)i;
    if (off < vkcl_copy.n)
        memcpy(vkcl_copy.dst + off, vkcl_copy.src + off,
               vkcl_copy.n - off < vkcl_copy.per ? vkcl_copy.n - off : vkcl_copy.per);
}

/* Take and copy slices until none is left; called and returns with the lock held. */
static void vkcl_copy_take_slices(void)
{
    while (vkcl_copy.next < vkcl_copy.slices) {
        int i = vkcl_copy.next++;
        pthread_mutex_unlock(&vkcl_copy.m);
        vkcl_copy_slice(i);
        pthread_mutex_lock(&vkcl_copy.m);
        if (--vkcl_copy.pending == 0)
            pthread_cond_signal(&vkcl_copy.done);
    }
}

static void *vkcl_copy_helper(void *arg)
{
    (void)arg;
    pthread_mutex_lock(&vkcl_copy.m);
    for (;;) {
        while (vkcl_copy.next >= vkcl_copy.slices)
            pthread_cond_wait(&vkcl_copy.work, &vkcl_copy.m);
        vkcl_copy_take_slices();
    }
    return NULL;
}

static void vkcl_copy_after_fork(void)
{
    /* Only the forking thread lives on in the child: no helpers, every lock free. */
    pthread_mutex_init(&vkcl_copy.job, NULL);
    pthread_mutex_init(&vkcl_copy.m, NULL);
    pthread_cond_init(&vkcl_copy.work, NULL);
    pthread_cond_init(&vkcl_copy.done, NULL);
    vkcl_copy.helpers = 0;
    vkcl_copy.slices = vkcl_copy.next = vkcl_copy.pending = 0;
}

static void vkcl_copy_register_fork(void) { pthread_atfork(NULL, NULL, vkcl_copy_after_fork); }

void vkcl_host_copy(void *dst, const void *src, size_t n, int threads)
{
    static pthread_once_t once = PTHREAD_ONCE_INIT;
    if (threads > VKCL_COPY_MAX_THREADS)
        threads = VKCL_COPY_MAX_THREADS;
    if (threads > (int)(n / VKCL_COPY_MIN_SLICE))
        threads = (int)(n / VKCL_COPY_MIN_SLICE);
    if (threads <= 1) {
        memcpy(dst, src, n);
        return;
    }
    pthread_once(&once, vkcl_copy_register_fork);
    pthread_mutex_lock(&vkcl_copy.job);
    pthread_mutex_lock(&vkcl_copy.m);
    while (vkcl_copy.helpers < threads - 1) {
        pthread_t t;
        if (pthread_create(&t, NULL, vkcl_copy_helper, NULL) != 0)
            break;  /* fewer helpers: the caller copies the rest */
        pthread_detach(t);
        vkcl_copy.helpers++;
    }
    vkcl_copy.dst = dst;
    vkcl_copy.src = src;
    vkcl_copy.n = n;
    /* whole pages per slice, enough slices for every byte */
    vkcl_copy.per = ((n + (size_t)threads - 1) / (size_t)threads + 4095) & ~(size_t)4095;
    vkcl_copy.slices = vkcl_copy.pending = threads;
    vkcl_copy.next = 0;
    pthread_cond_broadcast(&vkcl_copy.work);
    vkcl_copy_take_slices();
    while (vkcl_copy.pending > 0)
        pthread_cond_wait(&vkcl_copy.done, &vkcl_copy.m);
    vkcl_copy.slices = vkcl_copy.next = 0;
    pthread_mutex_unlock(&vkcl_copy.m);
    pthread_mutex_unlock(&vkcl_copy.job);
}
