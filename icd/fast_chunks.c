/* Transfers through the staging memory larger than half of it, in chunks, done before the call
 * returns (vkcl_fast_chunked). Part of icd/fast_path.c, which includes it after the fast path's
 * types and before vkcl_fast_transfer. */

/* A chunked transfer (vkcl_fast_chunked): chunk c goes through staging half c & 1 and command
 * buffer c & 1 (the open batch's, then C's own cb2), whose submission signals value[c & 1]. */
typedef struct {
    vkcl_fastq_t *fq;
    vkcl_fastm_t *fm;
    uint64_t at, size, half, n;  /* the buffer's bytes [at, at + size), in n chunks of half */
    int reading;
    void *cb[2];
    int begun[2];
    uint64_t value[2];
    uint64_t *submitted_ns;  /* when the first chunk was submitted (CLOCK_MONOTONIC) */
} vkcl_chunks_t;

static uint64_t vkcl_chunk_len(const vkcl_chunks_t *t, uint64_t c)
{
    return c + 1 < t->n ? t->half : t->size - c * t->half;
}

static uint8_t *vkcl_chunk_staging(const vkcl_chunks_t *t, uint64_t c)
{
    return t->fq->staging_ptr + (c & 1) * t->half;
}

/* Copy chunk c between the buffer and its staging half, make it visible to the host, submit;
 * the event's timestamps (query pair `query`, -1: none) go around the first and the last. */
static cl_int vkcl_chunk_submit(vkcl_chunks_t *t, uint64_t c, int query)
{
    vkcl_fastq_t *fq = t->fq;
    int k = (int)(c & 1);
    void *cb = t->cb[k];
    if (!t->begun[k] && ((vkcl_PFN_BeginCommandBuffer)fq->fn[VKCL_FN_BEGIN])(cb, &vkcl_begin_info) < 0)
        return CL_OUT_OF_RESOURCES;
    t->begun[k] = 0;
    if (query >= 0 && c == 0) {
        if (!fq->host_query_reset)
            ((vkcl_PFN_CmdResetQueryPool)fq->fn[VKCL_FN_RESET_QUERY])(cb, fq->query_pool, 2u * query, 2);
        ((vkcl_PFN_CmdWriteTimestamp)fq->fn[VKCL_FN_TIMESTAMP])(cb, VKCL_TOP_OF_PIPE, fq->query_pool, 2u * query);
    }
    uint64_t at = t->at + c * t->half, staging = fq->staging_offset + (uint64_t)k * t->half;
    vkcl_VkBufferCopy region = {t->reading ? at : staging, t->reading ? staging : at, vkcl_chunk_len(t, c)};
    ((vkcl_PFN_CmdCopyBuffer)fq->fn[VKCL_FN_COPY])(cb, t->reading ? t->fm->buffer : fq->staging,
                                                    t->reading ? fq->staging : t->fm->buffer, 1, &region);
    if (query >= 0 && c + 1 == t->n) {
        /* after every chunk's copy, and the reset where a command does it (a barrier's scope
         * spans submissions) */
        ((vkcl_PFN_CmdPipelineBarrier)fq->fn[VKCL_FN_BARRIER])(cb, VKCL_ALL_COMMANDS, VKCL_ALL_COMMANDS, 0, 1,
                                                               &vkcl_full_barrier, 0, NULL, 0, NULL);
        ((vkcl_PFN_CmdWriteTimestamp)fq->fn[VKCL_FN_TIMESTAMP])(cb, VKCL_BOTTOM_OF_PIPE, fq->query_pool,
                                                                2u * query + 1);
    }
    ((vkcl_PFN_CmdPipelineBarrier)fq->fn[VKCL_FN_BARRIER])(cb, VKCL_ALL_COMMANDS, VKCL_HOST_STAGE, 0, 1,
                                                           &vkcl_host_barrier, 0, NULL, 0, NULL);
    if (((vkcl_PFN_EndCommandBuffer)fq->fn[VKCL_FN_END])(cb) < 0)
        return CL_OUT_OF_RESOURCES;
    t->value[k] = fq->next_value++;
    if (c == 0)
        *t->submitted_ns = vkcl_now_ns();  /* first: the device may start before the submit returns */
    vkcl_VkTimelineSubmitInfo tl = {VKCL_ST_TIMELINE_SUBMIT_INFO, NULL, 0, NULL, 1, &t->value[k]};
    vkcl_VkSubmitInfo info = {VKCL_ST_SUBMIT_INFO, &tl, 0, NULL, NULL, 1, (const void *const *)&cb, 1,
                              (const void *const *)&fq->timeline};
    pthread_mutex_lock(&fq->submit_lock->m);
    vkcl_VkResult r = ((vkcl_PFN_QueueSubmit)fq->fn[VKCL_FN_SUBMIT])(fq->queue, 1, &info, NULL);
    pthread_mutex_unlock(&fq->submit_lock->m);
    return r < 0 ? CL_OUT_OF_RESOURCES : CL_SUCCESS;
}

