/* The block scheduler of `tbench ab`: see ab_run.h. */
#include "ab_run.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/rng.h"

typedef struct side {
    const char *name; /* "OLD" or "NEW" */
    const char *exe;
    tb_xw *w;
} side;

/* The scheduler's state. */
typedef struct ab {
    const tb_plan *plan;
    const tb_ab_run_opts *o;
    const tb_ab_run_sink *sink;
    side sides[2];
    bool *done;  /* a case the sink is done with */
    int *order;  /* this block's order of the cases */
    tb_rng rng;
    volatile sig_atomic_t *stop;
    volatile sig_atomic_t never; /* *stop when the caller gave none */
    int max; /* blocks at most */
    char *err;
    size_t errlen;
} ab;

/* Start side s's worker and have it load the config.  0, or TB_EINVAL
 * with the message. */
static int side_start(ab *a, int s)
{
    side *d = &a->sides[s];
    char why[1024];
    int rc = tb_xw_start(&d->w, d->exe, why, sizeof why);
    if (!rc && (rc = tb_xw_load(d->w, a->o->config, why, sizeof why))) {
        tb_xw_stop(d->w);
        d->w = NULL;
    }
    if (!rc)
        return 0;
    snprintf(a->err, a->errlen, "ab: %s: %s", d->name, why);
    return TB_EINVAL;
}

/* With an output folder: side s's worker writes the results of its
 * block b as DIR/old|new/block-NN/results.json.  A worker that died
 * (or hung) after its last case of the block took that file with it:
 * the block's figures are already the sink's, so the sink is warned and
 * the blocks go on.  0, or TB_EIO when the worker could not write it. */
static int side_finish(ab *a, int s, int b)
{
    char path[4200], why[1024];
    if (!a->o->outdir)
        return 0;
    snprintf(path, sizeof path, "%s/%s/block-%02d", a->o->outdir,
             s ? "new" : "old", b + 1);
    int rc = tb_xw_finish(a->sides[s].w, path, why, sizeof why);
    if (rc == TB_EIO && a->sink->lost) {
        char msg[5400];
        snprintf(msg, sizeof msg,
                 "ab: %s: the worker of block %d stopped before writing "
                 "%s/results.json (%s); the block's figures are in the "
                 "verdicts, its results file is missing",
                 a->sides[s].name, b + 1, path, why);
        a->sink->lost(a->sink->ctx, s, b, msg);
        return 0;
    }
    if (rc) {
        snprintf(a->err, a->errlen, "ab: %s: writing %s: %s",
                 a->sides[s].name, path, why);
        return TB_EIO;
    }
    return 0;
}

/* Side s's worker stopped and a fresh one started. */
static int side_restart(ab *a, int s)
{
    tb_xw_stop(a->sides[s].w);
    a->sides[s].w = NULL;
    return side_start(a, s);
}

/* RUN case id (block b) on side s.  A worker found dead (killed
 * between cases, before it began this one) is replaced and asked again:
 * no case lost anything.  0, or TB_EIO (a second failure; a replacement
 * that would not start leaves its reason in a->err and the side's
 * worker NULL, which run_block then reports). */
static int send_run(ab *a, int s, const char *id, int b, int cpu)
{
    int blocks = a->o->blocks; /* the share of each block (ab_run.h) */
    if (!tb_xw_send_run(a->sides[s].w, id, b, blocks, cpu))
        return 0;
    if (side_restart(a, s))
        return TB_EIO;
    return tb_xw_send_run(a->sides[s].w, id, b, blocks, cpu);
}

/* Plan case k in block b on both builds, into r[0] (old) and r[1]. */
static void measure_pair(ab *a, int k, int b, tb_xw_block r[2])
{
    const tb_case *pc = &a->plan->cases[k];
    int first = (int)tb_rng_below(&a->rng, 2);
    if (a->o->duet) {
        for (int s = 0; s < 2; s++)
            if (send_run(a, s, pc->id, b, (s + b) % 2))
                memset(&r[s], 0, sizeof r[s]);
        for (int s = 0; s < 2; s++)
            tb_xw_recv_run(a->sides[s].w, pc->measure.timeout_s, a->stop,
                           &r[s]);
        return;
    }
    for (int t = 0; t < 2; t++) {
        int s = t ? 1 - first : first;
        memset(&r[s], 0, sizeof r[s]);
        if (!send_run(a, s, pc->id, b, -1))
            tb_xw_recv_run(a->sides[s].w, pc->measure.timeout_s, a->stop,
                           &r[s]);
        else
            snprintf(r[s].message, sizeof r[s].message,
                     "the worker is gone");
    }
}

