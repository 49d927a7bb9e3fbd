/* The report's sections on what the ops did besides time: kernel
 * launches and allocations, fused ops against their unfused forms,
 * scaling anomalies between sizes, and threads that slow a case down
 * (report_impl.h). */
#include "report_impl.h"

#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* ---- counters ------------------------------------------------------------ */

typedef struct {
    double lo, hi;
    bool any;
} range;

static void range_add(range *r, double v)
{
    if (isnan(v))
        return;
    if (!r->any || v < r->lo)
        r->lo = v;
    if (!r->any || v > r->hi)
        r->hi = v;
    r->any = true;
}

static const char *range_text(const range *r, bool bytes, char *buf,
                              size_t len)
{
    char a[32], z[32];
    if (!r->any)
        return "";
    if (bytes) {
        tb_md_bytes(r->lo, a, sizeof a);
        tb_md_bytes(r->hi, z, sizeof z);
    } else {
        tb_md_num(r->lo, a, sizeof a);
        tb_md_num(r->hi, z, sizeof z);
    }
    if (!strcmp(a, z))
        snprintf(buf, len, "%s", a);
    else
        snprintf(buf, len, "%s – %s", a, z);
    return buf;
}

/* The columns of the counters table: the schema's MAIN counters, then
 * its DEV ones when dev (TB_RES_COUNTERS); only those some case
 * recorded (a file from an older build lacks a newer counter). */
static int counter_columns(const bool *seen, bool dev, int *col)
{
    int n = 0;
    for (int pass = 0; pass < 2; pass++)
        for (int k = 0; k < TB_RES_NCOUNTERS_ALL; k++)
            if (tb_res_counter_of(k)->shown ==
                    (pass ? TB_RES_DEV : TB_RES_MAIN) &&
                (!pass || dev) && seen[k])
                col[n++] = k;
    return n;
}

void tb_rpt_counters(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    unsigned mask = M_MAIN | M_WITH;
    bool any = false, dev = false, seen[TB_RES_NCOUNTERS_ALL] = {false};
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, mask) || !c->counters)
            continue;
        any = true;
        for (int k = 0; k < TB_RES_NCOUNTERS_ALL; k++) {
            double v = tb_rcase_counter(c, k);
            seen[k] = seen[k] || !isnan(v);
            dev = dev || (tb_res_counter_of(k)->shown == TB_RES_DEV && v > 0);
        }
    }
    if (!any)
        return;
    int col[TB_RES_NCOUNTERS_ALL];
    int ncol = counter_columns(seen, dev, col);
    tb_strbuf *b = x->b;
    sb(b, "## Kernel launches and allocations per op\n\n"
          "Per call (iteration), counted over the whole sampling phase; a "
          "range covers the op's shapes, parameters and dtypes (and, for "
          "NumPy and PyTorch, thread counts). Kernel "
          "launches are what the backend counted (for the Python libraries: "
          "library calls per iteration); allocations come from the tracked "
          "allocator; peak extra is what the op held at its peak beyond its "
          "inputs and outputs.\n\n| Op | Backend |");
    for (int j = 0; j < ncol; j++)
        sb(b, " %s |", tb_res_counter_of(col[j])->title);
    sb(b, "\n|---|---|");
    for (int j = 0; j < ncol; j++)
        sb(b, "---|");
    sb(b, "\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || !tb_rpt_in(c, mask) || !c->counters ||
            tb_rpt_seen_before(x, i, mask, F_OPVAR, true))
            continue;
        range r[TB_RES_NCOUNTERS_ALL];
        memset(r, 0, sizeof r);
        for (int k = i; k >= 0; k = x->same_next[F_OPVAR][k]) {
            const tb_rcase *d = &s->cases[k];
            if (!d->ok || !d->counters)
                continue;
            for (int j = 0; j < ncol; j++)
                range_add(&r[j], tb_rcase_counter(d, col[j]));
        }
        char t[80], lab[256];
        if (c->role == TB_ROLE_WITH)
            tb_rpt_column_label(c, lab, sizeof lab);
        else
            snprintf(lab, sizeof lab, "%s", c->variant);
        sb(b, "| %s | %s |", c->op, lab);
        for (int j = 0; j < ncol; j++)
            sb(b, " %s |",
               range_text(&r[j], tb_res_counter_of(col[j])->unit ==
                                     TB_RES_BYTES, t, sizeof t));
        sb(b, "\n");
    }
    sb(b, "\n");
}

/* ---- fused vs unfused ---------------------------------------------------- */

