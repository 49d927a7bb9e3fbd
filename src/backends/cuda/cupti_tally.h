/* Counting CUPTI activity records: what one iteration of a case did on
 * the GPU (issue 12).
 *
 * The CUDA module enables the activity kinds CONCURRENT_KERNEL, MEMCPY,
 * MEMSET and MEMORY2 for a separate counting pass (never inside timed
 * samples), runs k iterations, synchronizes, flushes, and hands every
 * completed buffer to tb_cupti_tally_buffer.  This file only walks
 * records, so it is tested on the CPU with buffers built by hand
 * (tests/test_cupti.c); it is plain C over CUPTI's headers and
 * cuptiActivityGetNextRecord.
 *
 * Record layouts change between CUPTI minor releases (Kernel10 in 13.0,
 * Kernel11 in 13.1): tb_cupti_layout_ok refuses a runtime CUPTI whose
 * API version's major.minor differs from the headers this file was
 * built with, and the counters are then null with that reason, never a
 * misread number. */
#ifndef TB_BACKENDS_CUDA_CUPTI_TALLY_H
#define TB_BACKENDS_CUDA_CUPTI_TALLY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cupti.h>

/* Copy directions counted apart. */
typedef enum {
    TB_CUPTI_H2D,
    TB_CUPTI_D2H,
    TB_CUPTI_D2D,
    TB_CUPTI_OTHER, /* host to host, arrays, peer to peer, unknown */
    TB_CUPTI_NDIR,
} tb_cupti_dir;

#define TB_CUPTI_MAX_KERNELS 32
#define TB_CUPTI_NAME_MAX 256

/* One kernel of the breakdown: its (mangled) name, launches and total
 * device time (end - start) in ns. */
typedef struct tb_cupti_kernel {
    char name[TB_CUPTI_NAME_MAX];
    uint64_t count;
    uint64_t ns;
} tb_cupti_kernel;

typedef struct tb_cupti_tally {
    uint64_t kernels;
    uint64_t memcpy_count[TB_CUPTI_NDIR], memcpy_bytes[TB_CUPTI_NDIR];
    uint64_t memsets, memset_bytes;
    uint64_t allocs, alloc_bytes, frees, free_bytes;
    uint64_t other_records; /* kinds not counted here */
    uint64_t dropped;       /* records CUPTI reported as dropped */
    /* The breakdown, in order of first launch; kernels beyond
     * TB_CUPTI_MAX_KERNELS distinct names add to kernels_unlisted. */
    int n_kernels;
    tb_cupti_kernel kernel[TB_CUPTI_MAX_KERNELS];
    uint64_t kernels_unlisted;
} tb_cupti_tally;

/* Zero every count. */
void tb_cupti_tally_reset(tb_cupti_tally *t);

/* Add one activity record to t. */
void tb_cupti_tally_record(tb_cupti_tally *t, const CUpti_Activity *r);

/* cuptiActivityGetNextRecord's type: the module loads libcupti at run
 * time and passes the function it found; a test passes the linked one. */
typedef CUptiResult (*tb_cupti_next_fn)(uint8_t *buf, size_t valid,
                                        CUpti_Activity **record);

/* Add every record of buf[0..valid) (a buffer CUPTI completed, or one
 * built the same way) to t, walking it with next (CUPTI's
 * cuptiActivityGetNextRecord).  Returns 0, or -1 when CUPTI reports an
 * error other than the end of the buffer (t then holds the records
 * before it). */
int tb_cupti_tally_buffer(tb_cupti_tally *t, tb_cupti_next_fn next,
                          uint8_t *buf, size_t valid);

/* May records be read with the layouts compiled in?  runtime_version is
 * cuptiGetVersion()'s.  False with the reason in why when the runtime's
 * major.minor differs from CUPTI_API_VERSION's. */
bool tb_cupti_layout_ok(uint32_t runtime_version, char *why, size_t len);

/* Per-iteration counters of a counting pass over `iters` iterations. */
typedef struct tb_cupti_per_iter {
    bool valid;       /* false: every figure is unknown (see reason) */
    char reason[200]; /* why not valid */
    double kernel_launches;
    double memcpy_count, memcpy_bytes; /* all directions */
    double memcpy_count_dir[TB_CUPTI_NDIR], memcpy_bytes_dir[TB_CUPTI_NDIR];
    double memsets, memset_bytes;
    double device_allocs, device_alloc_bytes, device_frees,
        device_free_bytes;
} tb_cupti_per_iter;

/* t divided by iters (>= 1).  Not valid when records were dropped (a
 * count would be low) or iters is 0: the reason says which. */
void tb_cupti_per_iteration(const tb_cupti_tally *t, uint64_t iters,
                            tb_cupti_per_iter *out);

#endif
