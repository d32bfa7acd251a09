/* Every OpenCL 3.0 platform and device query, through the ICD loader, with the spec's
 * rules for param_value / param_value_size / param_value_size_ret and its error codes. */
#include "harness.h"

static const cl_platform_info platform_params[] = {
    CL_PLATFORM_PROFILE, CL_PLATFORM_VERSION, CL_PLATFORM_NUMERIC_VERSION, CL_PLATFORM_NAME,
    CL_PLATFORM_VENDOR, CL_PLATFORM_EXTENSIONS, CL_PLATFORM_EXTENSIONS_WITH_VERSION,
    CL_PLATFORM_HOST_TIMER_RESOLUTION, CL_PLATFORM_ICD_SUFFIX_KHR,
};

/* Params whose answer may be empty (size 0) on a root device without the feature. */
/* Arrays that are empty where the device has none: CL_DEVICE_ILS_WITH_VERSION where no IL is
   accepted (vkcl claims SPIR-V only where it finds its translator; checked against
   CL_DEVICE_IL_VERSION below). */
static int may_be_empty(cl_device_info p)
{
    return p == CL_DEVICE_PARTITION_TYPE || p == CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION ||
           p == CL_DEVICE_OPENCL_C_FEATURES || p == CL_DEVICE_ILS_WITH_VERSION;
}

