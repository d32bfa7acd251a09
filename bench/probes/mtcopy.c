/* Threaded host copies for barcopy.py: a copy split over `threads` threads, each a contiguous
 * slice, in one of three ways. Returns the wall time in seconds.
 *   mode 0: memcpy
 *   mode 1: 32-byte loads, non-temporal 32-byte stores (writes into write-combined memory)
 *   mode 2: 16-byte streaming loads (MOVNTDQA: reads out of write-combined memory), plain stores
 * Build: gcc -O2 -mavx2 -msse4.1 -shared -fPIC -pthread -o /tmp/mtcopy.so bench/probes/mtcopy.c */
#include <immintrin.h>
#include <pthread.h>
#include <stdint.h>
#include <string.h>
#include <time.h>

typedef struct {
    char *dst;
    const char *src;
    size_t n;
    int mode;
} slice_t;

static void *copy_slice(void *arg)
{
    slice_t *s = arg;
    size_t i = 0;
    if (s->mode == 0) {
        memcpy(s->dst, s->src, s->n);
    } else if (s->mode == 1) {
        for (; i + 128 <= s->n; i += 128) {
            __m256i a = _mm256_loadu_si256((const __m256i *)(s->src + i));
            __m256i b = _mm256_loadu_si256((const __m256i *)(s->src + i + 32));
            __m256i c = _mm256_loadu_si256((const __m256i *)(s->src + i + 64));
            __m256i d = _mm256_loadu_si256((const __m256i *)(s->src + i + 96));
            _mm256_stream_si256((__m256i *)(s->dst + i), a);
            _mm256_stream_si256((__m256i *)(s->dst + i + 32), b);
            _mm256_stream_si256((__m256i *)(s->dst + i + 64), c);
            _mm256_stream_si256((__m256i *)(s->dst + i + 96), d);
        }
        _mm_sfence();
    } else {
        for (; i + 64 <= s->n; i += 64) {
            __m128i a = _mm_stream_load_si128((__m128i *)(s->src + i));
            __m128i b = _mm_stream_load_si128((__m128i *)(s->src + i + 16));
            __m128i c = _mm_stream_load_si128((__m128i *)(s->src + i + 32));
            __m128i d = _mm_stream_load_si128((__m128i *)(s->src + i + 48));
            _mm_storeu_si128((__m128i *)(s->dst + i), a);
            _mm_storeu_si128((__m128i *)(s->dst + i + 16), b);
            _mm_storeu_si128((__m128i *)(s->dst + i + 32), c);
            _mm_storeu_si128((__m128i *)(s->dst + i + 48), d);
        }
    }
    if (i < s->n)
        memcpy(s->dst + i, s->src + i, s->n - i);
    return NULL;
}

double copy_mt(void *dst, const void *src, size_t n, int threads, int mode)
{
    pthread_t t[64];
    slice_t s[64];
    struct timespec a, b;
    if (threads < 1)
        threads = 1;
    if (threads > 64)
        threads = 64;
    size_t per = (n / threads + 4095) & ~(size_t)4095;
    clock_gettime(CLOCK_MONOTONIC, &a);
    int k = 0;
    for (size_t off = 0; off < n && k < threads; off += per, k++) {
        s[k] = (slice_t){(char *)dst + off, (const char *)src + off, n - off < per ? n - off : per, mode};
        if (k)
            pthread_create(&t[k], NULL, copy_slice, &s[k]);
    }
    copy_slice(&s[0]);
    for (int i = 1; i < k; i++)
        pthread_join(t[i], NULL);
    clock_gettime(CLOCK_MONOTONIC, &b);
    return (b.tv_sec - a.tv_sec) + (b.tv_nsec - a.tv_nsec) * 1e-9;
}
