/* C events: the cl_event of a command C records (a fast launch or transfer), made, completed and
 * answered for in C, so that a launch that asks for an event costs no Python. Part of
 * icd/fast_path.c, which includes it after the fast path's types.
 *
 * A C event is a handle of its own kind (its first member the dispatch table, as every handle's)
 * from slabs C owns, so that a pointer the application passes is recognised without being
 * dereferenced. C answers clRetainEvent, clReleaseEvent, clGetEventInfo (queue, command type,
 * status, reference count), clGetEventProfilingInfo and clWaitForEvents for it. Anything else
 * (a wait list, a callback, its context, an error to report, Python submitting the batch that
 * holds it, its queue's release) goes to Python, which adopts it (vkcl/core/fastpath.py,
 * adopt_event): from then on it is an Event of Python's under the same handle, and C passes
 * every call for it on.
 *
 * Invariant: a C event not adopted is complete (or failed), or listed in its queue's fq->ev[]
 * as part of the open batch, because whoever ends that batch completes it (C's clFinish) or
 * adopts it (Python's submit); a queue's release adopts all of its C events, so an event never
 * outlives its fq. Locks: the queue's lock first, then vkcl_cev_lock (an event's state,
 * reference count and the lists). */

#define VKCL_CEV_MAGIC 0x65667376u
#define VKCL_CEV_SLAB 1024    /* events per slab */
#define VKCL_CEV_SLABS 4096   /* past 4M live events, Python makes them */

typedef struct vkcl_cev {
    const void *dispatch;
    uint32_t magic;            /* VKCL_CEV_MAGIC while in use */
    int32_t status;            /* CL_QUEUED, then CL_COMPLETE or an error (read without the lock) */
    uint32_t refcount;         /* the application's references; 0: freed once its batch is done */
    uint32_t command_type;
    int adopted;               /* Python's now (its struct lives until Python drops the handle) */
    int query;                 /* its timestamp pair on a profiling queue, -1: none */
    vkcl_fastq_t *fq;
    uint64_t times[5];         /* queued, submit, start, end, complete: CLOCK_MONOTONIC ns */
    struct vkcl_cev *prev, *next;  /* its queue's live list (not adopted), or the free list */
} vkcl_cev_t;

typedef struct {  /* what Python takes over when it adopts a C event */
    int32_t status;
    uint32_t refcount, command_type;
    int32_t query;
    uint64_t times[5];
} vkcl_cev_state_t;

static vkcl_cev_t *vkcl_cev_slab[VKCL_CEV_SLABS];
static uint32_t vkcl_cev_nslabs;
static vkcl_cev_t *vkcl_cev_free_list;
static pthread_mutex_t vkcl_cev_lock = PTHREAD_MUTEX_INITIALIZER;

const void *vkcl_dispatch_table(void);

/* The slot `h` points at when it is one of the slabs' (then its magic says whether it is in use). */
static vkcl_cev_t *vkcl_cev_find(const void *h)
{
    uintptr_t p = (uintptr_t)h;
    uint32_t n = __atomic_load_n(&vkcl_cev_nslabs, __ATOMIC_ACQUIRE);
    for (uint32_t i = 0; i < n; i++) {
        uintptr_t base = (uintptr_t)vkcl_cev_slab[i];
        if (p >= base && p < base + sizeof(vkcl_cev_t) * VKCL_CEV_SLAB && (p - base) % sizeof(vkcl_cev_t) == 0)
            return (vkcl_cev_t *)p;
    }
    return NULL;
}

/* Under vkcl_cev_lock: an event the application holds and C still answers for. */
static int vkcl_cev_usable(const vkcl_cev_t *e)
{
    return e && e->magic == VKCL_CEV_MAGIC && e->refcount > 0 && !e->adopted;
}

static void vkcl_cev_unlink(vkcl_cev_t *e)
{
    if (e->prev)
        e->prev->next = e->next;
    else if (e->fq->cev_live == e)
        e->fq->cev_live = e->next;
    if (e->next)
        e->next->prev = e->prev;
    e->prev = e->next = NULL;
}

