#include "plan.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../base/error.h"
#include "../base/grow.h"
#include "../base/strbuf.h"
#include "env.h"

/* FNV-1a, to mix the case id into the input seed: inputs depend on what
 * the case is, not on its position in the plan. */
static uint64_t hash_str(const char *s)
{
    uint64_t h = 1469598103934665603ull;
    for (; *s; s++)
        h = (h ^ (unsigned char)*s) * 1099511628211ull;
    return h;
}

/* The plan's storage: blocks of at least ARENA_BLOCK bytes, handed out
 * in multiples of 8 bytes (shapes hold int64_t) and freed together. */
struct tb_plan_block {
    struct tb_plan_block *next;
    size_t used, cap;
    double mem[]; /* cap bytes */
};
#define ARENA_BLOCK 65000

/* n bytes of plan p's storage, or NULL when out of memory. */
static void *arena_alloc(tb_plan *p, size_t n)
{
    n = (n + 7) & ~(size_t)7;
    struct tb_plan_block *b = p->arena;
    if (!b || b->cap - b->used < n) {
        size_t cap = n > ARENA_BLOCK ? n : ARENA_BLOCK;
        if (!(b = malloc(sizeof *b + cap)))
            return NULL;
        b->next = p->arena;
        b->used = 0;
        b->cap = cap;
        p->arena = b;
    }
    void *m = (char *)b->mem + b->used;
    b->used += n;
    return m;
}

/* A copy of s in plan p's storage, or NULL when out of memory. */
static const char *arena_str(tb_plan *p, const char *s)
{
    size_t n = strlen(s) + 1;
    char *m = arena_alloc(p, n);
    if (m)
        memcpy(m, s, n);
    return m;
}

/* A copy of the n shapes s in plan p's storage (at least `at_least`,
 * the rest zero), or NULL when out of memory. */
static const tb_shape *arena_shapes(tb_plan *p, const tb_shape *s, int n,
                                    int at_least)
{
    int k = n > at_least ? n : at_least;
    tb_shape *m = arena_alloc(p, (size_t)k * sizeof *m);
    if (m) {
        memset(m, 0, (size_t)k * sizeof *m);
        memcpy(m, s, (size_t)n * sizeof *m);
    }
    return m;
}

/* Point c->in and c->out at plan p's copies of in and out, shared by
 * the cases of one (shape, params); a single output of the first
 * input's shape shares its copy.  0 or TB_ENOMEM. */
static int keep_shapes(tb_plan *p, tb_case *c, const tb_shape *in,
                       const tb_shape *out)
{
    c->in = arena_shapes(p, in, c->n_in, c->op->n_in);
    if (c->in && c->op->n_out <= 1 && c->n_in >= 1 &&
        !memcmp(&c->in[0], &out[0], sizeof out[0]))
        c->out = c->in;
    else
        c->out = arena_shapes(p, out, c->op->n_out, 1);
    return c->in && c->out ? 0 : TB_ENOMEM;
}

/* c's id, written into buf (512 bytes), which c->id then points to. */
static void make_id(tb_case *c, char *buf)
{
    char prm[128], shp[160] = "", one[64], axes[128] = "";
    tb_params_format(c->op, &c->params, prm, sizeof prm);
    for (int i = 0; i < c->n_in; i++) {
        size_t u = strlen(shp);
        snprintf(shp + u, sizeof shp - u, "%s%s", i ? "," : "",
                 tb_shape_format(&c->in[i], one, sizeof one));
    }
    for (int i = 0; i < c->n_axes; i++) {
        size_t u = strlen(axes);
        snprintf(axes + u, sizeof axes - u, "%s%s=%s", i ? "," : "",
                 c->axis_name[i], c->axis_value[i]);
    }
    /* the layout's part (none for contiguous) after the op's forms */
    char lay[32] = "";
    if (c->layout != TB_LAYOUT_CONTIGUOUS)
        snprintf(lay, sizeof lay, "@layout=%s", tb_layout_name(c->layout));
    snprintf(buf, 512, "%s%s%s%s%s%s/%s/%s/%s%s%s%s%s",
             c->op->name, c->alloc_outputs ? "@alloc" : "", lay,
             prm[0] ? "[" : "", prm,
             prm[0] ? "]" : "", shp,
             tb_dtype_name(c->dtype), c->backend->name, axes[0] ? "[" : "",
             axes, axes[0] ? "]" : "", c->transfers ? "@transfers" : "");
    c->id = buf;
}

