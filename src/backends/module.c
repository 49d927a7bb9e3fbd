/* Run-time loaded backend modules.
 *
 * The CUDA backend is built as a shared module (tbench-cuda.so) so that
 * tbench builds and runs on machines without CUDA.  The registry always
 * lists the placeholder below; its probe looks for the module and
 * reports why it is unavailable when it cannot be used.  A module
 * exports
 *     const tb_backend *tb_module_backend_3(void);
 * (the 2 names tb_backend's layout: it goes up whenever backend.h's
 * struct changes, so that a module of another build is refused by
 * dlsym, "no tb_module_backend_3", instead of being called through a
 * struct it does not share) and, once loaded, the backend it returns is listed in the
 * placeholder's place and used as it is: nothing is forwarded.  A module
 * that cannot be loaded is unavailable with dlopen's reason; a loaded
 * one answers the probe itself (src/backends/cuda/module.cu). */
#include <limits.h>
#include <stdbool.h>
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
static char cuda_path[PATH_MAX];   /* the file it came from */
static const char *cuda_from = ""; /* why that folder (module_source) */

/* Is this process the build tree's own tbench (TB_BUILD_DIR/tbench)?
 * Only then may it load modules from the build tree: an installed
 * binary, or a copy, must not run whatever a build folder holds now (a
 * folder that may since have been removed and re-created by someone
 * else, or rebuilt at another commit). */
static bool in_build_tree(void)
{
    char exe[PATH_MAX], dir[PATH_MAX];
    if (!realpath("/proc/self/exe", exe) || !realpath(TB_BUILD_DIR, dir))
        return false;
    char *slash = strrchr(exe, '/');
    if (!slash)
        return false;
    *slash = '\0';
    return !strcmp(exe, dir) && !strcmp(slash + 1, "tbench");
}

const char *tb_module_loaded(const char *name, const char **from)
{
    if (strcmp(name, "cuda") || !cuda_impl)
        return NULL;
    if (from)
        *from = cuda_from;
    return cuda_path;
}

/* Try dir/file; on success set *out.  Appends the dlerror to why.
 * The dlopen and dlsym are plugin.c's, shared with plugins. */
static int module_open(const char *dir, const char *file,
                       const tb_backend **out, char *why, size_t len)
{
    char path[PATH_MAX];
    snprintf(path, sizeof path, "%s/%s", dir, file);
    void *h, *fn;
    if (tb_dl_entry(path, "tb_module_backend_3", &h, &fn, why, len))
        return TB_EUNAVAILABLE;
    *out = ((tb_module_entry)(uintptr_t)fn)();
    if (!*out) {
        size_t used = strnlen(why, len);
        snprintf(why + used, len - used, "%s%.512s: tb_module_backend_3() "
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
    /* TBENCH_MODULE_DIR (explicit, and recorded in env.modules), the
     * build tree for the build's own executable only, the install
     * prefix */
    const char *env = getenv("TBENCH_MODULE_DIR");
    const struct {
        const char *dir, *from;
    } dirs[] = {{env && *env ? env : NULL, "TBENCH_MODULE_DIR"},
                {in_build_tree() ? TB_BUILD_MODULE_DIR "/cuda" : NULL,
                 "build tree"},
                {TB_MODULE_DIR, "install prefix"}};
    for (size_t i = 0; i < sizeof dirs / sizeof dirs[0]; i++) {
        if (dirs[i].dir && !module_open(dirs[i].dir, "tbench-cuda.so",
                                        &cuda_impl, why, sizeof why)) {
            snprintf(cuda_path, sizeof cuda_path, "%s/tbench-cuda.so",
                     dirs[i].dir);
            cuda_from = dirs[i].from;
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
