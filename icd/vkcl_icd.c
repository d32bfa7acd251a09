/* vkcl's ICD library: the C side of the cffi embedding.
 *
 * cffi compiles this file with the generated glue (icd/_gen/glue.c): static wrappers that
 * forward each clXxx call to its Python thunk, the dispatch table the loader reads from
 * every handle, and the exported clXxx symbols. This file holds what is not mechanical:
 * start-up of the embedded interpreter, handles, extension-function lookup, and (fast_path.c)
 * the launch fast path.
 */
#ifndef _GNU_SOURCE
#define _GNU_SOURCE /* dladdr */
#endif
#define CL_TARGET_OPENCL_VERSION 300
#define CL_USE_DEPRECATED_OPENCL_1_0_APIS
#define CL_USE_DEPRECATED_OPENCL_1_1_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_2_0_APIS
#define CL_USE_DEPRECATED_OPENCL_2_1_APIS
#define CL_USE_DEPRECATED_OPENCL_2_2_APIS
#include <CL/cl_icd.h>
#include <dlfcn.h>
#include <pthread.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#define VKCL_EXPORT __attribute__((visibility("default")))

/* Every handle vkcl gives out, allocated by Python (vkcl/api/handles.py). The loader only
 * reads `dispatch` (a const cl_icd_dispatch *); Python maps the address to its object. */
typedef struct {
    const void *dispatch;
    uint32_t magic;
} vkcl_handle_t;
struct _cl_platform_id { vkcl_handle_t h; };
struct _cl_device_id { vkcl_handle_t h; };
struct _cl_context { vkcl_handle_t h; };
struct _cl_command_queue { vkcl_handle_t h; };
struct _cl_mem { vkcl_handle_t h; };
struct _cl_program { vkcl_handle_t h; };
struct _cl_kernel { vkcl_handle_t h; };
struct _cl_event { vkcl_handle_t h; };
struct _cl_sampler { vkcl_handle_t h; };

struct vkcl_extension_function {
    const char *name;
    void *address;
};

/* Set by the Python side once its thunks are installed. */
static volatile int vkcl_ready;
/* 1 when the constructor set PYTHONHOME itself (Python removes it again after start-up). */
int vkcl_set_pythonhome;

void vkcl_set_ready(int ready) { vkcl_ready = ready; }

/* Set by vkcl's shutdown (a Python host's atexit handler, a C host's exit()): its threads have
 * stopped and every device is idle. */
static volatile int vkcl_shut_down;
void vkcl_note_shutdown(void) { vkcl_shut_down = 1; }

/* A Python host past its atexit handlers tears its modules down, vkcl's among them, and the
 * objects it frees then (a pyopencl kernel cached in a module, a cycle through an extension type
 * patched with a function of __main__) can no longer run vkcl's Python code: their releases
 * answered CL_OUT_OF_HOST_MEMORY and pyopencl printed a warning for each. A retain or release
 * then succeeds without Python: the process is ending, and the memory of its objects, host and
 * device, goes with it. */
static int vkcl_host_finalizing(void)
{
    if (!vkcl_shut_down)
        return 0;
#if PY_VERSION_HEX >= 0x030D0000
    return Py_IsFinalizing();
#else
    return _Py_IsFinalizing();
#endif
}

/* The application's events as vkcl's shutdown left them (every device idle, what the GPU had
 * done retired), sorted by handle. A Python host finalizing after that still waits on events
 * (pyopencl's ~nanny_event), which vkcl's Python code can no longer answer: a wait on events
 * known here to have ended answers from their final status; any other fails as before. */
typedef struct { const void *handle; cl_int status; } vkcl_final_event_t;
static vkcl_final_event_t *vkcl_final_events;
static size_t vkcl_n_final_events;

static int vkcl_final_event_cmp(const void *a, const void *b)
{
    uintptr_t x = (uintptr_t)((const vkcl_final_event_t *)a)->handle;
    uintptr_t y = (uintptr_t)((const vkcl_final_event_t *)b)->handle;
    return x < y ? -1 : x > y;
}