/* The plan being built, and a hash set of its ids (open addressing:
 * slot holds a case's index + 1, 0 when empty; at most half full), so
 * that finding a case named twice costs O(1), not a scan of the plan
 * (a plan of 100,000 cases took minutes). */
typedef struct {
    tb_plan *plan;
    int cap;
    int *slot;
    size_t nslot; /* a power of two */
    char id[512]; /* the id of the case being made */
} builder;

/* The slot of id in b's set: its case's, or the empty one where it
 * goes. */
static size_t id_slot(const builder *b, const char *id)
{
    size_t m = b->nslot - 1, k = tb_str_hash(id) & m;
    while (b->slot[k] && strcmp(b->plan->cases[b->slot[k] - 1].id, id))
        k = (k + 1) & m;
    return k;
}

/* Room in the set for one more id.  0 or TB_ENOMEM. */
static int id_room(builder *b)
{
    if (2 * ((size_t)b->plan->n + 1) <= b->nslot)
        return 0;
    size_t n = b->nslot ? 2 * b->nslot : 256;
    int *old = b->slot;
    size_t nold = b->nslot;
    if (!(b->slot = calloc(n, sizeof *b->slot))) {
        b->slot = old;
        return TB_ENOMEM;
    }
    b->nslot = n;
    for (size_t i = 0; i < nold; i++)
        if (old[i])
            b->slot[id_slot(b, b->plan->cases[old[i] - 1].id)] = old[i];
    free(old);
    return 0;
}

static int push(builder *b, const tb_case *c)
{
    if (id_room(b))
        return TB_ENOMEM;
    size_t k = id_slot(b, c->id);
    if (b->slot[k])
        return 0; /* the same case named twice runs once */
    tb_case *nc = tb_grow(b->plan->cases, &b->cap, b->plan->n, sizeof *nc,
                          64);
    if (!nc)
        return TB_ENOMEM;
    b->plan->cases = nc;
    const char *id = arena_str(b->plan, c->id);
    if (!id)
        return TB_ENOMEM;
    b->plan->cases[b->plan->n] = *c;
    b->plan->cases[b->plan->n++].id = id;
    b->slot[k] = b->plan->n;
    return 0;
}

/* Resolved backend entry: the backend, its axes, and per axis the
 * indices of the values to sweep. */
typedef struct {
    const tb_backend *be;
    bool available;
    char reason[256];
    const char *why; /* the plan's copy of reason ("" when available) */
    int n_axes;
    tb_axis axes[TB_MAX_AXES];
    int n_sel[TB_MAX_AXES];
    int sel[TB_MAX_AXES][TB_MAX_AXIS_VALUES];
} resolved;

/* ":LINE:COL" of a place in the config (buf), or "" when it has none. */
static const char *at(int line, int col, char buf[32])
{
    buf[0] = '\0';
    if (line > 0)
        snprintf(buf, 32, ":%d:%d", line, col);
    return buf;
}

static int resolve_backend(const tb_config *cfg, int bi,
                           const tb_cfg_backend *cb, resolved *r, char *err,
                           size_t len)
{
    char pos[32];
    memset(r, 0, sizeof *r);
    r->be = tb_backend_find(cb->name);
    if (!r->be) {
        int n;
        const tb_backend *const *all = tb_backend_list(&n);
        char names[256] = "";
        for (int i = 0; i < n; i++) {
            strncat(names, i ? ", " : "", sizeof names - strlen(names) - 1);
            strncat(names, all[i]->name, sizeof names - strlen(names) - 1);
        }
        snprintf(err, len, "%s%s: backends[%d]: unknown backend '%s' "
                 "(known: %s)", cfg->path, at(cb->line, cb->col, pos), bi,
                 cb->name, names);
        return TB_EINVAL;
    }
    /* the probe may load a module: r->be is then the module's backend */
    r->available =
        tb_backend_probe(&r->be, r->reason, sizeof r->reason) == 0;
    if (r->available)
        r->n_axes = r->be->axes(r->be, r->axes, TB_MAX_AXES);
    for (int a = 0; a < r->n_axes; a++) {
        r->n_sel[a] = 1;
        r->sel[a][0] = r->axes[a].def;
    }
    for (int ca = 0; ca < cb->n_axes; ca++) {
        const tb_cfg_axis *x = &cb->axes[ca];
        if (!r->available)
            continue; /* cannot validate axes of an absent backend */
        int a = 0;
        while (a < r->n_axes && strcmp(r->axes[a].name, x->name) != 0)
            a++;
        if (a >= r->n_axes || a >= TB_MAX_AXES) {
            snprintf(err, len, "%s%s: backends[%d]: backend '%s' has no "
                     "axis '%s'", cfg->path, at(x->line, x->col, pos), bi,
                     cb->name, x->name);
            return TB_EINVAL;
        }
        r->n_sel[a] = 0;
        for (int v = 0; v < x->n_values; v++) {
            int k = 0;
            while (k < r->axes[a].n_values &&
                   strcmp(r->axes[a].values[k], x->values[v]) != 0)
                k++;
            if (k == r->axes[a].n_values) {
                char vals[256] = "";
                for (int i = 0; i < r->axes[a].n_values; i++) {
                    strncat(vals, i ? ", " : "",
                            sizeof vals - strlen(vals) - 1);
                    strncat(vals, r->axes[a].values[i],
                            sizeof vals - strlen(vals) - 1);
                }
                snprintf(err, len, "%s%s: backends[%d].%s: value '%s' is "
                         "not offered by %s on this machine (values: %s)",
                         cfg->path, at(x->vline[v], x->vcol[v], pos), bi,
                         x->name, x->values[v], cb->name, vals);
                return TB_EINVAL;
            }
            r->sel[a][r->n_sel[a]++] = k;
        }
    }
    return 0;
}

