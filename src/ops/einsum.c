/* einsum's equation parser and planner (einsum.h). */
#include "einsum.h"

#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "op_rules.h"

static int letter_index(char c)
{
    if (c >= 'a' && c <= 'z')
        return c - 'a';
    if (c >= 'A' && c <= 'Z')
        return 26 + c - 'A';
    return -1;
}

/* The characters outside terms: a bad one, or an ellipsis, named with
 * its position. */
static int check_chars(const char *opname, const char *eq, char *err,
                       size_t len)
{
    for (size_t i = 0; eq[i]; i++) {
        char c = eq[i];
        if (letter_index(c) >= 0 || c == ',')
            continue;
        if (c == '-' && eq[i + 1] == '>') {
            if (strstr(eq + i + 2, "->"))
                return tb_op_fail(err, len, TB_EPARAM,
                                  "%s: '%s': more than one '->'", opname,
                                  eq);
            i++;
            continue;
        }
        if (c == '.')
            return tb_op_fail(err, len, TB_EPARAM,
                              "%s: '%s': ellipsis ('...') is not supported: "
                              "name every dim with a letter",
                              opname, eq);
        return tb_op_fail(err, len, TB_EPARAM,
                          "%s: '%s': bad character '%c' at %zu (letters, "
                          "',' and one '->' only)",
                          opname, eq, c, i);
    }
    return 0;
}

/* Term text [s, e) of operand k (k < 0: the output) into t. */
static int read_term(const char *opname, const char *s, const char *e,
                     int k, tb_ein_term *t, char *err, size_t len)
{
    t->n = 0;
    for (const char *q = s; q < e; q++) {
        if (t->n == TB_MAX_DIMS) {
            char who[32];
            snprintf(who, sizeof who, k < 0 ? "the output" : "operand %d",
                     k);
            return tb_op_fail(err, len, TB_EPARAM,
                              "%s: %s has more than %d letters", opname, who,
                              TB_MAX_DIMS);
        }
        t->l[t->n++] = (int8_t)letter_index(*q);
    }
    return 0;
}