void vkcl_note_final_events(void **handles, const int *statuses, size_t n)
{
    vkcl_final_event_t *t = n ? malloc(n * sizeof *t) : NULL;  /* kept: the process is ending */
    if (!t)
        return;
    for (size_t i = 0; i < n; i++)
        t[i] = (vkcl_final_event_t){handles[i], statuses[i]};
    qsort(t, n, sizeof *t, vkcl_final_event_cmp);
    vkcl_final_events = t;
    vkcl_n_final_events = n;
}

static int vkcl_final_wait(cl_int *ret, cl_uint num_events, const cl_event *event_list)
{
    if (!vkcl_host_finalizing() || num_events == 0 || !event_list || !vkcl_final_events)
        return 0;
    int failed = 0;
    for (cl_uint i = 0; i < num_events; i++) {
        vkcl_final_event_t key = {event_list[i], 0};
        const vkcl_final_event_t *e = bsearch(&key, vkcl_final_events, vkcl_n_final_events, sizeof key,
                                              vkcl_final_event_cmp);
        if (!e || e->status > CL_COMPLETE)
            return 0;
        failed |= e->status < 0;
    }
    *ret = failed ? CL_EXEC_STATUS_ERROR_FOR_EVENTS_IN_WAIT_LIST : CL_SUCCESS;
    return 1;
}

/* fork() after vkcl started: the child inherits vkcl's objects but none of its threads, nor the
 * Vulkan driver's (lavapipe's workers; NVIDIA's driver does not survive a fork at all), and
 * waiting for them hangs (seen: a child's plain exit() waited for ever on a lavapipe condition
 * variable). So in such a child every entry point fails at once, one line on stderr says why,
 * and exit() does none of vkcl's work. A child forked before vkcl started is not affected. */
static volatile int vkcl_forked;

static void vkcl_after_fork_in_child(void)
{
    if (vkcl_ready)
        vkcl_forked = 1;
}

static void vkcl_py_at_exit(void);

/* exit() in a C host: let vkcl stop its threads while the driver is still loaded. A Python
 * host has finalised its interpreter by now (vkcl's Python atexit handler did the work).
 * In a child forked after vkcl started, exit() ends here, with the child's exit status: the
 * drivers' exit handlers and destructors, which run after this, would tear down GPU state
 * the fork shares with the parent through its file descriptors (seen on NVIDIA: the child
 * crashed in them, and the parent then hung). Handlers registered before vkcl started do not
 * run in such a child either. */
static void vkcl_on_exit(int status, void *arg)
{
    (void)arg;
    if (vkcl_forked) {
        fflush(NULL);
        _exit(status);
    }
    if (vkcl_ready && Py_IsInitialized())
        vkcl_py_at_exit();
}

/* Called once the Vulkan drivers are loaded: exit handlers run in reverse order of
 * registration, so vkcl's then runs before anything the drivers registered. */
void vkcl_register_exit(void)
{
    static int registered;
    if (!registered) {
        registered = 1;
        on_exit(vkcl_on_exit, NULL);
    }
}

/* A Python already running in the process (pyopencl's, numba's) must be the minor version vkcl
 * embeds: two versions' runtimes in one process do not work (seen: Python 3.12 spun for ever in
 * cffi's start-up). Such a process gets one line on stderr and no platform. The symbols are
 * looked up in the process, where the host's Python comes before the libpython vkcl loaded. */
static int vkcl_host_python_ok(void)
{
    int (*initialized)(void) = (int (*)(void))dlsym(RTLD_DEFAULT, "Py_IsInitialized");
    const char *(*version)(void) = (const char *(*)(void))dlsym(RTLD_DEFAULT, "Py_GetVersion");
    if (!initialized || !version || !initialized())
        return 1;
    const char *v = version();
    size_t n = strlen(VKCL_PYTHON_VERSION);
    if (strncmp(v, VKCL_PYTHON_VERSION, n) == 0 && (v[n] == '.' || v[n] == ' ' || v[n] == '\0'))
        return 1;
    static int told;
    if (!told) {
        told = 1;
        fprintf(stderr, "vkcl: this process runs Python %.*s but vkcl was built for Python %s, which it embeds; "
                "two Pythons cannot share a process, so vkcl reports no platform here. Build vkcl with this "
                "Python (make build PYTHON=...) to use it from this program.\n", (int)strcspn(v, " "), v,
                VKCL_PYTHON_VERSION);
    }
    return 0;
}

