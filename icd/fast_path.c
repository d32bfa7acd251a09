/* The launch fast path: clEnqueueNDRangeKernel and clFinish without Python, when they can.
 *
 * Included by vkcl_icd.c before the generated glue, whose wrappers for those two entries try
 * vkcl_fast_* first and call Python only when it declines (returns 0). Python decides what is
 * eligible and prepares everything (vkcl/core/fastpath.py):
 *  - a queue's state (vkcl_fastq_t): the open batch's command buffer, whether the fast path may
 *    record now (an in-order queue with nothing held), whether anything of Python's is pending,
 *    and the Vulkan entry points; its mutex is also the Python queue lock, so both sides see
 *    one consistent batch;
 *  - a kernel's cached launch (vkcl_fastk_t): for one queue, one set of argument values and one
 *    NDRange, the pipeline and the complete push constants.
 * A fast launch records barrier + bind + push constants + dispatch into the open batch (when the
 * application wants an event, C makes it, fast_events.c, and on a profiling queue writes its
 * timestamps); a fast clFinish of a batch holding only fast launches submits it, waits, reopens
 * it, and completes the launches' events; so does a clWaitForEvents of such events. Reads and writes
 * of a buffer are one copy in that batch, from or to vkcl's own mapped memory or, blocking ones,
 * the queue's staging memory; blocking ones then run the batch as clFinish does. Python gets back
 * every batch with something of its own in it.
 *
 * Handles are looked up in a table Python fills (never dereferenced: a stale or foreign handle
 * is simply not found, and the call goes to Python, which reports the error).
 */
#include <pthread.h>
#include <time.h>

#include "vk_min.h"
#include "timeline_wait.c"
#define VKCL_FAST_USED 64    /* cached launches one batch may use before Python takes over */
#define VKCL_FAST_PC 256     /* push-constant bytes (maxPushConstantsSize is 128-256) */

/* A mutex both sides take: C here, Python through vkcl_mutex_lock/unlock (recursive, as the
 * Python queue lock it replaces was an RLock). */
typedef struct { pthread_mutex_t m; } vkcl_mutex_t;

vkcl_mutex_t *vkcl_mutex_new(void)
{
    vkcl_mutex_t *mx = calloc(1, sizeof *mx);
    pthread_mutexattr_t attr;
    if (!mx)
        return NULL;
    pthread_mutexattr_init(&attr);
    pthread_mutexattr_settype(&attr, PTHREAD_MUTEX_RECURSIVE);
    pthread_mutex_init(&mx->m, &attr);
    pthread_mutexattr_destroy(&attr);
    return mx;
}
void vkcl_mutex_free(vkcl_mutex_t *mx) { if (mx) { pthread_mutex_destroy(&mx->m); free(mx); } }
void vkcl_mutex_lock(vkcl_mutex_t *mx) { pthread_mutex_lock(&mx->m); }
void vkcl_mutex_unlock(vkcl_mutex_t *mx) { pthread_mutex_unlock(&mx->m); }

#define VKCL_FASTQ_MAGIC 0x71667376u  /* the table holds both kinds: a handle of one kind passed */
#define VKCL_FASTK_MAGIC 0x6b667376u  /* as the other is then not mistaken for it */
#define VKCL_FASTM_MAGIC 0x6d667376u