static void vkcl_cev_put(vkcl_cev_t *e)
{
    e->magic = 0;
    e->next = vkcl_cev_free_list;
    vkcl_cev_free_list = e;
}

/* One of the timestamp pairs Python lent C (bits of fq->qfree), -1 when none is free. */
static int vkcl_query_take(vkcl_fastq_t *fq)
{
    uint64_t m = __atomic_load_n(&fq->qfree, __ATOMIC_RELAXED);
    while (m) {
        int bit = __builtin_ctzll(m);
        if (__atomic_compare_exchange_n(&fq->qfree, &m, m & ~(1ull << bit), 0, __ATOMIC_ACQ_REL, __ATOMIC_RELAXED))
            return (int)fq->qbase + bit;
    }
    return -1;
}

void vkcl_fastq_query_back(vkcl_fastq_t *fq, int pair)
{
    if (fq->host_query_reset)  /* its command has completed: the pair is free to reset */
        ((vkcl_PFN_ResetQueryPool)fq->fn[VKCL_FN_HOST_RESET_QUERY])(fq->device, fq->query_pool, 2u * pair, 2);
    __atomic_fetch_or(&fq->qfree, 1ull << (pair - (int)fq->qbase), __ATOMIC_ACQ_REL);
}

/* A C event for a command of `command_type` (the queue's lock held); NULL when C has none to
 * give (Python makes the event then). */
static vkcl_cev_t *vkcl_cev_new(vkcl_fastq_t *fq, cl_uint command_type)
{
    int query = -1;
    if (!fq->c_events_on || (fq->query_pool && (query = vkcl_query_take(fq)) < 0))
        return NULL;
    pthread_mutex_lock(&vkcl_cev_lock);
    if (!vkcl_cev_free_list && vkcl_cev_nslabs < VKCL_CEV_SLABS) {
        vkcl_cev_t *slab = calloc(VKCL_CEV_SLAB, sizeof *slab);
        if (slab) {
            for (int i = VKCL_CEV_SLAB - 1; i >= 0; i--)
                vkcl_cev_put(&slab[i]);
            vkcl_cev_slab[vkcl_cev_nslabs] = slab;
            __atomic_store_n(&vkcl_cev_nslabs, vkcl_cev_nslabs + 1, __ATOMIC_RELEASE);
        }
    }
    vkcl_cev_t *e = vkcl_cev_free_list;
    if (e) {
        vkcl_cev_free_list = e->next;
        memset(e, 0, sizeof *e);
        e->dispatch = vkcl_dispatch_table();
        e->status = CL_QUEUED;
        e->refcount = 1;
        e->command_type = command_type;
        e->query = query;
        e->fq = fq;
        if (fq->query_pool)
            e->times[0] = vkcl_now_ns();
        e->next = fq->cev_live;
        if (e->next)
            e->next->prev = e;
        fq->cev_live = e;
        e->magic = VKCL_CEV_MAGIC;
        fq->c_events++;
    }
    pthread_mutex_unlock(&vkcl_cev_lock);
    if (!e && query >= 0)
        vkcl_fastq_query_back(fq, query);
    return e;
}

/* host CLOCK_MONOTONIC ns = device ns + this; measured again when older than 100 ms (the
 * H200's timer drifts ~1.6 us a second from the host's clock: vkcl/vulkan/commands.py,
 * DeviceClock, does the same for Python's events). */
#define VKCL_CALIBRATION_NS 100000000ull
static int64_t vkcl_fastq_clock_offset(vkcl_fastq_t *fq, uint64_t now)
{
    if (fq->calibrate && now - fq->calibrated_ns > VKCL_CALIBRATION_NS) {
        vkcl_VkCalibratedTimestampInfo infos[2] = {
            {VKCL_ST_CALIBRATED_TIMESTAMP_INFO, NULL, VKCL_TIME_DOMAIN_DEVICE},
            {VKCL_ST_CALIBRATED_TIMESTAMP_INFO, NULL, VKCL_TIME_DOMAIN_CLOCK_MONOTONIC}};
        uint64_t stamps[2], deviation;
        if (((vkcl_PFN_GetCalibratedTimestamps)fq->calibrate)(fq->device, 2, infos, stamps, &deviation) == 0)
            fq->clock_offset = (int64_t)stamps[1] - (int64_t)((double)stamps[0] * fq->period_ns);
        fq->calibrated_ns = now;
    }
    return fq->clock_offset;
}

