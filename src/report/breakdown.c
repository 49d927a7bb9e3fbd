/* The report's per-op breakdown of the model steps (training.h): for
 * each MAIN workload case with a breakdown (docs/FORMAT.md, "Per-op
 * breakdown"), its five parts with the most time per step, the rest as
 * "other", the gap (the tape's own work) and the step they add up to. */
#include "training.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/strbuf.h"
#include "mdtext.h"

#define TOP_PARTS 5

#define sb tb_strbuf_add

/* Indices of b's parts (at most max) by time per step, most first
 * (ties: first call first); returns how many. */
static int by_time(const tb_res_breakdown *b, int *ix, int max)
{
    int n = 0;
    for (int i = 0; i < b->n_parts && n < max; i++) {
        int j = n++;
        while (j > 0 && b->parts[ix[j - 1]].ns < b->parts[i].ns) {
            ix[j] = ix[j - 1];
            j--;
        }
        ix[j] = i;
    }
    return n;
}

static const char *share(double frac, char *buf, size_t len)
{
    snprintf(buf, len, "%.1f%%", 100 * frac);
    return buf;
}

static void row(tb_strbuf *b, const char *name, const char *op,
                const char *kernel, const char *phase, const char *calls,
                double ns, double frac)
{
    char t[32], p[32], k[160];
    sb(b, "| %s | %s | %s | %s | %s | %s | %s |\n", name, op,
       tb_md_cell(kernel, k, sizeof k), phase, calls,
       tb_report_fmt_time(ns, ns, t, sizeof t), share(frac, p, sizeof p));
}

void tb_report_breakdown(const tb_rset *s, tb_strbuf *b)
{
    bool head = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || c->role != TB_ROLE_MAIN || !c->rc->has_breakdown)
            continue;
        const tb_res_breakdown *bd = &c->rc->breakdown;
        if (!head) {
            sb(b, "## Where a step's time goes\n\n"
                  "Per step of each model step, from its breakdown pass "
                  "after sampling (never inside the timed samples): every "
                  "kernel call of the tape clocked, the backend's sync "
                  "before the clock stops, the mean over the pass's steps "
                  "at or below its median step (a step the OS preempted "
                  "is left out; docs/FORMAT.md, \"Per-op breakdown\"). "
                  "The five ops "
                  "with the most time per step, then the rest as other; "
                  "gap = the pass's step - the sum of every op's time: "
                  "the tape's own work (shape rules, allocations, frees) "
                  "and the clock reads. Share = time / the pass's step, "
                  "so the rows of a case add up to its step.\n\n"
                  "| Case | Op | Kernel | Phase | Calls/step | Time/step | "
                  "Share |\n"
                  "|---|---|---|---|---|---|---|\n");
            head = true;
        }
        char name[600], calls[32];
        snprintf(name, sizeof name, "`%s`", c->id);
        int ix[64];
        int n = by_time(bd, ix, 64);
        double rest_ns = 0, rest_calls = 0;
        for (int j = 0; j < n; j++) {
            const tb_res_part *q = &bd->parts[ix[j]];
            if (j >= TOP_PARTS) {
                rest_ns += q->ns;
                rest_calls += q->calls;
                continue;
            }
            snprintf(calls, sizeof calls, "%g", q->calls);
            row(b, name, q->op, q->kernel, q->phase, calls, q->ns,
                bd->step_ns > 0 ? q->ns / bd->step_ns : 0);
        }
        if (n > TOP_PARTS) {
            char other[48];
            snprintf(other, sizeof other, "other (%d op%s)",
                     n - TOP_PARTS, n - TOP_PARTS > 1 ? "s" : "");
            snprintf(calls, sizeof calls, "%g", rest_calls);
            row(b, name, other, "-", "-", calls, rest_ns,
                bd->step_ns > 0 ? rest_ns / bd->step_ns : 0);
        }
        row(b, name, "gap (tape)", "-", "-", "-", bd->gap_ns,
            bd->gap_fraction);
        snprintf(calls, sizeof calls, "%.0f of %.0f steps",
                 bd->kept_steps, bd->steps);
        row(b, name, "step", "-", "-", calls, bd->step_ns, 1);
    }
    if (head)
        sb(b, "\n");
}
