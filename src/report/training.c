/* The report's training sections and step-rate chart (training.h). */
#include "training.h"

#include <math.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/strbuf.h"
#include "compare.h"
#include "gpscript.h"
#include "mdtext.h"

/* Hook calls per pass of a model step: one per op of the tape (models.c:
 * the MLP's linear, linear, matmul, add, log_softmax, nll_loss; the CNN's
 * conv2d, relu, max_pool2d twice, then matmul, add, log_softmax,
 * nll_loss), forward and backward alike. */
#define MLP_OPS 6
#define CNN_OPS 10

#define M_MAIN TB_RSET_MASK(TB_ROLE_MAIN)
#define M_WITH TB_RSET_MASK(TB_ROLE_WITH)

#define sb tb_strbuf_add

/* ---- text ------------------------------------------------------------------ */

/* A time, or "-" when NAN. */
static const char *t_time(double ns, char *buf, size_t len)
{
    if (isnan(ns))
        return "-";
    return tb_report_fmt_time(ns, ns, buf, len);
}

/* The change from case a to case b by compare's one test (tb_cmp_pair):
 * d = b/a - 1 with its 95% CI [lo, hi]; noise, when compare's verdict
 * on the pair is neither regressed nor improved (the run cannot tell the
 * change from noise, or finds none), is the largest change it cannot
 * tell apart: the larger of compare's noise floor (the threshold, or the
 * runs' own noise when larger) and the CI's reach; 0 when compare
 * calls the change.  false when either case is missing or not timed. */
typedef struct {
    double d, lo, hi, noise;
} change;

static bool pair_change(const tb_rcase *a, const tb_rcase *b, change *c)
{
    if (!a || !b || !a->ok || !b->ok)
        return false;
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    tb_cmp_case v;
    if (tb_cmp_pair(a->rc, b->rc, &o, &v) || v.time == TB_TIME_NA ||
        isnan(v.change) || isnan(v.ci_lo) || isnan(v.ci_hi))
        return false;
    bool called = v.time == TB_TIME_REGRESSED || v.time == TB_TIME_IMPROVED;
    *c = (change){.d = v.change, .lo = v.ci_lo, .hi = v.ci_hi,
                  .noise = called ? 0
                                  : fmax(v.floor, fmax(-v.ci_lo, v.ci_hi))};
    return true;
}

/* An overhead of b over a as a fraction with its CI ("+5.2% (+3.1 to
 * +7.0)") when compare calls it, else "within noise (±2.1%)": noise is
 * never printed as a cost (or a negative one). */
static const char *t_ovh_pct(const tb_rcase *a, const tb_rcase *b,
                             char *buf, size_t len)
{
    change c;
    if (!pair_change(a, b, &c))
        return "-";
    if (c.noise > 0)
        snprintf(buf, len, "within noise (±%.1f%%)", 100 * c.noise);
    else
        snprintf(buf, len, "%+.1f%% (%+.1f to %+.1f)", 100 * c.d,
                 100 * c.lo, 100 * c.hi);
    return buf;
}

/* The same as a time per unit: (b - a) / units, with its CI, from a's
 * median ("+1.23 us (0.9 to 1.5 us)", "within noise (±40 ns)"). */
static const char *t_ovh_time(const tb_rcase *a, const tb_rcase *b,
                              double units, char *buf, size_t len)
{
    change c;
    if (!pair_change(a, b, &c) || !(units > 0))
        return "-";
    double base = a->median / units;
    char m[24], l[24], h[24];
    if (c.noise > 0) {
        double w = base * c.noise;
        snprintf(buf, len, "within noise (±%s)",
                 tb_report_fmt_time(w, w, m, sizeof m));
        return buf;
    }
    double v = base * c.d, vl = base * c.lo, vh = base * c.hi;
    tb_report_fmt_time(fabs(v), fabs(v), m, sizeof m);
    tb_report_fmt_time(fabs(vl), fabs(v), l, sizeof l);
    tb_report_fmt_time(fabs(vh), fabs(v), h, sizeof h);
    snprintf(buf, len, "%s%s (%s%s to %s%s)", v < 0 ? "-" : "+", m,
             vl < 0 ? "-" : "", l, vh < 0 ? "-" : "", h);
    return buf;
}

