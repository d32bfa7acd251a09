/* Buffers through the ICD loader: every creation flag combination, sub-buffers, host
 * pointers, host access flags, the spec's error codes of every buffer command, info
 * queries, and destructor callbacks. Data checks on random regions live in
 * test_buffers_pyopencl.py; this program checks exact error codes. */
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS /* clEnqueueWaitForEvents */
#include "harness.h"
#include <stdint.h>
#include <time.h>
#include <unistd.h>

static cl_context ctx;
static cl_device_id device;
static cl_command_queue queue;
static size_t align_bytes; /* CL_DEVICE_MEM_BASE_ADDR_ALIGN in bytes */

static const cl_mem_flags HOST_ACCESS[] = {0, CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS};

static int popcount(cl_mem_flags f) { return __builtin_popcountll(f); }

static cl_mem make(cl_mem_flags flags, size_t size, void *host_ptr)
{
    cl_int err;
    cl_mem m = clCreateBuffer(ctx, flags, size, host_ptr, &err);
    if (err != CL_SUCCESS || m == NULL) {
        printf("FAIL clCreateBuffer(%#llx, %zu) err %d\n", (unsigned long long)flags, size, err);
        exit(1);
    }
    return m;
}

static void sleep_ms(int ms)
{
    struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
    nanosleep(&ts, NULL);
}

/* 1. Every combination of the nine flags: 2^9 sets, valid ones succeed, the rest fail. */
static void test_flag_combinations(void)
{
    static const cl_mem_flags bits[] = {CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY,
                                        CL_MEM_USE_HOST_PTR, CL_MEM_ALLOC_HOST_PTR, CL_MEM_COPY_HOST_PTR,
                                        CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS};
    const cl_mem_flags dev_bits = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    const cl_mem_flags host_bits = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
    static char host[4096] __attribute__((aligned(4096)));
    int valid = 0;
    for (int set = 0; set < 512; set++) {
        cl_mem_flags flags = 0;
        for (int b = 0; b < 9; b++)
            if (set >> b & 1)
                flags |= bits[b];
        int ok = popcount(flags & dev_bits) <= 1 && popcount(flags & host_bits) <= 1 &&
                 !((flags & CL_MEM_USE_HOST_PTR) && (flags & (CL_MEM_ALLOC_HOST_PTR | CL_MEM_COPY_HOST_PTR)));
        /* the host pointer rule is satisfied so that only the flags can be wrong */
        void *ptr = flags & (CL_MEM_USE_HOST_PTR | CL_MEM_COPY_HOST_PTR) ? host : NULL;
        cl_int err;
        cl_mem m = clCreateBuffer(ctx, flags, sizeof host, ptr, &err);
        if (!ok) {
            EXPECT(m == NULL && err == CL_INVALID_VALUE, "flags %#llx: err %d", (unsigned long long)flags, err);
            if (m)
                clReleaseMemObject(m);
            continue;
        }
        valid++;
        EXPECT(m != NULL && err == CL_SUCCESS, "flags %#llx: err %d", (unsigned long long)flags, err);
        if (!m)
            continue;
        cl_mem_flags got = 0;
        EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_FLAGS, sizeof got, &got, NULL));
        /* The flags given; CL_MEM_READ_WRITE is the default when no access flag was given. */
        EXPECT(got == flags || (!(flags & dev_bits) && got == (flags | CL_MEM_READ_WRITE)),
               "flags %#llx reported as %#llx", (unsigned long long)flags, (unsigned long long)got);
        /* and with properties (an empty list) */
        cl_mem_properties none[] = {0};
        cl_mem m2 = clCreateBufferWithProperties(ctx, none, flags, sizeof host, ptr, &err);
        EXPECT(m2 != NULL && err == CL_SUCCESS, "with properties, flags %#llx: err %d", (unsigned long long)flags, err);
        if (m2)
            clReleaseMemObject(m2);
        clReleaseMemObject(m);
    }
    /* 4 device x 4 host access choices x 5 host pointer choices (none, USE, ALLOC, COPY, ALLOC|COPY) */
    EXPECT(valid == 80, "%d valid combinations", valid);
}

/* 2. The other clCreateBuffer errors. */
static void test_create_errors(void)
{
    char host[64];
    cl_int err;
    cl_mem m;
    m = clCreateBuffer(ctx, CL_MEM_USE_HOST_PTR, 64, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_HOST_PTR, "USE_HOST_PTR without a pointer: %d", err);
    m = clCreateBuffer(ctx, CL_MEM_COPY_HOST_PTR, 64, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_HOST_PTR, "COPY_HOST_PTR without a pointer: %d", err);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, host, &err);
    EXPECT(m == NULL && err == CL_INVALID_HOST_PTR, "a pointer without USE/COPY: %d", err);
    m = clCreateBuffer(ctx, CL_MEM_ALLOC_HOST_PTR, 64, host, &err);
    EXPECT(m == NULL && err == CL_INVALID_HOST_PTR, "a pointer with ALLOC_HOST_PTR: %d", err);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 0, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_BUFFER_SIZE, "size 0: %d", err);
    cl_ulong max_alloc = 0;
    clGetDeviceInfo(device, CL_DEVICE_MAX_MEM_ALLOC_SIZE, sizeof max_alloc, &max_alloc, NULL);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, (size_t)max_alloc + 1, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_BUFFER_SIZE, "size > max alloc: %d", err);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, SIZE_MAX, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_BUFFER_SIZE, "size SIZE_MAX: %d", err);
    m = clCreateBuffer(ctx, (cl_mem_flags)1 << 40, 64, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_VALUE, "unknown flag: %d", err);
    m = clCreateBuffer((cl_context)device, CL_MEM_READ_WRITE, 64, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_CONTEXT, "not a context: %d", err);
    cl_mem_properties unknown[] = {0x7777, 1, 0};
    m = clCreateBufferWithProperties(ctx, unknown, CL_MEM_READ_WRITE, 64, NULL, &err);
    EXPECT(m == NULL && err == CL_INVALID_PROPERTY, "unknown property: %d", err);
    m = clCreateBuffer(ctx, CL_MEM_READ_WRITE, 64, NULL, NULL); /* errcode_ret may be NULL */
    EXPECT(m != NULL, "NULL errcode_ret");
    if (m)
        clReleaseMemObject(m);
    EXPECT_ERR(clRetainMemObject(NULL), CL_INVALID_MEM_OBJECT);
    EXPECT_ERR(clReleaseMemObject((cl_mem)ctx), CL_INVALID_MEM_OBJECT);
}