static cl_int vkcl_chunk_wait(const vkcl_chunks_t *t, uint64_t value)
{
    vkcl_fastq_t *fq = t->fq;
    return vkcl_wait_timeline(fq->fn[VKCL_FN_COUNTER], fq->fn[VKCL_FN_WAIT], fq->device, fq->timeline, value,
                              UINT64_MAX, fq->spin_ns) == 0 ? CL_SUCCESS : CL_OUT_OF_RESOURCES;
}

/* A transfer larger than half the staging memory, on a queue with nothing pending, done before
 * it returns: in
 * chunks of half of it, each its own submission, so that the host copies one half while the GPU
 * copies the other (a 256 MiB read: the GPU's copy and the host's overlap, where one after the
 * other took their sum). The open batch is begun and empty again when it returns. */
static cl_int vkcl_fast_chunked(vkcl_fastq_t *fq, vkcl_fastm_t *fm, size_t offset, size_t size, void *ptr,
                                int reading, int query, uint64_t *submitted_ns)
{
    uint64_t half = fq->staging_size / 2;
    vkcl_chunks_t t = {fq, fm, fm->offset + offset, size, half, (size + half - 1) / half, reading,
                       {fq->cb, fq->cb2}, {1, 0}, {0, 0}, submitted_ns};
    uint8_t *host = ptr;
    cl_int ret = CL_SUCCESS;
    if (reading) {  /* two chunks in flight; the half the host has copied out takes the next but one */
        for (uint64_t c = 0; c < t.n && c < 2 && ret == CL_SUCCESS; c++)
            ret = vkcl_chunk_submit(&t, c, query);
        for (uint64_t c = 0; c < t.n && ret == CL_SUCCESS; c++) {
            if ((ret = vkcl_chunk_wait(&t, t.value[c & 1])) != CL_SUCCESS)
                break;
            vkcl_host_copy(host + c * half, vkcl_chunk_staging(&t, c), vkcl_chunk_len(&t, c), fq->copy_threads);
            if (c + 2 < t.n)
                ret = vkcl_chunk_submit(&t, c + 2, query);
        }
    } else {  /* the host fills a half once the chunk before the last has left it */
        for (uint64_t c = 0; c < t.n && ret == CL_SUCCESS; c++) {
            if (c >= 2 && (ret = vkcl_chunk_wait(&t, t.value[c & 1])) != CL_SUCCESS)
                break;
            vkcl_host_copy(vkcl_chunk_staging(&t, c), host + c * half, vkcl_chunk_len(&t, c), fq->copy_threads);
            ret = vkcl_chunk_submit(&t, c, query);
        }
    }
    /* whatever was submitted completes before the staging memory and the buffer move on */
    uint64_t last = t.value[0] > t.value[1] ? t.value[0] : t.value[1];
    if (last && vkcl_chunk_wait(&t, last) != CL_SUCCESS)
        ret = CL_OUT_OF_RESOURCES;
    if (!t.begun[0] && ((vkcl_PFN_BeginCommandBuffer)fq->fn[VKCL_FN_BEGIN])(fq->cb, &vkcl_begin_info) < 0)
        ret = CL_OUT_OF_RESOURCES;
    fq->barrier = fq->host_barrier = 0;
    if (ret != CL_SUCCESS) {  /* as after a failed fast clFinish: Python must not reuse the batch */
        fq->enabled = 0;
        fq->cb = NULL;
    }
    return ret;
}
