/* Tracked, 64-byte-aligned allocator.
 *
 * Every byte of tensor memory in tbench goes through tb_alloc() so the
 * harness can report allocations, bytes and peak usage per iteration.
 * Counters live in per-thread slots padded to a cache line (no contention
 * on the hot path); tb_alloc_stats_read() sums the slots.  Peak bytes is a
 * high-water mark of live bytes, kept per slot and summed on read, so with
 * several threads it is an upper bound of the true simultaneous peak. */
#ifndef TB_OPS_ALLOC_H
#define TB_OPS_ALLOC_H

#include <stddef.h>
#include <stdint.h>

#define TB_ALIGN 64
/* Blocks of at least TB_HUGE_MIN bytes are aligned to TB_HUGE_ALIGN (the
 * user pointer then sits TB_ALIGN bytes past that boundary) and advised
 * MADV_HUGEPAGE (Linux), so that where transparent huge pages are in
 * "madvise" mode (Debian's default) a large tensor is backed by 2 MiB
 * pages, as NumPy does for its arrays of 4 MiB and more: with 4 KiB
 * pages every streaming op at 1M f32 elements took ~2% longer than
 * NumPy's same loop (tbench ab, abs 1M: -2.6% with the advice).  A hint
 * only: refused, or THP "never", it changes nothing.  env.memory.
 * transparent_hugepage records the mode.  Such a block, freed, is kept
 * (a few, alloc.c) for the next request of its size, so a tensor
 * allocated per call is not faulted in again at every call. */
#define TB_HUGE_MIN ((size_t)4 << 20)
#define TB_HUGE_ALIGN ((size_t)2 << 20)

typedef struct tb_alloc_stats {
    uint64_t allocs;      /* successful tb_alloc() calls */
    uint64_t frees;       /* tb_free() calls with a non-NULL pointer */
    uint64_t bytes;       /* total bytes requested by tb_alloc() */
    int64_t live_bytes;   /* bytes allocated and not yet freed */
    int64_t peak_bytes;   /* high-water mark of live_bytes since reset */
} tb_alloc_stats;

/* Allocate size bytes aligned to TB_ALIGN.  size 0 returns a unique
 * non-NULL pointer that must still be freed.  NULL on failure. */
void *tb_alloc(size_t size);

/* Untracked memory for large buffers (tb_alloc's blocks, the peak's
 * bandwidth sets): *bytes (a multiple of align, align a power of two)
 * aligned to align, or, from TB_HUGE_MIN bytes on, *bytes rounded up to
 * a multiple of TB_HUGE_ALIGN, aligned to it and advised MADV_HUGEPAGE.
 * Freed by free().  NULL on failure. */
void *tb_alloc_pages(size_t align, size_t *bytes);

/* Free memory from tb_alloc(); NULL is accepted. */
void tb_free(void *p);

/* Sum of every thread's counters. */
void tb_alloc_stats_read(tb_alloc_stats *out);

/* Reset the peak of every slot to its current live bytes. */
void tb_alloc_peak_reset(void);

/* Fault injection for tests: after n more successful allocations, every
 * tb_alloc() fails.  n < 0 disables injection (the default). */
void tb_alloc_fail_after(long n);

#endif