/* b's median / a's (the pool table: off / on) with the CI of compare's
 * test of b against a ("1.23x (1.10 to 1.35)") when compare calls it,
 * else "within noise (1 ±0.03x)". */
static const char *t_speedup(const tb_rcase *a, const tb_rcase *b,
                             char *buf, size_t len)
{
    change c; /* b / a - 1 */
    if (!pair_change(a, b, &c))
        return "-";
    if (c.noise > 0)
        snprintf(buf, len, "within noise (1 ±%.2fx)", c.noise);
    else
        snprintf(buf, len, "%.3gx (%.3g to %.3g)", 1 + c.d, 1 + c.lo,
                 1 + c.hi);
    return buf;
}

/* 3 significant digits (at least the units). */
static const char *t_num(double v, char *buf, size_t len)
{
    if (isnan(v))
        return "-";
    double a = fabs(v);
    snprintf(buf, len, "%.*f", a >= 100 || a == 0 ? 0 : a >= 10 ? 1 : 2, v);
    return buf;
}

static const char *t_bytes(double v, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB"};
    if (isnan(v))
        return "-";
    int u;
    v = tb_md_scale(v, 1024, 3, &u);
    char n[24];
    snprintf(buf, len, "%s %s", t_num(v, n, sizeof n), units[u]);
    return buf;
}

/* ---- cases ------------------------------------------------------------------ */

/* A parameter of c (a bool as 0/1), def when absent. */
static double param(const tb_rcase *c, const char *name, double def)
{
    return tb_rescase_param(c->rc, name, def);
}

/* The first dimension of the first input (the batch), 0 when none. */
static long batch_of(const tb_rcase *c)
{
    const tb_rescase *r = c->rc;
    return r->n_shapes && r->shapes[0].ndim ? (long)r->shapes[0].dim[0] : 0;
}

/* Elements of the first input. */
static double numel_of(const tb_rcase *c)
{
    double n = 1;
    for (int i = 0; c->rc->n_shapes && i < c->rc->shapes[0].ndim; i++)
        n *= c->rc->shapes[0].dim[i];
    return n;
}

static bool is_op(const tb_rcase *c, const char *op)
{
    return !strcmp(c->op, op);
}

static bool is_train(const tb_rcase *c)
{
    return is_op(c, "mlp_train_step") || is_op(c, "cnn_train_step");
}

static bool is_tfm(const tb_rcase *c)
{
    return is_op(c, "tfm_train_step") || is_op(c, "tfm_infer_step");
}

static bool is_step(const tb_rcase *c)
{
    return is_train(c) || is_op(c, "mlp_infer_step") ||
           is_op(c, "cnn_infer_step") || is_tfm(c);
}

/* The step-rate table's and chart's name of c's model step: the op;
 * the transformer block's with its sequence length, d_model and heads
 * (its series are by batch at each of them). */
static void step_label(const tb_rcase *c, char *buf, size_t len)
{
    const tb_rescase *r = c->rc;
    if (!is_tfm(c) || !r->n_shapes || r->shapes[0].ndim != 3) {
        snprintf(buf, len, "%s", c->op);
        return;
    }
    snprintf(buf, len, "%s (seq %lld, d_model %lld, %g heads)", c->op,
             (long long)r->shapes[0].dim[1], (long long)r->shapes[0].dim[2],
             param(c, "heads", 4));
}

static int ops_per_pass(const tb_rcase *c)
{
    return c->op[0] == 'c' ? CNN_OPS : MLP_OPS;
}

/* The ok case of roles mask whose op, shapes, dtype (and variant, for
 * MAIN) are c's and whose parameters are c's except those given (name,
 * value pairs ending with NULL). */
