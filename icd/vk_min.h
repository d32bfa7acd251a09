/* The few Vulkan types, entry-point signatures and constants vkcl's C code uses, so that the
 * ICD builds without Vulkan headers. Values are Vulkan 1.3's. */
#ifndef VKCL_VK_MIN_H
#define VKCL_VK_MIN_H
#include <stddef.h>
#include <stdint.h>

typedef int32_t vkcl_VkResult;
typedef struct { uint32_t sType; const void *pNext; uint32_t srcAccessMask, dstAccessMask; } vkcl_VkMemoryBarrier;
typedef struct { uint32_t sType; const void *pNext; uint32_t flags; const void *pInheritanceInfo; } vkcl_VkBeginInfo;
typedef struct {
    uint32_t sType; const void *pNext;
    uint32_t waitSemaphoreValueCount; const uint64_t *pWaitSemaphoreValues;
    uint32_t signalSemaphoreValueCount; const uint64_t *pSignalSemaphoreValues;
} vkcl_VkTimelineSubmitInfo;
typedef struct {
    uint32_t sType; const void *pNext;
    uint32_t waitSemaphoreCount; const void *const *pWaitSemaphores; const uint32_t *pWaitDstStageMask;
    uint32_t commandBufferCount; const void *const *pCommandBuffers;
    uint32_t signalSemaphoreCount; const void *const *pSignalSemaphores;
} vkcl_VkSubmitInfo;
typedef struct {
    uint32_t sType; const void *pNext; uint32_t flags;
    uint32_t semaphoreCount; const void *const *pSemaphores; const uint64_t *pValues;
} vkcl_VkSemaphoreWaitInfo;

typedef void (*vkcl_PFN_CmdPipelineBarrier)(void *, uint32_t, uint32_t, uint32_t, uint32_t, const void *, uint32_t,
                                            const void *, uint32_t, const void *);
typedef void (*vkcl_PFN_CmdBindPipeline)(void *, uint32_t, void *);
typedef void (*vkcl_PFN_CmdPushConstants)(void *, void *, uint32_t, uint32_t, uint32_t, const void *);
typedef void (*vkcl_PFN_CmdDispatchBase)(void *, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t, uint32_t);
typedef vkcl_VkResult (*vkcl_PFN_EndCommandBuffer)(void *);
typedef vkcl_VkResult (*vkcl_PFN_BeginCommandBuffer)(void *, const vkcl_VkBeginInfo *);
typedef vkcl_VkResult (*vkcl_PFN_QueueSubmit)(void *, uint32_t, const vkcl_VkSubmitInfo *, void *);
typedef vkcl_VkResult (*vkcl_PFN_GetSemaphoreCounterValue)(void *, void *, uint64_t *);
typedef vkcl_VkResult (*vkcl_PFN_WaitSemaphores)(void *, const vkcl_VkSemaphoreWaitInfo *, uint64_t);

#define VKCL_ST_MEMORY_BARRIER 46
#define VKCL_ST_BEGIN_INFO 42
#define VKCL_ST_SUBMIT_INFO 4
#define VKCL_ST_TIMELINE_SUBMIT_INFO 1000207003
#define VKCL_ST_SEMAPHORE_WAIT_INFO 1000207004
#define VKCL_ALL_COMMANDS 0x10000u
#define VKCL_HOST_STAGE 0x4000u
#define VKCL_MEMORY_RW (0x8000u | 0x10000u)
#define VKCL_HOST_RW (0x2000u | 0x4000u)
#define VKCL_ONE_TIME_SUBMIT 1u
#define VKCL_COMPUTE_STAGE 0x20u
#define VKCL_BIND_COMPUTE 1u
#define VKCL_TOP_OF_PIPE 0x1u
#define VKCL_BOTTOM_OF_PIPE 0x2000u

typedef void (*vkcl_PFN_CmdUpdateBuffer)(void *, void *, uint64_t, uint64_t, const void *);
typedef struct { uint64_t srcOffset, dstOffset, size; } vkcl_VkBufferCopy;
typedef void (*vkcl_PFN_CmdCopyBuffer)(void *, void *, void *, uint32_t, const vkcl_VkBufferCopy *);
typedef void (*vkcl_PFN_CmdResetQueryPool)(void *, void *, uint32_t, uint32_t);
typedef void (*vkcl_PFN_ResetQueryPool)(void *, void *, uint32_t, uint32_t);
typedef void (*vkcl_PFN_CmdWriteTimestamp)(void *, uint32_t, void *, uint32_t);
typedef vkcl_VkResult (*vkcl_PFN_GetQueryPoolResults)(void *, void *, uint32_t, uint32_t, size_t, void *, uint64_t,
                                                      uint32_t);
typedef struct {
    int32_t sType;
    const void *pNext;
    int32_t timeDomain;
} vkcl_VkCalibratedTimestampInfo;
typedef vkcl_VkResult (*vkcl_PFN_GetCalibratedTimestamps)(void *, uint32_t, const vkcl_VkCalibratedTimestampInfo *,
                                                          uint64_t *, uint64_t *);
#define VKCL_ST_CALIBRATED_TIMESTAMP_INFO 1000184000
#define VKCL_TIME_DOMAIN_DEVICE 0
#define VKCL_TIME_DOMAIN_CLOCK_MONOTONIC 1
#define VKCL_QUERY_RESULT_64 1u
#define VKCL_QUERY_RESULT_WAIT 2u
#define VKCL_NOT_READY 1

#endif