/* 3. clGetMemObjectInfo, every param, for a buffer and a sub-buffer. */
static void test_mem_info(void)
{
    static char host[8192] __attribute__((aligned(4096)));
    cl_mem m = make(CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR | CL_MEM_HOST_READ_ONLY, sizeof host, host);
    cl_mem_object_type type = 0;
    size_t size = 0, offset = 99, ret = 0;
    void *ptr = NULL;
    cl_uint count = 99;
    cl_context c = NULL;
    cl_mem assoc = (cl_mem)1;
    cl_bool svm = 7;
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_TYPE, sizeof type, &type, &ret));
    EXPECT(type == CL_MEM_OBJECT_BUFFER && ret == sizeof type, "CL_MEM_TYPE %#x", type);
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_SIZE, sizeof size, &size, NULL));
    EXPECT(size == sizeof host, "CL_MEM_SIZE %zu", size);
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof ptr, &ptr, &ret));
    EXPECT(ptr == host && ret == sizeof ptr, "CL_MEM_HOST_PTR %p", ptr);
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL));
    EXPECT(count == 0, "CL_MEM_MAP_COUNT %u", count);
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof count, &count, NULL));
    EXPECT(count == 1, "CL_MEM_REFERENCE_COUNT %u", count);
    EXPECT_OK(clRetainMemObject(m));
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_REFERENCE_COUNT, sizeof count, &count, NULL));
    EXPECT(count == 2, "CL_MEM_REFERENCE_COUNT after retain %u", count);
    EXPECT_OK(clReleaseMemObject(m));
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_CONTEXT, sizeof c, &c, NULL));
    EXPECT(c == ctx, "CL_MEM_CONTEXT");
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL));
    EXPECT(assoc == NULL, "CL_MEM_ASSOCIATED_MEMOBJECT of a buffer");
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_OFFSET, sizeof offset, &offset, NULL));
    EXPECT(offset == 0, "CL_MEM_OFFSET of a buffer %zu", offset);
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_USES_SVM_POINTER, sizeof svm, &svm, NULL));
    EXPECT(svm == CL_FALSE, "CL_MEM_USES_SVM_POINTER %u", svm);
    EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, NULL, &ret));
    EXPECT(ret == 0, "CL_MEM_PROPERTIES of clCreateBuffer: size %zu", ret);
    EXPECT_ERR(clGetMemObjectInfo(m, CL_MEM_SIZE, 1, &size, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetMemObjectInfo(m, 0xdead, sizeof size, &size, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetMemObjectInfo((cl_mem)ctx, CL_MEM_SIZE, sizeof size, &size, NULL), CL_INVALID_MEM_OBJECT);

    /* a sub-buffer: inherited flags, offset, associated object, host pointer */
    cl_buffer_region region = {2 * align_bytes, 100};
    cl_int err;
    cl_mem sub = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &region, &err);
    EXPECT(sub != NULL && err == CL_SUCCESS, "clCreateSubBuffer: %d", err);
    if (sub) {
        cl_mem_flags flags = 0;
        EXPECT_OK(clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof flags, &flags, NULL));
        EXPECT(flags == (CL_MEM_READ_ONLY | CL_MEM_USE_HOST_PTR | CL_MEM_HOST_READ_ONLY),
               "inherited flags %#llx", (unsigned long long)flags);
        EXPECT_OK(clGetMemObjectInfo(sub, CL_MEM_OFFSET, sizeof offset, &offset, NULL));
        EXPECT(offset == 2 * align_bytes, "CL_MEM_OFFSET %zu", offset);
        EXPECT_OK(clGetMemObjectInfo(sub, CL_MEM_ASSOCIATED_MEMOBJECT, sizeof assoc, &assoc, NULL));
        EXPECT(assoc == m, "CL_MEM_ASSOCIATED_MEMOBJECT");
        EXPECT_OK(clGetMemObjectInfo(sub, CL_MEM_SIZE, sizeof size, &size, NULL));
        EXPECT(size == 100, "sub-buffer CL_MEM_SIZE %zu", size);
        EXPECT_OK(clGetMemObjectInfo(sub, CL_MEM_HOST_PTR, sizeof ptr, &ptr, NULL));
        EXPECT(ptr == host + 2 * align_bytes, "sub-buffer CL_MEM_HOST_PTR %p (host %p)", ptr, (void *)host);
        EXPECT_OK(clGetMemObjectInfo(sub, CL_MEM_TYPE, sizeof type, &type, NULL));
        EXPECT(type == CL_MEM_OBJECT_BUFFER, "sub-buffer CL_MEM_TYPE");
        clReleaseMemObject(sub);
    }
    clReleaseMemObject(m);

    /* CL_MEM_PROPERTIES echoes the list given to clCreateBufferWithProperties */
    cl_mem_properties none[] = {0}, got[4] = {9, 9, 9, 9};
    m = clCreateBufferWithProperties(ctx, none, CL_MEM_READ_WRITE, 64, NULL, &err);
    EXPECT(m != NULL && err == CL_SUCCESS, "with empty properties: %d", err);
    if (m) {
        EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, sizeof got, got, &ret));
        EXPECT(ret == sizeof(cl_mem_properties) && got[0] == 0, "CL_MEM_PROPERTIES size %zu", ret);
        EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof ptr, &ptr, NULL));
        EXPECT(ptr == NULL, "CL_MEM_HOST_PTR without USE_HOST_PTR");
        clReleaseMemObject(m);
    }
    m = clCreateBufferWithProperties(ctx, NULL, CL_MEM_READ_WRITE, 64, NULL, &err);
    EXPECT(m != NULL && err == CL_SUCCESS, "with NULL properties: %d", err);
    if (m) {
        EXPECT_OK(clGetMemObjectInfo(m, CL_MEM_PROPERTIES, 0, NULL, &ret));
        EXPECT(ret == 0, "CL_MEM_PROPERTIES of NULL properties: size %zu", ret);
        clReleaseMemObject(m);
    }
}

