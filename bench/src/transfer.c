/* Host <-> device transfers: clEnqueueWriteBuffer / clEnqueueReadBuffer, blocking and not, from
 * ordinary (pageable) host memory and from "pinned" memory (a CL_MEM_ALLOC_HOST_PTR buffer kept
 * mapped, the staging idiom applications use), and map/unmap of a device buffer; then blocking
 * transfers of 64 KiB and 1 MiB, where the cost of a call shows more than the bus.
 * Wall-clock time of the host calls (plus clFinish for non-blocking ones); every run moves a new
 * pattern and is checked in full, outside the timed part. */
#include "clbench.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void fill_pattern(uint32_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) p[i] = (uint32_t)i * 2654435761u ^ seed;
}

static int check_pattern(bench *b, const char *what, const uint32_t *p, size_t n, uint32_t seed)
{
    for (size_t i = 0; i < n; i++) {
        uint32_t want = (uint32_t)i * 2654435761u ^ seed;
        if (p[i] != want) {
            fail(b, "wrong result: %s: word %zu is 0x%08x, expected 0x%08x", what, i, p[i], want);
            return -1;
        }
    }
    return 0;
}

typedef struct {
    bench *b;
    cl_mem dev;
    size_t size;
    uint32_t *pageable;   /* malloc'd */
    uint32_t *pinned;     /* the mapped CL_MEM_ALLOC_HOST_PTR buffer */
    uint32_t *scratch;    /* for checks */
    uint32_t seed;
} xfer;

/* One write or read variant; reports GB/s of the best run. */
static void rw_one(xfer *x, const char *name, int is_write, int blocking, uint32_t *host)
{
    bench *b = x->b;
    size_t n = x->size / 4;
    double best = 1e30;
    for (int r = -1; r < b->opt.runs; r++) {   /* r = -1: warm-up */
        uint32_t seed = ++x->seed * 0x9E3779B9u;
        cl_event ev = NULL;
        if (is_write) {
            fill_pattern(host, n, seed);
        } else {
            fill_pattern(x->scratch, n, seed);
            TRY(b, clEnqueueWriteBuffer(b->q, x->dev, CL_TRUE, 0, x->size, x->scratch, 0, NULL, NULL));
            memset(host, 0, x->size);
        }
        double t0 = now_s();
        if (is_write) {
            TRY(b, clEnqueueWriteBuffer(b->q, x->dev, blocking, 0, x->size, host, 0, NULL, blocking ? NULL : &ev));
        } else {
            TRY(b, clEnqueueReadBuffer(b->q, x->dev, blocking, 0, x->size, host, 0, NULL, blocking ? NULL : &ev));
        }
        if (!blocking) {
            cl_int err = clWaitForEvents(1, &ev);
            rel_event(&ev);
            TRYE(b, err, "clWaitForEvents");
        }
        double s = now_s() - t0;
        if (r >= 0 && s < best) best = s;
        if (is_write) {
            TRY(b, clEnqueueReadBuffer(b->q, x->dev, CL_TRUE, 0, x->size, x->scratch, 0, NULL, NULL));
            if (check_pattern(b, name, x->scratch, n, seed)) goto fail;
        } else if (check_pattern(b, name, host, n, seed)) {
            goto fail;
        }
    }
    report(b, name, "GB/s", x->size / best * 1e-9, "time_ms=%.4g bytes=%zu", best * 1e3, x->size);
    return;
fail:
    report_fail(b, name, "GB/s");
}