int tb_einsum_parse(const char *opname, const char *eq, const tb_shape *in,
                    int n, tb_einsum *e, char *err, size_t len)
{
    memset(e, 0, sizeof *e);
    int rc = check_chars(opname, eq, err, len);
    if (rc)
        return rc;
    const char *arrow = strstr(eq, "->");
    const char *lhs_end = arrow ? arrow : eq + strlen(eq);
    int terms = 1;
    for (const char *q = eq; q < lhs_end; q++)
        terms += *q == ',';
    if (terms != n) {
        char alt[48] = "";
        if (terms >= 1 && terms <= TB_MAX_INPUTS)
            snprintf(alt, sizeof alt, "; use %s%.0d", "einsum",
                     terms == 2 ? 0 : terms);
        return tb_op_fail(err, len, TB_EPARAM,
                          "%s: '%s' has %d operand%s, %s takes %d%s", opname,
                          eq, terms, terms == 1 ? "" : "s", opname, n, alt);
    }
    e->n_in = n;
    int seen_in[TB_EIN_LETTERS] = {0}, first_k[TB_EIN_LETTERS],
        first_d[TB_EIN_LETTERS];
    const char *s = eq;
    for (int k = 0; k < n; k++) {
        const char *c = s;
        while (c < lhs_end && *c != ',')
            c++;
        if (c == s)
            return tb_op_fail(err, len, TB_EPARAM,
                              "%s: '%s': operand %d has no letters", opname,
                              eq, k);
        if ((rc = read_term(opname, s, c, k, &e->in[k], err, len)))
            return rc;
        if (e->in[k].n != in[k].ndim) {
            char sh[96];
            tb_shape_format(&in[k], sh, sizeof sh);
            return tb_op_fail(err, len, TB_ESHAPE,
                              "%s: operand %d '%.*s' has %d letter%s, its "
                              "shape %s has %d dim%s",
                              opname, k, (int)(c - s), s, e->in[k].n,
                              e->in[k].n == 1 ? "" : "s", sh, in[k].ndim,
                              in[k].ndim == 1 ? "" : "s");
        }
        for (int d = 0; d < e->in[k].n; d++) {
            int l = e->in[k].l[d];
            if (seen_in[l] && e->size[l] != in[k].dim[d])
                return tb_op_fail(
                    err, len, TB_ESHAPE,
                    "%s: letter '%c' is %lld in operand %d (dim %d) but "
                    "%lld in operand %d (dim %d)",
                    opname, s[d], (long long)e->size[l], first_k[l],
                    first_d[l], (long long)in[k].dim[d], k, d);
            if (!seen_in[l]) {
                e->size[l] = in[k].dim[d];
                first_k[l] = k;
                first_d[l] = d;
            }
            seen_in[l]++;
        }
        s = c + 1;
    }
    if (arrow) {
        if ((rc = read_term(opname, arrow + 2, arrow + strlen(arrow), -1,
                            &e->out, err, len)))
            return rc;
        bool in_out[TB_EIN_LETTERS] = {false};
        for (int d = 0; d < e->out.n; d++) {
            int l = e->out.l[d];
            if (!seen_in[l])
                return tb_op_fail(err, len, TB_EPARAM,
                                  "%s: '%s': letter '%c' of the output is "
                                  "in no operand",
                                  opname, eq, arrow[2 + d]);
            if (in_out[l])
                return tb_op_fail(err, len, TB_EPARAM,
                                  "%s: '%s': letter '%c' appears twice in "
                                  "the output",
                                  opname, eq, arrow[2 + d]);
            in_out[l] = true;
        }
    } else {
        /* implicit: the letters seen once, in ASCII order (A-Z, a-z) */
        static const int ascii[TB_EIN_LETTERS] = {
            26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39, 40, 41,
            42, 43, 44, 45, 46, 47, 48, 49, 50, 51, 0,  1,  2,  3,  4,  5,
            6,  7,  8,  9,  10, 11, 12, 13, 14, 15, 16, 17, 18, 19, 20, 21,
            22, 23, 24, 25};
        for (int i = 0; i < TB_EIN_LETTERS; i++)
            if (seen_in[ascii[i]] == 1) {
                if (e->out.n == TB_MAX_DIMS)
                    return tb_op_fail(err, len, TB_EPARAM,
                                      "%s: '%s': the implicit output has "
                                      "more than %d letters",
                                      opname, eq, TB_MAX_DIMS);
                e->out.l[e->out.n++] = (int8_t)ascii[i];
            }
    }
    for (int l = 0; l < TB_EIN_LETTERS; l++)
        e->letter[l] = (char)(l < 26 ? 'a' + l : 'A' + l - 26);
    e->n_letters = TB_EIN_LETTERS;
    return 0;
}

void tb_einsum_out_shape(const tb_einsum *e, tb_shape *out)
{
    out->ndim = e->out.n;
    for (int d = 0; d < e->out.n; d++)
        out->dim[d] = e->size[e->out.l[d]];
}

int tb_einsum_of(const tb_op *op, const tb_shape *in, const tb_params *p,
                 tb_einsum *e, char *err, size_t len)
{
    const char *eq = tb_params_str(p, 0);
    if (!eq)
        return tb_op_fail(err, len, TB_EPARAM, "%s: no equation", op->name);
    return tb_einsum_parse(op->name, eq, in, op->n_in, e, err, len);
}

int tb_einsum_plan_of(const tb_op *op, const tb_shape *in,
                      const tb_params *p, tb_einsum *e, tb_ein_plan *pl)
{
    int rc = tb_einsum_of(op, in, p, e, NULL, 0);
    return rc ? rc : tb_einsum_plan(e, pl, NULL, 0);
}

/* ---- the plan ---------------------------------------------------------- */

static bool has(const tb_ein_term *t, int l)
{
    for (int i = 0; i < t->n; i++)
        if (t->l[i] == l)
            return true;
    return false;
}

static bool same(const tb_ein_term *a, const tb_ein_term *b)
{
    return a->n == b->n && !memcmp(a->l, b->l, (size_t)a->n);
}

static int64_t term_numel(const tb_einsum *e, const tb_ein_term *t)
{
    int64_t n = 1;
    for (int i = 0; i < t->n; i++)
        n *= e->size[t->l[i]];
    return n;
}

/* Letters of t (first occurrences, in t's order) that keep says stay. */
static tb_ein_term kept(const tb_ein_term *t, const bool *keep)
{
    tb_ein_term r = {0};
    for (int i = 0; i < t->n; i++)
        if (keep[t->l[i]] && !has(&r, t->l[i]))
            r.l[r.n++] = t->l[i];
    return r;
}