/* Under both locks: `e`'s command ran (status CL_COMPLETE), submitted at `submitted_ns`, or
 * failed (an error): its status, and its times as Python's Event keeps them (vkcl/core/event.py,
 * _complete_times): measured, never reordered; a command without timestamps ran at `now`. */
static void vkcl_cev_finish(vkcl_fastq_t *fq, vkcl_cev_t *e, uint64_t submitted_ns, cl_int status, uint64_t now)
{
    uint64_t *t = e->times;
    if (e->query >= 0) {
        uint64_t ticks[2];
        vkcl_PFN_GetQueryPoolResults get = (vkcl_PFN_GetQueryPoolResults)fq->fn[VKCL_FN_QUERY_RESULTS];
        vkcl_VkResult r = get(fq->device, fq->query_pool, 2u * e->query, 2, sizeof ticks, ticks, 8, VKCL_QUERY_RESULT_64);
        if (r == VKCL_NOT_READY)
            r = get(fq->device, fq->query_pool, 2u * e->query, 2, sizeof ticks, ticks, 8,
                    VKCL_QUERY_RESULT_64 | VKCL_QUERY_RESULT_WAIT);
        if (r == 0 && status == CL_COMPLETE) {
            int64_t offset = vkcl_fastq_clock_offset(fq, now);
            for (int i = 0; i < 2; i++)
                t[2 + i] = (uint64_t)((int64_t)((double)ticks[i] * fq->period_ns) + offset);
        }
        vkcl_fastq_query_back(fq, e->query);
        e->query = -1;
    }
    if (fq->query_pool && status == CL_COMPLETE) {
        t[1] = submitted_ns;
        if (!t[3])
            t[2] = t[3] = now;
        t[4] = now;
    }
    __atomic_store_n(&e->status, status, __ATOMIC_RELEASE);
    if (e->refcount == 0) {
        vkcl_cev_unlink(e);
        vkcl_cev_put(e);
    }
}

/* The open batch ran (CL_COMPLETE) or failed (an error), with the queue's lock held: complete
 * its C events, and forget them. */
static void vkcl_cev_batch_done(vkcl_fastq_t *fq, uint64_t submitted_ns, cl_int status)
{
    if (!fq->nev)
        return;
    uint64_t now = vkcl_now_ns();
    pthread_mutex_lock(&vkcl_cev_lock);
    for (uint32_t i = 0; i < fq->nev; i++) {
        vkcl_cev_t *e = fq->ev[i];
        if (e && !e->adopted)
            vkcl_cev_finish(fq, e, submitted_ns, status, now);
        fq->ev[i] = NULL;
    }
    fq->nev = 0;
    pthread_mutex_unlock(&vkcl_cev_lock);
}

/* A command C completed before its call returned (a chunked transfer), with the queue's lock held. */
static void vkcl_cev_done_now(vkcl_fastq_t *fq, vkcl_cev_t *e, uint64_t submitted_ns, cl_int status)
{
    uint64_t now = vkcl_now_ns();
    pthread_mutex_lock(&vkcl_cev_lock);
    vkcl_cev_finish(fq, e, submitted_ns, status, now);
    pthread_mutex_unlock(&vkcl_cev_lock);
}

/* --- what Python calls (vkcl/core/fastpath.py) ------------------------------------------ */

/* The fast queue of a C event the application holds, or of one Python adopted (whose adopter
 * holds that queue's lock until the handle is in Python's table: taking it, a thread that missed
 * the handle there finds it), NULL when `h` is no C event in use. */
vkcl_fastq_t *vkcl_cev_queue_of(const void *h)
{
    vkcl_cev_t *e = vkcl_cev_find(h);
    pthread_mutex_lock(&vkcl_cev_lock);
    vkcl_fastq_t *fq = e && e->magic == VKCL_CEV_MAGIC && (e->refcount > 0 || e->adopted) ? e->fq : NULL;
    pthread_mutex_unlock(&vkcl_cev_lock);
    return fq;
}