typedef struct vkcl_fastq {
    uint32_t magic;
    /* Written by Python under `lock`. */
    void *cb;                  /* the open batch's VkCommandBuffer; NULL when none is open */
    int enabled;               /* in-order, nothing held: fast launches may be recorded */
    int pending;               /* Python's commands in the open batch (not a fast launch's event),
                                  or its batches in flight, or held commands */
    int barrier;               /* the next GPU command needs a barrier before it */
    int host_barrier;          /* the host may read what the open batch writes: end it with a
                                  barrier to the host (C's commands; Python's batches always do) */
    uint32_t count;            /* commands in the open batch (Python's and fast ones) */
    uint32_t limit;            /* the batch is handed to Python at this many commands */
    uint32_t fast;             /* fast launches in the open batch */
    uint32_t nused;            /* cached launches used by the open batch, in used[] */
    uint32_t events;           /* of those launches, the ones with an event of Python's (to complete) */
    uint64_t tag;              /* names the open batch: changes whenever a batch is closed */
    uint64_t next_value;       /* the queue timeline's next signal value (shared with Python) */
    uint64_t launches, finishes, writes, waits, transfers, host_barriers; /* what C did itself, for tests and diagnosis */
    void *context;             /* names the queue's context (a buffer of another is Python's error) */
    uint64_t spin_ns;          /* how long a wait polls before it sleeps (timeline_wait.c) */
    void *query_pool;          /* a profiling queue's timestamps; NULL otherwise */
    void *device, *queue, *timeline;
    vkcl_mutex_t *lock;        /* the queue's lock (Python's too) */
    vkcl_mutex_t *submit_lock; /* the VkQueue's (every vkcl queue on the device shares it) */
    void *handle;              /* the queue's cl_command_queue, once it has one (Python's) */
    uint32_t nev;              /* the C events of the open batch, in ev[] (set by C, emptied with */
    void *ev[VKCL_FAST_USED];  /* the batch by either side; NULL: adopted by Python) */
    void *used[VKCL_FAST_USED];
    void *staging;             /* blocking transfers' host-visible, coherent VkBuffer (NULL: none) */
    uint8_t *staging_ptr;      /* its bytes, mapped */
    uint64_t staging_offset, staging_size;
    int uma;                   /* the host sees device memory: Python copies directly on an idle queue */
    int copy_threads;          /* for vkcl_host_copy */
    void *cb2;                 /* a second VkCommandBuffer, C's own: chunked transfers (NULL: none) */
    int c_events_on;           /* C makes the events of what it records (fast_events.c) */
    uint32_t qbase;            /* the timestamp pairs Python lent C: qbase + bit for each bit of qfree */
    uint64_t qfree;            /* (set while free; atomic) */
    double period_ns;          /* timestamp ticks to ns */
    int64_t clock_offset;      /* device ns to host CLOCK_MONOTONIC ns, measured at calibrated_ns */
    uint64_t calibrated_ns;    /* (again when older than VKCL_CALIBRATION_NS: vkcl_fastq_clock_offset) */
    void *calibrate;           /* vkGetCalibratedTimestamps{KHR,EXT}; NULL: the offset stays */
    int host_query_reset;      /* pairs are reset on the host when they come back (hostQueryReset),
                                  not by a command before their first timestamp */
    struct vkcl_cev *cev_live; /* its C events not adopted by Python (under vkcl_cev_lock) */
    uint64_t c_events;         /* C events made */
    struct vkcl_cuda_dev *cuda; /* the device's CUDA copies (icd/cuda_copy.c); NULL: none */
    /* llvmpipe's loop cap detected (core/loop_cuts.py): the VkBuffer and offset of the device's
     * flag word (the flag, then at +8 a zero), and the open batch's slot that its end captures
     * the flag into (host view, VkBuffer, offset); loop_slot NULL: none */
    void *loop_word_buffer;
    uint64_t loop_word_offset;
    uint32_t *loop_slot;
    void *loop_slot_buffer;
    uint64_t loop_slot_offset;
    int loop_cut;              /* the last batch C ran cut a loop (Python fails its own events then) */
    void *fn[15];              /* the Vulkan entry points, in the order of vkcl_fast_fn */
} vkcl_fastq_t;

enum vkcl_fast_fn {
    VKCL_FN_BARRIER, VKCL_FN_BIND, VKCL_FN_PUSH, VKCL_FN_DISPATCH, VKCL_FN_END, VKCL_FN_BEGIN, VKCL_FN_SUBMIT,
    VKCL_FN_COUNTER, VKCL_FN_WAIT, VKCL_FN_UPDATE, VKCL_FN_RESET_QUERY, VKCL_FN_TIMESTAMP, VKCL_FN_COPY,
    VKCL_FN_QUERY_RESULTS, VKCL_FN_HOST_RESET_QUERY,
};

/* The start of what an open batch may list in its queue's used[] (a launch, a buffer): its
 * kind, and the batch that last listed it, so that it is listed once. */
typedef struct {
    uint32_t magic;
    vkcl_fastq_t *used_by;
    uint64_t used_tag;
} vkcl_fast_head_t;

typedef struct vkcl_fastk {
    vkcl_fast_head_t head;
    vkcl_fastq_t *fq;          /* the queue this launch was prepared for */
    uint32_t work_dim;
    uint32_t local_null;       /* enqueued with local_work_size NULL */
    size_t global_size[3], local_size[3];
    void *pipeline, *layout;
    uint32_t pc_size;
    uint32_t base[3], groups[3];
    uint32_t host_visible;     /* an argument's memory is host-visible: the host may read what it writes */
    uint8_t pc[VKCL_FAST_PC];
} vkcl_fastk_t;

/* A buffer C may read or write (vkcl_fastm_t): where its bytes are on one device. */
typedef struct vkcl_fastm {
    vkcl_fast_head_t head;
    void *device, *context;    /* the VkDevice of the region; the buffer's context */
    void *buffer;              /* the VkBuffer, and the memory object's first byte in it */
    uint64_t offset, size;
    int readable, writable;    /* what its host-access flags allow */
    const uint64_t *cuda_base; /* where CUDA sees `buffer`'s memory (0 until it does); NULL: never */
} vkcl_fastm_t;