/* "AxB" of the case's first output shape. */
static void out_shape(const tb_rcase *c, char *buf, size_t len)
{
    const tb_res_shape *o = c->rc->n_out_shapes ? &c->rc->out_shapes[0]
                                                : NULL;
    size_t u = 0;
    buf[0] = '\0';
    for (int i = 0; o && i < o->ndim; i++)
        if (u < len)
            u += (size_t)snprintf(buf + u, len - u, "%s%.0f", u ? "x" : "",
                                  o->dim[i]);
}

/* The unfused sequence of a fused case as keys of the ops it replaces:
 * add_relu(a, b) = add(a, b) + relu(out); linear(x, W, b) = matmul(x, W)
 * + add(out, b) + relu(out).  Returns the count (0: no known split).
 * The op table knows these steps (the *_unfused ops'), but a result
 * record does not name them, and the report reads records only. */
static int unfused_keys(const tb_rcase *c, char keys[3][600])
{
    char out[128];
    out_shape(c, out, sizeof out);
    if (!strcmp(c->op, "add_relu")) {
        snprintf(keys[0], 600, "add/%s/%s", c->shapes, c->dtype);
        snprintf(keys[1], 600, "relu/%s/%s", out, c->dtype);
        return 2;
    }
    if (!strcmp(c->op, "linear")) {
        const char *last = strrchr(c->shapes, ',');
        if (!last)
            return 0;
        snprintf(keys[0], 600, "matmul/%.*s/%s", (int)(last - c->shapes),
                 c->shapes, c->dtype);
        snprintf(keys[1], 600, "add/%s%s/%s", out, last, c->dtype);
        snprintf(keys[2], 600, "relu/%s/%s", out, c->dtype);
        return 3;
    }
    return 0;
}

/* A counter per iteration of an ok case ("-" when not recorded). */
static char *counter_text(const tb_rcase *c, int k, char *buf, size_t len)
{
    double v = tb_rcase_counter(c, k);
    if (!isnan(v))
        snprintf(buf, len, "%.3g", v);
    else
        snprintf(buf, len, "-");
    return buf;
}

/* The cost model's bytes of a case ("-" when the record has none). */
static char *model_bytes(const tb_rcase *c, char *buf, size_t len)
{
    if (isnan(c->bytes))
        snprintf(buf, len, "-");
    else
        tb_md_bytes(c->bytes, buf, len);
    return buf;
}

/* Kernel launches per call that fusion saved, from CUPTI (the cupti
 * object of docs/FORMAT.md): "5 of 6 (83%)" when both cases have counts,
 * else "not measured: REASON" (the first side without them). */
static char *launches_saved(const tb_rcase *fused, const tb_rcase *unf,
                            char *buf, size_t len)
{
    const tb_rescase *side[2] = {fused->rc, unf->rc};
    for (int i = 0; i < 2; i++) {
        if (side[i]->cupti_state == TB_RES_CUPTI_VALID)
            continue;
        const char *why = side[i]->cupti_state == TB_RES_CUPTI_NULL
                              ? side[i]->cupti_reason
                              : "the result file has no CUPTI counts";
        snprintf(buf, len, "not measured: %s", why);
        for (char *p = buf; *p; p++)
            if (*p == '|' || *p == '\n') /* keep the table intact */
                *p = '/';
        return buf;
    }
    double f = fused->rc->cupti_ctr[TB_RES_CUPTI_LAUNCHES];
    double u = unf->rc->cupti_ctr[TB_RES_CUPTI_LAUNCHES];
    if (u > 0)
        snprintf(buf, len, "%.3g of %.3g (%.0f%%)", u - f, u,
                 100 * (u - f) / u);
    else
        snprintf(buf, len, "%.3g of %.3g", u - f, u);
    return buf;
}

/* The fused op of an unfused composition's case: "add_relu_unfused/..."
 * -> "add_relu/..." (same params, shapes and dtype). */
static const tb_rcase *fused_of(const tb_rset *s, const tb_rcase *c)
{
    const char *u = strstr(c->key, "_unfused");
    if (!u || strcmp(c->category ? c->category : "", "unfused"))
        return NULL;
    char key[600];
    snprintf(key, sizeof key, "%.*s%s", (int)(u - c->key), c->key,
             u + strlen("_unfused"));
    return tb_rpt_find_key(s, c, key);
}