static void map_one(xfer *x, const char *name, int is_write)
{
    bench *b = x->b;
    size_t n = x->size / 4;
    double best = 1e30;
    for (int r = -1; r < b->opt.runs; r++) {
        uint32_t seed = ++x->seed * 0x9E3779B9u;
        cl_int err;
        if (!is_write) {
            fill_pattern(x->scratch, n, seed);
            TRY(b, clEnqueueWriteBuffer(b->q, x->dev, CL_TRUE, 0, x->size, x->scratch, 0, NULL, NULL));
        }
        double t0 = now_s();
        uint32_t *p = clEnqueueMapBuffer(b->q, x->dev, CL_TRUE, is_write ? CL_MAP_WRITE_INVALIDATE_REGION : CL_MAP_READ,
                                         0, x->size, 0, NULL, NULL, &err);
        TRYE(b, err, "clEnqueueMapBuffer");
        double t1 = now_s();
        /* The host's own reads/writes of the mapped memory are not timed. */
        if (is_write) {
            fill_pattern(p, n, seed);
        } else if (check_pattern(b, name, p, n, seed)) {
            clEnqueueUnmapMemObject(b->q, x->dev, p, 0, NULL, NULL);
            clFinish(b->q);
            goto fail;
        }
        double t2 = now_s();
        TRY(b, clEnqueueUnmapMemObject(b->q, x->dev, p, 0, NULL, NULL));
        TRY(b, clFinish(b->q));
        double s = (t1 - t0) + (now_s() - t2);
        if (r >= 0 && s < best) best = s;
        if (is_write) {
            TRY(b, clEnqueueReadBuffer(b->q, x->dev, CL_TRUE, 0, x->size, x->scratch, 0, NULL, NULL));
            if (check_pattern(b, name, x->scratch, n, seed)) goto fail;
        }
    }
    report(b, name, "GB/s", x->size / best * 1e-9, "time_ms=%.4g bytes=%zu", best * 1e3, x->size);
    return;
fail:
    report_fail(b, name, "GB/s");
}

void group_transfer(bench *b)
{
    xfer x = {.b = b, .seed = 1};
    cl_mem pinned_buf = NULL;
    cl_int err;
    x.size = clamp_alloc(b, b->opt.xfer_mib << 20, 4096);
    x.pageable = xmalloc(x.size);
    x.scratch = xmalloc(x.size);
    memset(x.pageable, 0, x.size);   /* touch every page before timing */
    memset(x.scratch, 0, x.size);
    fprintf(stderr, "  %zu MiB per transfer\n", x.size >> 20);
    if (!(x.dev = make_buffer(b, CL_MEM_READ_WRITE, x.size, NULL))) goto fail;
    rw_one(&x, "write_blocking", 1, CL_TRUE, x.pageable);
    rw_one(&x, "write_nonblocking", 1, CL_FALSE, x.pageable);
    rw_one(&x, "read_blocking", 0, CL_TRUE, x.pageable);
    rw_one(&x, "read_nonblocking", 0, CL_FALSE, x.pageable);
    map_one(&x, "map_read", 0);
    map_one(&x, "map_write", 1);

    if (!(pinned_buf = make_buffer(b, CL_MEM_READ_WRITE | CL_MEM_ALLOC_HOST_PTR, x.size, NULL))) goto fail;
    x.pinned = clEnqueueMapBuffer(b->q, pinned_buf, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE, 0, x.size, 0, NULL,
                                  NULL, &err);
    TRYE(b, err, "clEnqueueMapBuffer");
    memset(x.pinned, 0, x.size);
    rw_one(&x, "write_pinned_blocking", 1, CL_TRUE, x.pinned);
    rw_one(&x, "write_pinned_nonblocking", 1, CL_FALSE, x.pinned);
    rw_one(&x, "read_pinned_blocking", 0, CL_TRUE, x.pinned);
    rw_one(&x, "read_pinned_nonblocking", 0, CL_FALSE, x.pinned);
    /* Small and mid-size blocking transfers (a result read back, a parameter block written):
     * the cost of a call more than the bus's bandwidth. */
    static const size_t small_sizes[] = {64 << 10, 1 << 20};
    static const char *const small_names[][4] = {{"write_64k", "read_64k", "write_pinned_64k", "read_pinned_64k"},
                                                 {"write_1m", "read_1m", "write_pinned_1m", "read_pinned_1m"}};
    size_t full = x.size;
    int runs = b->opt.runs;
    b->opt.runs = runs < 50 ? 50 : runs;
    for (size_t i = 0; i < sizeof small_sizes / sizeof small_sizes[0] && small_sizes[i] <= full; i++) {
        x.size = small_sizes[i];
        rw_one(&x, small_names[i][0], 1, CL_TRUE, x.pageable);
        rw_one(&x, small_names[i][1], 0, CL_TRUE, x.pageable);
        rw_one(&x, small_names[i][2], 1, CL_TRUE, x.pinned);
        rw_one(&x, small_names[i][3], 0, CL_TRUE, x.pinned);
    }
    x.size = full;
    b->opt.runs = runs;
    TRY(b, clEnqueueUnmapMemObject(b->q, pinned_buf, x.pinned, 0, NULL, NULL));
    TRY(b, clFinish(b->q));
fail:
    rel_mem(&pinned_buf);
    rel_mem(&x.dev);
    free(x.pageable);
    free(x.scratch);
}