static void append(tb_ein_term *t, const tb_ein_term *u)
{
    for (int i = 0; i < u->n; i++)
        t->l[t->n++] = u->l[i];
}

/* Letters of `order` that are in set (membership by the term), in
 * order's order. */
static tb_ein_term pick(const tb_ein_term *order, const tb_ein_term *set)
{
    tb_ein_term r = {0};
    for (int i = 0; i < order->n; i++)
        if (has(set, order->l[i]))
            r.l[r.n++] = order->l[i];
    return r;
}

typedef struct planner {
    const tb_einsum *e;
    tb_ein_plan *pl;
    char *err;
    size_t len;
} planner;

static int new_slot(planner *P, const tb_ein_term *t)
{
    tb_ein_plan *pl = P->pl;
    if (pl->n_slots == TB_EIN_SLOTS)
        return -1;
    pl->term[pl->n_slots] = *t;
    pl->numel[pl->n_slots] = term_numel(P->e, t);
    return pl->n_slots++;
}

static tb_ein_step *new_step(planner *P)
{
    if (P->pl->n_steps == TB_EIN_STEPS)
        return NULL;
    tb_ein_step *s = &P->pl->step[P->pl->n_steps++];
    memset(s, 0, sizeof *s);
    return s;
}

static int too_big(planner *P)
{
    return tb_op_fail(P->err, P->len, TB_EPARAM,
                      "einsum: the plan needs more than %d steps or "
                      "buffers",
                      TB_EIN_STEPS);
}

/* A gather of slot a into dst_t: to a new buffer, or (to_out) the
 * output.  Returns the slot written, -1 for the output, or -2 (the plan
 * is full). */
static int gather(planner *P, int a, const tb_ein_term *dst_t, bool to_out)
{
    int dst = to_out ? -1 : new_slot(P, dst_t);
    tb_ein_step *s = dst == -1 && !to_out ? NULL : new_step(P);
    if (!s)
        return -2;
    s->kind = TB_EIN_GATHER;
    s->a = a;
    s->b = -1;
    s->dst = dst;
    s->dst_t = *dst_t;
    /* one add per element read beyond the first of each sum */
    int64_t out_n = term_numel(P->e, dst_t), all = 1;
    const tb_ein_term *src = &P->pl->term[a];
    for (int i = 0; i < src->n; i++) {
        bool dup = false;
        for (int j = 0; j < i; j++)
            dup |= src->l[j] == src->l[i];
        if (!dup)
            all *= P->e->size[src->l[i]];
    }
    s->flops = all > out_n ? (double)(all - out_n) : 0;
    if (all == out_n)
        P->pl->n_copies++;
    P->pl->flops += s->flops;
    return dst;
}

/* Cost (elements copied) of a GEMM layout and the terms it needs. */
typedef struct layout {
    tb_ein_term A, B, C;
    bool swap;
    double cost;
} layout;

/* Contract slots x and y into a new buffer (*res) or (final) the output
 * (*res = -1); keep marks the letters that stay.  0 or TB_EPARAM. */
