#include "probe.h"

#include <string.h>
#include <sys/resource.h>

void tb_probe_take(tb_probe_snap *s, const tb_backend *b, void *ctx)
{
    struct rusage ru;
    memset(s, 0, sizeof *s);
    tb_alloc_stats_read(&s->alloc);
    if (b)
        tb_backend_counters_read(b, ctx, &s->be);
    if (getrusage(RUSAGE_SELF, &ru) == 0) {
        s->minflt = ru.ru_minflt;
        s->majflt = ru.ru_majflt;
        s->nvcsw = ru.ru_nvcsw;
        s->nivcsw = ru.ru_nivcsw;
    }
}

void tb_probe_diff(const tb_probe_snap *a, const tb_probe_snap *b,
                   uint64_t iters, tb_counters *out)
{
    double n = iters ? (double)iters : 1.0;
    memset(out, 0, sizeof *out);
    out->kernel_launches =
        (double)(b->be.kernel_launches - a->be.kernel_launches) / n;
    out->memcpy_count = (double)(b->be.memcpy_count - a->be.memcpy_count) / n;
    out->memcpy_bytes = (double)(b->be.memcpy_bytes - a->be.memcpy_bytes) / n;
    out->device_allocs =
        (double)(b->be.device_allocs - a->be.device_allocs) / n;
    out->device_alloc_bytes =
        (double)(b->be.device_alloc_bytes - a->be.device_alloc_bytes) / n;
    out->allocs = (double)(b->alloc.allocs - a->alloc.allocs) / n;
    out->alloc_bytes = (double)(b->alloc.bytes - a->alloc.bytes) / n;
    out->minor_faults = (double)(b->minflt - a->minflt) / n;
    out->major_faults = (double)(b->majflt - a->majflt) / n;
    out->vol_ctx_switches = (double)(b->nvcsw - a->nvcsw) / n;
    out->invol_ctx_switches = (double)(b->nivcsw - a->nivcsw) / n;
    out->peak_bytes = b->alloc.peak_bytes;
    out->peak_extra_bytes = b->alloc.peak_bytes - a->alloc.live_bytes;
    if (out->peak_extra_bytes < 0)
        out->peak_extra_bytes = 0;
}
