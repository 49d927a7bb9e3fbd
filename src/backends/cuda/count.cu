/* The cuda backend's counting pass (the `count` slot, backend.h): CUPTI
 * activity records around k calls of a case, through cupti_pass.c, with
 * the instance's synchronize and C++ demangled kernel names.  Built
 * without CUPTI's headers (TB_HAVE_CUPTI 0) it says so instead. */
#include <cstdlib>
#include <cstring>
#include <cxxabi.h>

#include "cuda_internal.cuh"

#ifndef TB_HAVE_CUPTI
#define TB_HAVE_CUPTI 0
#endif

#if TB_HAVE_CUPTI
#include "cupti_pass.h"

/* The whole device: the pass must see work on every stream finish. */
static int count_sync(void *arg)
{
    cu_ctx *c = (cu_ctx *)arg;
    int rc = cu_use_device(c->device);
    return rc ? rc : cu_err(cudaDeviceSynchronize());
}

static void count_demangle(const char *mangled, char *buf, size_t len)
{
    int st = 0;
    char *d = abi::__cxa_demangle(mangled, NULL, NULL, &st);
    snprintf(buf, len, "%s", st == 0 && d ? d : mangled);
    free(d);
}
#endif

int cu_count(void *ctx, tb_count_run_fn run, void *arg, uint64_t iters,
             tb_dev_counts *out)
{
#if TB_HAVE_CUPTI
    tb_cupti_pass p = {count_sync, ctx, count_demangle};
    return tb_cupti_count(&p, run, arg, iters, out);
#else
    (void)ctx;
    (void)run;
    (void)arg;
    memset(out, 0, sizeof *out);
    out->iters = iters;
    snprintf(out->reason, sizeof out->reason,
             "this CUDA module was built without CUPTI's headers");
    return 0;
#endif
}