static const tb_rcase *find_like(const tb_rset *s, const tb_rcase *c,
                                 unsigned mask, ...)
{
    const char *names[6];
    double vals[6];
    int n = 0;
    va_list ap;
    va_start(ap, mask);
    const char *nm;
    while (n < 6 && (nm = va_arg(ap, const char *)) != NULL) {
        names[n] = nm;
        vals[n++] = va_arg(ap, double);
    }
    va_end(ap);
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *d = &s->cases[i];
        if (!d->ok || !(mask & (1u << d->role)) || strcmp(d->op, c->op) ||
            strcmp(d->shapes, c->shapes) || strcmp(d->dtype, c->dtype))
            continue;
        if (d->role == TB_ROLE_MAIN && c->role == TB_ROLE_MAIN &&
            strcmp(d->variant, c->variant))
            continue;
        bool match = true;
        for (int j = 0; j < c->rc->n_params; j++) {
            const char *pn = c->rc->params[j].name;
            double want = param(c, pn, NAN);
            for (int k = 0; k < n; k++)
                if (!strcmp(names[k], pn))
                    want = vals[k];
            if (param(d, pn, NAN) != want)
                match = false;
        }
        if (match)
            return d;
    }
    return NULL;
}

/* The PyTorch (WITH) case of c's key: the one with c's thread count,
 * else the first; NULL when none ran. */
static const tb_rcase *peer_of(const tb_rset *s, const tb_rcase *c)
{
    if (!c)
        return NULL;
    const tb_rcase *any = NULL;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *d = &s->cases[i];
        if (!d->ok || d->role != TB_ROLE_WITH || strcmp(d->key, c->key))
            continue;
        if (!strcmp(tb_rcase_threads(d), tb_rcase_threads(c)))
            return d;
        if (!any)
            any = d;
    }
    return any;
}

static double med(const tb_rcase *c)
{
    return c ? c->median : NAN;
}

static double counter(const tb_rcase *c, int k)
{
    return tb_rcase_counter(c, k);
}

/* Has an earlier ok case of mask (index < i, and pred true when given)
 * the same value of f? */
typedef void (*keyfn)(const tb_rcase *c, char *buf, size_t len);

static bool seen_if(const tb_rset *s, int i, unsigned mask, keyfn f,
                    bool (*pred)(const tb_rcase *c))
{
    char a[800], b[800];
    f(&s->cases[i], a, sizeof a);
    for (int k = 0; k < i; k++) {
        const tb_rcase *d = &s->cases[k];
        if (!d->ok || !(mask & (1u << d->role)) || (pred && !pred(d)))
            continue;
        f(d, b, sizeof b);
        if (!strcmp(a, b))
            return true;
    }
    return false;
}


/* ---- hooks ------------------------------------------------------------------- */

/* Hook groups: a model's train step at one shape, dtype, backend and
 * optimizer and pool setting (phase and hooks vary). */
static void hook_group(const tb_rcase *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s|%s|%s|%s|%g|%g|%g", c->op, c->shapes, c->dtype,
             c->variant, param(c, "lr", 0), param(c, "momentum", 0),
             param(c, "pool", 0));
}

/* The phase 0 case of hooks h (or of its forward hooks alone: backward
 * hooks do not run in phase 0). */
static const tb_rcase *fwd_case(const tb_rset *s, const tb_rcase *g,
                                unsigned mask, int h)
{
    const tb_rcase *f = find_like(s, g, mask, "phase", 0.0, "hooks",
                                  (double)h, (const char *)NULL);
    if (!f)
        f = find_like(s, g, mask, "phase", 0.0, "hooks", (double)(h & 1),
                      (const char *)NULL);
    return f;
}

static bool hook_case(const tb_rcase *c)
{
    return is_train(c) && param(c, "phase", 2) <= 1;
}

