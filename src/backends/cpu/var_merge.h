/* var's blocks merged pairwise: the (count, mean, M2) of two parts
 * joined by Chan, Golub and LeVeque's update (M2 = M2a + M2b + delta^2
 * na nb / n, delta = mean_b - mean_a), in double, the parts of a lane
 * pushed in order onto a binary counter so that parts of equal size
 * join first (a tree of depth log2(blocks): each M2 sum of nonnegative
 * terms is rounded about log2(blocks) times, not once per block as by a
 * running merge).  Portable C, shared by the f32/bf16/f16 rows
 * (var_simd.h) and the f64 ones (f64_simd_impl.h). */
#ifndef TB_BACKENDS_CPU_VAR_MERGE_H
#define TB_BACKENDS_CPU_VAR_MERGE_H

typedef struct {
    double n, mean, m2;
} tb_var_part;

typedef struct {
    tb_var_part s[64];
    int lv[64]; /* a part of level l holds 2^l blocks */
    int top;
} tb_var_tree;

static inline tb_var_part tb_var_join(tb_var_part a, tb_var_part b)
{
    const double n = a.n + b.n, d = b.mean - a.mean;
    return (tb_var_part){n, a.mean + d * (b.n / n),
                         a.m2 + b.m2 + d * d * (a.n * (b.n / n))};
}

static inline void tb_var_push(tb_var_tree *t, tb_var_part p)
{
    int lv = 0;
    while (t->top > 0 && t->lv[t->top - 1] == lv) {
        p = tb_var_join(t->s[--t->top], p);
        lv++;
    }
    t->s[t->top] = p;
    t->lv[t->top++] = lv;
}

/* The join of every part pushed (at least one). */
static inline tb_var_part tb_var_total(tb_var_tree *t)
{
    tb_var_part p = t->s[--t->top];
    while (t->top > 0)
        p = tb_var_join(t->s[--t->top], p);
    return p;
}

#endif
