/* The block scheduler of `tbench ab`: two tbench builds measured in
 * randomized, interleaved blocks (RMIT, or duet), each build in exec'd
 * workers of its own (xworker.h).  The verdicts are the report's
 * (report/ab.h); this engine only measures.
 *
 * Every block visits the plan's cases in a fresh random order and runs
 * the two builds of each case in a random order; with duet, both at the
 * same time, each pinned to a CPU, the two CPUs swapped every block.  A
 * block is one round of the case (measure.rounds, as the worker counts
 * them: block 0 also checks it).  Each build gets a fresh worker process
 * per block, so what a process fixes for its life (memory layout, page
 * placement, the CPU it lands on) varies from block to block as noise
 * instead of biasing every block of one build alike; a worker that dies
 * or hangs (killed by a signal of its own too) is replaced for the cases
 * that follow, its case failed on that side; one found dead before it
 * began a case (killed between cases) is replaced and asked again; one
 * that died after its block's last case took the block's results file
 * with it (the sink's `lost`), and the blocks go on.  The order comes
 * from the seed alone, so a run can be repeated. */
#ifndef TB_HARNESS_AB_RUN_H
#define TB_HARNESS_AB_RUN_H

#include <signal.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "plan.h"
#include "xworker.h"

typedef struct tb_ab_run_opts {
    const char *exe[2]; /* the OLD and NEW tbench executables */
    const char *config; /* the config both builds load (plan is its plan) */
    int blocks;         /* blocks per case (6..64); each block samples
                           for a 1/blocks share of the case's measure
                           limits, as a round of that many would */
    int max_blocks;     /* with the sink's `more`: blocks at most (>=
                           blocks); 0: blocks */
    bool duet;          /* both builds at once, pinned to CPUs 0 and 1 */
    uint64_t seed;      /* of the order of the cases and the builds */
    /* NULL, or a folder: each worker writes the results of its block b as
     * OUTDIR/old|new/block-NN/results.json (NN = b + 1). */
    const char *outdir;
    /* The caller's stop flag (set by its signal handler to the signal),
     * or NULL.  A set flag ends the block loop: the workers measuring are
     * killed, their blocks never reach the sink, and nothing more is
     * written. */
    volatile sig_atomic_t *stop;
} tb_ab_run_opts;

/* Where the measurements go.  ctx is passed back to each slot. */
typedef struct tb_ab_run_sink {
    void *ctx;
    /* Block b of plan case k from build `side` (0 old, 1 new): its
     * status and figures (status_name "" and a message when the worker
     * could not be asked).  Returns false once the case is done for (a
     * failed block): later blocks then skip it.  Required. */
    bool (*block)(void *ctx, int k, int side, int b, const tb_xw_block *r);
    /* Both builds answered: what each says it is (optional). */
    void (*started)(void *ctx, const char *old_build,
                    const char *new_build);
    /* After every block, b blocks done (optional): false ends the run
     * there (the sink has what it needs, or its budget is spent); it
     * may mark cases in done[0..plan n) as finished, and later blocks
     * skip them. */
    bool (*more)(void *ctx, int b, bool *done);
    /* Case q (0-based, of n, in this block's order) of block b is about
     * to run (optional); id NULL: the blocks are over (clear the line). */
    void (*progress)(void *ctx, int b, int blocks, int q, int n,
                     const char *id);
    /* Block b's results file of build `side` was never written: its
     * worker died (or hung) after its last case of the block; msg says
     * so, in full (optional; without it, that is an error). */
    void (*lost)(void *ctx, int side, int b, const char *msg);
} tb_ab_run_sink;

typedef struct tb_ab_run_out {
    char build[2][256]; /* what the old and new build said they are */
    int blocks;         /* blocks run to the end (also when an error
                           stopped the next one) */
    int signal;         /* *stop when the blocks were stopped, else 0 */
} tb_ab_run_out;

/* Measure every case of plan (the plan of o->config) in o->blocks blocks
 * on both builds, handing each block to the sink.  Returns 0 (stopped by
 * *stop or not: out->signal); TB_EINVAL when a build cannot be started
 * or refuses the config (not a tbench that speaks protocol 1, a config
 * it cannot load; when out->blocks is 0 nothing can be judged, else a
 * replacement worker failed to start); TB_EIO when a worker could not
 * write its block's results; TB_ENOMEM.  err: a one-line message
 * ("ab: NEW: ...").  out->blocks is set on every return: the blocks
 * measured to the end before the error. */
int tb_ab_run(const tb_plan *plan, const tb_ab_run_opts *o,
              const tb_ab_run_sink *sink, tb_ab_run_out *out, char *err,
              size_t errlen);

#endif