static void sec_hooks(const tb_rset *s, tb_strbuf *b)
{
    bool head = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || c->role != TB_ROLE_MAIN || !hook_case(c) ||
            seen_if(s, i, M_MAIN, hook_group, hook_case))
            continue;
        const tb_rcase *f0 = fwd_case(s, c, M_MAIN, 0);
        const tb_rcase *fb0 = find_like(s, c, M_MAIN, "phase", 1.0, "hooks",
                                        0.0, (const char *)NULL);
        bool hooked = false;
        for (int h = 1; h <= 3; h++)
            hooked = hooked || find_like(s, c, M_MAIN, "phase", 1.0, "hooks",
                                         (double)h, (const char *)NULL) ||
                     find_like(s, c, M_MAIN, "phase", 0.0, "hooks",
                               (double)h, (const char *)NULL);
        if (!f0 || !fb0 || !hooked)
            continue;
        if (!head) {
            sb(b,
                   "## Hooks\n\n"
                   "The model's training step (`*_train_step`) with no hook "
                   "and with hooks on every op of the tape: 1 a forward "
                   "hook, 2 a backward hook, 3 both (each counts its calls). "
                   "Forward is phase 0 (the forward pass, recorded on the "
                   "tape), forward+backward phase 1; backward = phase 1 - "
                   "phase 0, where phase 0 is the same hook setting's "
                   "(or, when that was not run, that of its forward hooks "
                   "alone: a backward hook does not run in phase 0). "
                   "Overhead = time with the hooks / time without - 1, of "
                   "the forward (phase 0) and of forward+backward (phase "
                   "1); per hook call = (phase 1 with the hooks - phase 1 "
                   "without) / hook calls per step, which are one per op "
                   "and pass (%d ops for the MLP, %d for the CNN). Each "
                   "overhead is compare's verdict on the two cases "
                   "(`tbench compare`'s test on their samples): the change "
                   "with its 95%% CI where compare calls it regressed or "
                   "improved, else \"within noise (±x)\", x the largest "
                   "change the run cannot tell from noise (compare's noise "
                   "floor, or the CI's reach when larger), so noise never "
                   "reads as a cost. "
                   "PyTorch: the same steps from the `--with` file, each "
                   "op a module with `register_forward_hook` / "
                   "`register_full_backward_hook`.\n\n"
                   "| Backend | Case | Hooks | Forward | Backward | "
                   "Forward+backward | Overhead forward | Overhead "
                   "fwd+bwd | Per hook call | PyTorch forward | PyTorch "
                   "backward | PyTorch fwd+bwd | PyTorch overhead fwd+bwd "
                   "| PyTorch per hook call |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                   "---|\n",
                   MLP_OPS, CNN_OPS);
            head = true;
        }
        const tb_rcase *pfb0 = peer_of(s, fb0);
        for (int h = 0; h <= 3; h++) {
            const tb_rcase *f = fwd_case(s, c, M_MAIN, h);
            const tb_rcase *fb = find_like(s, c, M_MAIN, "phase", 1.0,
                                           "hooks", (double)h,
                                           (const char *)NULL);
            const tb_rcase *fh = find_like(s, c, M_MAIN, "phase", 0.0,
                                           "hooks", (double)h,
                                           (const char *)NULL);
            if (!fb && !fh)
                continue;
            const tb_rcase *pf = f ? peer_of(s, f) : NULL;
            const tb_rcase *pfb = peer_of(s, fb);
            int calls = ops_per_pass(c) * (((h & 1) != 0) + ((h & 2) != 0));
            char a[32], bb[32], d[32], e[64], g[64], k[96], l[32], m[32],
                n[32], o[64], q[96];
            sb(b,
                   "| %s | %s/%s | %d | %s | %s | %s | %s | %s | %s | %s | "
                   "%s | %s | %s | %s |\n",
                   c->variant, c->op, c->shapes, h,
                   t_time(med(f), a, sizeof a),
                   t_time(f && fb ? med(fb) - med(f) : NAN, bb, sizeof bb),
                   t_time(med(fb), d, sizeof d),
                   h ? t_ovh_pct(f0, fh, e, sizeof e) : "-",
                   h ? t_ovh_pct(fb0, fb, g, sizeof g) : "-",
                   h ? t_ovh_time(fb0, fb, calls, k, sizeof k) : "-",
                   t_time(med(pf), l, sizeof l),
                   t_time(pf && pfb ? med(pfb) - med(pf) : NAN, m, sizeof m),
                   t_time(med(pfb), n, sizeof n),
                   h ? t_ovh_pct(pfb0, pfb, o, sizeof o) : "-",
                   h ? t_ovh_time(pfb0, pfb, calls, q, sizeof q) : "-");
        }
    }
    if (head)
        sb(b, "\n");
}

/* ---- API layers ---------------------------------------------------------------- */

static const char *const layer_name[] = {
    "raw kernel", "op-table dispatch", "tensor API (allocates, checks)",
    "tensor API + hook"};
