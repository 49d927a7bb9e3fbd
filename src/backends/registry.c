/* The list of backends tbench knows, in a fixed order.  Compiled-in
 * backends come first; module slots (loaded at run time) after. */
#include "backend.h"
#include "../base/error.h"

#include <string.h>

extern const tb_backend tb_backend_cpu;
/* Always listed: built without OpenBLAS it reports itself unavailable. */
extern const tb_backend tb_backend_blas;
extern const tb_backend tb_backend_cuda;

static const tb_backend *const backends[] = {
    &tb_backend_cpu,
    &tb_backend_blas,
    &tb_backend_cuda,
};

const tb_backend *const *tb_backend_list(int *n)
{
    *n = (int)(sizeof backends / sizeof backends[0]);
    return backends;
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