void tb_rpt_fused(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    bool header = false;
    /* 1. The compositions timed as one unit (ops *_unfused): a kernel
     * and a new tensor per step, beside the fused kernel. */
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *u = &s->cases[i];
        const tb_rcase *c = u->ok && tb_rpt_in(u, M_MAIN | M_WITH)
                                ? fused_of(s, u)
                                : NULL;
        if (!c)
            continue;
        if (!header) {
            sb(x->b, "## Fused vs unfused\n\n"
                     "A fused op against its composition timed as one "
                     "unit (`*_unfused`: one kernel and one new "
                     "intermediate tensor per step, as an eager framework "
                     "runs it), on the same backend; launches and "
                     "allocations are per call, as counted (the "
                     "backend's count); bytes moved are the op table's "
                     "model (the unfused form's counts its intermediates' "
                     "writes and reads where its op defines them); "
                     "launches saved are the kernels "
                     "the device ran, from CUPTI (`cupti` in the result "
                     "file).\n\n"
                     "| Op | Shapes | Dtype | Backend | Fused | Unfused "
                     "| Launches (fused / unfused) | Allocations (fused / "
                     "unfused) | Bytes moved, model (fused / unfused) | "
                     "Fused speedup | Launches saved (CUPTI) |\n"
                     "|---|---|---|---|---|---|---|---|---|---|---|\n");
            header = true;
        }
        char f[32], g[32], r[32], l1[16], l2[16], a1[16], a2[16],
            b1[32], b2[32], sv[300];
        sb(x->b, "| %s | %s | %s | %s | %s | %s | %s / %s | %s / %s | "
                 "%s / %s | %sx | %s |\n",
           c->opp, c->shapes, c->dtype, c->variant,
           tb_report_fmt_time(c->median, c->median, f, sizeof f),
           tb_report_fmt_time(u->median, c->median, g, sizeof g),
           counter_text(c, TB_RES_CTR_KERNEL_LAUNCHES, l1, sizeof l1),
           counter_text(u, TB_RES_CTR_KERNEL_LAUNCHES, l2, sizeof l2),
           counter_text(c, TB_RES_CTR_ALLOCS, a1, sizeof a1),
           counter_text(u, TB_RES_CTR_ALLOCS, a2, sizeof a2),
           model_bytes(c, b1, sizeof b1), model_bytes(u, b2, sizeof b2),
           tb_md_num(u->median / c->median, r, sizeof r),
           launches_saved(c, u, sv, sizeof sv));
    }
    if (header)
        sb(x->b, "\n");
    bool header2 = false;
    /* 2. Against the separate ops' cases, where the run has them. */
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        char keys[3][600];
        int nk = c->ok && tb_rpt_in(c, M_MAIN | M_WITH)
                     ? unfused_keys(c, keys)
                     : 0;
        const tb_rcase *part[3];
        double sum = 0;
        int k = 0;
        for (; k < nk; k++) {
            part[k] = tb_rpt_find_key(s, c, keys[k]);
            if (!part[k])
                break;
            sum += part[k]->median;
        }
        if (nk == 0 || k < nk)
            continue;
        if (!header2) {
            sb(x->b, "%s"
                     "A fused op against the ops it replaces, run one after "
                     "the other on the same backend (sum of their medians; "
                     "the intermediate results go through memory): "
                     "add_relu = add + relu, linear = matmul + add + relu."
                     "\n\n| Op | Shapes | Dtype | Backend | Fused | Unfused "
                     "| Unfused ops | Fused speedup |\n"
                     "|---|---|---|---|---|---|---|---|\n",
               header ? "" : "## Fused vs unfused\n\n");
            header2 = true;
        }
        char f[32], g[32], r[32];
        sb(x->b, "| %s | %s | %s | %s | %s | %s | ", c->opp, c->shapes,
           c->dtype, c->variant,
           tb_report_fmt_time(c->median, c->median, f, sizeof f),
           tb_report_fmt_time(sum, c->median, g, sizeof g));
        for (k = 0; k < nk; k++) {
            char m[32];
            sb(x->b, "%s%s %s", k ? " + " : "", part[k]->op,
               tb_report_fmt_time(part[k]->median, c->median, m, sizeof m));
        }
        sb(x->b, " | %sx |\n", tb_md_num(sum / c->median, r, sizeof r));
    }
    if (header2)
        sb(x->b, "\n");
}

/* ---- scaling anomalies --------------------------------------------------- */

/* What can explain a slow size, from the records: the working set
 * crossing a measured cache level ("working set L2 → L3", from the two
 * cases' roofline levels), then "minor_faults 0 → 12, invol_ctx_switches
 * 0 → 0.5" for the counters that rose. */