/* 4. Sub-buffers: errors and flags. */
static void test_sub_buffers(void)
{
    cl_int err;
    cl_mem sub;
    size_t n = 64 * align_bytes;
    cl_mem rw = make(CL_MEM_READ_WRITE, n, NULL);
    cl_buffer_region r = {align_bytes, align_bytes};

    cl_buffer_region misaligned = {align_bytes / 2, 16};
    sub = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &misaligned, &err);
    EXPECT(sub == NULL && err == CL_MISALIGNED_SUB_BUFFER_OFFSET, "misaligned origin: %d", err);
    cl_buffer_region outside = {n - align_bytes, 2 * align_bytes};
    sub = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &outside, &err);
    EXPECT(sub == NULL && err == CL_INVALID_VALUE, "region past the end: %d", err);
    cl_buffer_region far = {2 * n, 16};
    sub = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &far, &err);
    EXPECT(sub == NULL && err == CL_INVALID_VALUE, "origin past the end: %d", err);
    cl_buffer_region empty = {0, 0};
    sub = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &empty, &err);
    EXPECT(sub == NULL && err == CL_INVALID_BUFFER_SIZE, "size 0: %d", err);
    sub = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, NULL, &err);
    EXPECT(sub == NULL && err == CL_INVALID_VALUE, "NULL region: %d", err);
    sub = clCreateSubBuffer(rw, 0, 0x7777, &r, &err);
    EXPECT(sub == NULL && err == CL_INVALID_VALUE, "bad create type: %d", err);
    sub = clCreateSubBuffer(rw, CL_MEM_USE_HOST_PTR, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    EXPECT(sub == NULL && err == CL_INVALID_VALUE, "host pointer flag: %d", err);
    sub = clCreateSubBuffer(rw, CL_MEM_READ_ONLY | CL_MEM_WRITE_ONLY, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    EXPECT(sub == NULL && err == CL_INVALID_VALUE, "two access flags: %d", err);
    sub = clCreateSubBuffer((cl_mem)ctx, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    EXPECT(sub == NULL && err == CL_INVALID_MEM_OBJECT, "not a buffer: %d", err);

    /* a sub-buffer of a sub-buffer */
    sub = clCreateSubBuffer(rw, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    EXPECT(sub != NULL && err == CL_SUCCESS, "sub-buffer: %d", err);
    cl_buffer_region r0 = {0, 16};
    cl_mem subsub = clCreateSubBuffer(sub, 0, CL_BUFFER_CREATE_TYPE_REGION, &r0, &err);
    EXPECT(subsub == NULL && err == CL_INVALID_MEM_OBJECT, "sub-buffer of a sub-buffer: %d", err);
    clReleaseMemObject(sub);

    /* access wider than the parent's: device access, then host access */
    struct { cl_mem_flags parent, flags; cl_int expect; } cases[] = {
        {CL_MEM_WRITE_ONLY, CL_MEM_READ_WRITE, CL_INVALID_VALUE},
        {CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY, CL_INVALID_VALUE},
        {CL_MEM_WRITE_ONLY, CL_MEM_WRITE_ONLY, CL_SUCCESS},
        {CL_MEM_READ_ONLY, CL_MEM_READ_WRITE, CL_INVALID_VALUE},
        {CL_MEM_READ_ONLY, CL_MEM_WRITE_ONLY, CL_INVALID_VALUE},
        {CL_MEM_READ_ONLY, CL_MEM_READ_ONLY, CL_SUCCESS},
        {CL_MEM_READ_WRITE, CL_MEM_READ_ONLY, CL_SUCCESS},
        {CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_SUCCESS},
        {CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY, CL_INVALID_VALUE},
        {CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_WRITE_ONLY, CL_SUCCESS},
        {CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_WRITE_ONLY, CL_INVALID_VALUE},
        {CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS, CL_SUCCESS},
        {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_READ_ONLY, CL_INVALID_VALUE},
        {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_WRITE_ONLY, CL_INVALID_VALUE},
        {CL_MEM_HOST_NO_ACCESS, CL_MEM_HOST_NO_ACCESS, CL_SUCCESS},
        {0, CL_MEM_HOST_READ_ONLY, CL_SUCCESS},
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        cl_mem parent = make(cases[i].parent, n, NULL);
        sub = clCreateSubBuffer(parent, cases[i].flags, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
        EXPECT(err == cases[i].expect && (sub != NULL) == (err == CL_SUCCESS),
               "case %zu: parent %#llx, flags %#llx: err %d", i, (unsigned long long)cases[i].parent,
               (unsigned long long)cases[i].flags, err);
        if (sub) {
            cl_mem_flags got = 0, parent_flags = 0;
            clGetMemObjectInfo(sub, CL_MEM_FLAGS, sizeof got, &got, NULL);
            clGetMemObjectInfo(parent, CL_MEM_FLAGS, sizeof parent_flags, &parent_flags, NULL);
            /* given flags win; what is not given is inherited */
            cl_mem_flags dev = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
            cl_mem_flags host = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
            cl_mem_flags want = cases[i].flags;
            if (!(want & dev))
                want |= parent_flags & dev;
            if (!(want & host))
                want |= parent_flags & host;
            EXPECT(got == want, "case %zu: sub-buffer flags %#llx, expected %#llx", i, (unsigned long long)got,
                   (unsigned long long)want);
            clReleaseMemObject(sub);
        }
        clReleaseMemObject(parent);
    }
    /* every parent access x every sub-buffer flag set (2^6 of the access bits) */
    static const cl_mem_flags sub_bits[] = {CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY,
                                            CL_MEM_HOST_WRITE_ONLY, CL_MEM_HOST_READ_ONLY, CL_MEM_HOST_NO_ACCESS};
    static const cl_mem_flags dev_choices[] = {0, CL_MEM_READ_WRITE, CL_MEM_WRITE_ONLY, CL_MEM_READ_ONLY};
    const cl_mem_flags dev = CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY | CL_MEM_READ_ONLY;
    const cl_mem_flags host = CL_MEM_HOST_WRITE_ONLY | CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_NO_ACCESS;
    int created = 0;
    for (int d = 0; d < 4; d++)
        for (int h = 0; h < 4; h++) {
            cl_mem_flags pf = dev_choices[d] | HOST_ACCESS[h];
            cl_mem parent = make(pf, n, NULL);
            for (int set = 0; set < 64; set++) {
                cl_mem_flags f = 0;
                for (int b = 0; b < 6; b++)
                    if (set >> b & 1)
                        f |= sub_bits[b];
                int ok = popcount(f & dev) <= 1 && popcount(f & host) <= 1;
                if ((pf & CL_MEM_WRITE_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_READ_ONLY)))
                    ok = 0;
                if ((pf & CL_MEM_READ_ONLY) && (f & (CL_MEM_READ_WRITE | CL_MEM_WRITE_ONLY)))
                    ok = 0;
                if ((pf & CL_MEM_HOST_WRITE_ONLY) && (f & CL_MEM_HOST_READ_ONLY))
                    ok = 0;
                if ((pf & CL_MEM_HOST_READ_ONLY) && (f & CL_MEM_HOST_WRITE_ONLY))
                    ok = 0;
                if ((pf & CL_MEM_HOST_NO_ACCESS) && (f & (CL_MEM_HOST_READ_ONLY | CL_MEM_HOST_WRITE_ONLY)))
                    ok = 0;
                sub = clCreateSubBuffer(parent, f, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
                EXPECT((ok ? err == CL_SUCCESS && sub != NULL : err == CL_INVALID_VALUE && sub == NULL),
                       "parent %#llx, sub-buffer flags %#llx: err %d", (unsigned long long)pf,
                       (unsigned long long)f, err);
                if (sub) {
                    created++;
                    clReleaseMemObject(sub);
                }
            }
            clReleaseMemObject(parent);
        }
    EXPECT(created > 100, "%d sub-buffers", created);
    clReleaseMemObject(rw);
}

/* 5. USE_HOST_PTR / COPY_HOST_PTR semantics at the C level (pointer identity). */
static void test_host_pointers(void)
{
    enum { N = 3 * 4096 };
    unsigned char *mem = NULL;
    if (posix_memalign((void **)&mem, 4096, N + 64) != 0)
        exit(1);
    for (int misalign = 0; misalign <= 16; misalign += 16) {
        unsigned char *host = mem + misalign;
        for (int i = 0; i < N; i++)
            host[i] = (unsigned char)(i * 7 + misalign);
        cl_mem m = make(CL_MEM_READ_WRITE | CL_MEM_USE_HOST_PTR, N, host);
        unsigned char out[64];
        EXPECT_OK(clEnqueueReadBuffer(queue, m, CL_TRUE, 100, sizeof out, out, 0, NULL, NULL));
        EXPECT(out[0] == (unsigned char)(100 * 7 + misalign) && out[63] == (unsigned char)(163 * 7 + misalign),
               "misalign %d: initial contents", misalign);
        unsigned char data[256];
        memset(data, 0xab, sizeof data);
        EXPECT_OK(clEnqueueWriteBuffer(queue, m, CL_TRUE, 4096, sizeof data, data, 0, NULL, NULL));
        cl_int err;
        unsigned char *p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 4000, 1000, 0, NULL, NULL, &err);
        EXPECT(err == CL_SUCCESS && p == host + 4000, "misalign %d: map pointer %p, host_ptr + offset %p", misalign,
               (void *)p, (void *)(host + 4000));
        if (p == host + 4000)
            EXPECT(host[4096] == 0xab && host[4096 + 255] == 0xab && host[4095] == (unsigned char)(4095 * 7 + misalign),
                   "misalign %d: host_ptr coherent at map", misalign);
        cl_uint count = 0;
        clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
        EXPECT(count == 1, "map count %u", count);
        if (p)
            EXPECT_OK(clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL));
        p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_WRITE, 8192, 100, 0, NULL, NULL, &err);
        EXPECT(err == CL_SUCCESS && p == host + 8192, "misalign %d: write map pointer", misalign);
        if (p) {
            memset(p, 0x5c, 100);
            EXPECT_OK(clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL));
        }
        EXPECT_OK(clEnqueueReadBuffer(queue, m, CL_TRUE, 8190, 4, out, 0, NULL, NULL));
        EXPECT(out[1] == (unsigned char)(8191 * 7 + misalign) && out[2] == 0x5c && out[3] == 0x5c,
               "misalign %d: written through the map: %x %x %x", misalign, out[1], out[2], out[3]);
        clGetMemObjectInfo(m, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
        EXPECT(count == 0, "map count after unmap %u", count);
        clReleaseMemObject(m);

        /* COPY_HOST_PTR: the host memory is copied at creation, and not used after */
        m = make(CL_MEM_READ_ONLY | CL_MEM_COPY_HOST_PTR, N, host);
        void *hp = (void *)1;
        clGetMemObjectInfo(m, CL_MEM_HOST_PTR, sizeof hp, &hp, NULL);
        EXPECT(hp == NULL, "COPY_HOST_PTR: CL_MEM_HOST_PTR %p", hp);
        unsigned char expect = host[5000];
        host[5000] ^= 0xff;
        EXPECT_OK(clEnqueueReadBuffer(queue, m, CL_TRUE, 5000, 1, out, 0, NULL, NULL));
        EXPECT(out[0] == expect, "COPY_HOST_PTR: contents %x, expected %x", out[0], expect);
        p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 0, 16, 0, NULL, NULL, &err);
        EXPECT(err == CL_SUCCESS && p != NULL && p != host, "COPY_HOST_PTR: map gives its own memory");
        if (p)
            clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL);
        clReleaseMemObject(m);
    }
    clFinish(queue);
    free(mem);
}