vkcl_fastm_t *vkcl_fastm_new(void)
{
    vkcl_fastm_t *fm = calloc(1, sizeof *fm);
    if (fm)
        fm->head.magic = VKCL_FASTM_MAGIC;
    return fm;
}

/* Every fast queue, for clWaitForEvents, which knows only the event (a queue not listed, past
 * VKCL_FASTQ_MAX of them, just leaves its waits to Python). */
#define VKCL_FASTQ_MAX 256
static vkcl_fastq_t *vkcl_fastq_all[VKCL_FASTQ_MAX];
static pthread_mutex_t vkcl_fastq_all_lock = PTHREAD_MUTEX_INITIALIZER;

vkcl_fastq_t *vkcl_fastq_new(void)
{
    vkcl_fastq_t *fq = calloc(1, sizeof *fq);
    if (!fq)
        return NULL;
    fq->magic = VKCL_FASTQ_MAGIC;
    pthread_mutex_lock(&vkcl_fastq_all_lock);
    for (int i = 0; i < VKCL_FASTQ_MAX; i++)
        if (!vkcl_fastq_all[i]) {
            vkcl_fastq_all[i] = fq;
            break;
        }
    pthread_mutex_unlock(&vkcl_fastq_all_lock);
    return fq;
}

void vkcl_fastq_free(vkcl_fastq_t *fq)
{
    pthread_mutex_lock(&vkcl_fastq_all_lock);
    for (int i = 0; i < VKCL_FASTQ_MAX; i++)
        if (vkcl_fastq_all[i] == fq)
            vkcl_fastq_all[i] = NULL;
    pthread_mutex_unlock(&vkcl_fastq_all_lock);
    free(fq);
}

vkcl_fastk_t *vkcl_fastk_new(void)
{
    vkcl_fastk_t *fk = calloc(1, sizeof *fk);
    if (fk)
        fk->head.magic = VKCL_FASTK_MAGIC;
    return fk;
}
void vkcl_fast_free(void *p) { free(p); }

/* --- handle -> fast state, filled by Python -------------------------------------------- */

#define VKCL_FAST_SLOTS 4096   /* open addressing; Python keeps the load under a half */
static struct { const void *key; void *value; } vkcl_fast_table[VKCL_FAST_SLOTS];
static pthread_mutex_t vkcl_fast_table_lock = PTHREAD_MUTEX_INITIALIZER;
static const void *const vkcl_fast_tomb = &vkcl_fast_table;

static size_t vkcl_fast_slot(const void *key) { return ((uintptr_t)key >> 4) * 0x9E3779B97F4A7C15ull >> 52; }

static void *vkcl_fast_get_locked(const void *key);

/* Returns 0 when the table is too full (the object then simply has no fast path). */
int vkcl_fast_set(const void *key, void *value)
{
    int ok = 0;
    pthread_mutex_lock(&vkcl_fast_table_lock);
    size_t i = vkcl_fast_slot(key), n = 0, free_slot = VKCL_FAST_SLOTS;
    for (; n < VKCL_FAST_SLOTS / 2; i = (i + 1) % VKCL_FAST_SLOTS, n++) {
        const void *k = vkcl_fast_table[i].key;
        if (k == key) {
            free_slot = i;
            break;
        }
        if (k == vkcl_fast_tomb && free_slot == VKCL_FAST_SLOTS)
            free_slot = i;
        if (k == NULL) {
            if (free_slot == VKCL_FAST_SLOTS)
                free_slot = i;
            break;
        }
    }
    if (free_slot != VKCL_FAST_SLOTS) {
        vkcl_fast_table[free_slot].key = key;
        vkcl_fast_table[free_slot].value = value;
        ok = 1;
    }
    pthread_mutex_unlock(&vkcl_fast_table_lock);
    return ok;
}

static void *vkcl_fast_get_locked(const void *key)
{
    for (size_t i = vkcl_fast_slot(key), n = 0; n < VKCL_FAST_SLOTS / 2; i = (i + 1) % VKCL_FAST_SLOTS, n++) {
        const void *k = vkcl_fast_table[i].key;
        if (k == key)
            return vkcl_fast_table[i].value;
        if (k == NULL)
            return NULL;
    }
    return NULL;
}

