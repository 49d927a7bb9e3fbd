/* Run-time loaded backend modules.
 *
 * The CUDA backend is built as a shared module (tbench-cuda.so) so that
 * tbench builds and runs on machines without CUDA.  The slot below is
 * always registered; its probe looks for the module and reports why it
 * is unavailable when it cannot be used.  A module exports
 *     const tb_backend *tb_module_backend(void);
 * and every slot call is forwarded to the backend it returns.  A module
 * that cannot be loaded is unavailable with dlopen's reason; a loaded
 * one answers the probe itself (src/backends/cuda/module.cu). */
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "backend.h"
#include "plugin.h"
#include "../base/error.h"
#include "tb_config.h"

typedef const tb_backend *(*tb_module_entry)(void);

static const tb_backend *cuda_impl;

/* Try dir/file; on success set *out.  Appends the dlerror to why.
 * The dlopen and dlsym are plugin.c's, shared with plugins. */
static int module_open(const char *dir, const char *file,
                       const tb_backend **out, char *why, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    void *h, *fn;
    if (tb_dl_entry(path, "tb_module_backend", &h, &fn, why, len))
        return TB_EUNAVAILABLE;
    *out = ((tb_module_entry)(uintptr_t)fn)();
    return 0;
}

static int cuda_probe(char *reason, size_t len)
{
    if (cuda_impl)
        return cuda_impl->probe(reason, len);
    if (!HAVE_CUDA_MODULE) {
        snprintf(reason, len,
                 "not built: this build has no CUDA module (nvcc was not "
                 "found, or -Dcuda=disabled)");
        return TB_EUNAVAILABLE;
    }
    char why[1024] = "";
    const char *env = getenv("TBENCH_MODULE_DIR");
    const char *dirs[] = {env, TB_BUILD_MODULE_DIR "/cuda", TB_MODULE_DIR};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (dirs[i] && !module_open(dirs[i], "tbench-cuda.so", &cuda_impl,
                                    why, sizeof why))
            return cuda_impl->probe(reason, len);
    }
    snprintf(reason, len, "module tbench-cuda.so could not be loaded: %s",
             why);
    return TB_EUNAVAILABLE;
}

static int cuda_axes(tb_axis *out, int max)
{
    return cuda_impl ? cuda_impl->axes(out, max) : 0;
}

static int cuda_create(const char *const *values, void **ctx, char *err,
                       size_t len)
{
    if (!cuda_impl) {
        snprintf(err, len, "cuda: module not loaded");
        return TB_EUNAVAILABLE;
    }
    return cuda_impl->create(values, ctx, err, len);
}

/* The remaining slots are only reached after a successful create. */
static void cuda_destroy(void *ctx) { cuda_impl->destroy(ctx); }
static int cuda_alloc(void *ctx, tb_tensor *t)
{
    return cuda_impl->alloc(ctx, t);
}
static void cuda_free(void *ctx, tb_tensor *t) { cuda_impl->free(ctx, t); }
static int cuda_upload(void *ctx, tb_tensor *d, const tb_tensor *s)
{
    return cuda_impl->upload(ctx, d, s);
}
static int cuda_download(void *ctx, tb_tensor *d, const tb_tensor *s)
{
    return cuda_impl->download(ctx, d, s);
}
static int cuda_sync(void *ctx) { return tb_backend_sync(cuda_impl, ctx); }
static tb_kernel_fn cuda_kernel(void *ctx, const tb_op *op, tb_dtype dt,
                                const tb_params *p, const char **impl)
{
    return cuda_impl->kernel(ctx, op, dt, p, impl);
}
static void cuda_counters(void *ctx, tb_backend_counters *out)
{
    tb_backend_counters_read(cuda_impl, ctx, out);
}
static int cuda_count(void *ctx, tb_count_run_fn run, void *arg,
                      uint64_t iters, tb_dev_counts *out)
{
    return tb_backend_count(cuda_impl, ctx, run, arg, iters, out);
}
static int cuda_timer_start(void *ctx)
{
    return tb_backend_timer_start(cuda_impl, ctx);
}
static int cuda_timer_stop(void *ctx, double *ns)
{
    return tb_backend_timer_stop(cuda_impl, ctx, ns);
}
static int cuda_sample_prep(void *ctx)
{
    return tb_backend_sample_prep(cuda_impl, ctx);
}
static int cuda_device_pci(void *ctx, char *buf, size_t len)
{
    return tb_backend_device_pci(cuda_impl, ctx, buf, len);
}
static int cuda_peak(void *ctx, int reps, double rep_s, tb_dev_peaks *out)
{
    if (!cuda_impl->peak)
        return TB_EUNSUPPORTED;
    return cuda_impl->peak(ctx, reps, rep_s, out);
}

const tb_backend tb_backend_cuda = {
    .name = "cuda",
    .doc = HAVE_CUDA_MODULE
               ? "CUDA kernels (run-time loaded module tbench-cuda.so, "
                 "built for " TB_GPU_ARCHS ")"
               : "CUDA kernels (run-time loaded module; not in this build)",
    .probe = cuda_probe,
    .axes = cuda_axes,
    .create = cuda_create,
    .destroy = cuda_destroy,
    .alloc = cuda_alloc,
    .free = cuda_free,
    .upload = cuda_upload,
    .download = cuda_download,
    .sync = cuda_sync,
    .kernel = cuda_kernel,
    .counters = cuda_counters,
    .count = cuda_count,
    .timer_start = cuda_timer_start,
    .timer_stop = cuda_timer_stop,
    .device_memory = true,
    .sample_prep = cuda_sample_prep,
    .device_pci = cuda_device_pci,
    .peak = cuda_peak,
};
