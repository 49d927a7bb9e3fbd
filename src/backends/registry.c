/* The list of backends tbench knows, in a fixed order.  Compiled-in
 * backends come first (a run-time module by its placeholder until the
 * module loads, then by the module's own backend); then the backends
 * registered at run time (plugins, plugin.c), in registration order.
 * The registry calls no other file: plugins and modules tell it. */
#include "backend.h"
#include "../base/error.h"

#include <stdio.h>
#include <string.h>

extern const tb_backend tb_backend_cpu;
/* Always listed: built without OpenBLAS it reports itself unavailable. */
extern const tb_backend tb_backend_blas;
/* The placeholder of the CUDA module (module.c). */
extern const tb_backend tb_backend_cuda;

#define N_BUILTIN 3

/* As compiled in, and as listed now (a loaded module in place of its
 * placeholder). */
static const tb_backend *const compiled[N_BUILTIN] = {
    &tb_backend_cpu,
    &tb_backend_blas,
    &tb_backend_cuda,
};
static const tb_backend *builtin[N_BUILTIN] = {
    &tb_backend_cpu,
    &tb_backend_blas,
    &tb_backend_cuda,
};
static const tb_backend *registered[TB_MAX_REGISTERED];
static int n_registered;

const tb_backend *const *tb_backend_list(int *n)
{
    static const tb_backend *all[N_BUILTIN + TB_MAX_REGISTERED];
    int k = 0;
    for (int i = 0; i < N_BUILTIN; i++)
        all[k++] = builtin[i];
    for (int i = 0; i < n_registered; i++)
        all[k++] = registered[i];
    *n = k;
    return all;
}

const tb_backend *tb_backend_find(const char *name)
{
    int n;
    const tb_backend *const *list = tb_backend_list(&n);
    for (int i = 0; name && i < n; i++)
        if (strcmp(list[i]->name, name) == 0)
            return list[i];
    return NULL;
}

int tb_backend_register(const tb_backend *b)
{
    if (!b || n_registered == TB_MAX_REGISTERED)
        return TB_EINVAL;
    registered[n_registered++] = b;
    return 0;
}

void tb_backend_replace(const tb_backend *placeholder,
                        const tb_backend *loaded)
{
    for (int i = 0; loaded && i < N_BUILTIN; i++)
        if (builtin[i] == placeholder)
            builtin[i] = loaded;
}

int tb_backend_probe(const tb_backend **b, char *reason, size_t len)
{
    const tb_backend *was = *b;
    int rc = was->probe(was, reason, len);
    for (int i = 0; i < N_BUILTIN; i++)
        if (compiled[i] == was)
            *b = builtin[i];
    return rc;
}

const tb_backend *tb_backend_host_cpu(void)
{
    int n;
    const tb_backend *const *list = tb_backend_list(&n);
    for (int i = 0; i < n; i++)
        if (list[i]->host)
            return list[i];
    return NULL;
}

int tb_backend_sync(const tb_backend *b, void *ctx)
{
    return b->sync ? b->sync(ctx) : 0;
}

void tb_backend_counters_read(const tb_backend *b, void *ctx,
                              tb_backend_counters *out)
{
    memset(out, 0, sizeof *out);
    if (b->counters)
        b->counters(ctx, out);
}

int tb_backend_count(const tb_backend *b, void *ctx, tb_count_run_fn run,
                     void *arg, uint64_t iters, tb_dev_counts *out)
{
    memset(out, 0, sizeof *out);
    out->iters = iters;
    if (b->count)
        return b->count(ctx, run, arg, iters, out);
    snprintf(out->reason, sizeof out->reason,
             "backend %s counts no device activity", b->name);
    return 0;
}

int tb_backend_timer_start(const tb_backend *b, void *ctx)
{
    return b->timer_start && b->timer_stop ? b->timer_start(ctx)
                                           : TB_EUNSUPPORTED;
}

int tb_backend_timer_stop(const tb_backend *b, void *ctx, double *ns)
{
    return b->timer_start && b->timer_stop ? b->timer_stop(ctx, ns)
                                           : TB_EUNSUPPORTED;
}

int tb_backend_sample_prep(const tb_backend *b, void *ctx)
{
    return b->sample_prep ? b->sample_prep(ctx) : 0;
}

int tb_backend_device_pci(const tb_backend *b, void *ctx, char *buf,
                          size_t len)
{
    if (!b->device_pci || !buf || !len)
        return TB_EUNSUPPORTED;
    return b->device_pci(ctx, buf, len);
}

int tb_backend_host_info(const tb_backend *b, const char *const *values,
                         tb_backend_host *out)
{
    memset(out, 0, sizeof *out);
    if (!b || !b->host)
        return TB_EUNSUPPORTED;
    return b->host(b, values, out);
}

int tb_backend_env_info(const tb_backend *b, const char *const *cpu_flags,
                        tb_backend_env *out)
{
    memset(out, 0, sizeof *out);
    if (!b || !b->env)
        return 0;
    return b->env(b, cpu_flags, out);
}