void vkcl_fast_remove(const void *key)
{
    pthread_mutex_lock(&vkcl_fast_table_lock);
    for (size_t i = vkcl_fast_slot(key), n = 0; n < VKCL_FAST_SLOTS / 2; i = (i + 1) % VKCL_FAST_SLOTS, n++) {
        const void *k = vkcl_fast_table[i].key;
        if (k == key) {
            vkcl_fast_table[i].key = vkcl_fast_tomb;
            vkcl_fast_table[i].value = NULL;
            break;
        }
        if (k == NULL)
            break;
    }
    pthread_mutex_unlock(&vkcl_fast_table_lock);
}

/* --- the fast paths --------------------------------------------------------------------- */

static const vkcl_VkMemoryBarrier vkcl_full_barrier = {VKCL_ST_MEMORY_BARRIER, NULL, VKCL_MEMORY_RW, VKCL_MEMORY_RW};
static const vkcl_VkMemoryBarrier vkcl_host_barrier = {VKCL_ST_MEMORY_BARRIER, NULL, VKCL_MEMORY_RW, VKCL_HOST_RW};
static const vkcl_VkBeginInfo vkcl_begin_info = {VKCL_ST_BEGIN_INFO, NULL, VKCL_ONE_TIME_SUBMIT, NULL};

/* Python makes the event of a fast command that asks for one when C does not (a map's copy, which
 * has host work to do on completion, or C has no event to give; a launch or a transfer of
 * `command_type`; vkcl/core/fastpath.py), called with the queue's lock held so that the event
 * joins the batch the command is recorded in. On a profiling queue it also sets *query to the
 * event's pair of timestamp queries (-1: none free). */
static cl_int vkcl_py_fast_event(cl_command_queue queue, cl_event *event, int *query, cl_uint command_type);
/* After a fast clFinish ran a batch holding such events: Python completes them (with the lock
 * held, so that nobody sees the batch done and its events not). submitted_ns: CLOCK_MONOTONIC. */
static cl_int vkcl_py_fast_events_done(cl_command_queue queue, uint64_t submitted_ns);
static cl_int vkcl_py_loop_cut(cl_command_queue queue);
static cl_int vkcl_fast_finish_locked(vkcl_fastq_t *fq, cl_command_queue queue);

#include "fast_events.c"

/* The queue and the object (of kind `magic`) behind two handles, when both have fast state. */
static vkcl_fastq_t *vkcl_fast_lookup(const void *queue, const void *handle, uint32_t magic, void **obj)
{
    pthread_mutex_lock(&vkcl_fast_table_lock);
    vkcl_fastq_t *fq = vkcl_fast_get_locked(queue);
    vkcl_fast_head_t *head = vkcl_fast_get_locked(handle);
    pthread_mutex_unlock(&vkcl_fast_table_lock);
    if (!fq || !head || fq->magic != VKCL_FASTQ_MAGIC || head->magic != magic)
        return NULL;
    *obj = head;
    return fq;
}

/* Take the queue for one more command of the open batch naming `head`: 1 with the lock held,
 * 0 (nothing held) when Python must do it. */
static int vkcl_fast_open(vkcl_fastq_t *fq, const vkcl_fast_head_t *head)
{
    if (pthread_mutex_trylock(&fq->lock->m) != 0)
        return 0;
    int listed = head->used_by == fq && head->used_tag == fq->tag;
    if (fq->enabled && fq->cb && fq->count + 1 < fq->limit && (listed || fq->nused < VKCL_FAST_USED))
        return 1;
    pthread_mutex_unlock(&fq->lock->m);
    return 0;
}

/* Before the command's Vulkan work: order it after what the batch holds (in-order queue). */
static void vkcl_fast_barrier(vkcl_fastq_t *fq)
{
    if (fq->barrier)
        ((vkcl_PFN_CmdPipelineBarrier)fq->fn[VKCL_FN_BARRIER])(fq->cb, VKCL_ALL_COMMANDS, VKCL_ALL_COMMANDS, 0, 1,
                                                               &vkcl_full_barrier, 0, NULL, 0, NULL);
}

/* After it: count it and list `head` for Python (which keeps it, and what it holds, alive until
 * the batch is done). */
static void vkcl_fast_recorded(vkcl_fastq_t *fq, vkcl_fast_head_t *head)
{
    fq->barrier = 1;
    /* A transfer's or a map's copy always: reads land in host-visible memory. */
    if (head->magic != VKCL_FASTK_MAGIC || ((vkcl_fastk_t *)head)->host_visible)
        fq->host_barrier = 1;
    fq->count++;
    fq->fast++;
    if (head->used_by != fq || head->used_tag != fq->tag) {
        head->used_by = fq;
        head->used_tag = fq->tag;
        fq->used[fq->nused++] = head;
    }
}

/* ... and let the queue go. */
static void vkcl_fast_close(vkcl_fastq_t *fq, vkcl_fast_head_t *head)
{
    vkcl_fast_recorded(fq, head);
    pthread_mutex_unlock(&fq->lock->m);
}