/* Point r's axis names and values and its reason (why) at the plan's
 * copies, which its cases point to (a module's strings go when it is
 * unloaded).  0 or TB_ENOMEM. */
static int keep_strings(tb_plan *p, resolved *r)
{
    if (!(r->why = arena_str(p, r->available ? "" : r->reason)))
        return TB_ENOMEM;
    for (int a = 0; a < r->n_axes && a < TB_MAX_AXES; a++) {
        tb_axis *x = &r->axes[a];
        if (!(x->name = arena_str(p, x->name)))
            return TB_ENOMEM;
        for (int v = 0; v < x->n_values; v++)
            if (!(x->values[v] = arena_str(p, x->values[v])))
                return TB_ENOMEM;
    }
    return 0;
}

/* Memory one case needs: backend inputs and outputs, their host copies,
 * and the f64 reference outputs. */
static size_t case_mem(const tb_case *c)
{
    double n = 0, o = 0, ob = 0; /* elements; n and ob in bytes */
    for (int i = 0; i < c->op->n_in; i++) {
        tb_shape ps = c->in[i]; /* the layout's parent buffer */
        tb_layout_parent(c->layout, &c->in[i], &ps, NULL, 0);
        n += (double)tb_shape_numel(&ps) *
             (double)tb_dtype_size(tb_op_in_dtype(c->op, i, c->dtype));
    }
    for (int i = 0; i < c->op->n_out; i++) {
        o += (double)tb_shape_numel(&c->out[i]);
        ob += (double)tb_shape_numel(&c->out[i]) *
              (double)tb_dtype_size(tb_op_out_dtype(c->op, i, c->dtype));
    }
    double b = 2 * (n + ob) + o * 8;
    return b > 1.8e19 ? SIZE_MAX : (size_t)b;
}

/* Add every case of one backend entry for one (op, shape, params, dtype). */
static int add_axis_cases(builder *b, tb_case *c, const resolved *r, int a,
                          int *idx)
{
    if (a >= r->n_axes || a >= TB_MAX_AXES) {
        c->n_axes = r->n_axes;
        for (int i = 0; i < r->n_axes; i++) {
            c->axis_name[i] = r->axes[i].name;
            c->axis_value[i] = r->axes[i].values[idx[i]];
        }
        /* The seed from the id without the layout: a layout's case
         * draws the values of its contiguous twin. */
        tb_layout lay = c->layout;
        c->layout = TB_LAYOUT_CONTIGUOUS;
        make_id(c, b->id);
        uint64_t base = c->seed; /* the config's seed */
        c->seed = base ^ hash_str(c->id);
        c->layout = lay;
        make_id(c, b->id);
        int rc = push(b, c);
        c->seed = base;
        return rc;
    }
    for (int v = 0; v < r->n_sel[a]; v++) {
        idx[a] = r->sel[a][v];
        int rc = add_axis_cases(b, c, r, a + 1, idx);
        if (rc)
            return rc;
    }
    return 0;
}

/* Can case c's inputs take its layout?  0, or TB_ESHAPE with "layout:
 * ..." (the key path after "ops[N].") in err. */