static const char *const torch_layer[] = {
    "`torch.add(a, b, out=o)`", "`torch.ops.aten.add.out`", "`a + b`",
    "`a + b` in a module with a forward hook"};

static void api_group(const tb_rcase *c, char *buf, size_t len)
{
    snprintf(buf, len, "%s|%s|%s", c->variant, c->shapes, c->dtype);
}

static bool api_case(const tb_rcase *c)
{
    return is_op(c, "api_add") && param(c, "pool", 0) == 0;
}

static void sec_api(const tb_rset *s, tb_strbuf *b)
{
    /* groups in order of backend, then size */
    int *g = malloc((size_t)(s->n + 1) * sizeof *g);
    int ng = 0;
    if (!g) {
        b->oom = true;
        return;
    }
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (c->ok && c->role == TB_ROLE_MAIN && api_case(c) &&
            !seen_if(s, i, M_MAIN, api_group, api_case))
            g[ng++] = i;
    }
    for (int i = 1; i < ng; i++) /* stable: backend, then elements */
        for (int k = i; k > 0; k--) {
            const tb_rcase *x = &s->cases[g[k - 1]], *y = &s->cases[g[k]];
            int cv = strcmp(x->variant, y->variant);
            bool after = cv > 0 || (cv == 0 && numel_of(x) > numel_of(y));
            if (!after)
                break;
            int t = g[k - 1];
            g[k - 1] = g[k];
            g[k] = t;
        }
    bool head = false;
    for (int gi = 0; gi < ng; gi++) {
        const tb_rcase *c = &s->cases[g[gi]];
        const tb_rcase *raw = find_like(s, c, M_MAIN, "layer", 0.0,
                                        (const char *)NULL);
        if (!raw)
            continue;
        const tb_rcase *praw = peer_of(s, raw);
        if (!head) {
            sb(b,
                   "## API layers\n\n"
                   "The same add called four ways (`api_add`): layer 0 "
                   "the raw kernel (looked up once), 1 through the op "
                   "table's dispatch (looked up on every call), 2 through "
                   "the tensor-level API (a tape without gradients: shape "
                   "rule, an allocated result, the kernel, the result "
                   "freed), 3 that API with a forward hook registered. "
                   "Per call = median; over the raw kernel = per call - "
                   "layer 0's, in ns and as a fraction of layer 0's, with "
                   "the 95%% CI of `tbench compare`'s bootstrap of the two "
                   "cases' samples where compare's verdict on them is "
                   "regressed or improved; else \"within noise (±x)\", x "
                   "the largest change the run cannot tell from noise "
                   "(compare's noise floor, or the CI's reach when larger), "
                   "so noise never reads as a cost. "
                   "PyTorch's layers (from the `--with` file): 0 %s, 1 "
                   "%s, 2 %s, 3 %s; its cost is over its own layer 0.\n\n"
                   "| Backend | Elements | Layer | Per call | Over raw | "
                   "Over raw (%%) | PyTorch per call | PyTorch over its "
                   "layer 0 | PyTorch over (%%) |\n"
                   "|---|---|---|---|---|---|---|---|---|\n",
                   torch_layer[0], torch_layer[1], torch_layer[2],
                   torch_layer[3]);
            head = true;
        }
        for (int layer = 0; layer <= 3; layer++) {
            const tb_rcase *l = find_like(s, c, M_MAIN, "layer",
                                          (double)layer, (const char *)NULL);
            if (!l)
                continue;
            const tb_rcase *pl = peer_of(s, l);
            char a[32], bb[96], d[64], e[32], f[96], h[64];
            sb(b, "| %s | %.0f | %d %s | %s | %s | %s | %s | %s | %s |\n",
                   c->variant, numel_of(c), layer, layer_name[layer],
                   t_time(med(l), a, sizeof a),
                   layer ? t_ovh_time(raw, l, 1, bb, sizeof bb) : "-",
                   layer ? t_ovh_pct(raw, l, d, sizeof d) : "-",
                   t_time(med(pl), e, sizeof e),
                   layer ? t_ovh_time(praw, pl, 1, f, sizeof f) : "-",
                   layer ? t_ovh_pct(praw, pl, h, sizeof h) : "-");
        }
    }
    free(g);
    if (head)
        sb(b, "\n");
}