/* Python takes the C event at `h` over, with its queue's lock held: its state into *st; 0 when
 * it is not a C event in use (or already Python's). One the application released (its batch's
 * submission adopts those too) is freed at once: Python completes its command handle-less. */
int vkcl_cev_adopt(const void *h, vkcl_cev_state_t *st)
{
    vkcl_cev_t *e = vkcl_cev_find(h);
    pthread_mutex_lock(&vkcl_cev_lock);
    int ok = e && e->magic == VKCL_CEV_MAGIC && !e->adopted;
    if (ok) {
        vkcl_fastq_t *fq = e->fq;
        st->status = e->status;
        st->refcount = e->refcount;
        st->command_type = e->command_type;
        st->query = e->query;  /* Python gives it back (vkcl_fastq_query_back) */
        memcpy(st->times, e->times, sizeof st->times);
        for (uint32_t i = 0; i < fq->nev; i++)
            if (fq->ev[i] == e)
                fq->ev[i] = NULL;
        vkcl_cev_unlink(e);
        e->adopted = 1;
        e->query = -1;
        if (e->refcount == 0)
            vkcl_cev_put(e);
    }
    pthread_mutex_unlock(&vkcl_cev_lock);
    return ok;
}

/* Python dropped an adopted event's handle: its slot is free again. */
void vkcl_cev_free(const void *h)
{
    vkcl_cev_t *e = vkcl_cev_find(h);
    pthread_mutex_lock(&vkcl_cev_lock);
    if (e && e->magic == VKCL_CEV_MAGIC && e->adopted)
        vkcl_cev_put(e);
    pthread_mutex_unlock(&vkcl_cev_lock);
}

/* A C event of the queue not yet adopted (the queue's lock held), NULL when none is left. */
void *vkcl_cev_first_live(vkcl_fastq_t *fq)
{
    pthread_mutex_lock(&vkcl_cev_lock);
    void *e = fq->cev_live;
    pthread_mutex_unlock(&vkcl_cev_lock);
    return e;
}

/* --- the entry points C answers for its events ------------------------------------------ */

static int vkcl_fast_retain_event(cl_int *ret, cl_event event)
{
    vkcl_cev_t *e = vkcl_cev_find(event);
    if (!e)
        return 0;
    pthread_mutex_lock(&vkcl_cev_lock);
    int mine = vkcl_cev_usable(e);
    if (mine)
        e->refcount++;
    pthread_mutex_unlock(&vkcl_cev_lock);
    *ret = CL_SUCCESS;
    return mine;
}

static int vkcl_fast_release_event(cl_int *ret, cl_event event)
{
    vkcl_cev_t *e = vkcl_cev_find(event);
    if (!e)
        return 0;
    pthread_mutex_lock(&vkcl_cev_lock);
    int mine = vkcl_cev_usable(e);
    if (mine && --e->refcount == 0 && __atomic_load_n(&e->status, __ATOMIC_ACQUIRE) <= CL_COMPLETE) {
        vkcl_cev_unlink(e);  /* a pending one is freed when its batch is done */
        vkcl_cev_put(e);
    }
    pthread_mutex_unlock(&vkcl_cev_lock);
    *ret = CL_SUCCESS;
    return mine;
}

/* Copies an answer of `n` bytes as the spec says; 0 (Python reports the error) when it does not fit. */
static int vkcl_fast_answer(cl_int *ret, const void *answer, size_t n, size_t size, void *value, size_t *size_ret)
{
    if (value && size < n)
        return 0;
    if (value)
        memcpy(value, answer, n);
    if (size_ret)
        *size_ret = n;
    *ret = CL_SUCCESS;
    return 1;
}