/* Before a command's Vulkan work (the queue taken): its event, when the application asks for one
 * (a C event, else, or when `py_event`, Python's), the barrier, and on a profiling queue the
 * reset and the start timestamp of the event's pair of queries (*query; -1: none). 0 when Python
 * failed: *ret is set, nothing was recorded, and the caller lets the queue go. */
static int vkcl_fast_begin(vkcl_fastq_t *fq, cl_command_queue queue, cl_event *event, cl_uint command_type,
                           int py_event, int *query, cl_int *ret)
{
    *query = -1;
    vkcl_cev_t *e = event && !py_event && fq->nev < VKCL_FAST_USED ? vkcl_cev_new(fq, command_type) : NULL;
    if (e) {
        *event = (cl_event)e;
        fq->ev[fq->nev++] = e;
        *query = e->query;
    } else if (event && (*ret = vkcl_py_fast_event(queue, event, query, command_type)) != CL_SUCCESS) {
        return 0;
    }
    vkcl_fast_barrier(fq);
    if (*query >= 0) {  /* as Python records a profiled command (vkcl/core/queue.py) */
        if (!fq->host_query_reset)
            ((vkcl_PFN_CmdResetQueryPool)fq->fn[VKCL_FN_RESET_QUERY])(fq->cb, fq->query_pool, 2u * *query, 2);
        ((vkcl_PFN_CmdWriteTimestamp)fq->fn[VKCL_FN_TIMESTAMP])(fq->cb, VKCL_TOP_OF_PIPE, fq->query_pool,
                                                                2u * *query);
    }
    return 1;
}

/* After it: the end timestamp. */
static void vkcl_fast_end(vkcl_fastq_t *fq, int query)
{
    if (query >= 0)
        ((vkcl_PFN_CmdWriteTimestamp)fq->fn[VKCL_FN_TIMESTAMP])(fq->cb, VKCL_BOTTOM_OF_PIPE, fq->query_pool,
                                                                2u * query + 1);
}

static int vkcl_fast_enqueue_ndrange(cl_int *ret, cl_command_queue queue, cl_kernel kernel, cl_uint work_dim,
                                     const size_t *offset, const size_t *global, const size_t *local,
                                     cl_uint num_events, const cl_event *wait_list, cl_event *event)
{
    if (offset || num_events || wait_list || !global || work_dim - 1u > 2u)
        return 0;
    vkcl_fastk_t *fk;
    vkcl_fastq_t *fq = vkcl_fast_lookup(queue, kernel, VKCL_FASTK_MAGIC, (void **)&fk);
    if (!fq || fk->fq != fq || fk->work_dim != work_dim || (local == NULL) != (fk->local_null != 0))
        return 0;
    for (cl_uint d = 0; d < work_dim; d++)
        if (global[d] != fk->global_size[d] || (local && local[d] != fk->local_size[d]))
            return 0;
    if (!vkcl_fast_open(fq, &fk->head))
        return 0;
    int query;
    if (!vkcl_fast_begin(fq, queue, event, CL_COMMAND_NDRANGE_KERNEL, 0, &query, ret)) {
        pthread_mutex_unlock(&fq->lock->m);
        return 1;
    }
    void *cb = fq->cb;
    ((vkcl_PFN_CmdBindPipeline)fq->fn[VKCL_FN_BIND])(cb, VKCL_BIND_COMPUTE, fk->pipeline);
    if (fk->pc_size)
        ((vkcl_PFN_CmdPushConstants)fq->fn[VKCL_FN_PUSH])(cb, fk->layout, VKCL_COMPUTE_STAGE, 0, fk->pc_size, fk->pc);
    ((vkcl_PFN_CmdDispatchBase)fq->fn[VKCL_FN_DISPATCH])(cb, fk->base[0], fk->base[1], fk->base[2], fk->groups[0],
                                                         fk->groups[1], fk->groups[2]);
    vkcl_fast_end(fq, query);
    fq->launches++;
    vkcl_fast_close(fq, &fk->head);
    *ret = CL_SUCCESS;
    return 1;
}

static int vkcl_fast_transfer(cl_int *ret, cl_command_queue queue, cl_mem buffer, int blocking, size_t offset,
                              size_t size, void *ptr, int reading, cl_event *event, cl_uint command_type,
                              int own_only);

/* A non-blocking clEnqueueWriteBuffer of at most 64 KiB, 4-byte aligned, without a wait list or
 * an event: vkCmdUpdateBuffer, which copies the bytes into the command buffer now. Others
 * without a wait list: vkcl_fast_transfer. */
