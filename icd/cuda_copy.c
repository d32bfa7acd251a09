/* Transfers between vkcl's own pinned memory and a buffer by CUDA's copy engine, on NVIDIA GPUs
 * (vkcl/vulkan/cuda_copy.py sets it up; icd/fast_path.c calls it). Part of fast_path.c's unit,
 * included before vkcl_fast_transfer.
 *
 * Why: on an H200, every copy between host memory that NVIDIA's Vulkan driver maps for the GPU
 * (its own host-visible memory, or imported pages) and the GPU runs at ~50 / ~51 GB/s, whichever
 * engine copies: Vulkan's copy engine, a kernel, or CUDA's copy engine on the exported memory.
 * The same pages registered with CUDA (cuMemHostRegister) move ~55 GB/s each way, into device
 * memory Vulkan allocated and exported too: NVIDIA's OpenCL's rate (docs/performance.md).
 *
 * A copy here is synchronous: it runs after the queue's earlier work (the open batch holds only
 * C's commands, which run first, as in clFinish) and completes before the call returns, its event
 * with it; a non-blocking transfer takes this path only when the queue has no earlier work, so
 * that it never waits for the GPU on the application's behalf. */
#include <unistd.h>

enum { VKCL_CU_PUSH, VKCL_CU_POP, VKCL_CU_HTOD, VKCL_CU_DTOH, VKCL_CU_SYNC, VKCL_CU_NFN };
typedef int (*vkcl_PFN_cuCtxPushCurrent)(void *ctx);
typedef int (*vkcl_PFN_cuCtxPopCurrent)(void **ctx);
typedef int (*vkcl_PFN_cuMemcpyHtoDAsync)(uint64_t dst, const void *src, size_t n, void *stream);
typedef int (*vkcl_PFN_cuMemcpyDtoHAsync)(void *dst, uint64_t src, size_t n, void *stream);
typedef int (*vkcl_PFN_cuStreamSynchronize)(void *stream);

/* One VkDevice's CUDA copies: made with the device (not ready), started with its first
 * host-visible memory (vkcl_cuda_dev_start), for the process's life. */
typedef struct vkcl_cuda_dev {
    int ready;                 /* started: the fields below are set (atomic) */
    int failed;                /* a copy failed (its CUresult): no more copies */
    pid_t pid;                 /* CUDA's process: a fork()ed child copies through Vulkan */
    uint64_t min_size;         /* smaller transfers go through Vulkan */
    void *ctx;                 /* the GPU's primary CUcontext */
    void *stream[2];           /* host -> device, device -> host: streams of vkcl's own */
    pthread_mutex_t lock[2];   /* one copy a direction at a time on them */
    void *fn[VKCL_CU_NFN];     /* libcuda's entry points, in the order of the enum */
    uint64_t copies;           /* done (tests) */
} vkcl_cuda_dev_t;

vkcl_cuda_dev_t *vkcl_cuda_dev_new(void)
{
    vkcl_cuda_dev_t *cd = calloc(1, sizeof *cd);
    if (cd)
        for (int i = 0; i < 2; i++)
            pthread_mutex_init(&cd->lock[i], NULL);
    return cd;
}

/* Python filled ctx, stream, fn and min_size: copies may start. */
void vkcl_cuda_dev_start(vkcl_cuda_dev_t *cd)
{
    cd->pid = getpid();
    __atomic_store_n(&cd->ready, 1, __ATOMIC_RELEASE);
}

/* No more copies (process exit: libcuda's own exit handlers may have run). */
void vkcl_cuda_dev_stop(vkcl_cuda_dev_t *cd) { __atomic_store_n(&cd->ready, 0, __ATOMIC_RELEASE); }

/* `size` bytes between `host` (registered with CUDA) and device address `dptr`, waited for. */
static cl_int vkcl_cuda_copy(vkcl_cuda_dev_t *cd, uint64_t dptr, void *host, size_t size, int reading)
{
    void *stream = cd->stream[reading], *popped;
    pthread_mutex_lock(&cd->lock[reading]);
    int r = ((vkcl_PFN_cuCtxPushCurrent)cd->fn[VKCL_CU_PUSH])(cd->ctx);
    if (r == 0) {
        r = reading ? ((vkcl_PFN_cuMemcpyDtoHAsync)cd->fn[VKCL_CU_DTOH])(host, dptr, size, stream)
                    : ((vkcl_PFN_cuMemcpyHtoDAsync)cd->fn[VKCL_CU_HTOD])(dptr, host, size, stream);
        if (r == 0)
            r = ((vkcl_PFN_cuStreamSynchronize)cd->fn[VKCL_CU_SYNC])(stream);
        ((vkcl_PFN_cuCtxPopCurrent)cd->fn[VKCL_CU_POP])(&popped);
    }
    if (r == 0)
        cd->copies++;
    else
        cd->failed = r;
    pthread_mutex_unlock(&cd->lock[reading]);
    return r == 0 ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

/* Under fq->lock, a transfer whose host side `ptr` lies in a host block registered with CUDA:
 * 1 when done (*ret says how it went), 0 when Vulkan must do it (nothing was done but, maybe,
 * the queue's earlier work): below the smallest size, behind earlier work when not blocking, a
 * failed copy (CUDA is then out for the device), an event C cannot make (Python's would wait
 * for timestamps this copy does not write). */
static int vkcl_cuda_transfer(cl_int *ret, vkcl_fastq_t *fq, cl_command_queue queue, vkcl_fastm_t *fm,
                              int blocking, size_t offset, size_t size, void *ptr, int reading, cl_event *event,
                              cl_uint command_type, int py_event)
{
    vkcl_cuda_dev_t *cd = fq->cuda;
    if (!cd || !__atomic_load_n(&cd->ready, __ATOMIC_ACQUIRE) || cd->failed || size < cd->min_size ||
        !fm->cuda_base || !*fm->cuda_base || fq->pending || (!blocking && fq->count) || cd->pid != getpid())
        return 0;
    if (event && (py_event || !fq->c_events_on || (fq->query_pool && !__atomic_load_n(&fq->qfree, __ATOMIC_ACQUIRE))))
        return 0;
    uint64_t queued = vkcl_now_ns();
    *ret = fq->count ? vkcl_fast_finish_locked(fq, queue) : CL_SUCCESS;
    if (*ret != CL_SUCCESS)
        return 1;
    uint64_t start = vkcl_now_ns();
    if (vkcl_cuda_copy(cd, *fm->cuda_base + fm->offset + offset, ptr, size, reading) != CL_SUCCESS)
        return 0;
    fq->transfers++;
    if (!event)
        return 1;
    vkcl_cev_t *e = vkcl_cev_new(fq, command_type);
    if (!e) {
        *ret = CL_OUT_OF_HOST_MEMORY;
        return 1;
    }
    if (e->query >= 0) {  /* unused: its times are the host's, around the copy */
        vkcl_fastq_query_back(fq, e->query);
        e->query = -1;
    }
    if (fq->query_pool)
        e->times[0] = queued;
    e->times[2] = start;
    *event = (cl_event)e;
    vkcl_cev_done_now(fq, e, start, CL_COMPLETE);
    return 1;
}