/* The main thread of a Python host, where Python runs signal handlers (0 in C hosts: their
 * signals are theirs, vkcl's embedded Python installs no handlers). */
static unsigned long vkcl_python_main_thread;

/* Asynchronous signals a Python host may handle in Python: Ctrl-C (KeyboardInterrupt), timers
 * (pytest-timeout's SIGALRM), termination. Python's C handler only sets a flag; the main thread
 * runs the Python handler at its next bytecode, which, while the host waits in an OpenCL call,
 * was vkcl's own code: the handler's exception unwound vkcl instead of the host (the call
 * failed with CL_OUT_OF_HOST_MEMORY and the interrupt was lost). A C driver runs no Python, so
 * there the handler runs once the call has returned. vkcl does the same: while the host's main
 * thread is inside vkcl, a signal with a handler (Python's, or any other plain one; a signal
 * ignored or left to its default action is not touched) goes to a handler of vkcl's that notes
 * it, and on the way out the host's is put back and the signal raised again for it. Only
 * the calls that can wait do this (for the device, the compiler, a first pipeline), where a
 * signal lands in practice: three sigaction reads and two writes per signal handled,
 * about a microsecond, would be a third of a short call's cost. A mask would not do: any thread of the process that does not block the signal (numpy's
 * OpenBLAS threads) takes it, and Python's handler then still runs in vkcl.
 * SIGTERM is deferred only when Python's own handler has it: LLVM (loaded by PoCL's ICD beside
 * vkcl's, or a Mesa driver) installs handlers for SIGTERM that clean up and re-raise it to
 * the default action; deferred, `timeout`'s SIGTERM never ended a process whose kernel did not
 * finish. */
static const int vkcl_deferred_signals[] = {SIGINT, SIGALRM, SIGTERM};
#define VKCL_DEFERRED_SIGNALS (sizeof vkcl_deferred_signals / sizeof vkcl_deferred_signals[0])
static volatile sig_atomic_t vkcl_signals_caught[VKCL_DEFERRED_SIGNALS];
static int vkcl_signal_depth; /* calls of the main thread in progress (callbacks nest them) */

typedef struct {
    int entered;
    unsigned swapped;
    struct sigaction python[VKCL_DEFERRED_SIGNALS];
} vkcl_signal_state;

/* The object (the python executable or libpython) Python's C signal handler lives in. */
static void *vkcl_python_object;

static int vkcl_python_handles(void (*handler)(int))
{
    Dl_info where;
    return vkcl_python_object != NULL && dladdr((void *)handler, &where) && where.dli_fbase == vkcl_python_object;
}

static void vkcl_note_signal(int sig)
{
    for (size_t i = 0; i < VKCL_DEFERRED_SIGNALS; i++)
        if (vkcl_deferred_signals[i] == sig)
            vkcl_signals_caught[i] = 1;
}

static void vkcl_defer_signals(vkcl_signal_state *st)
{
    st->entered = 0;
    st->swapped = 0;
    if (vkcl_python_main_thread == 0 || (unsigned long)pthread_self() != vkcl_python_main_thread)
        return;
    st->entered = 1;
    if (vkcl_signal_depth++ > 0)
        return;
    struct sigaction note;
    memset(&note, 0, sizeof note);
    note.sa_handler = vkcl_note_signal;
    note.sa_flags = SA_RESTART; /* the driver's system calls go on */
    sigemptyset(&note.sa_mask);
    for (size_t i = 0; i < VKCL_DEFERRED_SIGNALS; i++) {
        struct sigaction *old = &st->python[i];
        if (sigaction(vkcl_deferred_signals[i], NULL, old) == 0 && !(old->sa_flags & SA_SIGINFO) &&
            old->sa_handler != SIG_DFL && old->sa_handler != SIG_IGN &&
            (vkcl_deferred_signals[i] != SIGTERM || vkcl_python_handles(old->sa_handler)) &&
            sigaction(vkcl_deferred_signals[i], &note, NULL) == 0)
            st->swapped |= 1u << i;
    }
}

