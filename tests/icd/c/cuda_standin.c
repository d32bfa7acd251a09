/* A stand-in for libcuda (tests/icd/test_cuda_copies.py): the calls vkcl's CUDA copies make
 * (vkcl/vulkan/cuda.py, icd/cuda_copy.c), done by the host. Lavapipe's exported memory is a file:
 * importing it maps the file, and the address of the memory's first byte there is its "device
 * address", so a copy is a memcpy whose bytes Vulkan then sees, as a real copy's. An opaque fd's
 * layout is its driver's: lavapipe's memory starts one page into the file (Mesa's
 * os_malloc_aligned_fd keeps a header before it), as CUDA knows NVIDIA's. One device, whose UUID is
 * $CUDA_STANDIN_UUID (32 hex digits); $CUDA_STANDIN_FAIL names a call that fails. Calls that
 * need a context check that one is current, as libcuda's do. standin_counts() says what ran. */
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

enum { OK = 0, INVALID_VALUE = 1, NOT_FOUND = 500, INVALID_CONTEXT = 201, UNKNOWN = 999 };

typedef struct {
    int type, pad, fd, rest[3];
    uint64_t size;
    unsigned flags, reserved[16];
} mem_desc;
typedef struct {
    uint64_t offset, size;
    unsigned flags, reserved[16];
} buf_desc;
typedef struct {
    void *addr;
    uint64_t size;
} ext_mem;

static int registered, imported, copies, context;
static __thread int depth;

static int fails(const char *call)
{
    const char *f = getenv("CUDA_STANDIN_FAIL");
    return f && strcmp(f, call) == 0;
}

#define NEEDS_CONTEXT(call)               \
    do {                                  \
        if (depth == 0)                   \
            return INVALID_CONTEXT;       \
        if (fails(call))                  \
            return UNKNOWN;               \
    } while (0)

int cuInit(unsigned flags) { return fails("cuInit") ? UNKNOWN : flags ? INVALID_VALUE : OK; }
int cuDeviceGetCount(int *n) { *n = 1; return OK; }
int cuDeviceGet(int *dev, int ordinal) { *dev = ordinal; return ordinal == 0 ? OK : INVALID_VALUE; }

int cuDeviceGetUuid(unsigned char *uuid, int dev)
{
    const char *hex = getenv("CUDA_STANDIN_UUID");
    if (dev != 0 || !hex || strlen(hex) != 32)
        return NOT_FOUND;
    for (int i = 0; i < 16; i++)
        if (sscanf(hex + 2 * i, "%2hhx", &uuid[i]) != 1)
            return INVALID_VALUE;
    return OK;
}

int cuDevicePrimaryCtxRetain(void **ctx, int dev)
{
    *ctx = &context;
    return dev == 0 ? OK : INVALID_VALUE;
}

int cuCtxPushCurrent_v2(void *ctx) { return ctx == &context ? (depth++, OK) : INVALID_CONTEXT; }

int cuCtxPopCurrent_v2(void **ctx)
{
    if (depth == 0)
        return INVALID_CONTEXT;
    depth--;
    *ctx = &context;
    return OK;
}

int cuStreamCreate(void **stream, unsigned flags)
{
    static int streams[2], n;
    NEEDS_CONTEXT("cuStreamCreate");
    *stream = &streams[n++ & 1];
    return flags == 1 ? OK : INVALID_VALUE;  /* vkcl's streams never wait for the legacy stream */
}

int cuStreamSynchronize(void *stream)
{
    NEEDS_CONTEXT("cuStreamSynchronize");
    return stream ? OK : INVALID_VALUE;
}

int cuMemHostRegister_v2(void *p, size_t n, unsigned flags)
{
    NEEDS_CONTEXT("cuMemHostRegister_v2");
    registered++;
    return p && n && !flags ? OK : INVALID_VALUE;
}

int cuMemHostUnregister(void *p)
{
    NEEDS_CONTEXT("cuMemHostUnregister");
    registered--;
    return p ? OK : INVALID_VALUE;
}

int cuImportExternalMemory(void **ext, const mem_desc *d)
{
    NEEDS_CONTEXT("cuImportExternalMemory");
    if (d->type != 1)  /* an opaque fd */
        return INVALID_VALUE;
    uint64_t header = (uint64_t)sysconf(_SC_PAGESIZE);
    char *file = mmap(NULL, header + d->size, PROT_READ | PROT_WRITE, MAP_SHARED, d->fd, 0);
    if (file == MAP_FAILED)
        return INVALID_VALUE;
    ext_mem *e = malloc(sizeof *e);
    e->addr = file + header;
    e->size = d->size;
    close(d->fd);  /* the fd is CUDA's once imported */
    *ext = e;
    imported++;
    return OK;
}

int cuExternalMemoryGetMappedBuffer(uint64_t *dptr, void *ext, const buf_desc *b)
{
    NEEDS_CONTEXT("cuExternalMemoryGetMappedBuffer");
    ext_mem *e = ext;
    if (b->offset + b->size > e->size)
        return INVALID_VALUE;
    *dptr = (uint64_t)(uintptr_t)e->addr + b->offset;
    return OK;
}

int cuMemFree_v2(uint64_t dptr)
{
    NEEDS_CONTEXT("cuMemFree_v2");
    return dptr ? OK : INVALID_VALUE;
}

int cuDestroyExternalMemory(void *ext)
{
    NEEDS_CONTEXT("cuDestroyExternalMemory");
    ext_mem *e = ext;
    uint64_t header = (uint64_t)sysconf(_SC_PAGESIZE);
    munmap((char *)e->addr - header, header + e->size);
    free(e);
    imported--;
    return OK;
}

int cuMemcpyHtoDAsync_v2(uint64_t dst, const void *src, size_t n, void *stream)
{
    NEEDS_CONTEXT("cuMemcpyHtoDAsync_v2");
    memcpy((void *)(uintptr_t)dst, src, n);
    copies++;
    return stream ? OK : INVALID_VALUE;
}

int cuMemcpyDtoHAsync_v2(void *dst, uint64_t src, size_t n, void *stream)
{
    NEEDS_CONTEXT("cuMemcpyDtoHAsync_v2");
    memcpy(dst, (const void *)(uintptr_t)src, n);
    copies++;
    return stream ? OK : INVALID_VALUE;
}

/* Host blocks registered, device blocks imported, copies made. */
void standin_counts(int *out)
{
    out[0] = registered;
    out[1] = imported;
    out[2] = copies;
}

/* With $CUDA_STANDIN_REPORT set, the counts on stderr at exit (runs of other programs, the CTS). */
__attribute__((destructor)) static void standin_report(void)
{
    if (getenv("CUDA_STANDIN_REPORT"))
        fprintf(stderr, "cuda stand-in: %d host blocks registered, %d imported, %d copies\n", registered, imported,
                copies);
}