static int vkcl_fast_enqueue_write_buffer(cl_int *ret, cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                          size_t offset, size_t size, const void *ptr, cl_uint num_events,
                                          const cl_event *wait_list, cl_event *event)
{
    if (num_events || wait_list)
        return 0;
    if (blocking || event || size > 65536 || ((offset | size) & 3))
        return vkcl_fast_transfer(ret, queue, buffer, blocking, offset, size, (void *)ptr, 0, event,
                                  CL_COMMAND_WRITE_BUFFER, 0);
    if (!ptr || size == 0)
        return 0;
    vkcl_fastm_t *fm;
    vkcl_fastq_t *fq = vkcl_fast_lookup(queue, buffer, VKCL_FASTM_MAGIC, (void **)&fm);
    if (!fq || fm->device != fq->device || fm->context != fq->context || !fm->writable || offset > fm->size ||
        size > fm->size - offset || !vkcl_fast_open(fq, &fm->head))
        return 0;
    vkcl_fast_barrier(fq);
    ((vkcl_PFN_CmdUpdateBuffer)fq->fn[VKCL_FN_UPDATE])(fq->cb, fm->buffer, fm->offset + offset, size, ptr);
    fq->writes++;
    vkcl_fast_close(fq, &fm->head);
    *ret = CL_SUCCESS;
    return 1;
}

/* A clEnqueueReadBuffer without a wait list: vkcl_fast_transfer. */
static int vkcl_fast_enqueue_read_buffer(cl_int *ret, cl_command_queue queue, cl_mem buffer, cl_bool blocking,
                                         size_t offset, size_t size, void *ptr, cl_uint num_events,
                                         const cl_event *wait_list, cl_event *event)
{
    if (num_events || wait_list)
        return 0;
    return vkcl_fast_transfer(ret, queue, buffer, blocking, offset, size, ptr, 1, event, CL_COMMAND_READ_BUFFER, 0);
}

/* Python's clEnqueueMapBuffer and clEnqueueUnmapMemObject of a buffer the host does not see
 * (vkcl/api/transfer.py): the copy between it and the mapping's staging memory, which is vkcl's
 * own mapped memory, as a fast transfer of `command_type`. 1 when C did it (*ret set), 0 when
 * Python must record it. */
int vkcl_fast_map_copy(cl_int *ret, cl_command_queue queue, cl_mem buffer, int blocking, size_t offset, size_t size,
                       void *host, int reading, cl_event *event, cl_uint command_type)
{
    return vkcl_fast_transfer(ret, queue, buffer, blocking, offset, size, host, reading, event, command_type, 1);
}

void vkcl_host_copy(void *dst, const void *src, size_t n, int threads);

#include "fast_chunks.c"
#include "cuda_copy.c"

/* A read or write of a buffer as one GPU copy in the open batch (after what C and Python put
 * there), its event made by Python when the application asks for one. The host side is copied
 * directly when it lies in vkcl's own mapped memory, at any size; otherwise (unless `own_only`)
 * it goes through the queue's staging memory, with the host copying between it and `ptr` before
 * (write) or after (read): a blocking transfer of at most half of it at once, a larger one,
 * blocking or not, in chunks. A transfer that completes before it returns needs all the
 * queue's earlier work in the open batch, which then runs as in clFinish. On a device whose
 * memory the host sees, an empty batch leaves it to Python, which then copies directly. */