static void vkcl_undefer_signals(vkcl_signal_state *st)
{
    if (!st->entered || --vkcl_signal_depth > 0)
        return;
    for (size_t i = 0; i < VKCL_DEFERRED_SIGNALS; i++)
        if (st->swapped & (1u << i))
            sigaction(vkcl_deferred_signals[i], &st->python[i], NULL);
    for (size_t i = 0; i < VKCL_DEFERRED_SIGNALS; i++)
        if (vkcl_signals_caught[i]) {
            vkcl_signals_caught[i] = 0;
            raise(vkcl_deferred_signals[i]); /* Python's handler sets its flag, in this thread */
        }
}

/* At start in a Python host, with the GIL: its main thread. */
static void vkcl_find_python_main_thread(void)
{
    PyObject *threading = PyImport_ImportModule("threading");
    PyObject *main = threading ? PyObject_CallMethod(threading, "main_thread", NULL) : NULL;
    PyObject *ident = main ? PyObject_GetAttrString(main, "ident") : NULL;
    if (ident && PyLong_Check(ident))
        vkcl_python_main_thread = PyLong_AsUnsignedLong(ident);
    Dl_info python;
    if (dladdr((void *)Py_Initialize, &python))
        vkcl_python_object = python.dli_fbase;
    PyErr_Clear();
    Py_XDECREF(ident);
    Py_XDECREF(main);
    Py_XDECREF(threading);
}

/* A host Python without cffi (a virtualenv holding only pyopencl): cffi's start-up imports
 * _cffi_backend before vkcl's own code runs, so it is imported here, from vkcl's packages when
 * the host has none of its own (the module is shared: the embedding imports it by name, and its
 * interface is stable across cffi versions). sys.path is left as the host had it. */
static void vkcl_import_cffi_backend(void)
{
    if (!Py_IsInitialized())
        return;
    PyGILState_STATE g = PyGILState_Ensure();
    PyObject *saved_type, *saved_value, *saved_tb;
    PyErr_Fetch(&saved_type, &saved_value, &saved_tb);
    vkcl_find_python_main_thread();
    PyObject *m = PyImport_ImportModule("_cffi_backend");
    if (m == NULL) {
        PyErr_Clear();
        PyObject *path = PySys_GetObject("path"), *dir = PyUnicode_FromString(VKCL_SITE_PACKAGES);
        if (path && dir && PyList_Append(path, dir) == 0) {
            m = PyImport_ImportModule("_cffi_backend");
            PyErr_Clear();
            Py_ssize_t last = PyList_Size(path) - 1;
            if (last >= 0 && PyList_GetItem(path, last) == dir)
                PySequence_DelItem(path, last);
        }
        PyErr_Clear();
        Py_XDECREF(dir);
    }
    Py_XDECREF(m);
    PyErr_Restore(saved_type, saved_value, saved_tb);
    PyGILState_Release(g);
}

static int vkcl_start(void)
{
    if (vkcl_forked) {
        static int told;
        if (!told) {
            told = 1;
            fputs("vkcl: this process was fork()ed after vkcl started, and vkcl cannot run in the child "
                  "(its threads and the Vulkan driver's are gone): every OpenCL call fails. Use OpenCL in "
                  "the parent, or start the child with exec().\n", stderr);
        }
        return 0;
    }
    if (!vkcl_host_python_ok())
        return 0;
    vkcl_import_cffi_backend();
    if (cffi_start_python() != 0)
        return 0;
    return vkcl_ready;
}

/* A Python host may call an entry point with an exception set on its thread: pyopencl releases
 * events from destructors while a TypeError unwinds. Python code run then fails at its first
 * attribute lookup (vkcl answered CL_OUT_OF_HOST_MEMORY, the host saw "error return without
 * exception set"), so the exception is put aside for the call and set again after it. Only a
 * thread holding the GIL can have one; a C host's threads pay three cheap checks. */
#define VKCL_PYERR_SAVE                                              \
    PyObject *vkcl_err_type = NULL, *vkcl_err_value = NULL, *vkcl_err_tb = NULL; \
    int vkcl_err_held = PyGILState_Check() && PyErr_Occurred() != NULL; \
    if (vkcl_err_held)                                               \
        PyErr_Fetch(&vkcl_err_type, &vkcl_err_value, &vkcl_err_tb)
