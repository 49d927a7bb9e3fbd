/* The CUDA module's counting pass: see cupti_pass.h. */
#include "cupti_pass.h"

#include <dlfcn.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#ifndef TB_CUPTI_DIRS
#define TB_CUPTI_DIRS ""
#endif

#define TB_STR_(x) #x
#define TB_STR(x) TB_STR_(x)
/* CUPTI_API_VERSION is MAJOR * 10000 + MINOR * 100 + UPDATE; the
 * library's soname carries the major (libcupti.so.13).  As a literal
 * for the name: */
#if CUPTI_API_VERSION / 10000 == 13
#define TB_CUPTI_MAJOR 13
#else
#error "cupti_pass.c: set TB_CUPTI_MAJOR for this CUPTI_API_VERSION"
#endif

/* Activity buffers: CUPTI asks for them and hands them back full. */
#define BUF_SIZE (8u << 20)
#define BUF_ALIGN 8

/* The libcupti functions the pass calls, found with dlsym. */
typedef struct {
    bool tried, ok;
    char why[512];
    CUptiResult (*get_version)(uint32_t *);
    CUptiResult (*result_string)(CUptiResult, const char **);
    CUptiResult (*register_callbacks)(CUpti_BuffersCallbackRequestFunc,
                                      CUpti_BuffersCallbackCompleteFunc);
    CUptiResult (*enable)(CUpti_ActivityKind);
    CUptiResult (*disable)(CUpti_ActivityKind);
    CUptiResult (*flush_all)(uint32_t);
    CUptiResult (*dropped)(CUcontext, uint32_t, size_t *);
    CUptiResult (*finalize)(void); /* NULL: this libcupti cannot detach */
    tb_cupti_next_fn next;
    bool registered;
} cupti_api;

static cupti_api api;

/* The pass in progress: CUPTI may complete buffers on its own thread. */
static pthread_mutex_t tally_lock = PTHREAD_MUTEX_INITIALIZER;
static tb_cupti_tally tally;
static bool walk_failed;

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL,
    CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET,
    CUPTI_ACTIVITY_KIND_MEMORY2,
};
static const char *const kind_names[] = {
    "CONCURRENT_KERNEL", "MEMCPY", "MEMSET", "MEMORY2",
};
#define N_KINDS (sizeof kinds / sizeof kinds[0])

/* dlopen path; appends dlerror to why on failure. */
static void *open_one(const char *path)
{
    void *h = dlopen(path, RTLD_NOW | RTLD_LOCAL);
    if (!h) {
        size_t used = strlen(api.why);
        const char *e = dlerror();
        snprintf(api.why + used, sizeof api.why - used, "%s%.200s",
                 used ? "; " : "", e ? e : path);
    }
    return h;
}

/* Load libcupti once per process: $TBENCH_CUPTI_LIB alone when set,
 * else the library path, else the build's CUPTI folders (TB_CUPTI_DIRS,
 * ':'-separated); in each place the runtime package's versioned name
 * (libcupti.so.13 for CUPTI 13.x) first, then the development name
 * libcupti.so, which only the -dev package installs. */
static void *open_in(const char *dir, size_t dlen)
{
    static const char *const names[] = {
        "libcupti.so." TB_STR(TB_CUPTI_MAJOR), "libcupti.so"};
    for (size_t k = 0; k < sizeof names / sizeof names[0]; k++) {
        char path[1024];
        if (dlen)
            snprintf(path, sizeof path, "%.*s/%s", (int)dlen, dir, names[k]);
        else
            snprintf(path, sizeof path, "%s", names[k]);
        void *h = open_one(path);
        if (h)
            return h;
    }
    return NULL;
}