static int vkcl_fast_transfer(cl_int *ret, cl_command_queue queue, cl_mem buffer, int blocking, size_t offset,
                              size_t size, void *ptr, int reading, cl_event *event, cl_uint command_type,
                              int own_only)
{
    vkcl_fastm_t *fm;
    vkcl_fastq_t *fq = vkcl_fast_lookup(queue, buffer, VKCL_FASTM_MAGIC, (void **)&fm);
    if (!fq || !ptr || size == 0 || fm->device != fq->device || fm->context != fq->context ||
        !(reading ? fm->readable : fm->writable) || offset > fm->size || size > fm->size - offset)
        return 0;
    uint64_t host_offset = fq->staging_offset;
    int host_cuda = 0;
    void *host = vkcl_host_block_find(fq->device, ptr, size, &host_offset, &host_cuda);
    int staged = !host;
    /* Past half the staging memory, in halves (vkcl_fast_chunked), where the host copy threads
     * make it worth it (Python imports the pages otherwise); done before the call returns even
     * when it need not block, as other drivers' transfers from pageable memory are. */
    int chunked = staged && size > fq->staging_size / 2 && fq->cb2 && (fq->copy_threads >= 4 || fq->uma);
    if (staged && (own_only || !(blocking || chunked) || !fq->staging))
        return 0;  /* the staging memory serves one transfer at a time */
    if (!vkcl_fast_open(fq, &fm->head))
        return 0;
    if (host_cuda && vkcl_cuda_transfer(ret, fq, queue, fm, blocking, offset, size, ptr, reading, event,
                                        command_type, own_only)) {
        pthread_mutex_unlock(&fq->lock->m);
        return 1;
    }
    int query;
    if (((blocking || chunked) && fq->pending) || (fq->uma && fq->count == 0)) {
        pthread_mutex_unlock(&fq->lock->m);
        return 0;
    }
    if (chunked) {  /* after the queue's earlier work, which runs first */
        uint64_t submitted_ns = 0;
        vkcl_cev_t *e = NULL;
        query = -1;
        *ret = vkcl_fast_finish_locked(fq, queue);
        if (*ret == CL_SUCCESS && event && (e = vkcl_cev_new(fq, command_type)) != NULL) {
            *event = (cl_event)e;
            query = e->query;
        } else if (*ret == CL_SUCCESS && event) {
            *ret = vkcl_py_fast_event(queue, event, &query, command_type);
        }
        if (*ret == CL_SUCCESS)
            *ret = vkcl_fast_chunked(fq, fm, offset, size, ptr, reading, query, &submitted_ns);
        if (e) {  /* done: its event too */
            vkcl_cev_done_now(fq, e, submitted_ns, *ret == CL_SUCCESS ? CL_COMPLETE : CL_OUT_OF_RESOURCES);
        } else if (*ret == CL_SUCCESS && event) {
            fq->events = 0;
            *ret = vkcl_py_fast_events_done(queue, submitted_ns);
        }
        fq->transfers++;
        pthread_mutex_unlock(&fq->lock->m);
        return 1;
    }
    if (!vkcl_fast_begin(fq, queue, event, command_type, own_only, &query, ret)) {
        pthread_mutex_unlock(&fq->lock->m);
        return 1;
    }
    if (staged)
        host = fq->staging;
    vkcl_VkBufferCopy region = {fm->offset + offset, host_offset, size};
    void *src = fm->buffer, *dst = host;
    if (!reading) {
        if (staged)
            vkcl_host_copy(fq->staging_ptr, ptr, size, fq->copy_threads);
        region.srcOffset = host_offset;
        region.dstOffset = fm->offset + offset;
        src = host;
        dst = fm->buffer;
    }
    ((vkcl_PFN_CmdCopyBuffer)fq->fn[VKCL_FN_COPY])(fq->cb, src, dst, 1, &region);
    vkcl_fast_end(fq, query);
    vkcl_fast_recorded(fq, &fm->head);
    *ret = blocking ? vkcl_fast_finish_locked(fq, queue) : CL_SUCCESS;
    if (*ret == CL_SUCCESS && blocking && reading && staged)
        vkcl_host_copy(ptr, fq->staging_ptr, size, fq->copy_threads);
    fq->transfers++;
    pthread_mutex_unlock(&fq->lock->m);
    return 1;
}

/* Submit the open batch (fast launches only), wait for it, and open it again. Under fq->lock:
 * whoever releases a memory object a launch of this batch uses waits for the lock, so the
 * memory outlives the batch.
 * The barrier to the host only when the host may read what the batch wrote (host_barrier): on
 * NVIDIA it costs a round trip ~3.5 us, and launches on device-local memory need none (the host
 * reaches that memory only through a later copy, whose batch has it). */