/* ---- step rates ------------------------------------------------------------------ */

/* The step-rate cases: the full training step (phase 2) or inference,
 * no hooks, no pool. */
static bool rate_case(const tb_rcase *c)
{
    return c->ok && is_step(c) && param(c, "hooks", 0) == 0 &&
           param(c, "pool", 0) == 0 && param(c, "phase", 2) == 2;
}

static const char *const step_ops[] = {"mlp_train_step", "mlp_infer_step",
                                       "cnn_train_step", "cnn_infer_step",
                                       "tfm_train_step", "tfm_infer_step"};

/* Series of the chart and rows of the table: op (with the transformer's
 * sequence length, d_model and heads), dtype, variant. */
static void series_key(const tb_rcase *c, char *buf, size_t len)
{
    char l[160];
    step_label(c, l, sizeof l);
    snprintf(buf, len, "%d|%s|%s|%s", c->doc, l, c->dtype, c->variant);
}

/* Indices of the rate cases of series i (same op, dtype, variant,
 * document) by batch.  Returns the count (at most max). */
static int series_cases(const tb_rset *s, int i, int *v, int max)
{
    int n = 0;
    char a[800], bb[800];
    series_key(&s->cases[i], a, sizeof a);
    for (int k = 0; k < s->n && n < max; k++) {
        if (!rate_case(&s->cases[k]))
            continue;
        series_key(&s->cases[k], bb, sizeof bb);
        if (!strcmp(a, bb))
            v[n++] = k;
    }
    for (int x = 1; x < n; x++)
        for (int k = x; k > 0 && batch_of(&s->cases[v[k - 1]]) >
                                     batch_of(&s->cases[v[k]]);
             k--) {
            int t = v[k - 1];
            v[k - 1] = v[k];
            v[k] = t;
        }
    return n;
}

static void sec_rates(const tb_rset *s, const tb_chart_list *charts,
                      const char *chart_dir, tb_strbuf *b)
{
    bool head = false;
    int v[64];
    for (size_t o = 0; o < sizeof step_ops / sizeof step_ops[0]; o++)
        for (int i = 0; i < s->n; i++) {
            const tb_rcase *c = &s->cases[i];
            if (c->role != TB_ROLE_MAIN || !rate_case(c) ||
                !is_op(c, step_ops[o]) ||
                seen_if(s, i, M_MAIN, series_key, rate_case))
                continue;
            if (!head) {
                sb(b,
                       "## Training and inference steps by batch\n\n"
                       "The MLP (784-256-128-10) and the CNN (conv 1->16, "
                       "max-pool, conv 16->32, max-pool, linear -> 10) on "
                       "MNIST-shaped batches, and the pre-norm transformer "
                       "block (`tfm_*`: causal attention and a 4x MLP, a "
                       "series by batch per sequence length): a training "
                       "step (forward, backward, sgd_momentum; `phase=2`) "
                       "and an inference step (the forward pass), no hooks, "
                       "no pool. "
                       "steps/s = 1 / median; samples/s = batch / median. "
                       "PyTorch: the same step from the `--with` file; "
                       "tbench / PyTorch = PyTorch's median / tbench's "
                       "(above 1: tbench is faster).\n\n"
                       "| Model step | Backend | Batch | Median | steps/s | "
                       "samples/s | PyTorch median | PyTorch steps/s | "
                       "PyTorch samples/s | tbench / PyTorch |\n"
                       "|---|---|---|---|---|---|---|---|---|---|\n");
                head = true;
            }
            int n = series_cases(s, i, v, 64);
            for (int k = 0; k < n; k++) {
                const tb_rcase *r = &s->cases[v[k]];
                const tb_rcase *p = peer_of(s, r);
                long B = batch_of(r);
                char a[32], bb[32], d[32], e[32], f[32], g[32], h[32],
                    l[160];
                step_label(r, l, sizeof l);
                sb(b, "| %s | %s | %ld | %s | %s | %s | %s | %s | %s | "
                          "%s |\n",
                       l, r->variant, B, t_time(med(r), a, sizeof a),
                       t_num(1e9 / med(r), bb, sizeof bb),
                       t_num(1e9 * (double)B / med(r), d, sizeof d),
                       t_time(med(p), e, sizeof e),
                       t_num(p ? 1e9 / med(p) : NAN, f, sizeof f),
                       t_num(p ? 1e9 * (double)B / med(p) : NAN, g, sizeof g),
                       p ? t_num(med(p) / med(r), h, sizeof h) : "-");
            }
        }
    if (!head)
        return;
    sb(b, "\n");
    for (int i = 0; charts && i < charts->n; i++)
        if (charts->v[i].rendered &&
            !strcmp(charts->v[i].name, TB_TRAINING_CHART))
            sb(b, "![%s](%s/%s.png)\n\n", charts->v[i].title,
                   chart_dir ? chart_dir : ".", charts->v[i].name);
}

