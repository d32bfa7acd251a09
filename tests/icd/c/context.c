/* Contexts through the ICD loader: creation, properties, errors, callbacks, lifetime. */
#include "harness.h"

static int destructor_order[4];
static int destructor_calls;

static void CL_CALLBACK on_destroy(cl_context ctx, void *user_data)
{
    (void)ctx;
    if (destructor_calls < 4)
        destructor_order[destructor_calls] = (int)(size_t)user_data;
    destructor_calls++;
}

static void CL_CALLBACK on_error(const char *errinfo, const void *info, size_t cb, void *user_data)
{
    (void)errinfo; (void)info; (void)cb; (void)user_data;
}

int main(int argc, char **argv)
{
    int leak = argc > 1 && strcmp(argv[1], "leak") == 0;
    cl_platform_id platform = vkcl_platform();
    cl_device_id device = vkcl_device(platform);
    cl_int err;

    if (leak) {
        /* An application that never releases anything must still exit cleanly. */
        cl_context ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
        EXPECT(ctx != NULL && err == CL_SUCCESS, "err %d", err);
        return harness_result();
    }

    /* plain creation, info, retain/release */
    cl_context ctx = clCreateContext(NULL, 1, &device, on_error, NULL, &err);
    EXPECT(ctx != NULL && err == CL_SUCCESS, "clCreateContext err %d", err);
    cl_uint refs = 0, ndev = 0;
    EXPECT_OK(clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 1, "refcount %u", refs);
    EXPECT_OK(clRetainContext(ctx));
    EXPECT_OK(clGetContextInfo(ctx, CL_CONTEXT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 2, "refcount %u", refs);
    EXPECT_OK(clReleaseContext(ctx));
    EXPECT_OK(clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof ndev, &ndev, NULL));
    EXPECT(ndev == 1, "num devices %u", ndev);
    cl_device_id got_dev = NULL;
    EXPECT_OK(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, sizeof got_dev, &got_dev, NULL));
    EXPECT(got_dev == device, "CL_CONTEXT_DEVICES");
    size_t size = 99;
    EXPECT_OK(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, 0, NULL, &size));
    EXPECT(size == 0, "no properties given: size %zu", size);
    EXPECT_ERR(clGetContextInfo(ctx, CL_CONTEXT_DEVICES, 1, &got_dev, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetContextInfo(ctx, 0xdead, 0, NULL, &size), CL_INVALID_VALUE);

    /* destructor callbacks run in reverse order of registration, at the last release */
    EXPECT_ERR(clSetContextDestructorCallback(ctx, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_OK(clSetContextDestructorCallback(ctx, on_destroy, (void *)1));
    EXPECT_OK(clSetContextDestructorCallback(ctx, on_destroy, (void *)2));
    EXPECT_OK(clReleaseContext(ctx));
    EXPECT(destructor_calls == 2 && destructor_order[0] == 2 && destructor_order[1] == 1,
           "destructor calls %d order %d %d", destructor_calls, destructor_order[0], destructor_order[1]);

    /* properties: platform and user sync are echoed back */
    cl_context_properties props[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                     CL_CONTEXT_INTEROP_USER_SYNC, CL_TRUE, 0};
    ctx = clCreateContext(props, 1, &device, NULL, NULL, &err);
    EXPECT(ctx != NULL && err == CL_SUCCESS, "with properties: err %d", err);
    cl_context_properties echoed[8] = {0};
    EXPECT_OK(clGetContextInfo(ctx, CL_CONTEXT_PROPERTIES, sizeof echoed, echoed, &size));
    EXPECT(size == sizeof props && memcmp(echoed, props, sizeof props) == 0, "properties echo size %zu", size);
    EXPECT_OK(clReleaseContext(ctx));

    /* duplicate devices are ignored */
    cl_device_id twice[2] = {device, device};
    ctx = clCreateContext(NULL, 2, twice, NULL, NULL, &err);
    EXPECT(ctx != NULL && err == CL_SUCCESS, "duplicates: err %d", err);
    if (ctx) {
        EXPECT_OK(clGetContextInfo(ctx, CL_CONTEXT_NUM_DEVICES, sizeof ndev, &ndev, NULL));
        EXPECT(ndev == 1, "duplicates: %u devices", ndev);
        clReleaseContext(ctx);
    }

    /* errors */
    cl_context_properties unknown[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0x7777, 1, 0};
    ctx = clCreateContext(unknown, 1, &device, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_PROPERTY, "unknown property: err %d", err);
    cl_context_properties dup[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                   CL_CONTEXT_PLATFORM, (cl_context_properties)platform, 0};
    ctx = clCreateContext(dup, 1, &device, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_PROPERTY, "duplicate property: err %d", err);
    cl_context_properties bad_sync[] = {CL_CONTEXT_PLATFORM, (cl_context_properties)platform,
                                        CL_CONTEXT_INTEROP_USER_SYNC, 7, 0};
    ctx = clCreateContext(bad_sync, 1, &device, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_PROPERTY, "bad user sync value: err %d", err);
    ctx = clCreateContext(NULL, 0, &device, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_VALUE, "no devices: err %d", err);
    ctx = clCreateContext(NULL, 1, NULL, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_VALUE, "NULL devices: err %d", err);
    ctx = clCreateContext(NULL, 1, &device, NULL, (void *)1, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_VALUE, "user_data without callback: err %d", err);
    cl_device_id not_device = (cl_device_id)platform;
    ctx = clCreateContext(props, 1, &not_device, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_DEVICE, "platform as device: err %d", err);
    ctx = clCreateContext(NULL, 1, &device, NULL, NULL, NULL); /* errcode_ret may be NULL */
    EXPECT(ctx != NULL, "NULL errcode_ret");
    if (ctx)
        clReleaseContext(ctx);

    /* clCreateContextFromType */
    cl_device_type type;
    clGetDeviceInfo(device, CL_DEVICE_TYPE, sizeof type, &type, NULL);
    ctx = clCreateContextFromType(props, type, NULL, NULL, &err);
    EXPECT(ctx != NULL && err == CL_SUCCESS, "from own type: err %d", err);
    if (ctx)
        clReleaseContext(ctx);
    ctx = clCreateContextFromType(props, CL_DEVICE_TYPE_ALL, NULL, NULL, &err);
    EXPECT(ctx != NULL && err == CL_SUCCESS, "from ALL: err %d", err);
    if (ctx)
        clReleaseContext(ctx);
    ctx = clCreateContextFromType(props, CL_DEVICE_TYPE_CUSTOM, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_DEVICE_NOT_FOUND, "from CUSTOM: err %d", err);
    ctx = clCreateContextFromType(props, (cl_device_type)1 << 40, NULL, NULL, &err);
    EXPECT(ctx == NULL && err == CL_INVALID_DEVICE_TYPE, "bad type: err %d", err);

    /* a handle of another type where a context is expected */
    EXPECT_ERR(clRetainContext((cl_context)device), CL_INVALID_CONTEXT);
    EXPECT_ERR(clGetContextInfo((cl_context)device, CL_CONTEXT_NUM_DEVICES, 0, NULL, &size), CL_INVALID_CONTEXT);

    /* many contexts: created and freed */
    for (int i = 0; i < 200; i++) {
        ctx = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
        if (err != CL_SUCCESS) {
            EXPECT(0, "context %d: err %d", i, err);
            break;
        }
        clReleaseContext(ctx);
    }
    return harness_result();
}