/* 6. Host access flags restrict reads, writes and maps (CL_INVALID_OPERATION). */
static void test_host_access(void)
{
    char data[64] = {0};
    size_t origin[3] = {0, 0, 0}, region[3] = {8, 2, 1};
    cl_int err;
    for (int h = 1; h < 4; h++) {
        cl_mem m = make(HOST_ACCESS[h], sizeof data, NULL);
        int can_read = HOST_ACCESS[h] == CL_MEM_HOST_READ_ONLY;
        int can_write = HOST_ACCESS[h] == CL_MEM_HOST_WRITE_ONLY;
        cl_int r = can_read ? CL_SUCCESS : CL_INVALID_OPERATION;
        cl_int w = can_write ? CL_SUCCESS : CL_INVALID_OPERATION;
        EXPECT_ERR(clEnqueueReadBuffer(queue, m, CL_TRUE, 0, 8, data, 0, NULL, NULL), r);
        EXPECT_ERR(clEnqueueWriteBuffer(queue, m, CL_TRUE, 0, 8, data, 0, NULL, NULL), w);
        EXPECT_ERR(clEnqueueReadBufferRect(queue, m, CL_TRUE, origin, origin, region, 0, 0, 0, 0, data, 0, NULL,
                                           NULL), r);
        EXPECT_ERR(clEnqueueWriteBufferRect(queue, m, CL_TRUE, origin, origin, region, 0, 0, 0, 0, data, 0, NULL,
                                            NULL), w);
        cl_map_flags maps[] = {CL_MAP_READ, CL_MAP_WRITE, CL_MAP_WRITE_INVALIDATE_REGION, CL_MAP_READ | CL_MAP_WRITE};
        cl_int expect[] = {r, w, w, can_read && can_write ? CL_SUCCESS : CL_INVALID_OPERATION};
        for (int i = 0; i < 4; i++) {
            void *p = clEnqueueMapBuffer(queue, m, CL_TRUE, maps[i], 0, 8, 0, NULL, NULL, &err);
            EXPECT(err == expect[i] && (p != NULL) == (err == CL_SUCCESS), "host flags %#llx, map %#llx: err %d",
                   (unsigned long long)HOST_ACCESS[h], (unsigned long long)maps[i], err);
            if (p)
                clEnqueueUnmapMemObject(queue, m, p, 0, NULL, NULL);
        }
        /* copies and fills are device work: allowed */
        char pattern = 1;
        EXPECT_OK(clEnqueueFillBuffer(queue, m, &pattern, 1, 0, 8, 0, NULL, NULL));
        EXPECT_OK(clEnqueueCopyBuffer(queue, m, m, 0, 32, 8, 0, NULL, NULL));
        /* a sub-buffer inherits the restriction */
        cl_buffer_region reg = {0, 16};
        cl_mem sub = clCreateSubBuffer(m, 0, CL_BUFFER_CREATE_TYPE_REGION, &reg, &err);
        EXPECT(sub != NULL, "sub-buffer: %d", err);
        if (sub) {
            EXPECT_ERR(clEnqueueReadBuffer(queue, sub, CL_TRUE, 0, 8, data, 0, NULL, NULL), r);
            EXPECT_ERR(clEnqueueWriteBuffer(queue, sub, CL_TRUE, 0, 8, data, 0, NULL, NULL), w);
            clReleaseMemObject(sub);
        }
        clReleaseMemObject(m);
    }
    clFinish(queue);
}