/* ---- memory pool --------------------------------------------------------------------- */

static void sec_pool(const tb_rset *s, tb_strbuf *b)
{
    bool head = false;
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *on = &s->cases[i];
        if (!on->ok || on->role != TB_ROLE_MAIN ||
            param(on, "pool", 0) != 1)
            continue;
        const tb_rcase *off = find_like(s, on, M_MAIN, "pool", 0.0,
                                        (const char *)NULL);
        if (!off)
            continue;
        if (!head) {
            sb(b,
                   "## Memory pool\n\n"
                   "The same case with tensor memory from the caching pool "
                   "(`pool=1`: power-of-two size classes, blocks kept for "
                   "reuse across steps) and without it (`pool=0`: on a "
                   "host-memory backend the workload's block cache, exact "
                   "sizes kept for reuse, `impl` `tape(cpu+cache: ...)`; on "
                   "a device one backend allocation per tensor). Per step "
                   "(per call), from the "
                   "counters of the sampling phase: backend allocations "
                   "(`device_allocs`: what reached the backend's "
                   "allocator) and their bytes, page faults "
                   "(`minor_faults`) and the extra peak memory "
                   "(`peak_extra_bytes`). Pool hits per step = backend "
                   "allocations without the pool - with it (the step asks "
                   "for the same tensors either way). Speedup = median "
                   "off / median on, with the 95%% CI of compare's test on "
                   "the two cases' samples where its verdict is regressed "
                   "or improved, else \"within noise (1 ±x)\" (x: "
                   "compare's noise floor, or the CI's reach when "
                   "larger).\n\n"
                   "| Case | Backend | Pool off | Pool on | Speedup | "
                   "Backend allocs off | on | Pool hits | Bytes off | on | "
                   "Page faults off | on | Peak extra off | on |\n"
                   "|---|---|---|---|---|---|---|---|---|---|---|---|---|"
                   "---|\n");
            head = true;
        }
        char a[32], bb[32], d[64], e[32], f[32], g[32], h[32], k[32],
            l[32], m[32], n[32], o[32], name[300];
        /* the pair's OP[PARAMS] with pool=0/1 */
        const char *pp = strstr(off->opp, "pool=0");
        if (pp)
            snprintf(name, sizeof name, "%.*spool=0/1%s",
                     (int)(pp - off->opp), off->opp, pp + 6);
        else
            snprintf(name, sizeof name, "%s", off->opp);
        double da = counter(off, TB_RES_CTR_DEVICE_ALLOCS);
        double db = counter(on, TB_RES_CTR_DEVICE_ALLOCS);
        sb(b,
               "| %s/%s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s "
               "| %s | %s | %s |\n",
               name, off->shapes, on->variant,
               t_time(med(off), a, sizeof a), t_time(med(on), bb, sizeof bb),
               t_speedup(on, off, d, sizeof d), t_num(da, e, sizeof e),
               t_num(db, f, sizeof f), t_num(da - db, g, sizeof g),
               t_bytes(counter(off, TB_RES_CTR_DEVICE_ALLOC_BYTES), h,
                       sizeof h),
               t_bytes(counter(on, TB_RES_CTR_DEVICE_ALLOC_BYTES), k, sizeof k),
               t_num(counter(off, TB_RES_CTR_MINOR_FAULTS), l, sizeof l),
               t_num(counter(on, TB_RES_CTR_MINOR_FAULTS), m, sizeof m),
               t_bytes(counter(off, TB_RES_CTR_PEAK_EXTRA_BYTES), n, sizeof n),
               t_bytes(counter(on, TB_RES_CTR_PEAK_EXTRA_BYTES), o, sizeof o));
    }
    if (head)
        sb(b, "\n");
}