static const cl_device_info device_params[] = {
    CL_DEVICE_TYPE, CL_DEVICE_VENDOR_ID, CL_DEVICE_MAX_COMPUTE_UNITS, CL_DEVICE_MAX_WORK_ITEM_DIMENSIONS,
    CL_DEVICE_MAX_WORK_GROUP_SIZE, CL_DEVICE_MAX_WORK_ITEM_SIZES, CL_DEVICE_PREFERRED_VECTOR_WIDTH_CHAR,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_SHORT, CL_DEVICE_PREFERRED_VECTOR_WIDTH_INT,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_LONG, CL_DEVICE_PREFERRED_VECTOR_WIDTH_FLOAT,
    CL_DEVICE_PREFERRED_VECTOR_WIDTH_DOUBLE, CL_DEVICE_PREFERRED_VECTOR_WIDTH_HALF,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_CHAR, CL_DEVICE_NATIVE_VECTOR_WIDTH_SHORT, CL_DEVICE_NATIVE_VECTOR_WIDTH_INT,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_LONG, CL_DEVICE_NATIVE_VECTOR_WIDTH_FLOAT,
    CL_DEVICE_NATIVE_VECTOR_WIDTH_DOUBLE, CL_DEVICE_NATIVE_VECTOR_WIDTH_HALF, CL_DEVICE_MAX_CLOCK_FREQUENCY,
    CL_DEVICE_ADDRESS_BITS, CL_DEVICE_MAX_MEM_ALLOC_SIZE, CL_DEVICE_IMAGE_SUPPORT,
    CL_DEVICE_MAX_READ_IMAGE_ARGS, CL_DEVICE_MAX_WRITE_IMAGE_ARGS, CL_DEVICE_MAX_READ_WRITE_IMAGE_ARGS,
    CL_DEVICE_IL_VERSION, CL_DEVICE_ILS_WITH_VERSION, CL_DEVICE_IMAGE2D_MAX_WIDTH, CL_DEVICE_IMAGE2D_MAX_HEIGHT,
    CL_DEVICE_IMAGE3D_MAX_WIDTH, CL_DEVICE_IMAGE3D_MAX_HEIGHT, CL_DEVICE_IMAGE3D_MAX_DEPTH,
    CL_DEVICE_IMAGE_MAX_BUFFER_SIZE, CL_DEVICE_IMAGE_MAX_ARRAY_SIZE, CL_DEVICE_MAX_SAMPLERS,
    CL_DEVICE_IMAGE_PITCH_ALIGNMENT, CL_DEVICE_IMAGE_BASE_ADDRESS_ALIGNMENT, CL_DEVICE_MAX_PIPE_ARGS,
    CL_DEVICE_PIPE_MAX_ACTIVE_RESERVATIONS, CL_DEVICE_PIPE_MAX_PACKET_SIZE, CL_DEVICE_MAX_PARAMETER_SIZE,
    CL_DEVICE_MEM_BASE_ADDR_ALIGN, CL_DEVICE_MIN_DATA_TYPE_ALIGN_SIZE, CL_DEVICE_SINGLE_FP_CONFIG,
    CL_DEVICE_DOUBLE_FP_CONFIG, CL_DEVICE_GLOBAL_MEM_CACHE_TYPE, CL_DEVICE_GLOBAL_MEM_CACHELINE_SIZE,
    CL_DEVICE_GLOBAL_MEM_CACHE_SIZE, CL_DEVICE_GLOBAL_MEM_SIZE, CL_DEVICE_MAX_CONSTANT_BUFFER_SIZE,
    CL_DEVICE_MAX_CONSTANT_ARGS, CL_DEVICE_MAX_GLOBAL_VARIABLE_SIZE,
    CL_DEVICE_GLOBAL_VARIABLE_PREFERRED_TOTAL_SIZE, CL_DEVICE_LOCAL_MEM_TYPE, CL_DEVICE_LOCAL_MEM_SIZE,
    CL_DEVICE_ERROR_CORRECTION_SUPPORT, CL_DEVICE_HOST_UNIFIED_MEMORY, CL_DEVICE_PROFILING_TIMER_RESOLUTION,
    CL_DEVICE_ENDIAN_LITTLE, CL_DEVICE_AVAILABLE, CL_DEVICE_COMPILER_AVAILABLE, CL_DEVICE_LINKER_AVAILABLE,
    CL_DEVICE_EXECUTION_CAPABILITIES, CL_DEVICE_QUEUE_PROPERTIES, CL_DEVICE_QUEUE_ON_HOST_PROPERTIES,
    CL_DEVICE_QUEUE_ON_DEVICE_PROPERTIES, CL_DEVICE_QUEUE_ON_DEVICE_PREFERRED_SIZE,
    CL_DEVICE_QUEUE_ON_DEVICE_MAX_SIZE, CL_DEVICE_MAX_ON_DEVICE_QUEUES, CL_DEVICE_MAX_ON_DEVICE_EVENTS,
    CL_DEVICE_BUILT_IN_KERNELS, CL_DEVICE_BUILT_IN_KERNELS_WITH_VERSION, CL_DEVICE_PLATFORM, CL_DEVICE_NAME,
    CL_DEVICE_VENDOR, CL_DRIVER_VERSION, CL_DEVICE_PROFILE, CL_DEVICE_VERSION, CL_DEVICE_NUMERIC_VERSION,
    CL_DEVICE_OPENCL_C_VERSION, CL_DEVICE_OPENCL_C_ALL_VERSIONS, CL_DEVICE_OPENCL_C_FEATURES,
    CL_DEVICE_EXTENSIONS, CL_DEVICE_EXTENSIONS_WITH_VERSION, CL_DEVICE_PRINTF_BUFFER_SIZE,
    CL_DEVICE_PREFERRED_INTEROP_USER_SYNC, CL_DEVICE_PARENT_DEVICE, CL_DEVICE_PARTITION_MAX_SUB_DEVICES,
    CL_DEVICE_PARTITION_PROPERTIES, CL_DEVICE_PARTITION_AFFINITY_DOMAIN, CL_DEVICE_PARTITION_TYPE,
    CL_DEVICE_REFERENCE_COUNT, CL_DEVICE_SVM_CAPABILITIES, CL_DEVICE_PREFERRED_PLATFORM_ATOMIC_ALIGNMENT,
    CL_DEVICE_PREFERRED_GLOBAL_ATOMIC_ALIGNMENT, CL_DEVICE_PREFERRED_LOCAL_ATOMIC_ALIGNMENT,
    CL_DEVICE_MAX_NUM_SUB_GROUPS, CL_DEVICE_SUB_GROUP_INDEPENDENT_FORWARD_PROGRESS,
    CL_DEVICE_ATOMIC_MEMORY_CAPABILITIES, CL_DEVICE_ATOMIC_FENCE_CAPABILITIES,
    CL_DEVICE_NON_UNIFORM_WORK_GROUP_SUPPORT, CL_DEVICE_WORK_GROUP_COLLECTIVE_FUNCTIONS_SUPPORT,
    CL_DEVICE_GENERIC_ADDRESS_SPACE_SUPPORT, CL_DEVICE_DEVICE_ENQUEUE_CAPABILITIES, CL_DEVICE_PIPE_SUPPORT,
    CL_DEVICE_PREFERRED_WORK_GROUP_SIZE_MULTIPLE, CL_DEVICE_LATEST_CONFORMANCE_VERSION_PASSED,
    CL_DEVICE_UUID_KHR, CL_DRIVER_UUID_KHR, CL_DEVICE_LUID_VALID_KHR, CL_DEVICE_LUID_KHR,
    CL_DEVICE_NODE_MASK_KHR, CL_DEVICE_HALF_FP_CONFIG, CL_DEVICE_OPENCL_C_NUMERIC_VERSION_KHR,
};

