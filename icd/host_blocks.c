/* vkcl's own host-visible memory, registered by Python (vkcl/vulkan/memory.py): the blocks C's
 * transfers may copy from and to directly (icd/fast_path.c). Part of vkcl_icd.c's unit. */
#include <pthread.h>
#include <stdint.h>

/* A transfer whose host side lies in one of these blocks (a mapped CL_MEM_ALLOC_HOST_PTR buffer,
 * applications' idiom for pinned memory) is one GPU copy from or to it, with no host copy. */
#define VKCL_HOST_BLOCKS 256
static struct {
    uintptr_t lo, hi;
    void *device, *buffer;
    int cuda;  /* registered with CUDA too (icd/cuda_copy.c) */
} vkcl_host_blocks[VKCL_HOST_BLOCKS];
static pthread_mutex_t vkcl_host_blocks_lock = PTHREAD_MUTEX_INITIALIZER;

/* Returns 0 when the table is full (transfers from the block then go through staging). */
int vkcl_host_block_add(void *device, void *buffer, void *host, uint64_t size)
{
    int ok = 0;
    pthread_mutex_lock(&vkcl_host_blocks_lock);
    for (int i = 0; i < VKCL_HOST_BLOCKS && !ok; i++)
        if (!vkcl_host_blocks[i].lo) {
            vkcl_host_blocks[i].lo = (uintptr_t)host;
            vkcl_host_blocks[i].hi = (uintptr_t)host + size;
            vkcl_host_blocks[i].device = device;
            vkcl_host_blocks[i].buffer = buffer;
            vkcl_host_blocks[i].cuda = 0;
            ok = 1;
        }
    pthread_mutex_unlock(&vkcl_host_blocks_lock);
    return ok;
}

void vkcl_host_block_remove(void *host)
{
    pthread_mutex_lock(&vkcl_host_blocks_lock);
    for (int i = 0; i < VKCL_HOST_BLOCKS; i++)
        if (vkcl_host_blocks[i].lo == (uintptr_t)host)
            vkcl_host_blocks[i].lo = vkcl_host_blocks[i].hi = 0;
    pthread_mutex_unlock(&vkcl_host_blocks_lock);
}

/* The block at `host` is registered with CUDA (`on`), or no longer. */
void vkcl_host_block_cuda(void *host, int on)
{
    pthread_mutex_lock(&vkcl_host_blocks_lock);
    for (int i = 0; i < VKCL_HOST_BLOCKS; i++)
        if (vkcl_host_blocks[i].lo == (uintptr_t)host)
            vkcl_host_blocks[i].cuda = on;
    pthread_mutex_unlock(&vkcl_host_blocks_lock);
}

/* The VkBuffer of the block of `device` holding [ptr, ptr + size), the offset of ptr in it, and
 * whether CUDA may copy from and to it. */
static void *vkcl_host_block_find(void *device, const void *ptr, size_t size, uint64_t *offset, int *cuda)
{
    void *found = NULL;
    uintptr_t lo = (uintptr_t)ptr;
    pthread_mutex_lock(&vkcl_host_blocks_lock);
    for (int i = 0; i < VKCL_HOST_BLOCKS && !found; i++)
        if (vkcl_host_blocks[i].lo && vkcl_host_blocks[i].device == device && vkcl_host_blocks[i].lo <= lo &&
            size <= vkcl_host_blocks[i].hi - lo && lo < vkcl_host_blocks[i].hi) {
            found = vkcl_host_blocks[i].buffer;
            *offset = lo - vkcl_host_blocks[i].lo;
            *cuda = vkcl_host_blocks[i].cuda;
        }
    pthread_mutex_unlock(&vkcl_host_blocks_lock);
    return found;
}