static int vkcl_fast_get_event_info(cl_int *ret, cl_event event, cl_event_info name, size_t size, void *value,
                                    size_t *size_ret)
{
    vkcl_cev_t *e = vkcl_cev_find(event);
    if (!e)
        return 0;
    union { cl_command_queue queue; cl_uint u; cl_int i; } answer;
    size_t n = sizeof(cl_uint);
    pthread_mutex_lock(&vkcl_cev_lock);
    int mine = vkcl_cev_usable(e);
    if (mine && name == CL_EVENT_COMMAND_QUEUE) {
        answer.queue = e->fq->handle;
        n = sizeof answer.queue;
    } else if (mine && name == CL_EVENT_COMMAND_TYPE) {
        answer.u = e->command_type;
    } else if (mine && name == CL_EVENT_COMMAND_EXECUTION_STATUS) {
        answer.i = __atomic_load_n(&e->status, __ATOMIC_ACQUIRE);
    } else if (mine && name == CL_EVENT_REFERENCE_COUNT) {
        answer.u = e->refcount;
    } else {
        mine = 0;  /* its context, or an error: Python's */
    }
    pthread_mutex_unlock(&vkcl_cev_lock);
    return mine && vkcl_fast_answer(ret, &answer, n, size, value, size_ret);
}

static int vkcl_fast_get_event_profiling_info(cl_int *ret, cl_event event, cl_profiling_info name, size_t size,
                                              void *value, size_t *size_ret)
{
    vkcl_cev_t *e = vkcl_cev_find(event);
    if (!e)
        return 0;
    cl_ulong t = 0;
    pthread_mutex_lock(&vkcl_cev_lock);
    int mine = vkcl_cev_usable(e), ready = mine && e->fq->query_pool && e->status == CL_COMPLETE;
    int known = name >= CL_PROFILING_COMMAND_QUEUED && name <= CL_PROFILING_COMMAND_COMPLETE;
    if (ready && known)
        t = e->times[name - CL_PROFILING_COMMAND_QUEUED];
    pthread_mutex_unlock(&vkcl_cev_lock);
    if (mine && !ready) {  /* as Python: before the parameter's name is looked at */
        *ret = CL_PROFILING_INFO_NOT_AVAILABLE;
        return 1;
    }
    return mine && known && vkcl_fast_answer(ret, &t, sizeof t, size, value, size_ret);
}

/* clWaitForEvents of C events (of one context): each one pending is in its queue's open batch,
 * which runs as in clFinish when it holds only what C recorded; otherwise Python waits. */
static int vkcl_fast_wait_for_events(cl_int *ret, cl_uint num_events, const cl_event *event_list)
{
    vkcl_cev_t *evs[VKCL_FAST_USED];
    if (num_events == 0 || num_events > VKCL_FAST_USED || !event_list)
        return 0;
    pthread_mutex_lock(&vkcl_cev_lock);
    for (cl_uint i = 0; i < num_events; i++) {
        evs[i] = vkcl_cev_find(event_list[i]);
        if (!vkcl_cev_usable(evs[i]) || evs[i]->fq->context != evs[0]->fq->context) {
            pthread_mutex_unlock(&vkcl_cev_lock);
            return 0;
        }
    }
    pthread_mutex_unlock(&vkcl_cev_lock);
    for (cl_uint i = 0; i < num_events; i++) {
        vkcl_cev_t *e = evs[i];
        if (__atomic_load_n(&e->status, __ATOMIC_ACQUIRE) <= CL_COMPLETE)
            continue;
        vkcl_fastq_t *fq = e->fq;
        if (pthread_mutex_trylock(&fq->lock->m) != 0)
            return 0;
        pthread_mutex_lock(&vkcl_cev_lock);
        int pending = vkcl_cev_usable(e) && e->status > CL_COMPLETE;
        pthread_mutex_unlock(&vkcl_cev_lock);
        if (pending && (!fq->enabled || fq->pending || !fq->cb || !fq->handle)) {
            pthread_mutex_unlock(&fq->lock->m);
            return 0;
        }
        if (pending) {
            vkcl_fast_finish_locked(fq, fq->handle);  /* a failure fails the events */
            fq->waits++;
        }
        pthread_mutex_unlock(&fq->lock->m);
    }
    int failed = 0, mine = 1;
    pthread_mutex_lock(&vkcl_cev_lock);
    for (cl_uint i = 0; i < num_events; i++) {
        mine &= vkcl_cev_usable(evs[i]) && evs[i]->status <= CL_COMPLETE;
        failed |= evs[i]->status < 0;
    }
    pthread_mutex_unlock(&vkcl_cev_lock);
    *ret = failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
    return mine;
}