#define N(a) (sizeof(a) / sizeof((a)[0]))

static void check_query_rules(const char *what, unsigned param, size_t size, cl_int (*query)(unsigned, size_t, void *, size_t *))
{
    unsigned char buf[8192];
    size_t got = 0;
    EXPECT(size <= sizeof buf, "%s %#x: size %zu", what, param, size);
    /* the exact size works and reports the same size */
    EXPECT_ERR(query(param, size, size ? buf : NULL, &got), CL_SUCCESS);
    EXPECT(got == size, "%s %#x: size_ret %zu then %zu", what, param, size, got);
    /* both outputs NULL: nothing to do, and not an error */
    EXPECT_ERR(query(param, 0, NULL, NULL), CL_SUCCESS);
    /* too small a buffer is CL_INVALID_VALUE */
    if (size > 0)
        EXPECT_ERR(query(param, size - 1, buf, NULL), CL_INVALID_VALUE);
}

static cl_platform_id g_platform;
static cl_device_id g_device;

static cl_int platform_query(unsigned p, size_t s, void *v, size_t *r) { return clGetPlatformInfo(g_platform, p, s, v, r); }
static cl_int device_query(unsigned p, size_t s, void *v, size_t *r) { return clGetDeviceInfo(g_device, p, s, v, r); }