static bool load(void)
{
    if (api.tried)
        return api.ok;
    api.tried = true;
    void *h = NULL;
    const char *env = getenv("TBENCH_CUPTI_LIB");
    if (env && *env) {
        h = open_one(env);
    } else {
        h = open_in("", 0);
        const char *d = TB_CUPTI_DIRS;
        while (!h && *d) {
            size_t n = strcspn(d, ":");
            if (n)
                h = open_in(d, n);
            d += n + (d[n] == ':');
        }
    }
    if (!h) {
        char why[sizeof api.why];
        snprintf(why, sizeof why, "%s", api.why);
        snprintf(api.why, sizeof api.why,
                 "CUPTI is not loadable: %.220s", why);
        return false;
    }
#define SYM(field, name)                                                  \
    do {                                                                  \
        *(void **)&api.field = dlsym(h, name);                            \
        if (!api.field) {                                                 \
            snprintf(api.why, sizeof api.why,                             \
                     "CUPTI is not usable: libcupti has no %s", name);    \
            return false;                                                 \
        }                                                                 \
    } while (0)
    SYM(get_version, "cuptiGetVersion");
    SYM(result_string, "cuptiGetResultString");
    SYM(register_callbacks, "cuptiActivityRegisterCallbacks");
    SYM(enable, "cuptiActivityEnable");
    SYM(disable, "cuptiActivityDisable");
    SYM(flush_all, "cuptiActivityFlushAll");
    SYM(dropped, "cuptiActivityGetNumDroppedRecords");
    SYM(next, "cuptiActivityGetNextRecord");
#undef SYM
    *(void **)&api.finalize = dlsym(h, "cuptiFinalize");
    api.ok = true;
    return true;
}

static void CUPTIAPI buffer_requested(uint8_t **buf, size_t *size,
                                      size_t *max_records)
{
    void *p = NULL;
    if (posix_memalign(&p, BUF_ALIGN, BUF_SIZE))
        p = NULL;
    *buf = p;
    *size = p ? BUF_SIZE : 0;
    *max_records = 0; /* as many as fit */
}

static void CUPTIAPI buffer_completed(CUcontext ctx, uint32_t stream,
                                      uint8_t *buf, size_t size,
                                      size_t valid)
{
    (void)size;
    size_t dropped = 0;
    pthread_mutex_lock(&tally_lock);
    if (buf && valid && tb_cupti_tally_buffer(&tally, api.next, buf, valid))
        walk_failed = true;
    if (api.dropped(ctx, stream, &dropped) == CUPTI_SUCCESS)
        tally.dropped += dropped;
    pthread_mutex_unlock(&tally_lock);
    free(buf);
}

/* "CALL: CUPTI's message (error N)" plus what it likely means. */
static void refused(tb_dev_counts *out, const char *call, CUptiResult rc)
{
    const char *msg = NULL;
    if (api.result_string(rc, &msg) != CUPTI_SUCCESS || !msg)
        msg = "unknown error";
    const char *hint = "";
    if (rc == CUPTI_ERROR_MULTIPLE_SUBSCRIBERS_NOT_SUPPORTED ||
        rc == CUPTI_ERROR_NOT_INITIALIZED)
        hint = " (another profiler may be attached)";
    else if (rc == CUPTI_ERROR_INSUFFICIENT_PRIVILEGES)
        hint = " (profiling needs privileges this process lacks)";
    else if (rc == CUPTI_ERROR_UNKNOWN)
        hint = " (no CUDA driver or device?)";
    snprintf(out->reason, sizeof out->reason, "CUPTI refused: %s: %s "
             "(error %d)%s", call, msg, (int)rc, hint);
}

void tb_cupti_to_counts(const tb_cupti_tally *t, uint64_t iters,
                        void (*demangle)(const char *, char *, size_t),
                        tb_dev_counts *out)
{
    tb_cupti_per_iter pi;
    memset(out, 0, sizeof *out);
    out->iters = iters;
    tb_cupti_per_iteration(t, iters, &pi);
    if (!pi.valid) {
        snprintf(out->reason, sizeof out->reason, "%s", pi.reason);
        return;
    }
    _Static_assert((int)TB_DEV_NDIR == (int)TB_CUPTI_NDIR, "directions");
    _Static_assert(TB_DEV_MAX_KERNELS == TB_CUPTI_MAX_KERNELS, "kernels");
    _Static_assert(TB_DEV_NAME_MAX == TB_CUPTI_NAME_MAX, "names");
    double k = (double)iters;
    out->valid = true;
    out->kernel_launches = pi.kernel_launches;
    for (int d = 0; d < TB_DEV_NDIR; d++) {
        out->memcpy_count[d] = pi.memcpy_count_dir[d];
        out->memcpy_bytes[d] = pi.memcpy_bytes_dir[d];
    }
    out->memsets = pi.memsets;
    out->memset_bytes = pi.memset_bytes;
    out->device_allocs = pi.device_allocs;
    out->device_alloc_bytes = pi.device_alloc_bytes;
    out->device_frees = pi.device_frees;
    out->device_free_bytes = pi.device_free_bytes;
    out->n_kernels = t->n_kernels;
    for (int i = 0; i < t->n_kernels; i++) {
        tb_dev_kernel *o = &out->kernel[i];
        if (demangle)
            demangle(t->kernel[i].name, o->name, sizeof o->name);
        else
            snprintf(o->name, sizeof o->name, "%s", t->kernel[i].name);
        o->count = (double)t->kernel[i].count / k;
        o->ns = (double)t->kernel[i].ns / k;
    }
    out->kernels_unlisted = (double)t->kernels_unlisted / k;
}

