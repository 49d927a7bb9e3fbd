/* The CUDA module's counting pass (issue 12): CUPTI's Activity API
 * around k calls of a case, outside every timed sample.
 *
 * libcupti is loaded at run time with dlopen (tbench and the module do
 * not link it), from $TBENCH_CUPTI_LIB when set, else "libcupti.so" on
 * the library path, else the toolkit's lib64 and extras/CUPTI/lib64 this
 * build was configured with.  The pass enables the activity kinds
 * CONCURRENT_KERNEL, MEMCPY, MEMSET and MEMORY2 (as PyTorch's Kineto
 * does), synchronizes, runs the calls, synchronizes, disables the kinds,
 * flushes every buffer (forced) and tallies the records with
 * cupti_tally.c, adding the records CUPTI reports dropped for each
 * buffer.  Counts are per call; when they cannot be trusted the result
 * is not valid and says why, never zero:
 *   - libcupti cannot be loaded, or lacks a function;
 *   - its API version's record layouts differ from the headers built in;
 *   - CUPTI refuses (no driver, another profiler already subscribed,
 *     insufficient privileges): the call, CUPTI's message and number;
 *   - records were dropped, or a buffer could not be walked.
 * The pass is plain C (no cudart): the module hands it its synchronize
 * and, optionally, a C++ demangler, so the whole pass runs in a test
 * process without a GPU, where CUPTI refuses. */
#ifndef TB_BACKENDS_CUDA_CUPTI_PASS_H
#define TB_BACKENDS_CUDA_CUPTI_PASS_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#include "../backend.h"
#include "cupti_tally.h"

typedef struct tb_cupti_pass {
    /* Wait for all work queued on the device; 0 or a TB_E* code. */
    int (*sync)(void *arg);
    void *sync_arg;
    /* (optional) Write the demangled form of mangled into buf[0..len);
     * NULL keeps the names as CUPTI gives them. */
    void (*demangle)(const char *mangled, char *buf, size_t len);
} tb_cupti_pass;

/* Count what run(arg, iters) does on the device into *out (zeroed;
 * out->iters = iters).  Returns run's or sync's error (out not valid,
 * with that reason), else 0 with out->valid or out->reason set.  One
 * pass at a time per process. */
int tb_cupti_count(const tb_cupti_pass *p, tb_count_run_fn run, void *arg,
                   uint64_t iters, tb_dev_counts *out);

/* The per-call figures of a tally over iters calls into *out (zeroed
 * first; valid unless tb_cupti_per_iteration says why not), names through
 * demangle when not NULL.  Used by tb_cupti_count; tested on its own. */
void tb_cupti_to_counts(const tb_cupti_tally *t, uint64_t iters,
                        void (*demangle)(const char *, char *, size_t),
                        tb_dev_counts *out);

#ifdef __cplusplus
}
#endif

#endif
