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

/* Each counter of the schema (TB_RES_COUNTERS) from the two snapshots:
 * a new counter's measurement goes here. */
void tb_probe_diff(const tb_probe_snap *a, const tb_probe_snap *b,
                   uint64_t iters, tb_counters *out)
{
    double n = iters ? (double)iters : 1.0;
    double *v = out->v;
    memset(out, 0, sizeof *out);
#define PER_ITER(f) ((double)(b->f - a->f) / n)
    v[TB_RES_CTR_KERNEL_LAUNCHES] = PER_ITER(be.kernel_launches);
    v[TB_RES_CTR_MEMCPY_COUNT] = PER_ITER(be.memcpy_count);
    v[TB_RES_CTR_MEMCPY_BYTES] = PER_ITER(be.memcpy_bytes);
    v[TB_RES_CTR_DEVICE_ALLOCS] = PER_ITER(be.device_allocs);
    v[TB_RES_CTR_DEVICE_ALLOC_BYTES] = PER_ITER(be.device_alloc_bytes);
    v[TB_RES_CTR_ALLOCS] = PER_ITER(alloc.allocs);
    v[TB_RES_CTR_ALLOC_BYTES] = PER_ITER(alloc.bytes);
    v[TB_RES_CTR_FREES] = PER_ITER(alloc.frees);
    v[TB_RES_CTR_MINOR_FAULTS] = PER_ITER(minflt);
    v[TB_RES_CTR_MAJOR_FAULTS] = PER_ITER(majflt);
    v[TB_RES_CTR_VOL_CTX_SWITCHES] = PER_ITER(nvcsw);
    v[TB_RES_CTR_INVOL_CTX_SWITCHES] = PER_ITER(nivcsw);
#undef PER_ITER
    v[TB_RES_CTR_PEAK_BYTES] = (double)b->alloc.peak_bytes;
    int64_t extra = b->alloc.peak_bytes - a->alloc.live_bytes;
    v[TB_RES_CTR_PEAK_EXTRA_BYTES] = extra > 0 ? (double)extra : 0;
}