static cl_int vkcl_fast_run_batch(vkcl_fastq_t *fq, uint64_t *submitted_ns)
{
    void *cb = fq->cb;
    if (fq->loop_slot) {  /* the flag to the batch's slot, the zero over the flag (core/loop_cuts.py) */
        vkcl_VkBufferCopy flag = {fq->loop_word_offset, fq->loop_slot_offset, 4};
        vkcl_VkBufferCopy zero = {fq->loop_word_offset + 8, fq->loop_word_offset, 4};
        ((vkcl_PFN_CmdPipelineBarrier)fq->fn[VKCL_FN_BARRIER])(cb, VKCL_ALL_COMMANDS, VKCL_ALL_COMMANDS, 0, 1,
                                                               &vkcl_full_barrier, 0, NULL, 0, NULL);
        ((vkcl_PFN_CmdCopyBuffer)fq->fn[VKCL_FN_COPY])(cb, fq->loop_word_buffer, fq->loop_slot_buffer, 1, &flag);
        ((vkcl_PFN_CmdCopyBuffer)fq->fn[VKCL_FN_COPY])(cb, fq->loop_word_buffer, fq->loop_word_buffer, 1, &zero);
        ((vkcl_PFN_CmdPipelineBarrier)fq->fn[VKCL_FN_BARRIER])(cb, VKCL_ALL_COMMANDS, VKCL_ALL_COMMANDS, 0, 1,
                                                               &vkcl_full_barrier, 0, NULL, 0, NULL);
    }
    if (fq->host_barrier || fq->loop_slot) {
        ((vkcl_PFN_CmdPipelineBarrier)fq->fn[VKCL_FN_BARRIER])(cb, VKCL_ALL_COMMANDS, VKCL_HOST_STAGE, 0, 1,
                                                               &vkcl_host_barrier, 0, NULL, 0, NULL);
        fq->host_barriers++;
    }
    if (((vkcl_PFN_EndCommandBuffer)fq->fn[VKCL_FN_END])(cb) < 0)
        return CL_OUT_OF_RESOURCES;
    uint64_t value = fq->next_value++;
    vkcl_VkTimelineSubmitInfo tl = {VKCL_ST_TIMELINE_SUBMIT_INFO, NULL, 0, NULL, 1, &value};
    vkcl_VkSubmitInfo info = {VKCL_ST_SUBMIT_INFO, &tl, 0, NULL, NULL, 1, (const void *const *)&cb, 1,
                              (const void *const *)&fq->timeline};
    *submitted_ns = vkcl_now_ns();  /* first: the device may start before the submit returns */
    pthread_mutex_lock(&fq->submit_lock->m);
    vkcl_VkResult r = ((vkcl_PFN_QueueSubmit)fq->fn[VKCL_FN_SUBMIT])(fq->queue, 1, &info, NULL);
    pthread_mutex_unlock(&fq->submit_lock->m);
    if (r < 0)
        return CL_OUT_OF_RESOURCES;
    if (vkcl_wait_timeline(fq->fn[VKCL_FN_COUNTER], fq->fn[VKCL_FN_WAIT], fq->device, fq->timeline, value, UINT64_MAX,
                           fq->spin_ns) != 0)
        return CL_OUT_OF_RESOURCES;
    /* llvmpipe cut a loop of the batch's kernels short (core/loop_cuts.py): their results are
     * wrong, so their events fail. */
    fq->loop_cut = fq->loop_slot && __atomic_exchange_n(fq->loop_slot, 0, __ATOMIC_ACQ_REL);
    if (fq->loop_cut && fq->handle)  /* Python's warning names the kernels (used[], before it is cleared) */
        vkcl_py_loop_cut((cl_command_queue)fq->handle);
    vkcl_cev_batch_done(fq, *submitted_ns, fq->loop_cut ? CL_OUT_OF_RESOURCES : CL_COMPLETE);
    /* The pool resets command buffers individually: beginning one resets it. */
    if (((vkcl_PFN_BeginCommandBuffer)fq->fn[VKCL_FN_BEGIN])(cb, &vkcl_begin_info) < 0)
        return CL_OUT_OF_RESOURCES;
    fq->count = fq->fast = fq->nused = fq->nev = 0;
    fq->barrier = fq->host_barrier = 0;
    fq->tag++;
    return CL_SUCCESS;
}

/* Under fq->lock, the open batch holding only fast launches: run it and complete its events. */
static cl_int vkcl_fast_finish_locked(vkcl_fastq_t *fq, cl_command_queue queue)
{
    uint64_t submitted_ns = 0;
    cl_int ret = fq->fast ? vkcl_fast_run_batch(fq, &submitted_ns) : CL_SUCCESS;
    if (ret == CL_SUCCESS && fq->events) {
        fq->events = 0;
        ret = vkcl_py_fast_events_done(queue, submitted_ns);
    }
    if (ret != CL_SUCCESS) {  /* the command buffer's state is unknown: Python must not reuse it */
        vkcl_cev_batch_done(fq, 0, ret);
        fq->enabled = 0;
        fq->cb = NULL;
    }
    return ret;
}

static int vkcl_fast_finish(cl_int *ret, cl_command_queue queue)
{
    pthread_mutex_lock(&vkcl_fast_table_lock);
    vkcl_fastq_t *fq = vkcl_fast_get_locked(queue);
    pthread_mutex_unlock(&vkcl_fast_table_lock);
    if (!fq || fq->magic != VKCL_FASTQ_MAGIC || pthread_mutex_trylock(&fq->lock->m) != 0)
        return 0;
    if (!fq->enabled || fq->pending || !fq->cb) {
        pthread_mutex_unlock(&fq->lock->m);
        return 0;
    }
    *ret = vkcl_fast_finish_locked(fq, queue);
    fq->finishes++;
    pthread_mutex_unlock(&fq->lock->m);
    return 1;
}