#define VKCL_PYERR_RESTORE                                           \
    do {                                                            \
        if (vkcl_err_held)                                          \
            PyErr_Restore(vkcl_err_type, vkcl_err_value, vkcl_err_tb); \
    } while (0)

/* Around the calls that can wait (codegen/gen_icd.py, WAITING_ENTRIES): see above. */
#define VKCL_SIGNALS_DEFER                                           \
    vkcl_signal_state vkcl_signals;                                  \
    vkcl_defer_signals(&vkcl_signals)
#define VKCL_SIGNALS_UNDEFER vkcl_undefer_signals(&vkcl_signals)

#define VKCL_ENSURE_STARTED(fail)                                   \
    do {                                                            \
        if (__builtin_expect(!vkcl_ready || vkcl_forked, 0) && !vkcl_start()) \
            return fail;                                            \
    } while (0)
#define VKCL_ENSURE_STARTED_ERRCODE(errcode_ret, code, fail)        \
    do {                                                            \
        if (__builtin_expect(!vkcl_ready || vkcl_forked, 0) && !vkcl_start()) { \
            if (errcode_ret)                                        \
                *(errcode_ret) = (code);                            \
            return fail;                                            \
        }                                                           \
    } while (0)

/* Design brief, facts 1 and 2: ocl-icd dlopens us without RTLD_GLOBAL, so re-open
 * libpython globally for Python's own extension modules; and pin the interpreter's home
 * to the build-time one unless the user chose one, or Python is already running. */
__attribute__((constructor)) static void vkcl_on_load(void)
{
    pthread_atfork(NULL, NULL, vkcl_after_fork_in_child);
#ifdef VKCL_LIBPYTHON /* the library that embeds its own Python (icd/front.c picks it for C hosts) */
    dlopen(VKCL_LIBPYTHON, RTLD_NOW | RTLD_GLOBAL | RTLD_NOLOAD);
    if (!Py_IsInitialized() && getenv("PYTHONHOME") == NULL) {
        setenv("PYTHONHOME", VKCL_PYTHONHOME, 0);
        vkcl_set_pythonhome = 1;
    }
#endif
}

static cl_int CL_API_CALL vkcl_clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                      cl_uint *num_platforms);

#include "host_blocks.c"
#include "fast_path.c"
#include "host_copy.c"
#include "_gen/glue.c"

static cl_int CL_API_CALL vkcl_clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                      cl_uint *num_platforms)
{
    VKCL_ENSURE_STARTED(CL_PLATFORM_NOT_FOUND_KHR);
    return vkcl_py_clGetPlatformIDs(num_entries, platforms, num_platforms);
}

VKCL_EXPORT cl_int CL_API_CALL clIcdGetPlatformIDsKHR(cl_uint num_entries, cl_platform_id *platforms,
                                                     cl_uint *num_platforms)
{
    return vkcl_clIcdGetPlatformIDsKHR(num_entries, platforms, num_platforms);
}

/* Handles are allocated by Python (vkcl/api/handles.py) with this table as first member. */
const void *vkcl_dispatch_table(void) { return &vkcl_dispatch; }

/* Needs no Python: the loader calls it before any platform exists. */
static void *CL_API_CALL vkcl_clGetExtensionFunctionAddress(const char *name)
{
    if (name == NULL)
        return NULL;
    for (const struct vkcl_extension_function *f = vkcl_extension_functions; f->name; f++)
        if (strcmp(f->name, name) == 0)
            return f->address;
    return NULL;
}

VKCL_EXPORT void *CL_API_CALL clGetExtensionFunctionAddress(const char *name)
{
    return vkcl_clGetExtensionFunctionAddress(name);
}

/* vkcl has one platform, so the lookup does not depend on it. */
static void *CL_API_CALL vkcl_clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *name)
{
    (void)platform;
    return vkcl_clGetExtensionFunctionAddress(name);
}

VKCL_EXPORT void *CL_API_CALL clGetExtensionFunctionAddressForPlatform(cl_platform_id platform, const char *name)
{
    return vkcl_clGetExtensionFunctionAddressForPlatform(platform, name);
}