/* Detach CUPTI once the pass is over: disabled activity kinds still
 * leave its driver hooks in place, and every later sample of the
 * persistent worker would pay for them (PyTorch measured 10-20% on
 * launch-bound work, pytorch/pytorch#144455).  cuptiFinalize is safe
 * here: the device was synchronized and the buffers flushed on this,
 * the only thread of the worker that calls CUDA (cupti_activity.h).  The
 * next pass registers the callbacks again.  TBENCH_CUPTI_DETACH=0 keeps
 * CUPTI attached (to measure what detaching saves). */
static void detach(void)
{
    const char *env = getenv("TBENCH_CUPTI_DETACH");
    if (!api.finalize || (env && !strcmp(env, "0")))
        return;
    if (api.finalize() == CUPTI_SUCCESS)
        api.registered = false;
}

int tb_cupti_count(const tb_cupti_pass *p, tb_count_run_fn run, void *arg,
                   uint64_t iters, tb_dev_counts *out)
{
    memset(out, 0, sizeof *out);
    out->iters = iters;
    if (!load()) {
        snprintf(out->reason, sizeof out->reason, "%.250s", api.why);
        return 0;
    }
    uint32_t version = 0;
    CUptiResult cr = api.get_version(&version);
    if (cr != CUPTI_SUCCESS) {
        refused(out, "cuptiGetVersion", cr);
        return 0;
    }
    if (!tb_cupti_layout_ok(version, out->reason, sizeof out->reason))
        return 0;
    if (!api.registered) {
        cr = api.register_callbacks(buffer_requested, buffer_completed);
        if (cr != CUPTI_SUCCESS) {
            refused(out, "cuptiActivityRegisterCallbacks", cr);
            return 0;
        }
        api.registered = true;
    }
    int rc = p->sync(p->sync_arg); /* earlier work stays out */
    if (rc) {
        snprintf(out->reason, sizeof out->reason,
                 "not counted: synchronize before the pass failed "
                 "(error %d)", rc);
        return rc;
    }
    pthread_mutex_lock(&tally_lock);
    tb_cupti_tally_reset(&tally);
    walk_failed = false;
    pthread_mutex_unlock(&tally_lock);
    size_t on = 0;
    for (; on < N_KINDS; on++) {
        cr = api.enable(kinds[on]);
        if (cr != CUPTI_SUCCESS) {
            char call[64];
            snprintf(call, sizeof call, "cuptiActivityEnable(%s)",
                     kind_names[on]);
            refused(out, call, cr);
            break;
        }
    }
    if (on == N_KINDS) {
        rc = run(arg, iters);
        int src = p->sync(p->sync_arg);
        if (!rc)
            rc = src;
    }
    for (size_t i = 0; i < on; i++)
        api.disable(kinds[i]);
    if (on == N_KINDS)
        cr = api.flush_all(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED);
    if (on > 0) /* CUPTI took hooks: release them (none when refused) */
        detach();
    if (on < N_KINDS)
        return 0; /* refused: the reason is set */
    if (rc) {
        snprintf(out->reason, sizeof out->reason,
                 "not counted: the counting pass failed (error %d)", rc);
        return rc;
    }
    if (cr != CUPTI_SUCCESS) {
        refused(out, "cuptiActivityFlushAll", cr);
        return 0;
    }
    pthread_mutex_lock(&tally_lock);
    if (walk_failed)
        snprintf(out->reason, sizeof out->reason,
                 "CUPTI could not walk an activity buffer "
                 "(cuptiActivityGetNextRecord failed)");
    else
        tb_cupti_to_counts(&tally, iters, p->demangle, out);
    pthread_mutex_unlock(&tally_lock);
    return 0;
}
