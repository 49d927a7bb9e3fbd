/* Counting CUPTI activity records: see cupti_tally.h. */
#include "cupti_tally.h"

#include <stdio.h>
#include <string.h>

/* The record structs below are those of CUPTI 13.0 (Kernel10, Memcpy6,
 * Memset4, Memory4); 13.1 brought Kernel11, and a build against other
 * headers would read the records with the wrong offsets: refuse it here
 * rather than at run time. */
#if CUPTI_API_VERSION / 100 != 1300
#error "cupti_tally.c reads CUPTI 13.0's record layouts: port it to this CUPTI (cupti_activity.h's CONCURRENT_KERNEL, MEMCPY, MEMSET and MEMORY2 records)"
#endif

void tb_cupti_tally_reset(tb_cupti_tally *t)
{
    memset(t, 0, sizeof *t);
}

static tb_cupti_dir direction(uint8_t copy_kind)
{
    switch (copy_kind) {
    case CUPTI_ACTIVITY_MEMCPY_KIND_HTOD: return TB_CUPTI_H2D;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOH: return TB_CUPTI_D2H;
    case CUPTI_ACTIVITY_MEMCPY_KIND_DTOD: return TB_CUPTI_D2D;
    default: return TB_CUPTI_OTHER;
    }
}

static void add_kernel(tb_cupti_tally *t, const char *name, uint64_t ns)
{
    t->kernels++;
    if (!name)
        name = "(unnamed)";
    for (int i = 0; i < t->n_kernels; i++) {
        if (!strncmp(t->kernel[i].name, name, TB_CUPTI_NAME_MAX - 1)) {
            t->kernel[i].count++;
            t->kernel[i].ns += ns;
            return;
        }
    }
    if (t->n_kernels == TB_CUPTI_MAX_KERNELS) {
        t->kernels_unlisted++;
        return;
    }
    tb_cupti_kernel *k = &t->kernel[t->n_kernels++];
    snprintf(k->name, sizeof k->name, "%s", name);
    k->count = 1;
    k->ns = ns;
}

void tb_cupti_tally_record(tb_cupti_tally *t, const CUpti_Activity *r)
{
    switch (r->kind) {
    case CUPTI_ACTIVITY_KIND_KERNEL:
    case CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL: {
        const CUpti_ActivityKernel10 *k = (const void *)r;
        add_kernel(t, k->name, k->end > k->start ? k->end - k->start : 0);
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMCPY: {
        const CUpti_ActivityMemcpy6 *m = (const void *)r;
        tb_cupti_dir d = direction(m->copyKind);
        t->memcpy_count[d]++;
        t->memcpy_bytes[d] += m->bytes;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMSET: {
        const CUpti_ActivityMemset4 *m = (const void *)r;
        t->memsets++;
        t->memset_bytes += m->bytes;
        break;
    }
    case CUPTI_ACTIVITY_KIND_MEMORY2: {
        const CUpti_ActivityMemory4 *m = (const void *)r;
        if (m->memoryOperationType ==
            CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_ALLOCATION) {
            t->allocs++;
            t->alloc_bytes += m->bytes;
        } else if (m->memoryOperationType ==
                   CUPTI_ACTIVITY_MEMORY_OPERATION_TYPE_RELEASE) {
            t->frees++;
            t->free_bytes += m->bytes;
        } else {
            t->other_records++;
        }
        break;
    }
    default:
        t->other_records++;
        break;
    }
}

int tb_cupti_tally_buffer(tb_cupti_tally *t, tb_cupti_next_fn next,
                          uint8_t *buf, size_t valid)
{
    CUpti_Activity *r = NULL;
    for (;;) {
        CUptiResult rc = next(buf, valid, &r);
        if (rc == CUPTI_ERROR_MAX_LIMIT_REACHED)
            return 0; /* the end of the buffer */
        if (rc != CUPTI_SUCCESS)
            return -1;
        tb_cupti_tally_record(t, r);
    }
}

bool tb_cupti_layout_ok(uint32_t runtime_version, char *why, size_t len)
{
    if (runtime_version == 130000) {
        /* fixed in 13.0 Update 1 (API 130001): NVIDIA's CUPTI release
         * notes, and every pass disables that kind */
        snprintf(why, len,
                 "CUPTI 13.0 (API 130000) may deadlock in "
                 "cuptiActivityDisable(CONCURRENT_KERNEL); use CUDA 13.0 "
                 "Update 1 or newer");
        return false;
    }
    if (runtime_version / 100 == CUPTI_API_VERSION / 100)
        return true;
    snprintf(why, len,
             "CUPTI API version %u.%u at run time, but this build reads the "
             "record layouts of %u.%u; rebuild tbench against this CUDA",
             runtime_version / 10000, runtime_version / 100 % 100,
             (unsigned)CUPTI_API_VERSION / 10000,
             (unsigned)CUPTI_API_VERSION / 100 % 100);
    return false;
}

void tb_cupti_per_iteration(const tb_cupti_tally *t, uint64_t iters,
                            tb_cupti_per_iter *out)
{
    memset(out, 0, sizeof *out);
    if (iters == 0) {
        snprintf(out->reason, sizeof out->reason,
                 "no iteration was counted");
        return;
    }
    if (t->dropped) {
        snprintf(out->reason, sizeof out->reason,
                 "CUPTI dropped %llu activity records, so the counts would "
                 "be low", (unsigned long long)t->dropped);
        return;
    }
    double k = (double)iters;
    out->valid = true;
    out->kernel_launches = (double)t->kernels / k;
    for (int d = 0; d < TB_CUPTI_NDIR; d++) {
        out->memcpy_count_dir[d] = (double)t->memcpy_count[d] / k;
        out->memcpy_bytes_dir[d] = (double)t->memcpy_bytes[d] / k;
        out->memcpy_count += out->memcpy_count_dir[d];
        out->memcpy_bytes += out->memcpy_bytes_dir[d];
    }
    out->memsets = (double)t->memsets / k;
    out->memset_bytes = (double)t->memset_bytes / k;
    out->device_allocs = (double)t->allocs / k;
    out->device_alloc_bytes = (double)t->alloc_bytes / k;
    out->device_frees = (double)t->frees / k;
    out->device_free_bytes = (double)t->free_bytes / k;
}