static int contract(planner *P, int x, int y, const bool *keep, bool final,
                    int *res)
{
    tb_ein_plan *pl = P->pl;
    const tb_einsum *e = P->e;
    /* 1. diagonals and letters only x (y) has that do not stay */
    int xy[2] = {x, y};
    for (int r = 0; r < 2; r++) {
        const tb_ein_term *t = &pl->term[xy[r]], *o = &pl->term[xy[1 - r]];
        bool need[TB_EIN_LETTERS] = {false};
        for (int i = 0; i < t->n; i++)
            need[t->l[i]] = keep[t->l[i]] || has(o, t->l[i]);
        tb_ein_term u = kept(t, need);
        if (!same(&u, t)) {
            int s = gather(P, xy[r], &u, false);
            if (s < 0)
                return too_big(P);
            xy[r] = s;
        }
    }
    const tb_ein_term *X = &pl->term[xy[0]], *Y = &pl->term[xy[1]];
    tb_ein_term bt = {0}, kt = {0}, mt = {0}, nt = {0};
    for (int i = 0; i < X->n; i++) {
        int l = X->l[i];
        tb_ein_term *g = has(Y, l) ? (keep[l] ? &bt : &kt) : &mt;
        g->l[g->n++] = (int8_t)l;
    }
    for (int i = 0; i < Y->n; i++)
        if (!has(X, Y->l[i]))
            nt.l[nt.n++] = Y->l[i];
    if (bt.n + mt.n + nt.n > TB_EIN_TERM_MAX)
        return tb_op_fail(P->err, P->len, TB_EPARAM,
                          "einsum: an intermediate has more than %d letters",
                          TB_EIN_TERM_MAX);
    /* 2. the layout copying least: roles, then each group's order from
     * one of the terms that holds it (the output's first when final) */
    const tb_ein_term *out = &e->out;
    const tb_ein_term *bo[3] = {final ? out : X, X, Y};
    const tb_ein_term *mo[2] = {final ? out : X, X};
    const tb_ein_term *no[2] = {final ? out : Y, Y};
    const tb_ein_term *ko[2] = {X, Y};
    layout best = {.cost = -1};
    for (int sw = 0; sw < 2; sw++)
        for (int ib = 0; ib < 3; ib++)
            for (int im = 0; im < 2; im++)
                for (int in = 0; in < 2; in++)
                    for (int ik = 0; ik < 2; ik++) {
                        tb_ein_term B = pick(bo[ib], &bt),
                                    M = pick(mo[im], &mt),
                                    N = pick(no[in], &nt),
                                    K = pick(ko[ik], &kt);
                        layout L = {.swap = sw};
                        const tb_ein_term *lm = sw ? &N : &M,
                                          *rn = sw ? &M : &N;
                        append(&L.A, &B), append(&L.A, lm),
                            append(&L.A, &K);
                        append(&L.B, &B), append(&L.B, &K),
                            append(&L.B, rn);
                        append(&L.C, &B), append(&L.C, lm),
                            append(&L.C, rn);
                        const tb_ein_term *ta = sw ? Y : X,
                                          *tbb = sw ? X : Y;
                        L.cost = (same(&L.A, ta) ? 0
                                                 : (double)term_numel(e, ta)) +
                                 (same(&L.B, tbb)
                                      ? 0
                                      : (double)term_numel(e, tbb)) +
                                 (final && !same(&L.C, out)
                                      ? (double)term_numel(e, out)
                                      : 0);
                        if (best.cost < 0 || L.cost < best.cost)
                            best = L;
                    }
    int sa = best.swap ? xy[1] : xy[0], sb = best.swap ? xy[0] : xy[1];
    if (!same(&best.A, &pl->term[sa]) &&
        (sa = gather(P, sa, &best.A, false)) < 0)
        return too_big(P);
    if (!same(&best.B, &pl->term[sb]) &&
        (sb = gather(P, sb, &best.B, false)) < 0)
        return too_big(P);
    bool direct = final && same(&best.C, out);
    int dst = direct ? -1 : new_slot(P, &best.C);
    tb_ein_step *s = dst == -1 && !direct ? NULL : new_step(P);
    if (!s)
        return too_big(P);
    s->kind = TB_EIN_GEMM;
    s->a = sa;
    s->b = sb;
    s->dst = dst;
    s->dst_t = best.C;
    s->batch = term_numel(e, &bt);
    s->M = term_numel(e, best.swap ? &nt : &mt);
    s->N = term_numel(e, best.swap ? &mt : &nt);
    s->K = term_numel(e, &kt);
    s->flops = 2.0 * (double)s->batch * (double)s->M * (double)s->N *
               (double)s->K;
    pl->flops += s->flops;
    *res = dst;
    if (final && !direct && gather(P, dst, out, true) != -1)
        return too_big(P);
    return 0;
}