/* Block b: fresh workers (after block 0), a fresh order, every case not
 * done for on both builds.  0 or an error. */
static int run_block(ab *a, int b)
{
    const tb_plan *plan = a->plan;
    int rc;
    /* A fresh worker process per block and build: what a process fixes
     * for its life (memory layout and page placement, the CPU it lands
     * on) then differs from block to block, as noise the test sees,
     * instead of biasing every block of a build alike. */
    for (int s = 0; s < 2 && b > 0; s++)
        if ((rc = side_finish(a, s, b - 1)) || (rc = side_restart(a, s)))
            return rc;
    for (int k = plan->n - 1; k > 0; k--) {
        int j = (int)tb_rng_below(&a->rng, (uint64_t)k + 1);
        int t = a->order[k];
        a->order[k] = a->order[j];
        a->order[j] = t;
    }
    for (int q = 0; q < plan->n && !*a->stop; q++) {
        int k = a->order[q];
        if (a->done[k])
            continue;
        if (a->sink->progress)
            a->sink->progress(a->sink->ctx, b, a->max, q, plan->n,
                              plan->cases[k].id);
        tb_xw_block r[2];
        measure_pair(a, k, b, r);
        if (*a->stop)
            break; /* its workers were killed mid-block: nothing judged */
        for (int s = 0; s < 2; s++) {
            if (!a->sink->block(a->sink->ctx, k, s, b, &r[s]))
                a->done[k] = true;
            /* A worker that died or hung is replaced for the cases that
             * follow; this case keeps its failure. */
            if (!tb_xw_alive(a->sides[s].w) && (rc = side_restart(a, s)))
                return rc;
        }
    }
    return 0;
}

int tb_ab_run(const tb_plan *plan, const tb_ab_run_opts *o,
              const tb_ab_run_sink *sink, tb_ab_run_out *out, char *err,
              size_t errlen)
{
    ab a = {.plan = plan, .o = o, .sink = sink, .err = err,
            .errlen = errlen,
            .sides = {{"OLD", o->exe[0], NULL}, {"NEW", o->exe[1], NULL}}};
    a.stop = o->stop ? o->stop : &a.never;
    memset(out, 0, sizeof *out);
    int rc = 0;
    for (int s = 0; s < 2 && !rc; s++)
        rc = side_start(&a, s);
    if (rc)
        goto out;
    a.done = calloc((size_t)plan->n, sizeof *a.done);
    a.order = calloc((size_t)plan->n, sizeof *a.order);
    if (!a.done || !a.order) {
        snprintf(err, errlen, "out of memory");
        rc = TB_ENOMEM;
        goto out;
    }
    for (int k = 0; k < plan->n; k++)
        a.order[k] = k;
    for (int s = 0; s < 2; s++)
        snprintf(out->build[s], sizeof out->build[s], "%s",
                 tb_xw_build(a.sides[s].w));
    if (sink->started)
        sink->started(sink->ctx, out->build[0], out->build[1]);
    tb_rng_seed(&a.rng, o->seed);
    a.max = sink->more && o->max_blocks > o->blocks ? o->max_blocks
                                                     : o->blocks;
    int b = 0;
    while (b < a.max && !*a.stop && !rc) {
        /* a block that fails part way does not count */
        if ((rc = run_block(&a, b)))
            break;
        b++;
        if (sink->more && !*a.stop && !sink->more(sink->ctx, b, a.done))
            break;
    }
    out->blocks = b;
    if (rc)
        goto out;
    if (sink->progress)
        sink->progress(sink->ctx, b, a.max, 0, plan->n, NULL);
    for (int s = 0; s < 2 && !*a.stop && !rc; s++)
        rc = side_finish(&a, s, b - 1);
    out->signal = *a.stop;
out:
    for (int s = 0; s < 2; s++)
        tb_xw_stop(a.sides[s].w);
    free(a.done);
    free(a.order);
    return rc;
}