int tb_report_training(const tb_rset *s, const tb_chart_list *charts,
                       const char *chart_dir, char **md)
{
    tb_strbuf b = {0};
    sec_hooks(s, &b);
    sec_api(s, &b);
    sec_rates(s, charts, chart_dir, &b);
    tb_report_breakdown(s, &b);
    sec_pool(s, &b);
    *md = tb_strbuf_take(&b);
    return *md ? 0 : TB_ENOMEM;
}

/* ---- the chart --------------------------------------------------------------------------- */

static void series_title(const tb_rcase *c, char *buf, size_t len)
{
    char l[160];
    step_label(c, l, sizeof l);
    snprintf(buf, len, "%s %s %s", l, c->variant, c->dtype);
}

int tb_training_chart_write(const tb_rset *s, const tb_plot_opts *o,
                            bool *made, char *err, size_t errlen)
{
    *made = false;
    int sv[24], ns = 0, v[64];
    for (int i = 0; i < s->n && ns < 24; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!rate_case(c) || !(c->role == TB_ROLE_MAIN ||
                               c->role == TB_ROLE_WITH) ||
            seen_if(s, i, M_MAIN | M_WITH, series_key, rate_case))
            continue;
        if (series_cases(s, i, v, 64) >= 2)
            sv[ns++] = i;
    }
    if (ns == 0)
        return 0;
    const char *name = TB_TRAINING_CHART;
    FILE *d = tb_gp_open(o->dir, name, "dat", err, errlen);
    if (!d)
        return TB_EIO;
    for (int k = 0; k < ns; k++) {
        char t[600];
        series_title(&s->cases[sv[k]], t, sizeof t);
        fprintf(d, "%s# %s\n", k ? "\n\n" : "", t);
        int n = series_cases(s, sv[k], v, 64);
        for (int p = 0; p < n; p++) {
            const tb_rcase *c = &s->cases[v[p]];
            fprintf(d, "%ld %.9g # %s\n", batch_of(c),
                    1e9 * (double)batch_of(c) / c->median, c->shapes);
        }
    }
    int rc = tb_gp_close(d, o->dir, name, "dat", err, errlen);
    if (rc)
        return rc;
    FILE *f = tb_gp_open(o->dir, name, "gp", err, errlen);
    if (!f)
        return TB_EIO;
    tb_gp_head(f, name, TB_TRAINING_CHART_TITLE);
    fprintf(f, "set xlabel 'batch (samples per step)'\nset logscale x 2\n"
               "set ylabel 'samples/s (batch / median)'\nset logscale y\n"
               "set format y '%%.0s%%c'\n"
               "set offsets graph 0.05, graph 0.05, 0, 0\n");
    for (int pass = 0; pass < 2; pass++) {
        bool png = pass == 0;
        if (png ? !o->png : !o->svg)
            continue;
        if (png)
            fprintf(f, "set terminal pngcairo size 900,%d font 'sans,9' "
                       "noenhanced\nset output '%s.png'\n",
                    480 + 16 * ((ns + 1) / 2), name);
        else
            fprintf(f, "set terminal svg size 900,%d font 'sans,9' "
                       "noenhanced background '#ffffff'\nset output "
                       "'%s.svg'\n",
                    480 + 16 * ((ns + 1) / 2), name);
        fprintf(f, "plot ");
        for (int k = 0; k < ns; k++) {
            const tb_rcase *c = &s->cases[sv[k]];
            char t[600];
            series_title(c, t, sizeof t);
            fprintf(f, "%s'%s.dat' index %d using 1:2 with linespoints lw 2 "
                       "dt %d title ",
                    k ? ", \\\n     " : "", name, k,
                    c->role == TB_ROLE_WITH ? 2 : 1);
            tb_gp_str(f, t);
        }
        fprintf(f, "\n");
    }
    fprintf(f, "set output\n");
    rc = tb_gp_close(f, o->dir, name, "gp", err, errlen);
    *made = rc == 0;
    return rc;
}