static int layout_check(const tb_case *c, char *err, size_t len)
{
    if (c->layout == TB_LAYOUT_CONTIGUOUS)
        return 0;
    if (c->op->n_in == 0) {
        snprintf(err, len, "layout: %s has no inputs to lay out",
                 c->op->name);
        return TB_ESHAPE;
    }
    for (int i = 0; i < c->n_in; i++) {
        tb_shape ps;
        char why[160];
        if (tb_layout_parent(c->layout, &c->in[i], &ps, why, sizeof why)) {
            snprintf(err, len, "layout: input %d: %s", i, why);
            return TB_ESHAPE;
        }
    }
    return 0;
}

/* ":LINE:COL" of a shape entry, or "" when the position is unknown
 * (a config built in memory, e.g. by tbench exec). */
static const char *where(const tb_cfg_shapes *cs, char *buf, size_t len)
{
    buf[0] = '\0';
    if (cs->line > 0)
        snprintf(buf, len, ":%d:%d", cs->line, cs->col);
    return buf;
}

static int plan_config(builder *b, const tb_config *cfg,
                       const tb_plan_opts *opts, char *err, size_t len)
{
    char pos[32];
    resolved res[TB_CFG_MAX_BACKENDS + TB_PLAN_MAX_BACKENDS];
    int nres = 0, nb = opts->n_backends;
    if (nb < 0 || nb > TB_PLAN_MAX_BACKENDS) {
        snprintf(err, len, "--backend: at most %d backends",
                 TB_PLAN_MAX_BACKENDS);
        return TB_EINVAL;
    }
    bool listed[TB_PLAN_MAX_BACKENDS] = {false};
    for (int i = 0; i < cfg->n_backends; i++) {
        bool keep = nb == 0;
        for (int k = 0; k < nb; k++)
            if (!strcmp(opts->backends[k], cfg->backends[i].name))
                keep = listed[k] = true;
        if (!keep)
            continue;
        int rc = resolve_backend(cfg, i, &cfg->backends[i], &res[nres],
                                 err, len);
        if (rc)
            return rc;
        nres++;
    }
    for (int k = 0; k < nb; k++) { /* named, not in this config */
        bool dup = false;
        for (int j = 0; j < k; j++)
            dup |= !strcmp(opts->backends[j], opts->backends[k]);
        if (listed[k] || dup)
            continue;
        tb_cfg_backend only;
        memset(&only, 0, sizeof only);
        snprintf(only.name, sizeof only.name, "%s", opts->backends[k]);
        int rc = resolve_backend(cfg, 0, &only, &res[nres], err, len);
        if (rc) {
            snprintf(err, len, "--backend: unknown backend '%s'",
                     opts->backends[k]);
            return rc;
        }
        nres++;
    }
    for (int r = 0; r < nres; r++)
        if (keep_strings(b->plan, &res[r]))
            return TB_ENOMEM;
    unsigned long long mem = tb_env_mem_available();
    if (!mem)
        mem = tb_env_mem_total();

    for (int oi = 0; oi < cfg->n_ops; oi++) {
        const tb_cfg_op *co = &cfg->ops[oi];
        for (int si = 0; si < co->n_shapes; si++) {
            const tb_cfg_shapes *cs = &co->shapes[si];
            for (int pi = 0; pi < co->n_paramsets; pi++) {
                tb_case c;
                tb_shape in[TB_MAX_INPUTS] = {{0}}, out[TB_MAX_OUTPUTS];
                memset(&c, 0, sizeof c);
                memset(out, 0, sizeof out);
                c.warmup = cfg->warmup;
                c.measure = cfg->measure;
                c.seed = cfg->seed;
                c.op = co->op;
                c.n_in = tb_op_n_shapes(co->op);
                for (int i = 0; i < c.n_in; i++)
                    in[i] = cs->in[cs->n_in == 1 ? 0 : i];
                c.params = co->paramsets[pi];
                tb_params_defaults(c.op, &c.params);
                char why[256];
                if (tb_op_infer(c.op, in, c.n_in, &c.params, out, why,
                                sizeof why)) {
                    snprintf(err, len, "%s%s: ops[%d].shapes[%d]: %s",
                             cfg->path, where(cs, pos, sizeof pos), oi, si,
                             why);
                    return TB_ESHAPE;
                }
                if (keep_shapes(b->plan, &c, in, out))
                    return TB_ENOMEM;
                for (int d = 0; d < TB_DTYPE_COUNT; d++) {
                    bool on = co->has_dtypes ? co->dtypes[d] : cfg->dtypes[d];
                    if (!on)
                        continue;
                    c.dtype = (tb_dtype)d;
                    c.flops = c.op->flops(c.op, c.in, c.out, &c.params,
                                          c.dtype);
                    c.bytes = c.op->bytes(c.op, c.in, c.out, &c.params,
                                          c.dtype);
                    c.reduce_len = c.op->reduce_len
                                       ? c.op->reduce_len(c.op, c.in, c.out,
                                                          &c.params, c.dtype)
                                       : 1;
                    c.items = 0;
                    for (int i = 0; i < c.n_in; i++)
                        if ((double)tb_shape_numel(&c.in[i]) > c.items)
                            c.items = (double)tb_shape_numel(&c.in[i]);
                    if ((double)tb_shape_numel(&c.out[0]) > c.items)
                        c.items = (double)tb_shape_numel(&c.out[0]);
                    for (int l = 0; l < TB_LAYOUT_COUNT; l++) {
                    bool anyl = false; /* none: a config built in memory */
                    for (int k = 0; k < TB_LAYOUT_COUNT; k++)
                        anyl |= co->layouts[k];
                    if (anyl ? !co->layouts[l] : l != TB_LAYOUT_CONTIGUOUS)
                        continue;
                    c.layout = (tb_layout)l;
                    if (layout_check(&c, why, sizeof why)) {
                        snprintf(err, len, "%s%s: ops[%d].%s", cfg->path,
                                 where(cs, pos, sizeof pos), oi, why);
                        return TB_ESHAPE;
                    }
                    c.mem_bytes = case_mem(&c);
                    if (mem && c.mem_bytes > mem) {
                        snprintf(err, len,
                                 "%s%s: ops[%d].shapes[%d]: needs %.1f "
                                 "GiB (%s), the machine has %.1f GiB "
                                 "available",
                                 cfg->path, where(cs, pos, sizeof pos), oi,
                                 si,
                                 (double)c.mem_bytes / (1 << 30),
                                 tb_dtype_name(c.dtype),
                                 (double)mem / (1 << 30));
                        return TB_ESHAPE;
                    }
                    for (int r = 0; r < nres; r++)
                    for (int al = 0; al < 4; al++) {
                        /* neither set: a config built in memory */
                        bool any = co->alloc[0] || co->alloc[1];
                        if (any ? !co->alloc[al & 1] : (al & 1) == 1)
                            continue;
                        /* transfers (al >> 1): device memory only */
                        bool tr = al >> 1;
                        bool anyt = co->transfers[0] || co->transfers[1];
                        if ((anyt ? !co->transfers[tr] : tr) ||
                            (tr && !res[r].be->device_memory))
                            continue;
                        c.transfers = tr;
                        c.alloc_outputs = al & 1;
                        int idx[TB_MAX_AXES] = {0};
                        c.backend = res[r].be;
                        c.available = res[r].available;
                        c.unavailable_reason = res[r].why;
                        int rc = add_axis_cases(b, &c, &res[r], 0, idx);
                        if (rc)
                            return rc;
                    }
                    }
                }
            }
        }
    }
    return 0;
}