int tb_einsum_plan(const tb_einsum *e, tb_ein_plan *pl, char *err,
                   size_t len)
{
    memset(pl, 0, sizeof *pl);
    planner P = {e, pl, err, len};
    int live[TB_MAX_INPUTS], n = e->n_in;
    for (int k = 0; k < n; k++) {
        live[k] = k;
        pl->term[k] = e->in[k];
        pl->numel[k] = term_numel(e, &e->in[k]);
    }
    pl->n_slots = n;
    size_t pu = 0;
    while (n > 1) {
        /* the pair with the smallest result */
        int bi = 0, bj = 1;
        int64_t bsize = -1;
        bool bkeep[TB_EIN_LETTERS];
        for (int i = 0; i < n; i++)
            for (int j = i + 1; j < n; j++) {
                bool keep[TB_EIN_LETTERS] = {false};
                for (int d = 0; d < e->out.n; d++)
                    keep[e->out.l[d]] = true;
                for (int k = 0; k < n; k++)
                    if (k != i && k != j)
                        for (int d = 0; d < pl->term[live[k]].n; d++)
                            keep[pl->term[live[k]].l[d]] = true;
                tb_ein_term u = pl->term[live[i]];
                for (int d = 0; d < pl->term[live[j]].n; d++)
                    u.l[u.n++] = pl->term[live[j]].l[d];
                tb_ein_term r = kept(&u, keep);
                int64_t size = term_numel(e, &r);
                if (bsize < 0 || size < bsize) {
                    bsize = size, bi = i, bj = j;
                    memcpy(bkeep, keep, sizeof keep);
                }
            }
        if (pu < sizeof pl->pairs)
            pu += (size_t)snprintf(pl->pairs + pu, sizeof pl->pairs - pu,
                                   "%s(%d,%d)", pu ? "," : "", live[bi],
                                   live[bj]);
        int r = -1;
        int rc = contract(&P, live[bi], live[bj], bkeep, n == 2, &r);
        if (rc)
            return rc;
        live[bi] = r;
        for (int k = bj; k < n - 1; k++)
            live[k] = live[k + 1];
        n--;
    }
    if (e->n_in == 1 && gather(&P, 0, &e->out, true) != -1)
        return too_big(&P);
    return 0;
}

char *tb_einsum_plan_text(const tb_einsum *e, const tb_ein_plan *pl,
                          char *buf, size_t len)
{
    size_t u = 0;
    if (len)
        buf[0] = '\0';
    if (e->n_in > 2 && len) {
        int w = snprintf(buf, len, "pairs %s", pl->pairs);
        u = w < 0 ? 0 : (size_t)w;
    }
    for (int i = 0; i < pl->n_steps && u < len; i++) {
        const tb_ein_step *s = &pl->step[i];
        int w;
        if (s->kind == TB_EIN_GEMM)
            w = snprintf(buf + u, len - u,
                         "%sgemm b=%lld m=%lld n=%lld k=%lld", u ? "; " : "",
                         (long long)s->batch, (long long)s->M,
                         (long long)s->N, (long long)s->K);
        else {
            const tb_ein_term *t = &pl->term[s->a];
            bool diag = false;
            for (int a = 0; a < t->n; a++)
                for (int b = 0; b < a; b++)
                    diag |= t->l[a] == t->l[b];
            w = snprintf(buf + u, len - u, "%s%s %d", u ? "; " : "",
                         s->flops > 0 ? "sum" : diag ? "diagonal" : "permute",
                         s->a);
        }
        if (w < 0)
            break;
        u += (size_t)w;
    }
    return buf;
}

/* ---- the op table's rule and models ------------------------------------ */

/* einsum*: the equation parsed against the shapes, and planned (a plan
 * that does not fit is an error here, not in a kernel). */
int tb_rule_einsum(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t len)
{
    tb_einsum e;
    tb_ein_plan pl;
    int rc = tb_einsum_of(op, in, p, &e, err, len);
    if (rc || (rc = tb_einsum_plan(&e, &pl, err, len)))
        return rc;
    tb_einsum_out_shape(&e, out);
    return 0;
}

double tb_flops_einsum(const tb_op *op, const tb_shape *in,
                       const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)out, (void)dt;
    tb_einsum e;
    tb_ein_plan pl;
    if (tb_einsum_of(op, in, p, &e, NULL, 0) ||
        tb_einsum_plan(&e, &pl, NULL, 0))
        return 0;
    return pl.flops;
}

/* Terms of one output element's sum: the product of the summed letters'
 * sizes (the naive sum's length). */
double tb_rlen_einsum(const tb_op *op, const tb_shape *in,
                      const tb_shape *out, const tb_params *p, tb_dtype dt)
{
    (void)out, (void)dt;
    tb_einsum e;
    if (tb_einsum_of(op, in, p, &e, NULL, 0))
        return 1;
    bool used[TB_EIN_LETTERS] = {false};
    for (int k = 0; k < e.n_in; k++)
        for (int d = 0; d < e.in[k].n; d++)
            used[e.in[k].l[d]] = true;
    double n = 1;
    for (int l = 0; l < TB_EIN_LETTERS; l++)
        if (used[l] && !has(&e.out, l))
            n *= (double)e.size[l];
    return n;
}