static void recorded_causes(const tb_rcase *a, const tb_rcase *z, char *buf,
                            size_t len)
{
    static const int ctr[] = {
        TB_RES_CTR_MINOR_FAULTS, TB_RES_CTR_MAJOR_FAULTS,
        TB_RES_CTR_VOL_CTX_SWITCHES, TB_RES_CTR_INVOL_CTX_SWITCHES};
    size_t u = 0;
    buf[0] = '\0';
    const char *la = a->rc->f.roofline_level, *lz = z->rc->f.roofline_level;
    if (la && lz && strcmp(la, lz))
        u += (size_t)snprintf(buf, len, "working set %s → %s", la, lz);
    for (size_t k = 0; k < sizeof ctr / sizeof ctr[0]; k++) {
        double va = tb_rcase_counter(a, ctr[k]),
               vz = tb_rcase_counter(z, ctr[k]);
        if (isnan(vz) || !(vz > (isnan(va) ? 0 : va)))
            continue; /* did not rise */
        char fa[32], fz[32];
        if (u < len)
            u += (size_t)snprintf(buf + u, len - u, "%s%s %s → %s",
                                  u ? ", " : "", tb_res_counter_name(ctr[k]),
                                  tb_md_num(va, fa, sizeof fa),
                                  tb_md_num(vz, fz, sizeof fz));
    }
    if (!u)
        snprintf(buf, len, "no cache level crossed, no counter rose");
}

void tb_rpt_scaling(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    double lim = x->o->anomaly > 0 ? x->o->anomaly : 3;
    int pairs = 0, flagged = 0;
    double worst = 0;
    tb_strbuf rows = {0};
    for (int i = 0; i < s->n; i++) {
        int *v;
        int n = tb_rpt_series_at(x, i, &v);
        for (int k = 1; k < n; k++) {
            const tb_rcase *a = &s->cases[v[k - 1]], *z = &s->cases[v[k]];
            double rw = tb_rpt_work(z) / tb_rpt_work(a);
            double rt = z->median / a->median;
            if (!(rw > 1) || !(a->median > 0))
                continue;
            pairs++;
            if (rt / rw > worst)
                worst = rt / rw;
            if (!(rt > lim * rw))
                continue;
            flagged++;
            char w1[32], t1[32], why[512];
            recorded_causes(a, z, why, sizeof why);
            sb(&rows, "| %s | %s | %s | %s | %s | %sx | %sx | %s |\n",
               a->opp, a->dtype, a->variant, a->shapes, z->shapes,
               tb_md_num(rw, w1, sizeof w1), tb_md_num(rt, t1, sizeof t1), why);
        }
        free(v);
    }
    if (pairs == 0 || rows.oom) {
        free(rows.p);
        return;
    }
    char l[32], w[32];
    sb(x->b, "## Scaling anomalies\n\n"
             "Between consecutive measured sizes of the same op, parameters, "
             "dtype and backend, a case is flagged when its time grows more "
             "than %s times faster than its work (FLOPs, else bytes of the "
             "cost model). Next to it, what the run recorded that can "
             "explain it: the working set crossing a measured cache level "
             "(the two cases' `roofline.level`), and the page faults and "
             "context switches per call (voluntary: the thread waited; "
             "involuntary: it was preempted) that rose, at the smaller "
             "size → the larger.\n\n",
       tb_md_num(lim, l, sizeof l));
    if (flagged)
        sb(x->b, "| Op | Dtype | Backend | From | To | Work grew | Time grew "
                 "| Recorded per call |\n"
                 "|---|---|---|---|---|---|---|---|\n%s\n",
           rows.p);
    else
        sb(x->b, "None of the %d pairs of consecutive sizes: time grew at "
                 "most %sx as fast as work.\n\n",
           pairs, tb_md_num(worst, w, sizeof w));
    free(rows.p);
}

/* ---- threads slower than one --------------------------------------------- */

/* Cases whose threads=N run `tbench compare` calls regressed against
 * the same case at threads=1 (tb_rpt_versus), with the context switches
 * per call the
 * run recorded on both sides: the usual cause on a loaded machine is a
 * thread that waits for a core. */
