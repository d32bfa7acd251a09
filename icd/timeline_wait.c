/* Waiting on the host for a timeline semaphore to reach a value: clFinish, clWaitForEvents and
 * every blocking command end here (C's fast clFinish directly, Python's waits through
 * vkcl/vulkan/commands.py; cffi releases the GIL around the call).
 *
 * vkWaitSemaphores sleeps, and on NVIDIA its wake-up costs about 40 us after the GPU signals:
 * as much as a whole round trip, and 20% of a 200 us kernel. NVIDIA's own OpenCL spins instead.
 * So the wait polls the counter, first busily, then yielding the CPU between polls, for up to
 * `spin_ns`, and only then sleeps. Python picks spin_ns per device: long on a discrete GPU, short
 * where the CPU spinning would take time from the device itself (lavapipe, an integrated GPU).
 */
#include <sched.h>
#include <stdint.h>
#include <time.h>

#include "vk_min.h"

#define VKCL_BUSY_NS 50000  /* polled without yielding: a short kernel, a round trip */
#define VKCL_VK_TIMEOUT 2
#define VKCL_WAIT_SLICE_NS 1000000000ull

static uint64_t vkcl_now_ns(void)
{
    struct timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return (uint64_t)t.tv_sec * 1000000000ull + (uint64_t)t.tv_nsec;
}

/* VK_SUCCESS once `semaphore` reached `value`, VK_TIMEOUT after timeout_ns (UINT64_MAX: none),
 * or the driver's error. get/wait: vkGetSemaphoreCounterValue and vkWaitSemaphores. */
int32_t vkcl_wait_timeline(void *get, void *wait, void *device, void *semaphore, uint64_t value,
                           uint64_t timeout_ns, uint64_t spin_ns)
{
    uint64_t seen = 0, start = vkcl_now_ns(), elapsed = 0;
    for (;;) {
        vkcl_VkResult r = ((vkcl_PFN_GetSemaphoreCounterValue)get)(device, semaphore, &seen);
        if (r < 0)
            return r;
        if (seen >= value)
            return 0;
        elapsed = vkcl_now_ns() - start;
        if (elapsed >= timeout_ns)
            return VKCL_VK_TIMEOUT;
        if (elapsed >= spin_ns)
            break;
        if (elapsed >= VKCL_BUSY_NS)
            sched_yield();
    }
    vkcl_VkSemaphoreWaitInfo info = {VKCL_ST_SEMAPHORE_WAIT_INFO, NULL, 0, 1, (const void *const *)&semaphore,
                                     &value};
    if (timeout_ns != UINT64_MAX)
        return ((vkcl_PFN_WaitSemaphores)wait)(device, &info, timeout_ns - elapsed);
    /* No timeout: sleep a second at a time and read the counter in between, which is where a
     * driver reports a lost device (seen on NVIDIA: a wait without a timeout did not return
     * after a kernel's fault). */
    for (;;) {
        vkcl_VkResult r = ((vkcl_PFN_WaitSemaphores)wait)(device, &info, VKCL_WAIT_SLICE_NS);
        if (r != VKCL_VK_TIMEOUT)
            return r;
        r = ((vkcl_PFN_GetSemaphoreCounterValue)get)(device, semaphore, &seen);
        if (r < 0)
            return r;
        if (seen >= value)
            return 0;
    }
}