int tb_plan_build(const tb_config *cfgs, int n, const tb_plan_opts *opts,
                  tb_plan *plan, char *err, size_t errlen)
{
    tb_plan_opts none = {0};
    builder b = {.plan = plan};
    memset(plan, 0, sizeof *plan);
    if (!opts)
        opts = &none;
    for (int i = 0; i < n; i++) {
        int rc = plan_config(&b, &cfgs[i], opts, err, errlen);
        if (rc) {
            free(b.slot);
            tb_plan_free(plan);
            return rc;
        }
    }
    free(b.slot);
    if (opts->n_filters || opts->n_excludes) {
        int k = 0;
        for (int i = 0; i < plan->n; i++) {
            const char *id = plan->cases[i].id;
            bool keep = opts->n_filters == 0;
            for (int j = 0; j < opts->n_filters && !keep; j++)
                keep = tb_case_id_match(opts->filters[j], id);
            for (int j = 0; j < opts->n_excludes && keep; j++)
                keep = !tb_case_id_match(opts->excludes[j], id);
            if (keep)
                plan->cases[k++] = plan->cases[i];
        }
        plan->n = k;
    }
    return 0;
}

void tb_plan_free(tb_plan *plan)
{
    free(plan->cases);
    plan->cases = NULL;
    while (plan->arena) {
        struct tb_plan_block *next = plan->arena->next;
        free(plan->arena);
        plan->arena = next;
    }
    plan->n = 0;
}
