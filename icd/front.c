/* vkcl's ICD front: the library the loader opens (libvkcl.so, named by vkcl.icd).
 *
 * vkcl runs in the Python interpreter already in the process (pyopencl's, numba's), or, in a
 * process without one (a C program), in an interpreter it embeds. One process cannot hold two
 * Pythons, so there is one vkcl library per Python minor version, python<X.Y>/libvkcl.so beside
 * this one: the front, which needs no Python, picks the one matching the interpreter running
 * here, else the one that embeds its own (VKCL_EMBEDDED_PYTHON), and hands the loader its entry
 * points. Every handle vkcl returns carries that library's dispatch table, so after
 * clIcdGetPlatformIDsKHR the loader calls it directly; only the four functions the loader looks
 * up by name (cl_khr_icd: clIcdGetPlatformIDsKHR, clGetPlatformInfo, clGetExtensionFunctionAddress,
 * and ...ForPlatform) pass through here.
 */
#define _GNU_SOURCE /* dladdr */
#define CL_TARGET_OPENCL_VERSION 300
#include <CL/cl.h>
#include <dlfcn.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#define VKCL_EXPORT __attribute__((visibility("default")))
#define VKCL_PLATFORM_NOT_FOUND_KHR (-1001)

typedef cl_int(CL_API_CALL *get_platforms_fn)(cl_uint, cl_platform_id *, cl_uint *);
typedef void *(CL_API_CALL *get_address_fn)(const char *);
typedef cl_int(CL_API_CALL *platform_info_fn)(cl_platform_id, cl_platform_info, size_t, void *, size_t *);

static pthread_once_t vkcl_front_once = PTHREAD_ONCE_INIT;
static get_platforms_fn vkcl_backend_get_platforms;
static get_address_fn vkcl_backend_get_address;
static platform_info_fn vkcl_backend_platform_info;

/* "3.12" from the version string of the Python running in this process, or NULL when none
 * runs (the symbols are looked up in the process: a Python host exports them). */
static const char *vkcl_host_python(char *buf, size_t size)
{
    int (*initialized)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (!initialized || !version || !initialized())
        return NULL;
    const char *v = version();
    const char *dot = strchr(v, '.');
    size_t n = dot ? strspn(dot + 1, "0123456789") + (size_t)(dot + 1 - v) : 0;
    if (n == 0 || n >= size)
        return NULL;
    memcpy(buf, v, n);
    buf[n] = '\0';
    return buf;
}

static void vkcl_front_load(void)
{
    Dl_info self;
    char dir[PATH_MAX], path[PATH_MAX], host[16];
    if (!dladdr((void *)vkcl_front_load, &self) || !self.dli_fname)
        return;
    snprintf(dir, sizeof dir, "%s", self.dli_fname);
    char *slash = strrchr(dir, '/');
    if (slash)
        *slash = '\0';
    else
        snprintf(dir, sizeof dir, ".");
    const char *python = vkcl_host_python(host, sizeof host);
    if ((size_t)snprintf(path, sizeof path, "%s/python%s/libvkcl.so", dir, python ? python : VKCL_EMBEDDED_PYTHON)
            >= sizeof path)
        return;
    if (access(path, R_OK) != 0) {
        fprintf(stderr, "vkcl: this process runs Python %s, and vkcl has no library for it (it was built for "
                "Python %s): vkcl reports no platform here. Build vkcl where that Python is installed.\n",
                python ? python : "?", VKCL_PYTHONS);
        return;
    }
    void *backend = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!backend) {
        fprintf(stderr, "vkcl: cannot load %s: %s\n", path, dlerror());
        return;
    }
    vkcl_backend_get_platforms = (get_platforms_fn)dlsym(backend, "clIcdGetPlatformIDsKHR");
    vkcl_backend_get_address = (get_address_fn)dlsym(backend, "clGetExtensionFunctionAddress");
    vkcl_backend_platform_info = (platform_info_fn)dlsym(backend, "clGetPlatformInfo");
}

static cl_int CL_API_CALL vkcl_no_platform(cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms)
{
    (void)num_entries;
    (void)platforms;
    if (num_platforms)
        *num_platforms = 0;
    return VKCL_PLATFORM_NOT_FOUND_KHR;
}

VKCL_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                     cl_uint *num_platforms)
{
    pthread_once(&vkcl_front_once, vkcl_front_load);
    if (!vkcl_backend_get_platforms)
        return vkcl_no_platform(num_entries, platforms, num_platforms);
    return vkcl_backend_get_platforms(num_entries, platforms, num_platforms);
}

VKCL_EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
    pthread_once(&vkcl_front_once, vkcl_front_load);
    if (vkcl_backend_get_address)
        return vkcl_backend_get_address(name);
    if (name && strcmp(name, "clIcdGetPlatformIDsKHR") == 0)
        return (void *)vkcl_no_platform;
    return NULL;
}

VKCL_EXPORT cl_int CL_API_CALL clGetPlatformInfo(cl_platform_id platform, cl_platform_info name, size_t size,
                                                void *value, size_t *size_ret)
{
    pthread_once(&vkcl_front_once, vkcl_front_load);
    if (!vkcl_backend_platform_info)
        return CL_INVALID_PLATFORM;
    return vkcl_backend_platform_info(platform, name, size, value, size_ret);
}

VKCL_EXPORT void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *name)
{
    (void)platform;
    return clGetExtensionFunctionAddress(name);
}