/* 7. Argument errors of the buffer commands. */
static void test_command_errors(void)
{
    enum { N = 4096 };
    static char host[N];
    cl_int err;
    cl_mem a = make(CL_MEM_READ_WRITE, N, NULL), b = make(CL_MEM_READ_WRITE, N, NULL);
    /* pipes: the device has none, so none can be made and no memory object is one */
    cl_uint packet = 0;
    EXPECT(clCreatePipe(ctx, CL_MEM_HOST_NO_ACCESS, 4, 4, NULL, &err) == NULL && err == CL_INVALID_OPERATION,
           "clCreatePipe: %d", err);
    EXPECT_ERR(clGetPipeInfo(a, CL_PIPE_PACKET_SIZE, sizeof packet, &packet, NULL), CL_INVALID_MEM_OBJECT);
    EXPECT_ERR(clGetPipeInfo(NULL, CL_PIPE_PACKET_SIZE, sizeof packet, &packet, NULL), CL_INVALID_MEM_OBJECT);
    /* read / write */
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, N + 1, host, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, N, 1, host, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, 0, host, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, 8, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueWriteBuffer(queue, a, CL_FALSE, 1, N, host, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueWriteBuffer(queue, a, CL_FALSE, 0, 8, NULL, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueReadBuffer((cl_command_queue)ctx, a, CL_TRUE, 0, 8, host, 0, NULL, NULL),
               CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clEnqueueReadBuffer(queue, (cl_mem)queue, CL_TRUE, 0, 8, host, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
    EXPECT_ERR(clEnqueueWriteBuffer(queue, NULL, CL_TRUE, 0, 8, host, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);

    /* copy */
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, b, 0, 0, N + 1, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, b, 1, 0, N, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, b, 0, 1, N, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, b, 0, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, NULL, 0, 0, 8, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, a, 0, 4, 8, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, a, 4, 0, 8, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, a, 0, 0, 8, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    EXPECT_OK(clEnqueueCopyBuffer(queue, a, a, 0, 8, 8, 0, NULL, NULL));
    /* sub-buffers of one buffer overlap where their bytes do */
    cl_buffer_region r1 = {0, 2 * align_bytes}, r2 = {align_bytes, 2 * align_bytes};
    cl_mem s1 = clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &r1, &err);
    cl_mem s2 = clCreateSubBuffer(a, 0, CL_BUFFER_CREATE_TYPE_REGION, &r2, &err);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, s1, s2, align_bytes, 0, 16, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, s1, a, 0, 8, 16, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    EXPECT_OK(clEnqueueCopyBuffer(queue, s1, s2, 0, 0, align_bytes, 0, NULL, NULL));
    EXPECT_OK(clEnqueueCopyBuffer(queue, s2, a, 0, 3 * align_bytes, 2 * align_bytes, 0, NULL, NULL));

    /* copy rect: overlap in the same buffer, pitches, regions */
    size_t o0[3] = {0, 0, 0}, o1[3] = {4, 0, 0}, o2[3] = {0, 2, 0}, reg[3] = {8, 2, 1};
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, a, o0, o1, reg, 16, 0, 16, 0, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, a, o0, o0, reg, 0, 0, 0, 0, 0, NULL, NULL), CL_MEM_COPY_OVERLAP);
    EXPECT_OK(clEnqueueCopyBufferRect(queue, a, a, o0, o2, reg, 16, 0, 16, 0, 0, NULL, NULL));
    /* rows interleaved: rows of 8 bytes every 16, the second rectangle 8 bytes further */
    size_t o8[3] = {8, 0, 0}, reg3[3] = {8, 4, 2};
    EXPECT_OK(clEnqueueCopyBufferRect(queue, a, a, o0, o8, reg3, 16, 64, 16, 64, 0, NULL, NULL));
    /* same buffer with different pitches (spec: CL_INVALID_VALUE) */
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, a, o0, o2, reg, 16, 0, 32, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    /* two sub-buffers of one buffer, each with its own pitch: overlap is where bytes meet */
    size_t z[3] = {0, 0, 0}, rr[3] = {4, 4, 1};
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, s1, s2, z, z, rr, align_bytes / 2, 0, 8, 0, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP); /* s1's rows 2,3 are at align, align + align/2: s2's first bytes */
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, s2, s1, z, z, rr, 8, 0, align_bytes / 2, 0, 0, NULL, NULL),
               CL_MEM_COPY_OVERLAP); /* the same bytes the other way round: the pitches differ */
    EXPECT_OK(clEnqueueCopyBufferRect(queue, s1, s2, z, z, rr, 8, 0, 8, 0, 0, NULL, NULL));
    size_t zero_reg[3] = {0, 1, 1};
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, b, o0, o0, zero_reg, 0, 0, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, b, o0, o0, reg, 4, 0, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, b, o0, o0, reg, 16, 20, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, b, o0, o0, reg, 16, 24, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    size_t big[3] = {N, 2, 1};
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, b, o0, o0, big, 0, 0, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, b, NULL, o0, reg, 0, 0, 0, 0, 0, NULL, NULL), CL_INVALID_VALUE);

    /* read / write rect */
    EXPECT_ERR(clEnqueueReadBufferRect(queue, a, CL_TRUE, o0, o0, zero_reg, 0, 0, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueReadBufferRect(queue, a, CL_TRUE, o0, o0, big, 0, 0, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueReadBufferRect(queue, a, CL_TRUE, o0, o0, reg, 0, 0, 4, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueWriteBufferRect(queue, a, CL_TRUE, o0, o0, reg, 0, 0, 0, 0, NULL, 0, NULL, NULL),
               CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueWriteBufferRect(queue, a, CL_TRUE, o0, NULL, reg, 0, 0, 0, 0, host, 0, NULL, NULL),
               CL_INVALID_VALUE);
    EXPECT_OK(clEnqueueWriteBufferRect(queue, a, CL_TRUE, o0, o0, reg, 0, 0, 0, 0, host, 0, NULL, NULL));

    /* fill: pattern sizes, alignment of offset and size */
    char pattern[256] = {0};
    size_t bad_sizes[] = {0, 3, 5, 12, 256};
    for (size_t i = 0; i < sizeof bad_sizes / sizeof bad_sizes[0]; i++)
        EXPECT_ERR(clEnqueueFillBuffer(queue, a, pattern, bad_sizes[i], 0, 256, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueFillBuffer(queue, a, NULL, 4, 0, 16, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueFillBuffer(queue, a, pattern, 4, 2, 16, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueFillBuffer(queue, a, pattern, 4, 0, 18, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueFillBuffer(queue, a, pattern, 4, N - 8, 16, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueFillBuffer(queue, a, pattern, 128, 0, N + 128, 0, NULL, NULL), CL_INVALID_VALUE);
    for (size_t p = 1; p <= 128; p *= 2)
        EXPECT_OK(clEnqueueFillBuffer(queue, a, pattern, p, p, 4 * p, 0, NULL, NULL));

    /* map and unmap */
    void *p = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ | CL_MAP_WRITE_INVALIDATE_REGION, 0, 8, 0, NULL,
                                 NULL, &err);
    EXPECT(p == NULL && err == CL_INVALID_VALUE, "READ | WRITE_INVALIDATE_REGION: %d", err);
    p = clEnqueueMapBuffer(queue, a, CL_TRUE, (cl_map_flags)1 << 20, 0, 8, 0, NULL, NULL, &err);
    EXPECT(p == NULL && err == CL_INVALID_VALUE, "unknown map flag: %d", err);
    p = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, 0, 0, 0, NULL, NULL, &err);
    EXPECT(p == NULL && err == CL_INVALID_VALUE, "map size 0: %d", err);
    p = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, N - 4, 8, 0, NULL, NULL, &err);
    EXPECT(p == NULL && err == CL_INVALID_VALUE, "map past the end: %d", err);
    p = clEnqueueMapBuffer(queue, NULL, CL_TRUE, CL_MAP_READ, 0, 8, 0, NULL, NULL, &err);
    EXPECT(p == NULL && err == CL_INVALID_MEM_OBJECT, "map NULL buffer: %d", err);
    p = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, 16, 8, 0, NULL, NULL, &err);
    EXPECT(p != NULL && err == CL_SUCCESS, "map: %d", err);
    EXPECT_ERR(clEnqueueUnmapMemObject(queue, a, host, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueUnmapMemObject(queue, b, p, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueUnmapMemObject(queue, a, (char *)p + 1, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueUnmapMemObject(queue, NULL, p, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);
    EXPECT_OK(clEnqueueUnmapMemObject(queue, a, p, 0, NULL, NULL));
    EXPECT_ERR(clEnqueueUnmapMemObject(queue, a, p, 0, NULL, NULL), CL_INVALID_VALUE); /* twice */
    /* the same region mapped twice: two mappings, each unmapped once */
    void *p1 = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, 0, 64, 0, NULL, NULL, &err);
    void *p2 = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, 0, 64, 0, NULL, NULL, &err);
    cl_uint count = 0;
    clGetMemObjectInfo(a, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
    EXPECT(count == 2, "map count %u", count);
    EXPECT_OK(clEnqueueUnmapMemObject(queue, a, p1, 0, NULL, NULL));
    EXPECT_OK(clEnqueueUnmapMemObject(queue, a, p2, 0, NULL, NULL));
    clFinish(queue);
    clGetMemObjectInfo(a, CL_MEM_MAP_COUNT, sizeof count, &count, NULL);
    EXPECT(count == 0, "map count %u", count);

    /* migrate */
    cl_mem objs[2] = {a, b};
    EXPECT_OK(clEnqueueMigrateMemObjects(queue, 2, objs, 0, 0, NULL, NULL));
    EXPECT_OK(clEnqueueMigrateMemObjects(queue, 2, objs, CL_MIGRATE_MEM_OBJECT_HOST, 0, NULL, NULL));
    EXPECT_OK(clEnqueueMigrateMemObjects(queue, 1, objs, CL_MIGRATE_MEM_OBJECT_CONTENT_UNDEFINED, 0, NULL, NULL));
    EXPECT_ERR(clEnqueueMigrateMemObjects(queue, 0, objs, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueMigrateMemObjects(queue, 1, NULL, 0, 0, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clEnqueueMigrateMemObjects(queue, 2, objs, 0x100, 0, NULL, NULL), CL_INVALID_VALUE);
    cl_mem bad[2] = {a, (cl_mem)ctx};
    EXPECT_ERR(clEnqueueMigrateMemObjects(queue, 2, bad, 0, 0, NULL, NULL), CL_INVALID_MEM_OBJECT);

    /* wait lists: every command checks them */
    cl_event ev = NULL;
    EXPECT_OK(clEnqueueMarkerWithWaitList(queue, 0, NULL, &ev));
    cl_event bogus[2] = {ev, (cl_event)a};
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, 8, host, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, 8, host, 0, &ev, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, 8, host, 2, bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueWriteBuffer(queue, a, CL_TRUE, 0, 8, host, 2, bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, b, 0, 0, 8, 2, bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueFillBuffer(queue, a, pattern, 1, 0, 8, 2, bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueReadBufferRect(queue, a, CL_TRUE, o0, o0, reg, 0, 0, 0, 0, host, 1, NULL, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueWriteBufferRect(queue, a, CL_TRUE, o0, o0, reg, 0, 0, 0, 0, host, 2, bogus, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueCopyBufferRect(queue, a, b, o0, o0, reg, 0, 0, 0, 0, 2, bogus, NULL),
               CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueMigrateMemObjects(queue, 1, objs, 0, 2, bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueMarkerWithWaitList(queue, 2, bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_ERR(clEnqueueBarrierWithWaitList(queue, 1, NULL, NULL), CL_INVALID_EVENT_WAIT_LIST);
    p = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, 0, 8, 2, bogus, NULL, &err);
    EXPECT(p == NULL && err == CL_INVALID_EVENT_WAIT_LIST, "map with a bad wait list: %d", err);
    p = clEnqueueMapBuffer(queue, a, CL_TRUE, CL_MAP_READ, 0, 8, 0, NULL, NULL, &err);
    EXPECT_ERR(clEnqueueUnmapMemObject(queue, a, p, 2, bogus, NULL), CL_INVALID_EVENT_WAIT_LIST);
    EXPECT_OK(clEnqueueUnmapMemObject(queue, a, p, 1, &ev, NULL));

    /* objects of another context: CL_INVALID_CONTEXT */
    cl_context other = clCreateContext(NULL, 1, &device, NULL, NULL, &err);
    cl_event foreign = clCreateUserEvent(other, &err);
    cl_mem foreign_mem = clCreateBuffer(other, CL_MEM_READ_WRITE, N, NULL, &err);
    clSetUserEventStatus(foreign, CL_COMPLETE);
    EXPECT_ERR(clEnqueueReadBuffer(queue, a, CL_TRUE, 0, 8, host, 1, &foreign, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueWriteBuffer(queue, a, CL_TRUE, 0, 8, host, 1, &foreign, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, b, 0, 0, 8, 1, &foreign, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueFillBuffer(queue, a, pattern, 1, 0, 8, 1, &foreign, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueMarkerWithWaitList(queue, 1, &foreign, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueBarrierWithWaitList(queue, 1, &foreign, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueWaitForEvents(queue, 1, &foreign), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueReadBuffer(queue, foreign_mem, CL_TRUE, 0, 8, host, 0, NULL, NULL), CL_INVALID_CONTEXT);
    EXPECT_ERR(clEnqueueCopyBuffer(queue, a, foreign_mem, 0, 0, 8, 0, NULL, NULL), CL_INVALID_CONTEXT);
    cl_event mixed[2] = {ev, foreign};
    EXPECT_ERR(clWaitForEvents(2, mixed), CL_INVALID_CONTEXT);
    clReleaseEvent(foreign);
    clReleaseMemObject(foreign_mem);
    clReleaseContext(other);

    clFinish(queue);
    clReleaseEvent(ev);
    clReleaseMemObject(s1);
    clReleaseMemObject(s2);
    clReleaseMemObject(a);
    clReleaseMemObject(b);
}

/* 8. Destructor callbacks: reverse order, after the last release, once nothing uses the object. */
static volatile int destroyed[8];
static volatile int destroy_seq;

static void CL_CALLBACK on_destroy(cl_mem m, void *user_data)
{
    (void)m;
    int i = (int)(size_t)user_data;
    destroyed[i] = ++destroy_seq;
}

static int wait_for(volatile int *flag, int ms)
{
    for (int t = 0; t < ms && !*flag; t += 5)
        sleep_ms(5);
    return *flag;
}

static void test_destructor_callbacks(void)
{
    cl_int err;
    cl_mem m = make(CL_MEM_READ_WRITE, 256, NULL);
    EXPECT_ERR(clSetMemObjectDestructorCallback(m, NULL, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clSetMemObjectDestructorCallback((cl_mem)ctx, on_destroy, NULL), CL_INVALID_MEM_OBJECT);
    EXPECT_OK(clSetMemObjectDestructorCallback(m, on_destroy, (void *)0));
    EXPECT_OK(clSetMemObjectDestructorCallback(m, on_destroy, (void *)1));
    EXPECT_OK(clRetainMemObject(m));
    EXPECT_OK(clReleaseMemObject(m));
    sleep_ms(50);
    EXPECT(!destroyed[0] && !destroyed[1], "callbacks before the last release");
    EXPECT_OK(clReleaseMemObject(m));
    EXPECT(wait_for(&destroyed[0], 5000) && destroyed[1] && destroyed[1] < destroyed[0],
           "reverse order: %d %d", destroyed[1], destroyed[0]);

    /* A sub-buffer keeps its parent alive: the parent's callback comes after the sub-buffer's. */
    cl_mem parent = make(CL_MEM_READ_WRITE, 4 * align_bytes, NULL);
    cl_buffer_region r = {align_bytes, align_bytes};
    cl_mem sub = clCreateSubBuffer(parent, 0, CL_BUFFER_CREATE_TYPE_REGION, &r, &err);
    EXPECT_OK(clSetMemObjectDestructorCallback(parent, on_destroy, (void *)2));
    EXPECT_OK(clSetMemObjectDestructorCallback(sub, on_destroy, (void *)3));
    EXPECT_OK(clReleaseMemObject(parent));
    sleep_ms(50);
    EXPECT(!destroyed[2], "parent destroyed while its sub-buffer lives");
    EXPECT_OK(clReleaseMemObject(sub));
    EXPECT(wait_for(&destroyed[2], 5000) && destroyed[3] && destroyed[3] < destroyed[2],
           "sub-buffer %d then parent %d", destroyed[3], destroyed[2]);

    /* Released while a command that uses it waits on a user event: the object (and its memory)
     * lives until that command has completed. */
    char data[64];
    memset(data, 0x11, sizeof data);
    cl_event gate = clCreateUserEvent(ctx, &err), done = NULL;
    cl_mem src = make(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof data, data);
    cl_mem dst = make(CL_MEM_READ_WRITE, sizeof data, NULL);
    EXPECT_OK(clSetMemObjectDestructorCallback(src, on_destroy, (void *)4));
    EXPECT_OK(clEnqueueCopyBuffer(queue, src, dst, 0, 0, sizeof data, 1, &gate, &done));
    EXPECT_OK(clReleaseMemObject(src));
    EXPECT_OK(clFlush(queue));
    sleep_ms(100);
    EXPECT(!destroyed[4], "destroyed while a command waits to use it");
    /* memory freed too early would be handed out again: fill some new buffers */
    cl_mem others[8];
    for (int i = 0; i < 8; i++) {
        char junk[64];
        memset(junk, 0xee, sizeof junk);
        others[i] = make(CL_MEM_READ_WRITE | CL_MEM_COPY_HOST_PTR, sizeof junk, junk);
    }
    EXPECT_OK(clSetUserEventStatus(gate, CL_COMPLETE));
    EXPECT_OK(clWaitForEvents(1, &done));
    char out[64] = {0};
    EXPECT_OK(clEnqueueReadBuffer(queue, dst, CL_TRUE, 0, sizeof out, out, 0, NULL, NULL));
    EXPECT(memcmp(out, data, sizeof out) == 0, "released source copied: %x", out[0]);
    EXPECT(wait_for(&destroyed[4], 5000), "destructor after the command completed");
    for (int i = 0; i < 8; i++)
        clReleaseMemObject(others[i]);
    clReleaseMemObject(dst);
    clReleaseEvent(gate);
    clReleaseEvent(done);
}

/* 9. clGetCommandQueueInfo, every param. */
static void test_queue_info(void)
{
    cl_int err;
    cl_queue_properties props[] = {CL_QUEUE_PROPERTIES,
                                   CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE, 0};
    cl_command_queue q = clCreateCommandQueueWithProperties(ctx, device, props, &err);
    EXPECT(q != NULL && err == CL_SUCCESS, "create: %d", err);
    cl_context c = NULL;
    cl_device_id d = NULL;
    cl_uint refs = 0;
    cl_command_queue_properties bits = 0;
    cl_queue_properties echoed[4] = {0};
    cl_command_queue def = (cl_command_queue)1;
    size_t ret = 0;
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, sizeof c, &c, &ret));
    EXPECT(c == ctx && ret == sizeof c, "CL_QUEUE_CONTEXT");
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE, sizeof d, &d, NULL));
    EXPECT(d == device, "CL_QUEUE_DEVICE");
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 1, "CL_QUEUE_REFERENCE_COUNT %u", refs);
    EXPECT_OK(clRetainCommandQueue(q));
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 2, "CL_QUEUE_REFERENCE_COUNT after retain %u", refs);
    EXPECT_OK(clReleaseCommandQueue(q));
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof bits, &bits, NULL));
    EXPECT(bits == (CL_QUEUE_PROFILING_ENABLE | CL_QUEUE_OUT_OF_ORDER_EXEC_MODE_ENABLE), "CL_QUEUE_PROPERTIES %#llx",
           (unsigned long long)bits);
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, sizeof echoed, echoed, &ret));
    EXPECT(ret == sizeof props && memcmp(echoed, props, sizeof props) == 0, "CL_QUEUE_PROPERTIES_ARRAY size %zu", ret);
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_DEVICE_DEFAULT, sizeof def, &def, NULL));
    EXPECT(def == NULL, "CL_QUEUE_DEVICE_DEFAULT %p", (void *)def);
    cl_uint qsize;
    EXPECT_ERR(clGetCommandQueueInfo(q, CL_QUEUE_SIZE, sizeof qsize, &qsize, NULL), CL_INVALID_COMMAND_QUEUE);
    EXPECT_ERR(clGetCommandQueueInfo(q, 0xdead, sizeof qsize, &qsize, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetCommandQueueInfo(q, CL_QUEUE_CONTEXT, 4, &c, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetCommandQueueInfo((cl_command_queue)ctx, CL_QUEUE_CONTEXT, sizeof c, &c, NULL),
               CL_INVALID_COMMAND_QUEUE);
    clReleaseCommandQueue(q);

    /* clCreateCommandQueue (1.x): no properties array */
    q = clCreateCommandQueue(ctx, device, CL_QUEUE_PROFILING_ENABLE, &err);
    EXPECT(q != NULL && err == CL_SUCCESS, "clCreateCommandQueue: %d", err);
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES_ARRAY, 0, NULL, &ret));
    EXPECT(ret == 0, "CL_QUEUE_PROPERTIES_ARRAY of clCreateCommandQueue: size %zu", ret);
    EXPECT_OK(clGetCommandQueueInfo(q, CL_QUEUE_PROPERTIES, sizeof bits, &bits, NULL));
    EXPECT(bits == CL_QUEUE_PROFILING_ENABLE, "CL_QUEUE_PROPERTIES %#llx", (unsigned long long)bits);
    clReleaseCommandQueue(q);
}

/* 10. clGetEventInfo, every param, for a command and a user event. */
static void test_event_info(void)
{
    cl_int err;
    cl_mem m = make(CL_MEM_READ_WRITE, 64, NULL);
    char pattern = 3;
    cl_event ev = NULL;
    EXPECT_OK(clEnqueueFillBuffer(queue, m, &pattern, 1, 0, 64, 0, NULL, &ev));
    EXPECT_OK(clWaitForEvents(1, &ev));
    cl_command_queue q = NULL;
    cl_context c = NULL;
    cl_command_type type = 0;
    cl_int status = 1;
    cl_uint refs = 0;
    size_t ret = 0;
    EXPECT_OK(clGetEventInfo(ev, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, &ret));
    EXPECT(q == queue && ret == sizeof q, "CL_EVENT_COMMAND_QUEUE");
    EXPECT_OK(clGetEventInfo(ev, CL_EVENT_CONTEXT, sizeof c, &c, NULL));
    EXPECT(c == ctx, "CL_EVENT_CONTEXT");
    EXPECT_OK(clGetEventInfo(ev, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    EXPECT(type == CL_COMMAND_FILL_BUFFER, "CL_EVENT_COMMAND_TYPE %#x", type);
    EXPECT_OK(clGetEventInfo(ev, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    EXPECT(status == CL_COMPLETE, "CL_EVENT_COMMAND_EXECUTION_STATUS %d", status);
    EXPECT_OK(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 1, "CL_EVENT_REFERENCE_COUNT %u", refs);
    EXPECT_OK(clRetainEvent(ev));
    EXPECT_OK(clGetEventInfo(ev, CL_EVENT_REFERENCE_COUNT, sizeof refs, &refs, NULL));
    EXPECT(refs == 2, "CL_EVENT_REFERENCE_COUNT after retain %u", refs);
    EXPECT_OK(clReleaseEvent(ev));
    EXPECT_ERR(clGetEventInfo(ev, 0xdead, sizeof refs, &refs, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetEventInfo(ev, CL_EVENT_CONTEXT, 2, &c, NULL), CL_INVALID_VALUE);
    EXPECT_ERR(clGetEventInfo((cl_event)m, CL_EVENT_CONTEXT, sizeof c, &c, NULL), CL_INVALID_EVENT);
    EXPECT_ERR(clRetainEvent(NULL), CL_INVALID_EVENT);
    EXPECT_ERR(clReleaseEvent((cl_event)m), CL_INVALID_EVENT);
    clReleaseEvent(ev);

    /* the command type of each command */
    struct { const char *name; cl_command_type type; } expect[] = {
        {"read", CL_COMMAND_READ_BUFFER}, {"write", CL_COMMAND_WRITE_BUFFER}, {"copy", CL_COMMAND_COPY_BUFFER},
        {"read rect", CL_COMMAND_READ_BUFFER_RECT}, {"write rect", CL_COMMAND_WRITE_BUFFER_RECT},
        {"copy rect", CL_COMMAND_COPY_BUFFER_RECT}, {"map", CL_COMMAND_MAP_BUFFER},
        {"unmap", CL_COMMAND_UNMAP_MEM_OBJECT}, {"marker", CL_COMMAND_MARKER}, {"barrier", CL_COMMAND_BARRIER},
        {"migrate", CL_COMMAND_MIGRATE_MEM_OBJECTS},
    };
    cl_event evs[11] = {0};
    char host[64];
    size_t o[3] = {0, 0, 0}, r[3] = {4, 2, 1};
    cl_mem m2 = make(CL_MEM_READ_WRITE, 64, NULL);
    clEnqueueReadBuffer(queue, m, CL_FALSE, 0, 8, host, 0, NULL, &evs[0]);
    clEnqueueWriteBuffer(queue, m, CL_FALSE, 0, 8, host + 8, 0, NULL, &evs[1]);
    clEnqueueCopyBuffer(queue, m, m2, 0, 0, 8, 0, NULL, &evs[2]);
    clEnqueueReadBufferRect(queue, m, CL_FALSE, o, o, r, 0, 0, 0, 0, host + 16, 0, NULL, &evs[3]);
    clEnqueueWriteBufferRect(queue, m, CL_FALSE, o, o, r, 0, 0, 0, 0, host + 24, 0, NULL, &evs[4]);
    clEnqueueCopyBufferRect(queue, m, m2, o, o, r, 0, 0, 0, 0, 0, NULL, &evs[5]);
    void *p = clEnqueueMapBuffer(queue, m, CL_TRUE, CL_MAP_READ, 0, 8, 0, NULL, &evs[6], &err);
    clEnqueueUnmapMemObject(queue, m, p, 0, NULL, &evs[7]);
    clEnqueueMarkerWithWaitList(queue, 0, NULL, &evs[8]);
    clEnqueueBarrierWithWaitList(queue, 0, NULL, &evs[9]);
    clEnqueueMigrateMemObjects(queue, 1, &m, 0, 0, NULL, &evs[10]);
    EXPECT_OK(clFinish(queue));
    for (int i = 0; i < 11; i++) {
        type = 0;
        status = 1;
        EXPECT(evs[i] != NULL, "%s: no event", expect[i].name);
        if (!evs[i])
            continue;
        clGetEventInfo(evs[i], CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL);
        clGetEventInfo(evs[i], CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL);
        EXPECT(type == expect[i].type, "%s: command type %#x", expect[i].name, type);
        EXPECT(status == CL_COMPLETE, "%s: status after clFinish %d", expect[i].name, status);
        clReleaseEvent(evs[i]);
    }

    /* a user event */
    cl_event user = clCreateUserEvent(ctx, &err);
    EXPECT(user != NULL && err == CL_SUCCESS, "clCreateUserEvent: %d", err);
    EXPECT_OK(clGetEventInfo(user, CL_EVENT_COMMAND_QUEUE, sizeof q, &q, NULL));
    EXPECT(q == NULL, "user event queue");
    EXPECT_OK(clGetEventInfo(user, CL_EVENT_COMMAND_TYPE, sizeof type, &type, NULL));
    EXPECT(type == CL_COMMAND_USER, "user event type %#x", type);
    EXPECT_OK(clGetEventInfo(user, CL_EVENT_COMMAND_EXECUTION_STATUS, sizeof status, &status, NULL));
    EXPECT(status == CL_SUBMITTED, "user event starts CL_SUBMITTED: %d", status);
    EXPECT_OK(clGetEventInfo(user, CL_EVENT_CONTEXT, sizeof c, &c, NULL));
    EXPECT(c == ctx, "user event context");
    EXPECT(clCreateUserEvent((cl_context)m, &err) == NULL && err == CL_INVALID_CONTEXT, "bad context: %d", err);
    clSetUserEventStatus(user, CL_COMPLETE);
    clReleaseEvent(user);
    clReleaseMemObject(m);
    clReleaseMemObject(m2);
}

static const struct { const char *name; void (*run)(void); } TESTS[] = {
    {"flags", test_flag_combinations}, {"create_errors", test_create_errors}, {"mem_info", test_mem_info},
    {"sub_buffers", test_sub_buffers}, {"host_pointers", test_host_pointers}, {"host_access", test_host_access},
    {"command_errors", test_command_errors}, {"destructors", test_destructor_callbacks},
    {"queue_info", test_queue_info}, {"event_info", test_event_info},
};

/* `buffers [name...]`: the named tests, or all of them. */
int main(int argc, char **argv)
{
    harness_open(&device, &ctx, &queue);
    cl_uint bits = 0;
    REQUIRE_OK(clGetDeviceInfo(device, CL_DEVICE_MEM_BASE_ADDR_ALIGN, sizeof bits, &bits, NULL));
    align_bytes = bits / 8;
    EXPECT(align_bytes >= 16, "CL_DEVICE_MEM_BASE_ADDR_ALIGN %u bits", bits);

    for (size_t i = 0; i < sizeof TESTS / sizeof TESTS[0]; i++) {
        int wanted = argc == 1;
        for (int a = 1; a < argc; a++)
            wanted |= strcmp(argv[a], TESTS[i].name) == 0;
        if (wanted) {
            printf("-- %s\n", TESTS[i].name);
            TESTS[i].run();
        }
    }
    clReleaseCommandQueue(queue);
    clReleaseContext(ctx);
    return harness_result();
}
