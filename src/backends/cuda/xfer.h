/* Host-side arithmetic of the CUDA module's transfers and allocations
 * (transfer.cu, module.cu), in plain C so that tests/test_transfers.c
 * checks it on a machine without a GPU.  No CUDA types here. */
#ifndef TB_BACKENDS_CUDA_XFER_H
#define TB_BACKENDS_CUDA_XFER_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* Bytes of numel elements of esize bytes in *out; false (and *out
 * untouched) for a negative count, a zero element size, or a product
 * that does not fit in size_t. */
static inline bool tb_xfer_nbytes(int64_t numel, size_t esize, size_t *out)
{
    if (numel < 0 || esize == 0)
        return false;
    if ((uint64_t)numel > (uint64_t)SIZE_MAX / esize)
        return false;
    *out = (size_t)numel * esize;
    return true;
}

/* The size to allocate for a staging buffer of want bytes: at least one
 * byte (an empty tensor still gets a valid pointer), rounded up to the
 * 4 KiB page so that a pageable buffer starts and ends on page bounds.
 * 0 when the rounding overflows. */
static inline size_t tb_xfer_stage_size(size_t want)
{
    const size_t page = 4096;
    if (want == 0)
        want = 1;
    if (want > SIZE_MAX - (page - 1))
        return 0;
    return (want + page - 1) / page * page;
}

/* May a staging buffer of have bytes (page-locked or not) serve a copy of
 * want bytes from memory of the kind asked for?  Only a buffer of that
 * kind, large enough, and not more than 4x too large (a 256 MiB buffer is
 * not kept alive for a 64 KiB case; smaller cases after a big one get a
 * buffer of their own size, so the pages a copy touches are its own),
 * or the size tb_xfer_stage_size gives for want (so a small copy keeps
 * its one page). */
static inline bool tb_xfer_stage_reuse(size_t have, bool have_pinned,
                                       size_t want, bool want_pinned)
{
    if (have_pinned != want_pinned || have < want)
        return false;
    return have / 4 <= want || have <= tb_xfer_stage_size(want);
}

/* The pool axis of the cuda backend: its values as written in a config
 * ("false", "true", as the workload ops' bool parameter pool), 1 for a
 * stream-ordered pool, 0 for cudaMalloc/cudaFree per allocation, -1 for
 * anything else (NULL: the default, false). */
static inline int tb_xfer_pool_value(const char *v)
{
    if (!v || !strcmp(v, "false"))
        return 0;
    return !strcmp(v, "true") ? 1 : -1;
}

#endif
