/* Run-time loaded backend modules.
 *
 * The CUDA backend is built as a shared module (tbench-cuda.so) so that
 * tbench builds and runs on machines without CUDA.  The registry always
 * lists the placeholder below; its probe looks for the module and
 * reports why it is unavailable when it cannot be used.  A module
 * exports
 *     const tb_backend *tb_module_backend_2(void);
 * (the 2 names tb_backend's layout: it goes up whenever backend.h's
 * struct changes, so that a module of another build is refused by
 * dlsym, "no tb_module_backend_2", instead of being called through a
 * struct it does not share) and, once loaded, the backend it returns is listed in the
 * placeholder's place and used as it is: nothing is forwarded.  A module
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
    if (tb_dl_entry(path, "tb_module_backend_2", &h, &fn, why, len))
        return TB_EUNAVAILABLE;
    *out = ((tb_module_entry)(uintptr_t)fn)();
    if (!*out) {
        size_t used = strnlen(why, len);
        snprintf(why + used, len - used, "%s%.512s: tb_module_backend_2() "
                 "returned NULL", used ? "; " : "", path);
        return TB_EUNAVAILABLE;
    }
    return 0;
}

/* The placeholder's probe: load the module, then let the registry list
 * the module's own backend in the placeholder's place and ask that
 * backend.  A module loads once per process; a failed load is tried
 * again at the next probe (the reason may have changed). */
static int cuda_probe(const tb_backend *self, char *reason, size_t len)
{
    if (cuda_impl)
        return cuda_impl->probe(cuda_impl, reason, len);
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
                                    why, sizeof why)) {
            tb_backend_replace(self, cuda_impl);
            return cuda_impl->probe(cuda_impl, reason, len);
        }
    }
    snprintf(reason, len, "module tbench-cuda.so could not be loaded: %s",
             why);
    return TB_EUNAVAILABLE;
}

/* Reached only through a placeholder kept past a successful probe:
 * tb_backend_probe gives the module's backend instead. */
static int cuda_create(const tb_backend *self, const char *const *values,
                       void **ctx, char *err, size_t len)
{
    (void)values;
    (void)ctx;
    snprintf(err, len, "%s: module not loaded", self->name);
    return TB_EUNAVAILABLE;
}

static int cuda_axes(const tb_backend *self, tb_axis *out, int max)
{
    (void)self;
    (void)out;
    (void)max;
    return 0;
}

/* The placeholder: what the registry lists until the module loads.  It
 * has no instance slots; device_memory marks it as the device backend it
 * stands for (the GPU peaks pick it by that). */
const tb_backend tb_backend_cuda = {
    .name = "cuda",
    .doc = HAVE_CUDA_MODULE
               ? "CUDA kernels (run-time loaded module tbench-cuda.so, "
                 "built for " TB_GPU_ARCHS ")"
               : "CUDA kernels (run-time loaded module; not in this build)",
    .probe = cuda_probe,
    .axes = cuda_axes,
    .create = cuda_create,
    .device_memory = true,
};