void tb_rpt_threads(const tb_rpt *x)
{
    const tb_rset *s = x->s;
    tb_strbuf rows = {0};
    int n = 0;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        const tb_rescase *r1 =
            c->ok && tb_rpt_in(c, M_MAIN)
                ? tb_resfile_one_thread(s->docs[c->doc].file, c->rc)
                : NULL;
        const tb_rcase *one = r1 ? tb_rset_case_of(s, c->doc, r1) : NULL;
        double p;
        if (!one || !one->ok || tb_rpt_versus(c, one, &p) >= 0)
            continue;
        char a[32], b[32], r[32], w1[32], w2[32], i1[32], i2[32];
        sb(&rows, "| %s | %s | %s | %s | %s | %s | %sx | %s → %s | %s → %s "
                  "|\n",
           c->opp, c->shapes, c->dtype, c->variant,
           tb_report_fmt_time(one->median, one->median, a, sizeof a),
           tb_report_fmt_time(c->median, c->median, b, sizeof b),
           tb_md_num(c->median / one->median, r, sizeof r),
           tb_md_num(tb_rcase_counter(one, TB_RES_CTR_VOL_CTX_SWITCHES), w1,
                     sizeof w1),
           tb_md_num(tb_rcase_counter(c, TB_RES_CTR_VOL_CTX_SWITCHES), w2,
                     sizeof w2),
           tb_md_num(tb_rcase_counter(one, TB_RES_CTR_INVOL_CTX_SWITCHES),
                     i1, sizeof i1),
           tb_md_num(tb_rcase_counter(c, TB_RES_CTR_INVOL_CTX_SWITCHES), i2,
                     sizeof i2));
        n++;
    }
    if (n && !rows.oom)
        sb(x->b, "## More threads, slower\n\n"
                 "Cases that ran significantly slower (the test `tbench "
                 "compare` uses) with several threads than with one, and "
                 "the context switches per call recorded for each: "
                 "voluntary ones mean a thread waited (for a core or for "
                 "the others), involuntary ones that it was preempted. On "
                 "a machine where other work holds a core, a second thread "
                 "costs more than it brings.\n\n"
                 "| Op | Shapes | Dtype | Backend | 1 thread | This | "
                 "Slower by | Voluntary switches/call (1 → this) | "
                 "Involuntary (1 → this) |\n"
                 "|---|---|---|---|---|---|---|---|---|\n%s\n",
           rows.p);
    free(rows.p);
}


/* ---- dtypes side by side ------------------------------------------------- */

/* The MAIN case of c's op, shapes and variant in dtype dt, or NULL. */
static const tb_rcase *in_dtype(const tb_rpt *x, const tb_rcase *c,
                                const char *dt)
{
    char key[600];
    snprintf(key, sizeof key, "%s/%s/%s", c->opp, c->shapes, dt);
    const tb_rcase *d = tb_rpt_find_key(x->s, c, key);
    return d && tb_rpt_in(d, M_MAIN) ? d : NULL;
}

void tb_rpt_dtypes(const tb_rpt *x)
{
    static const char *const other[] = {"f64", "bf16", "f16"};
    const tb_rset *s = x->s;
    bool header = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i], *d[3];
        if (!c->ok || !tb_rpt_in(c, M_MAIN) || strcmp(c->dtype, "f32"))
            continue;
        int n = 0;
        for (int k = 0; k < 3; k++)
            n += (d[k] = in_dtype(x, c, other[k])) != NULL;
        if (!n)
            continue;
        if (!header) {
            sb(x->b, "## Dtypes side by side\n\n"
                     "Each op and shape measured in f32 and another dtype "
                     "on the same backend: the median time per dtype, the "
                     "speedup over f32 (f32's time / this time: above 1 "
                     "is faster) and the largest relative error the check "
                     "found against the double-precision reference "
                     "(|got - ref| / |ref| over the elements, so a result "
                     "rounded to 0 near 0 counts 1; `-` when the check "
                     "projected, a big matmul, or recorded none).  bf16 and f16 are "
                     "storage formats computed in f32 and rounded once: "
                     "their errors are about half their epsilon (2^-8 = "
                     "0.0039, 2^-11 = 0.00049) by design, their tolerances "
                     "stated in it.\n\n"
                     "| Op | Shapes | Backend | Dtype | Median | vs f32 | "
                     "Max rel. error |\n"
                     "|---|---|---|---|---|---|---|\n");
            header = true;
        }
        const tb_rcase *row[4] = {c, d[0], d[1], d[2]};
        for (int k = 0; k < 4; k++) {
            const tb_rcase *r = row[k];
            if (!r)
                continue;
            char t[32], v[32], e[32];
            const char *how = r->rc->f.check_method;
            double err = how && !strcmp(how, "full")
                             ? r->rc->f.check_max_rel_err
                             : NAN;
            sb(x->b, "| %s | %s | %s | %s | %s | %s | %s |\n",
               k ? "" : c->opp, k ? "" : c->shapes, k ? "" : c->variant,
               r->dtype, tb_report_fmt_time(r->median, r->median, t, sizeof t),
               k ? tb_md_num(c->median / r->median, v, sizeof v) : "1",
               err == err ? (snprintf(e, sizeof e, "%.2g", err), e) : "-");
        }
    }
    if (header)
        sb(x->b, "\n");
}