int main(void)
{
    g_platform = vkcl_platform();
    g_device = vkcl_device(g_platform);

    /* clGetPlatformIDs argument errors */
    cl_platform_id p;
    cl_uint n;
    size_t sz;
    EXPECT_ERR(clGetPlatformIDs(0, &p, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetPlatformIDs(0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_OK(clGetPlatformIDs(0, NULL, &n));
    EXPECT(n >= 1, "%u platforms", n);

    for (size_t i = 0; i < N(platform_params); i++) {
        size_t size = 0;
        EXPECT_OK(clGetPlatformInfo(g_platform, platform_params[i], 0, NULL, &size));
        EXPECT(size > 0, "platform param %#x has size 0", platform_params[i]);
        check_query_rules("platform", platform_params[i], size, platform_query);
    }
    EXPECT_ERR(clGetPlatformInfo(g_platform, 0xdead, 0, NULL, &sz), CL_INVALID_VALUE);

    char text[4096];
    EXPECT_OK(clGetPlatformInfo(g_platform, CL_PLATFORM_EXTENSIONS, sizeof text, text, NULL));
    EXPECT(strstr(text, "cl_khr_icd") != NULL, "platform extensions: %s", text);
    EXPECT_OK(clGetPlatformInfo(g_platform, CL_PLATFORM_VERSION, sizeof text, text, NULL));
    EXPECT(strncmp(text, "OpenCL 3.0 ", 11) == 0, "platform version %s", text);
    EXPECT_OK(clGetPlatformInfo(g_platform, CL_PLATFORM_ICD_SUFFIX_KHR, sizeof text, text, NULL));
    EXPECT(strcmp(text, "vkcl") == 0, "suffix %s", text);
    cl_version numeric;
    EXPECT_OK(clGetPlatformInfo(g_platform, CL_PLATFORM_NUMERIC_VERSION, sizeof numeric, &numeric, NULL));
    EXPECT(numeric == CL_MAKE_VERSION(3, 0, 0), "numeric version %#x", numeric);

    /* every device param */
    for (size_t i = 0; i < N(device_params); i++) {
        size_t size = 0;
        EXPECT_OK(clGetDeviceInfo(g_device, device_params[i], 0, NULL, &size));
        EXPECT(size > 0 || may_be_empty(device_params[i]), "device param %#x has size 0", device_params[i]);
        check_query_rules("device", device_params[i], size, device_query);
    }
    EXPECT_ERR(clGetDeviceInfo(g_device, 0xdead, 0, NULL, &sz), CL_INVALID_VALUE);

    /* values that must be consistent */
    cl_platform_id dev_platform;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_PLATFORM, sizeof dev_platform, &dev_platform, NULL));
    EXPECT(dev_platform == g_platform, "CL_DEVICE_PLATFORM");
    cl_device_type type;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_TYPE, sizeof type, &type, NULL));
    char dev_name[256];
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_NAME, sizeof dev_name, dev_name, NULL));
    /* lavapipe is a CPU device; anything else vkcl runs on here is a GPU */
    cl_device_type expected = strstr(dev_name, "llvmpipe") ? CL_DEVICE_TYPE_CPU : CL_DEVICE_TYPE_GPU;
    EXPECT(type == expected, "%s: type %#llx", dev_name, (unsigned long long)type);
    /* the ILs a device takes: none in both queries, or the same ones */
    char il_version[256];
    size_t ils_size;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_IL_VERSION, sizeof il_version, il_version, NULL));
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_ILS_WITH_VERSION, 0, NULL, &ils_size));
    EXPECT((il_version[0] == 0) == (ils_size == 0), "CL_DEVICE_IL_VERSION '%s' but %zu bytes of ILs",
           il_version, ils_size);
    {
        /* what the IL entry points answer follows that: CL_INVALID_OPERATION where no device
           takes IL (the CTS's api/consistency_il_programs), CL_INVALID_PROGRAM for a source
           program's specialisation constant where one does */
        cl_int err;
        cl_context ctx = clCreateContext(NULL, 1, &g_device, NULL, NULL, &err);
        EXPECT_OK(err);
        const char *src = "kernel void k(global int *p) { p[0] = 1; }";
        cl_program prog = clCreateProgramWithSource(ctx, 1, &src, NULL, &err);
        EXPECT_OK(err);
        cl_uint bogus = 0xDEADBEEF, spec = 42;
        cl_program il_prog = clCreateProgramWithIL(ctx, &bogus, sizeof bogus, &err);
        EXPECT(il_prog == NULL, "an IL program from 4 bogus bytes");
        EXPECT(err == (il_version[0] ? CL_INVALID_VALUE : CL_INVALID_OPERATION), "clCreateProgramWithIL: %d", err);
        EXPECT_ERR(clSetProgramSpecializationConstant(prog, 0, sizeof spec, &spec),
                   il_version[0] ? CL_INVALID_PROGRAM : CL_INVALID_OPERATION);
        size_t il_size = 1;
        EXPECT_OK(clGetProgramInfo(prog, CL_PROGRAM_IL, 0, NULL, &il_size));
        EXPECT(il_size == 0, "CL_PROGRAM_IL of a source program: %zu bytes", il_size);
        clReleaseProgram(prog);
        clReleaseContext(ctx);
    }
    size_t sizes[3], wg;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_MAX_WORK_ITEM_SIZES, sizeof sizes, sizes, NULL));
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_MAX_WORK_GROUP_SIZE, sizeof wg, &wg, NULL));
    EXPECT(wg >= 1 && sizes[0] >= 1 && sizes[0] <= wg, "work-group sizes");
    cl_ulong global, alloc;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_GLOBAL_MEM_SIZE, sizeof global, &global, NULL));
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof alloc, &alloc, NULL));
    /* spec minimum: max(min(1 GiB, global / 4), 32 MiB) */
    cl_ulong quarter = global / 4, min_alloc = quarter < (1u << 30) ? quarter : (1u << 30);
    min_alloc = min_alloc > (32u << 20) ? min_alloc : (32u << 20);
    EXPECT(alloc <= global && alloc >= min_alloc, "alloc %llu of %llu", (unsigned long long)alloc,
           (unsigned long long)global);
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_VERSION, sizeof text, text, NULL));
    EXPECT(strncmp(text, "OpenCL 3.0 ", 11) == 0, "device version %s", text);
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_OPENCL_C_VERSION, sizeof text, text, NULL));
    EXPECT(strncmp(text, "OpenCL C 1.2 ", 13) == 0, "OpenCL C version %s", text);
    cl_bool images;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_IMAGE_SUPPORT, sizeof images, &images, NULL));
    EXPECT(images == CL_FALSE, "no images yet");
    size_t partition_type_size = 1;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_PARTITION_TYPE, 0, NULL, &partition_type_size));
    EXPECT(partition_type_size == 0, "root device partition type size %zu", partition_type_size);

    /* clGetDeviceIDs: filters and errors */
    cl_device_id d;
    EXPECT_ERR(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ALL, 0, &d, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ALL, 1, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetDeviceIDs(g_platform, (cl_device_type)1 << 40, 1, &d, NULL), CL_INVALID_DEVICE_TYPE);
    EXPECT_OK(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_DEFAULT, 1, &d, &n));
    EXPECT(n == 1 && d == g_device, "default device");
    EXPECT_OK(clGetDeviceIDs(g_platform, type, 1, &d, &n));
    EXPECT(n >= 1, "own type");
    EXPECT_ERR(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_CUSTOM, 1, &d, &n), CL_DEVICE_NOT_FOUND);
    EXPECT_ERR(clGetDeviceIDs(g_platform, CL_DEVICE_TYPE_ACCELERATOR, 1, &d, &n), CL_DEVICE_NOT_FOUND);
    /* a device handle where a platform is expected: the loader dispatches it to us */
    EXPECT_ERR(clGetPlatformInfo((cl_platform_id)g_device, CL_PLATFORM_NAME, 0, NULL, &sz), CL_INVALID_PLATFORM);
    EXPECT_ERR(clGetDeviceInfo((cl_device_id)g_platform, CL_DEVICE_NAME, 0, NULL, &sz), CL_INVALID_DEVICE);

    /* root devices: retain/release succeed and change nothing; no partitioning */
    EXPECT_OK(clRetainDevice(g_device));
    EXPECT_OK(clReleaseDevice(g_device));
    cl_uint refs;
    EXPECT_OK(clGetDeviceInfo(g_device, CL_DEVICE_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 1, "root device refcount %u", refs);
    cl_device_partition_property equally[] = {CL_DEVICE_PARTITION_EQUALLY, 1, 0};
    cl_device_id sub[4];
    EXPECT_ERR(clCreateSubDevices(g_device, equally, 4, sub, &n), CL_INVALID_VALUE);
    EXPECT_ERR(clCreateSubDevices(g_device, NULL, 4, sub, &n), CL_INVALID_VALUE);

    /* host timer */
    cl_ulong t0 = 0, t1 = 0;
    EXPECT_OK(clGetHostTimer(g_device, &t0));
    EXPECT_OK(clGetHostTimer(g_device, &t1));
    EXPECT(t1 >= t0 && t0 > 0, "host timer %llu %llu", (unsigned long long)t0, (unsigned long long)t1);
    EXPECT_ERR(clGetHostTimer(g_device, NULL), CL_INVALID_VALUE);

    return harness_result();
}
