/* checkasm, part 3: the cpu backend's kernel table, walked (model: dav1d
 * tests/checkasm, whose family tests check whatever each context
 * installed, at every CPU flag level).
 *
 * Every op with rows in the table (kreg.h, tb_cpu_krows()) is a test
 * op_<name>, made from the table when the program starts (test_checkasm.c
 * main), so a row without a test cannot exist.  For each dtype the op
 * has a C row:
 *  - its family's input generator proposes cases (odd sizes and vector
 *    tails, broadcasts, axes, windows, parameters, sizes above the
 *    streaming-store thresholds where the pair has SIMD rows) and the
 *    op's own shape rule keeps those it accepts; a family that leaves
 *    no case fails the test;
 *  - inputs are drawn once per case (seeded) and the pair's C row runs
 *    on them (an instance of the scalar level, one thread);
 *  - then at every isa value of the backend (every level this machine
 *    has, and auto) and every thread count: the backend must hand out
 *    the pair's best row of that level (the first of the table's ladder
 *    at or below it), which runs on misaligned canary-guarded tensors
 *    (outputs that overwrite an input, as the optimizers' do, on a copy
 *    of it) and must leave every canary intact, match the reference
 *    (op->ref, with the harness's own check: the op's tolerance, or the
 *    identities of a factorization) and match the C row's outputs within
 *    the op's tolerance (bit for bit where the tolerance is 0).
 * Rows above this machine's level cannot run here; each test prints the
 * rows it ran and those it could not. */
#include <math.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <cmocka.h>

#include "tb_config.h"

#include "../testutil.h"

#include "backends/backend.h"
#include "backends/cpu/cpu_internal.h"
#include "backends/cpu/isa.h"
#include "backends/cpu/kreg.h"
#include "base/error.h"
#include "harness/check.h"
#include "ops/alloc.h"
#include "ops/op.h"
#include "ops/tensor.h"

#include "checkasm.h"

/* ---- cases: what a family proposes --------------------------------- */

#define MAXC 112
#define MAXP 4

typedef struct ocase {
    bool big; /* past the streaming-store thresholds: SIMD levels only */
    bool every; /* run in bf16/f16 too (not one case in two) */
    int n_sh; /* shapes: the inputs', or a creation op's output shape */
    tb_shape sh[TB_MAX_INPUTS];
    int np;
    const char *pn[MAXP];
    double pv[MAXP];
    const char *eq; /* einsum's equation (its string parameter) or NULL */
    const tb_domain *dom; /* the inputs' domains, or NULL: domain_of's */
    /* inputs: half test_value(true) (NaN, infinities, signed zeros,
     * subnormals, +-3e38 among values in [-2, 2]), half multiples of
     * 1/256 in [-2, 2] (halfway between two steps of 1/128: ties) */
    bool specials;
} ocase;

typedef struct cases {
    int n;
    ocase c[MAXC];
} cases;

/* Append a case of n shapes (tb_shape values). */
static ocase *cs_add(cases *cs, int n, ...)
{
    assert_true(cs->n < MAXC && n <= TB_MAX_INPUTS);
    ocase *c = &cs->c[cs->n++];
    memset(c, 0, sizeof *c);
    c->n_sh = n;
    va_list ap;
    va_start(ap, n);
    for (int i = 0; i < n; i++)
        c->sh[i] = va_arg(ap, tb_shape);
    va_end(ap);
    return c;
}

static ocase *oc_p(ocase *c, const char *name, double v)
{
    assert_true(c->np < MAXP);
    c->pn[c->np] = name;
    c->pv[c->np++] = v;
    return c;
}

/* The same case with one more parameter. */
static ocase *cs_with(cases *cs, const ocase *c, const char *name, double v)
{
    assert_true(cs->n < MAXC);
    ocase *d = &cs->c[cs->n++];
    *d = *c;
    return oc_p(d, name, v);
}

/* Lengths of 1-D cases: below, at and past both vector widths and their
 * unrolled steps, and one past a thread split. */
static const int lens[] = {1, 7, 15, 17, 513, 70001};
#define N_LENS ((int)(sizeof lens / sizeof lens[0]))

/* Does the pair have a SIMD row (in this build)? */
static bool has_simd_row(const tb_op *op)
{
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
        const tb_cpu_krow *r = tb_cpu_krow_find(rows, n, op->id,
                                                (tb_dtype)dt, TB_ISA_COUNT);
        if (r && r->min_isa > TB_ISA_SCALAR)
            return true;
    }
    return false;
}

/* Values of a float parameter other than its default, inside its
 * bounds: the parameter cases of every family. */
static void param_values(const tb_param_spec *ps, double v[2])
{
    v[0] = ps->def + 1;
    v[1] = ps->def / 2 - 0.25;
    for (int i = 0; i < 2; i++)
        v[i] = v[i] < ps->min ? ps->min : v[i] > ps->max ? ps->max : v[i];
}

/* ---- the families -------------------------------------------------- */

/* Element-wise (elementwise, activation; fused add_relu): every length,
 * a 3-D shape, broadcasts for two inputs, two values of every float
 * parameter, and a working set past the streaming-store thresholds
 * (64 MiB of inputs and output) where the pair has SIMD rows (run at the
 * SIMD levels only: the C level has no streaming stores). */
static void fam_elementwise(const tb_op *op, cases *cs)
{
    if (op->n_in == 1) {
        for (int i = 0; i < N_LENS; i++)
            cs_add(cs, 1, S(1, lens[i]));
        cs_add(cs, 1, S(3, 3, 5, 7));
        for (int k = 0; k < op->n_params; k++)
            if (op->params[k].kind == TB_PARAM_FLOAT) {
                double v[2];
                param_values(&op->params[k], v);
                for (int j = 0; j < 2; j++)
                    oc_p(cs_add(cs, 1, S(1, 513)), op->params[k].name, v[j]);
            }
        if (has_simd_row(op))
            cs_add(cs, 1, S(1, 8400000))->big = true;
        return;
    }
    for (int i = 0; i < N_LENS; i++)
        cs_add(cs, 2, S(1, lens[i]), S(1, lens[i]));
    cs_add(cs, 2, S(3, 3, 5, 7), S(3, 3, 5, 7));
    cs_add(cs, 2, S(2, 17, 513), S(1, 513));
    cs_add(cs, 2, S(2, 17, 513), S(2, 17, 1));
    cs_add(cs, 2, S(1, 1), S(1, 513));
    cs_add(cs, 2, S(1, 513), S(1, 1));
    cs_add(cs, 2, S(3, 5, 1, 7), S(3, 1, 3, 7));
    cs_add(cs, 2, S(2, 300, 301), S(1, 301));
    cs_add(cs, 2, S(1, 301), S(2, 300, 301)); /* a the broadcast row */
    /* one value a row, the other input whole: the row-broadcast loop
     * (kernels.h tb_cpu_binrows_fn), short rows and a long one */
    cs_add(cs, 2, S(2, 1030, 10), S(2, 1030, 1));
    cs_add(cs, 2, S(3, 2, 37, 1), S(3, 2, 37, 21));
    if (has_simd_row(op))
        cs_add(cs, 2, S(1, 5600000), S(1, 5600000))->big = true;
}

/* Reductions: every element (long lanes: blocks and threads), each axis
 * of 2-D and 3-D shapes (contiguous lanes, column tiles, more lanes
 * than a column call takes, argmax's lane blocks), keepdim, and var's
 * correction. */
static void fam_reduce(const tb_op *op, cases *cs)
{
    (void)op;
    for (int i = 0; i < N_LENS; i++)
        cs_add(cs, 1, S(1, lens[i]));
    cs_add(cs, 1, S(1, 200003));
    static const int ax2[][3] = {{17, 513, 0}, {17, 513, 1}, {513, 17, 0},
                                 {513, 17, -1}, {4, 2100, 1},
                                 {300, 301, 0}, {3, 70, -1},
                                 {5, 4100, 0}, {2, 140000, 1},
                                 {1030, 10, -1}, {37, 3, 1}, {40, 16, 1}};
    for (size_t i = 0; i < sizeof ax2 / sizeof ax2[0]; i++)
        oc_p(cs_add(cs, 1, S(2, ax2[i][0], ax2[i][1])), "axis", ax2[i][2]);
    oc_p(oc_p(cs_add(cs, 1, S(3, 3, 5, 7)), "axis", 1), "keepdim", 1);
    oc_p(cs_add(cs, 1, S(3, 2, 1030, 3)), "axis", 1);
    oc_p(oc_p(cs_add(cs, 1, S(2, 17, 513)), "axis", 0), "correction", 0);
    oc_p(oc_p(cs_add(cs, 1, S(1, 1031)), "axis", 0), "correction", 0);
}

/* softmax and log_softmax: rows of every length, many short rows, and
 * non-last axes (column tiles). */
static void fam_softmax(const tb_op *op, cases *cs)
{
    (void)op;
    for (int i = 0; i < N_LENS - 1; i++)
        cs_add(cs, 1, S(1, lens[i]));
    cs_add(cs, 1, S(1, 2500));
    cs_add(cs, 1, S(2, 4096, 10));
    cs_add(cs, 1, S(2, 33, 17));
    /* short rows in blocks of 4, 8, 16 rows and a tail (f64 avx2,
     * avx512; f32) */
    static const int sr[][2] = {{37, 1}, {40, 2}, {29, 7}, {35, 8},
                                {27, 9}, {50, 15}, {34, 16}, {45, 17}};
    for (size_t i = 0; i < sizeof sr / sizeof sr[0]; i++)
        cs_add(cs, 1, S(2, sr[i][0], sr[i][1]));
    oc_p(cs_add(cs, 1, S(2, 17, 513)), "axis", 0);
    oc_p(cs_add(cs, 1, S(3, 3, 70, 5)), "axis", 1);
    oc_p(cs_add(cs, 1, S(2, 200, 300)), "axis", 0);
}

/* batch_norm and group_norm, x [N, C, ...]: 2-D and 4-D x, one sample
 * and one value per channel (inference), channels enough to split over
 * the threads, rows of 620 values (the SIMD rows' blocked sums, their
 * flushes and tails); batch_norm training and not, a momentum, an eps;
 * group_norm with 1, some and C groups. */
static void fam_norm_nc(const tb_op *op, cases *cs)
{
    static const int sh[][4] = {{2, 3, 1, 1}, {7, 5, 1, 1}, {4, 6, 3, 5},
                                {1, 8, 9, 7}, {3, 64, 5, 5}, {2, 12, 1, 33},
                                {2, 3, 20, 31}};
    const bool bn = op->id == TB_OP_batch_norm;
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        const int n = sh[i][0], c = sh[i][1], h = sh[i][2], w = sh[i][3];
        const tb_shape x = h * w == 1 ? S(2, n, c) : S(4, n, c, h, w);
        if (bn) {
            cs_add(cs, 4, x, S(1, c), S(1, c), S(2, 2, c));
            oc_p(cs_add(cs, 4, x, S(1, c), S(1, c), S(2, 2, c)), "training",
                 0);
        } else {
            for (int g = 1; g <= c; g *= 2)
                if (c % g == 0)
                    oc_p(cs_add(cs, 3, x, S(1, c), S(1, c)), "num_groups", g);
            oc_p(cs_add(cs, 3, x, S(1, c), S(1, c)), "num_groups", c);
        }
    }
    if (bn) {
        oc_p(cs_add(cs, 4, S(3, 1, 1, 1), S(1, 1), S(1, 1), S(2, 2, 1)),
             "training", 0);
        oc_p(oc_p(cs_add(cs, 4, S(3, 5, 3, 11), S(1, 3), S(1, 3),
                         S(2, 2, 3)), "momentum", 0.7), "eps", 0.5);
    } else {
        oc_p(oc_p(cs_add(cs, 3, S(3, 5, 6, 11), S(1, 6), S(1, 6)),
                  "num_groups", 3), "eps", 0.5);
    }
}

/* Normalization over the last dim: widths below, at and past the vector
 * widths, rows enough to split over the threads, a 3-D x, eps. */
static void fam_norm(const tb_op *op, cases *cs)
{
    if (op->id == TB_OP_batch_norm || op->id == TB_OP_group_norm) {
        fam_norm_nc(op, cs);
        return;
    }
    static const int rd[][2] = {{1, 1}, {7, 13}, {3, 17}, {5, 513},
                                {4096, 10}, {33, 300}};
    for (size_t i = 0; i < sizeof rd / sizeof rd[0]; i++) {
        const int r = rd[i][0], d = rd[i][1];
        if (op->n_in == 3)
            cs_add(cs, 3, S(2, r, d), S(1, d), S(1, d));
        else
            cs_add(cs, 2, S(2, r, d), S(1, d));
    }
    if (op->n_in == 3)
        oc_p(cs_add(cs, 3, S(3, 2, 3, 33), S(1, 33), S(1, 33)), "eps", 0.5);
    else
        oc_p(cs_add(cs, 2, S(3, 2, 3, 33), S(1, 33)), "eps", 0.5);
}

/* Attention.  sdpa: S = 1, odd S and D past the 64-row blocks and the
 * 8/16-lane tails, Sq != Sk both ways, Dv != D (a multiple of 16 and
 * not), causal and not, a set scale; Sq = 20: 6-row tiles then two
 * 4-row ones (attn_avx2.c).  causal_mask: square, wide and tall
 * planes (rows past 8-lane vectors and tails), 2-D and 4-D, the copy
 * form. */
static void fam_attn(const tb_op *op, cases *cs)
{
    if (op->n_in == 1) {
        cs_add(cs, 1, S(2, 7, 7));
        oc_p(cs_add(cs, 1, S(4, 2, 3, 5, 13)), "causal", 1);
        cs_add(cs, 1, S(3, 4, 33, 9));
        oc_p(cs_add(cs, 1, S(2, 17, 40)), "causal", 0);
        cs_add(cs, 1, S(2, 45, 37)); /* 8-lane vectors, blends, tails */
        cs_add(cs, 1, S(1, 20, 64));
        return;
    }
    /* B, H, Sq, Sk, D, Dv */
    static const int sh[][6] = {{1, 1, 1, 1, 1, 1},  {1, 2, 7, 7, 5, 5},
                                {2, 1, 65, 65, 16, 16},
                                {1, 3, 130, 70, 33, 20},
                                {1, 1, 70, 129, 64, 48},
                                {2, 2, 1, 100, 8, 3},
                                {1, 2, 20, 20, 24, 24}};
    for (size_t i = 0; i < sizeof sh / sizeof sh[0]; i++) {
        const int *d = sh[i];
        for (int causal = 0; causal < 2; causal++)
            oc_p(cs_add(cs, 3, S(4, d[0], d[1], d[2], d[4]),
                        S(4, d[0], d[1], d[3], d[4]),
                        S(4, d[0], d[1], d[3], d[5])),
                 "causal", causal);
    }
    ocase *c = cs_add(cs, 3, S(4, 1, 2, 67, 31), S(4, 1, 2, 67, 31),
                      S(4, 1, 2, 67, 31));
    oc_p(c, "causal", 1);
    oc_p(c, "scale", 0.7);
}

/* einsum by operand count: a GEMM whose operands lie as it reads them,
 * one to permute first, an output to permute, diagonals and sums first,
 * odd sizes past the GEMM's tiles, batches over the threads, greedy
 * chains, products of one column or one row or narrow (einsum_gemv.h). */
static void fam_einsum(const tb_op *op, cases *cs)
{
    switch (op->n_in) {
    case 1:
        cs_add(cs, 1, S(2, 7, 13))->eq = "ij->ji";
        cs_add(cs, 1, S(2, 33, 33))->eq = "ii->i";
        cs_add(cs, 1, S(3, 5, 9, 70))->eq = "abc->";
        cs_add(cs, 1, S(3, 17, 6, 17))->eq = "iji->j";
        cs_add(cs, 1, S(4, 3, 4, 5, 6))->eq = "abcd->dbac";
        return;
    case 2:
        cs_add(cs, 2, S(3, 3, 17, 33), S(3, 3, 33, 65))->eq = "bij,bjk->bik";
        cs_add(cs, 2, S(3, 5, 70, 9), S(3, 5, 9, 70))->eq = "bij,bjk->bik";
        cs_add(cs, 2, S(4, 2, 3, 37, 16), S(4, 2, 3, 29, 16))->eq =
            "bhqd,bhkd->bhqk";
        cs_add(cs, 2, S(2, 13, 31), S(2, 31, 7))->eq = "ij,jk->ki";
        cs_add(cs, 2, S(1, 513), S(1, 513))->eq = "i,i->";
        cs_add(cs, 2, S(2, 9, 9), S(2, 9, 5))->eq = "ii,ij->j";
        cs_add(cs, 2, S(2, 6, 7), S(2, 5, 4))->eq = "ab,cd->abcd";
        cs_add(cs, 2, S(3, 4, 6, 7), S(3, 7, 4, 3))->eq = "abc,cad";
        cs_add(cs, 2, S(2, 40, 300), S(3, 64, 300, 20))->eq = "ij,bjk->bik";
        /* one column, one row: the SIMD levels' matrix-vector kernels */
        cs_add(cs, 2, S(3, 5, 13, 45), S(2, 5, 45))->eq = "bij,bj->bi";
        cs_add(cs, 2, S(1, 37), S(2, 37, 150))->eq = "k,kn->n";
        cs_add(cs, 2, S(3, 4, 13, 37), S(3, 4, 37, 11))->eq = "bij,bjk->bik";
        cs_add(cs, 2, S(2, 30, 50), S(2, 50, 27))->eq = "ij,jk->ik";
        return;
    case 3:
        cs_add(cs, 3, S(2, 9, 30), S(2, 30, 2), S(2, 2, 40))->eq =
            "ij,jk,kl->il";
        cs_add(cs, 3, S(2, 7, 5), S(2, 5, 11), S(1, 11))->eq = "ij,jk,k->i";
        cs_add(cs, 3, S(3, 2, 8, 9), S(2, 9, 9), S(3, 2, 9, 3))->eq =
            "bij,jk,bkl->bil";
        return;
    default:
        cs_add(cs, 4, S(2, 9, 30), S(2, 30, 2), S(2, 2, 40), S(2, 40, 6))
            ->eq = "ij,jk,kl,lm->im";
        cs_add(cs, 4, S(2, 6, 13), S(2, 13, 13), S(2, 13, 13), S(1, 13))
            ->eq = "bi,ij,jk,k->b";
        return;
    }
}

/* Layout: transpose's dim pairs (last two, others, one of size 1) and
 * permutes that keep or move the contiguous dim (tiled planes). */
static void fam_layout(const tb_op *op, cases *cs)
{
    (void)op;
    cs_add(cs, 1, S(2, 7, 13));
    cs_add(cs, 1, S(2, 17, 513));
    cs_add(cs, 1, S(2, 513, 17));
    cs_add(cs, 1, S(2, 64, 64));
    cs_add(cs, 1, S(2, 301, 300));
    oc_p(oc_p(cs_add(cs, 1, S(3, 3, 5, 7)), "dim0", 0), "dim1", 2);
    oc_p(oc_p(cs_add(cs, 1, S(4, 4, 5, 6, 3)), "dim0", 1), "dim1", 2);
    oc_p(oc_p(cs_add(cs, 1, S(3, 3, 1, 7)), "dim0", 0), "dim1", 1);
    static const int perms[][4] = {{1, 0, 2, -1}, {2, 0, 1, -1},
                                   {0, 2, 1, -1}, {2, 1, 0, -1}};
    for (size_t i = 0; i < sizeof perms / sizeof perms[0]; i++) {
        ocase *c = cs_add(cs, 1, S(3, 33, 17, 40));
        oc_p(oc_p(oc_p(c, "p0", perms[i][0]), "p1", perms[i][1]), "p2",
             perms[i][2]);
    }
    /* embedding's weight [V, D] and indices: one row, odd widths, 2-D
     * indices, enough rows to split over the threads */
    cs_add(cs, 2, S(2, 1, 1), S(1, 3));
    cs_add(cs, 2, S(2, 7, 13), S(1, 5));
    cs_add(cs, 2, S(2, 100, 33), S(2, 4, 9));
    cs_add(cs, 2, S(2, 50, 513), S(1, 300));
    cs_add(cs, 2, S(2, 3000, 1), S(1, 20000));
}

/* Matrix products: tails of every micro-tile, K = 1, odd K (the bf16
 * GEMM's pairs of k), K beyond the depth blocks, batches, and sizes
 * above the GEMM's threading threshold (2^21 multiply-adds); linear's
 * bias.  Every case in bf16/f16 too: bf16 has a GEMM of its own. */
static void fam_matmul(const tb_op *op, cases *cs)
{
    static const int mkn[][3] = {{1, 1, 1},    {7, 13, 5},    {17, 15, 33},
                                 {1, 513, 1},  {65, 33, 17},  {13, 1000, 50},
                                 {130, 300, 70}, {50, 900, 47}, {25, 1, 37},
                                 {12, 385, 32}, {40, 1537, 3}};
    for (size_t i = 0; i < sizeof mkn / sizeof mkn[0]; i++) {
        const int m = mkn[i][0], k = mkn[i][1], n = mkn[i][2];
        if (op->n_in == 3)
            cs_add(cs, 3, S(2, m, k), S(2, k, n), S(1, n))->every = true;
        else
            cs_add(cs, 2, S(2, m, k), S(2, k, n))->every = true;
    }
    if (op->n_in == 2) {
        cs_add(cs, 2, S(3, 3, 7, 5), S(3, 3, 5, 4))->every = true;
        cs_add(cs, 2, S(3, 4, 40, 50), S(3, 4, 50, 30))->every = true;
        cs_add(cs, 2, S(4, 2, 3, 33, 9), S(4, 2, 3, 9, 65))->every = true;
    }
}

/* matmul_int8 (2-D only): fam_matmul's shapes, then the vpdpbusd row's
 * edges: rows past a 12-row tile and columns past a 16- and a 32-column
 * one, K of every residue mod 4 (quads) and K = 1, zero points 0, 128
 * and 255, special inputs and rounding ties at each, scales that
 * saturate both operands (u8 0 and 255, s8 -128 and 127), K past two
 * depth blocks (2048 k), and K = 65536 (the shape
 * rule's limit) with every product at the int32 sums' extreme: qa -
 * a_zero = -255 or +255 times qb = -128, sums of +-2,139,095,040. */
static void fam_int8(const tb_op *op, cases *cs)
{
    fam_matmul(op, cs);
    static const int mkn[][3] = {{13, 1, 33},  {12, 2, 32}, {25, 3, 17},
                                 {1, 4, 48},   {14, 5, 31}, {13, 7, 16},
                                 {26, 37, 65}, {13, 4103, 37}};
    for (size_t i = 0; i < sizeof mkn / sizeof mkn[0]; i++)
        cs_add(cs, 2, S(2, mkn[i][0], mkn[i][1]),
               S(2, mkn[i][1], mkn[i][2]));
    const ocase zp = cs->c[cs->n - 2]; /* 26 x 37 x 65 */
    cs_with(cs, &zp, "a_zero", 0);
    cs_with(cs, &zp, "a_zero", 255);
    static const int zs[] = {0, 128, 255};
    for (int z = 0; z < 3; z++)
        cs_with(cs, &zp, "a_zero", zs[z])->specials = true;
    for (int z = 0; z <= 255; z += 255)
        oc_p(oc_p(cs_with(cs, &zp, "a_zero", z), "a_scale", 1e-3),
             "b_scale", 1e-3);
    /* a negative (qa = 0) or positive (qa = 255), b negative (-128) */
    static const tb_domain neg[2] = {{-2, -1}, {-2, -1}};
    static const tb_domain pos[2] = {{1, 2}, {-2, -1}};
    for (int z = 0; z <= 255; z += 255) {
        ocase *c = cs_add(cs, 2, S(2, 3, 65536), S(2, 65536, 17));
        oc_p(oc_p(oc_p(c, "a_zero", z), "a_scale", 1e-3), "b_scale", 1e-3);
        c->dom = z ? neg : pos;
    }
}

/* Convolutions (im2col + GEMM: 1x1 kernels and images, stride past the
 * kernel, padding wider than half of it, dilation, non-square kernels,
 * many images split over the threads, one big image whose GEMM is) and
 * pooling (2x2/2 on even, odd and lane-tail widths, then windows that
 * take the gather path). */
static void fam_conv(const tb_op *op, cases *cs)
{
    static const int cv[][13] = {
        /* x N C H W, w O C KH KW, stride, padding, dilation */
        {2, 1, 7, 9, 3, 1, 3, 3, 1, 0, 1},
        {1, 1, 1, 1, 2, 1, 1, 1, 1, 0, 1},
        {3, 4, 9, 10, 6, 4, 1, 1, 1, 0, 1},
        {1, 3, 17, 19, 4, 3, 3, 3, 2, 1, 1},
        {2, 2, 13, 11, 5, 2, 3, 2, 3, 2, 2},
        {1, 2, 8, 8, 3, 2, 5, 5, 1, 2, 1},
        {2, 1, 5, 5, 1, 1, 3, 3, 1, 3, 2},
        {1, 2, 11, 11, 2, 2, 2, 2, 3, 0, 1},
        {32, 1, 28, 28, 16, 1, 3, 3, 1, 0, 1},
        {1, 16, 40, 40, 32, 16, 3, 3, 1, 1, 1},
        /* C KH KW = 432: the bf16 GEMM's two depth blocks */
        {2, 48, 9, 9, 8, 48, 3, 3, 1, 1, 1},
        /* the direct loops (conv_direct.h: stride 1, C KH KW <= 64):
         * 8-channel tiles and a 3-channel tail run one channel a tile,
         * row tails of 1..3 vectors; 4 channels in an 8-channel tile;
         * one channel, dilation, rows not a multiple of 4 */
        {2, 3, 12, 20, 11, 3, 3, 3, 1, 1, 1},
        {1, 5, 9, 30, 4, 5, 2, 3, 1, 2, 2},
        {3, 2, 7, 41, 1, 2, 3, 3, 1, 1, 2},
        /* bf16's (avx512bf16): 8 channels, then 2 one at a time */
        {2, 2, 9, 18, 10, 2, 3, 3, 1, 0, 1},
        /* the f32/f64 forward's direct loops past C KH KW = 64 (up to
         * 256 with at most 32 output channels; 1x16x40x40 above too):
         * R 90 with dilation and an O tail of 3, R 225 (5x5) */
        {1, 10, 11, 13, 19, 10, 3, 3, 1, 1, 2},
        {2, 9, 12, 21, 13, 9, 5, 5, 1, 2, 1},
        /* rows of one vector in 8-channel blocks (f64: OW 7; f32:
         * 1x10x11x13 above), 8 + 4 channels */
        {2, 6, 9, 9, 12, 6, 3, 3, 1, 0, 1},
        /* flat tiles (conv_direct.h: over the padded width; rows of 9
         * in 11: a vector of 16 reaches 3 rows), 8 + 4 channels */
        {2, 3, 11, 11, 12, 3, 3, 3, 1, 0, 1},
        /* output-flat tiles (conv_direct.h's tb_cpu_convd_oflat: rows of
         * at least a vector, vectors across the rows' ends): 8 + 4
         * channels, the image's last vector partial (f32 and f64); P of
         * whole vectors */
        {2, 2, 9, 21, 12, 2, 3, 3, 1, 0, 1},
        {2, 2, 4, 26, 9, 2, 3, 3, 1, 0, 1},
    };
    for (size_t i = 0; i < sizeof cv / sizeof cv[0] && op->n_in >= 2; i++) {
        const int *v = cv[i];
        tb_shape x = S(4, v[0], v[1], v[2], v[3]);
        tb_shape w = S(4, v[4], v[5], v[6], v[7]);
        ocase *c = op->n_in == 3 ? cs_add(cs, 3, x, w, S(1, v[4]))
                                 : cs_add(cs, 2, x, w);
        oc_p(oc_p(oc_p(c, "stride", v[8]), "padding", v[9]), "dilation",
             v[10]);
        c->every = true; /* bf16 has a GEMM of its own (avx512bf16) */
    }
    static const int pl[][7] = {
        /* x N C H W, kernel, stride (0: = kernel), padding */
        {2, 3, 24, 24, 2, 0, 0}, {1, 2, 7, 9, 2, 0, 0},
        {2, 1, 5, 66, 2, 0, 0},  {1, 3, 70, 35, 2, 0, 0},
        {3, 2, 3, 2, 2, 0, 0},   {1, 1, 1, 1, 1, 0, 0},
        {2, 3, 9, 37, 3, 1, 1},  {1, 2, 17, 19, 3, 2, 1},
        {1, 2, 16, 40, 2, 0, 1}, {2, 2, 13, 11, 5, 3, 2},
        {1, 1, 8, 45, 4, 1, 2},  {1, 1, 2, 3, 4, 1, 2},
        {2, 2, 33, 33, 3, 0, 0}, {4, 5, 12, 12, 2, 1, 0},
    };
    for (size_t i = 0; i < sizeof pl / sizeof pl[0] && op->n_in == 1;
         i++) {
        const int *v = pl[i];
        ocase *c = oc_p(cs_add(cs, 1, S(4, v[0], v[1], v[2], v[3])),
                        "kernel", v[4]);
        if (v[5])
            oc_p(c, "stride", v[5]);
        oc_p(c, "padding", v[6]);
    }
}

/* Creation (and the calibration ops, which create their output): odd
 * sizes and two values of every float parameter. */
static void fam_create(const tb_op *op, cases *cs)
{
    static const int sz[] = {1, 2, 7, 16, 17, 33, 513, 4099, 70001};
    for (size_t i = 0; i < sizeof sz / sizeof sz[0]; i++)
        cs_add(cs, 1, S(1, sz[i]));
    cs_add(cs, 1, S(3, 3, 5, 7));
    for (int k = 0; k < op->n_params; k++)
        if (op->params[k].kind == TB_PARAM_FLOAT) {
            double v[2];
            param_values(&op->params[k], v);
            for (int j = 0; j < 2; j++)
                oc_p(cs_add(cs, 1, S(1, 4099)), op->params[k].name, v[j]);
        }
}

/* Optimizer steps: equal shapes of every length (vector tails, a thread
 * split; lbfgs: S and Y [m, len], m from 1 to 4) and two values of every
 * float parameter. */
static void fam_optim(const tb_op *op, cases *cs)
{
    for (int i = 0; i < N_LENS; i++) {
        tb_shape s = S(1, lens[i]);
        ocase *c = cs_add(cs, 0);
        c->n_sh = op->n_in;
        for (int k = 0; k < op->n_in; k++)
            c->sh[k] = op->id == TB_OP_lbfgs && k >= 2
                           ? S(2, 1 + i % 4, lens[i])
                           : s;
    }
    for (int k = 0; k < op->n_params; k++)
        if (op->params[k].kind == TB_PARAM_FLOAT) {
            double v[2];
            param_values(&op->params[k], v);
            for (int j = 0; j < 2; j++)
                cs_with(cs, &cs->c[3], op->params[k].name, v[j]);
        }
}

/* Factorizations: square, tall, wide, 1x1. */
static void fam_linalg(const tb_op *op, cases *cs)
{
    (void)op;
    static const int mn[][2] = {{1, 1}, {4, 4}, {7, 5}, {5, 7}, {16, 16},
                                {33, 20}};
    for (size_t i = 0; i < sizeof mn / sizeof mn[0]; i++)
        cs_add(cs, 1, S(2, mn[i][0], mn[i][1]));
}

/* Backward ops: the inputs of every kind of gradient (element-wise g, x;
 * a reduction's g and x; log_softmax's g, y by axis; a broadcast
 * binary's g, a, b; matmul's and linear's; nll_loss's; pooling's and
 * conv2d's windows); each op's shape rule keeps its own kind. */
static void fam_backward(const tb_op *op, cases *cs)
{
    (void)op;
    for (int i = 0; i < N_LENS; i++)
        cs_add(cs, 2, S(1, lens[i]), S(1, lens[i]));
    cs_add(cs, 2, S(1, 31), S(1, 31));
    cs_add(cs, 2, S(1, 33), S(1, 33));
    cs_add(cs, 2, S(3, 3, 5, 7), S(3, 3, 5, 7));
    cs_add(cs, 2, S(2, 33, 31), S(2, 33, 31));
    cs_add(cs, 2, S(2, 4096, 10), S(2, 4096, 10));
    /* log_softmax_backward's short rows, blocks of 4 to 16 rows and a
     * tail */
    cs_add(cs, 2, S(2, 37, 1), S(2, 37, 1));
    cs_add(cs, 2, S(2, 40, 2), S(2, 40, 2));
    cs_add(cs, 2, S(2, 35, 8), S(2, 35, 8));
    cs_add(cs, 2, S(2, 29, 7), S(2, 29, 7));
    cs_add(cs, 2, S(2, 27, 9), S(2, 27, 9));
    cs_add(cs, 2, S(2, 45, 17), S(2, 45, 17));
    cs_add(cs, 2, S(2, 50, 15), S(2, 50, 15));
    cs_add(cs, 2, S(2, 34, 16), S(2, 34, 16));
    oc_p(cs_add(cs, 2, S(2, 17, 513), S(2, 17, 513)), "axis", 0);
    oc_p(cs_add(cs, 2, S(3, 3, 70, 5), S(3, 3, 70, 5)), "axis", 1);
    oc_p(cs_add(cs, 2, S(3, 2, 9, 33), S(3, 2, 9, 33)), "axis", 1);
    /* a reduction's g and x */
    cs_add(cs, 2, S(1, 1), S(2, 17, 513));
    oc_p(cs_add(cs, 2, S(1, 513), S(2, 17, 513)), "axis", 0);
    oc_p(oc_p(cs_add(cs, 2, S(2, 17, 1), S(2, 17, 513)), "axis", 1),
         "keepdim", 1);
    /* a broadcast binary's g, a, b */
    cs_add(cs, 3, S(2, 17, 513), S(2, 17, 513), S(2, 17, 513));
    cs_add(cs, 3, S(2, 17, 513), S(2, 17, 513), S(1, 513));
    cs_add(cs, 3, S(3, 5, 3, 7), S(3, 5, 1, 7), S(3, 1, 3, 7));
    /* the norms' g, x [rows, D], w [D] (the case above is one too):
     * widths below and past the vector widths, rows enough for every
     * chunk of dw's sums, eps */
    cs_add(cs, 3, S(2, 7, 13), S(2, 7, 13), S(1, 13));
    cs_add(cs, 3, S(2, 300, 33), S(2, 300, 33), S(1, 33));
    oc_p(cs_add(cs, 3, S(3, 2, 3, 9), S(3, 2, 3, 9), S(1, 9)), "eps", 0.5);
    /* batch_norm's g, x [N, C, ...], w [C]: 2-D, channels enough for
     * the threads, one sample, eps */
    cs_add(cs, 3, S(2, 13, 7), S(2, 13, 7), S(1, 7));
    cs_add(cs, 3, S(4, 3, 64, 5, 5), S(4, 3, 64, 5, 5), S(1, 64));
    oc_p(cs_add(cs, 3, S(3, 1, 5, 11), S(3, 1, 5, 11), S(1, 5)), "eps", 0.5);
    /* (and rows of 620 and 323 values: the SIMD rows' blocked sums of
     * g and g (x - c), flushes and tails, both ops) */
    cs_add(cs, 3, S(4, 2, 3, 20, 31), S(4, 2, 3, 20, 31), S(1, 3));
    oc_p(cs_add(cs, 3, S(4, 2, 6, 17, 19), S(4, 2, 6, 17, 19), S(1, 6)),
         "num_groups", 3);
    /* group_norm's (the batch_norm cases are num_groups 1): a group per
     * channel, groups of 3 channels with trailing dims, pairs enough for
     * the threads, eps */
    oc_p(cs_add(cs, 3, S(2, 3, 6), S(2, 3, 6), S(1, 6)), "num_groups", 6);
    oc_p(cs_add(cs, 3, S(4, 2, 9, 4, 5), S(4, 2, 9, 4, 5), S(1, 9)),
         "num_groups", 3);
    oc_p(cs_add(cs, 3, S(3, 8, 64, 7), S(3, 8, 64, 7), S(1, 64)),
         "num_groups", 16);
    oc_p(oc_p(cs_add(cs, 3, S(3, 2, 4, 5), S(3, 2, 4, 5), S(1, 4)),
              "num_groups", 2), "eps", 0.5);
    /* matmul's g [M, N], a [M, K], b [K, N]; linear's g, x, W, y */
    cs_add(cs, 3, S(2, 17, 33), S(2, 17, 15), S(2, 15, 33));
    cs_add(cs, 3, S(2, 65, 17), S(2, 65, 33), S(2, 33, 17));
    /* matmul_backward's products on the bf16 GEMM (avx512bf16): odd
     * inner dims, da's (N) past its 384-k depth block (db's M there
     * takes the f32 C row past the f32 tolerance), K = 1, batches */
    cs_add(cs, 3, S(3, 2, 7, 389), S(3, 2, 7, 13), S(3, 2, 13, 389))
        ->every = true;
    cs_add(cs, 3, S(2, 45, 9), S(2, 45, 31), S(2, 31, 9))->every = true;
    cs_add(cs, 3, S(2, 5, 6), S(2, 5, 1), S(2, 1, 6))->every = true;
    cs_add(cs, 4, S(2, 17, 33), S(2, 17, 15), S(2, 15, 33), S(2, 17, 33));
    /* linear's narrow layers (linbwd_avx512.c, N <= 16): row and
     * column tails, N = 1 and 16, one row; N = 17 its wide path */
    cs_add(cs, 4, S(2, 13, 10), S(2, 13, 130), S(2, 130, 10), S(2, 13, 10));
    cs_add(cs, 4, S(2, 131, 16), S(2, 131, 67), S(2, 67, 16),
           S(2, 131, 16));
    cs_add(cs, 4, S(2, 1, 1), S(2, 1, 7), S(2, 7, 1), S(2, 1, 1));
    cs_add(cs, 4, S(2, 7, 17), S(2, 7, 9), S(2, 9, 17), S(2, 7, 17));
    /* sdpa_backward's g [B, H, Sq, Dv], q, k, v (causal set: no other
     * op takes them): S = 1, odd S and D, past a 64-row block, Sq != Sk
     * both ways, Dv != D, pairs enough for the threads, a set scale */
    static const int sb[][6] = {{1, 1, 1, 1, 1, 1},   {1, 2, 7, 7, 5, 5},
                                {1, 1, 130, 70, 9, 4}, {1, 1, 65, 129, 8, 12},
                                {2, 3, 33, 33, 16, 16}};
    for (size_t i = 0; i < sizeof sb / sizeof sb[0]; i++) {
        const int *d = sb[i];
        for (int causal = 0; causal < 2; causal++)
            oc_p(cs_add(cs, 4, S(4, d[0], d[1], d[2], d[5]),
                        S(4, d[0], d[1], d[2], d[4]),
                        S(4, d[0], d[1], d[3], d[4]),
                        S(4, d[0], d[1], d[3], d[5])),
                 "causal", causal);
    }
    oc_p(oc_p(cs_add(cs, 4, S(4, 1, 2, 67, 31), S(4, 1, 2, 67, 31),
                     S(4, 1, 2, 67, 31), S(4, 1, 2, 67, 31)),
              "causal", 1), "scale", 0.7);
    /* nll_loss's and cross_entropy's logp or logits [N, C], target
     * [N]; their gradients' g [1] first: one class, vector tails, rows
     * past the online statistics' block (1024), rows to split over the
     * threads */
    static const int nc[][2] = {{17, 10}, {5, 1},   {3, 7},   {9, 33},
                                {2, 1500}, {3, 2049}, {4096, 10}};
    for (size_t q = 0; q < sizeof nc / sizeof nc[0]; q++) {
        cs_add(cs, 2, S(2, nc[q][0], nc[q][1]), S(1, nc[q][0]));
        cs_add(cs, 3, S(1, 1), S(2, nc[q][0], nc[q][1]), S(1, nc[q][0]));
    }
    /* embedding's g [..., D], idx [...] with num_weights: repeated
     * indices (V below n), one row, rows enough for two threads */
    oc_p(cs_add(cs, 2, S(2, 9, 13), S(1, 9)), "num_weights", 4);
    oc_p(cs_add(cs, 2, S(2, 5, 1), S(1, 5)), "num_weights", 1);
    oc_p(cs_add(cs, 2, S(3, 4, 6, 33), S(2, 4, 6)), "num_weights", 50);
    oc_p(cs_add(cs, 2, S(2, 4000, 40), S(1, 4000)), "num_weights", 3000);
    /* pooling: g [N, C, OH, OW], x [N, C, H, W] with kernel, stride,
     * padding: 2x2 windows with odd sides, rows of 1 to 33 windows (both
     * vector widths' tails), and other geometries */
    static const int pc[][7] = {
        {1, 2, 4, 4, 2, 2, 0},   {2, 3, 24, 24, 2, 2, 0},
        {1, 2, 7, 9, 2, 2, 0},   {2, 1, 5, 66, 2, 2, 0},
        {1, 3, 6, 35, 2, 2, 0},  {1, 1, 3, 62, 2, 2, 0},
        {1, 1, 2, 18, 2, 2, 0},  {1, 2, 3, 2, 2, 2, 0},
        {1, 1, 2, 34, 2, 2, 0},  {2, 2, 10, 11, 3, 3, 0},
        {1, 2, 9, 37, 3, 2, 1},  {1, 2, 8, 8, 2, 1, 0},
        {1, 2, 7, 6, 2, 2, 1},   {1, 1, 1, 1, 1, 1, 0},
    };
    for (size_t q = 0; q < sizeof pc / sizeof pc[0]; q++) {
        const int *v = pc[q];
        const int oh = (v[2] + 2 * v[6] - v[4]) / v[5] + 1;
        const int ow = (v[3] + 2 * v[6] - v[4]) / v[5] + 1;
        ocase *c = cs_add(cs, 2, S(4, v[0], v[1], oh, ow),
                          S(4, v[0], v[1], v[2], v[3]));
        oc_p(oc_p(oc_p(c, "kernel", v[4]), "stride", v[5]), "padding", v[6]);
    }
    /* conv2d's g [N, O, OH, OW], x [N, C, H, W], w [O, C, KH, KW] */
    oc_p(oc_p(oc_p(cs_add(cs, 3, S(4, 2, 3, 5, 7), S(4, 2, 2, 7, 9),
                          S(4, 3, 2, 3, 3)),
                   "stride", 1),
              "padding", 0),
         "dilation", 1);
    oc_p(oc_p(oc_p(cs_add(cs, 3, S(4, 1, 4, 9, 10), S(4, 1, 3, 17, 19),
                          S(4, 4, 3, 3, 3)),
                   "stride", 2),
              "padding", 1),
         "dilation", 1);
    /* the direct backward (conv_direct.h): 8+ input channels (dx by the
     * forward loops on the padded g, w flipped), fewer (dcol in 4 rows
     * of P/4, then col2im; P = 221: one row), dilation, 10 output
     * channels (a block of 8 and a tail) */
    oc_p(oc_p(oc_p(cs_add(cs, 3, S(4, 2, 5, 10, 13), S(4, 2, 8, 10, 12),
                          S(4, 5, 8, 3, 2)),
                   "stride", 1),
              "padding", 1),
         "dilation", 1);
    oc_p(oc_p(oc_p(cs_add(cs, 3, S(4, 3, 10, 12, 20), S(4, 3, 2, 12, 20),
                          S(4, 10, 2, 3, 3)),
                   "stride", 1),
              "padding", 2),
         "dilation", 2);
    oc_p(oc_p(oc_p(cs_add(cs, 3, S(4, 2, 3, 13, 17), S(4, 2, 1, 15, 19),
                          S(4, 3, 1, 3, 3)),
                   "stride", 1),
              "padding", 0),
         "dilation", 1);
    /* dw's flat loop with g's vectors in 3 pieces (rows of 9 in 11) */
    oc_p(oc_p(oc_p(cs_add(cs, 3, S(4, 2, 12, 9, 9), S(4, 2, 3, 11, 11),
                          S(4, 12, 3, 3, 3)),
                   "stride", 1),
              "padding", 0),
         "dilation", 1);
}

typedef void (*family_fn)(const tb_op *op, cases *cs);

/* The family of an op, from its row of the op table. */
static family_fn family_of(const tb_op *op)
{
    if (op->id == TB_OP_matmul_int8)
        return fam_int8;
    switch (op->category) {
    case TB_CAT_ELEMENTWISE:
    case TB_CAT_ACTIVATION:
        return fam_elementwise;
    case TB_CAT_FUSED:
        return op->n_in == 2 ? fam_elementwise : fam_matmul;
    case TB_CAT_REDUCTION:
        return fam_reduce;
    case TB_CAT_SOFTMAX:
        return fam_softmax;
    case TB_CAT_LAYOUT:
        return fam_layout;
    case TB_CAT_MATMUL:
        return fam_matmul;
    case TB_CAT_CONV:
        return fam_conv;
    case TB_CAT_NORM:
        return fam_norm;
    case TB_CAT_ATTENTION:
        return fam_attn;
    case TB_CAT_CONTRACTION:
        return fam_einsum;
    case TB_CAT_CREATION:
    case TB_CAT_CALIB:
        return fam_create;
    case TB_CAT_OPTIMIZER:
        return fam_optim;
    case TB_CAT_LINALG:
        return fam_linalg;
    case TB_CAT_BACKWARD:
        return fam_backward;
    default:
        return NULL;
    }
}

/* The input domain of input i: the op's, else [-1, 1]; element-wise
 * math without one from [-12, 12] (the tails of exp, sigmoid, gelu),
 * the forward input of a gradient from [-25, 25] (gelu's clamp at 15,
 * the exp tails). */
static tb_domain domain_of(const tb_op *op, int i)
{
    if (op->domain)
        return op->domain[i];
    if ((op->category == TB_CAT_ELEMENTWISE ||
         op->category == TB_CAT_ACTIVATION) && op->n_in == 1)
        return (tb_domain){-12, 12};
    if (op->category == TB_CAT_BACKWARD && i == 1)
        return (tb_domain){-25, 25};
    return (tb_domain){-1, 1};
}

/* ---- one case -------------------------------------------------------- */

/* A case made ready: its parameters, pristine inputs (host, dtype dt),
 * output shapes, the reference's outputs (f64) and the C row's (f64). */
typedef struct prep {
    tb_params p;
    int n_in;
    tb_tensor in[TB_MAX_INPUTS];
    tb_tensor hdr; /* a creation op's output shape, for the reference */
    tb_shape os[TB_MAX_OUTPUTS];
    tb_tensor ref[TB_MAX_OUTPUTS], cref[TB_MAX_OUTPUTS]; /* f64 */
    double terms; /* tb_check_terms of the case's reduce_len */
} prep;

/* The case's parameters; false when the op has no parameter of one of
 * its names (the case is another op's). */
static bool case_params(const tb_op *op, const ocase *oc, tb_params *p)
{
    char err[256] = "";
    memset(p, 0, sizeof *p);
    for (int i = 0; i < oc->np; i++) {
        int rc = tb_params_set(op, p, oc->pn[i], oc->pv[i], err, sizeof err);
        if (rc == TB_ENOTFOUND)
            return false;
        if (rc)
            fail_msg("%s: %s", op->name, err);
    }
    if (oc->eq) {
        int rc = tb_params_set_str(op, p, "equation", oc->eq, err,
                                   sizeof err);
        if (rc == TB_ENOTFOUND)
            return false;
        if (rc)
            fail_msg("%s: %s", op->name, err);
    }
    tb_params_defaults(op, p);
    return true;
}

/* Does op take case oc (its parameters, its shape rule)? */
static bool case_fits(const tb_op *op, const ocase *oc)
{
    tb_params p;
    tb_shape os[TB_MAX_OUTPUTS];
    if (!case_params(op, oc, &p))
        return false;
    if (op->n_in ? oc->n_sh != op->n_in : oc->n_sh != 1)
        return false;
    return tb_op_infer(op, oc->sh, oc->n_sh, &p, os, NULL, 0) == 0;
}

/* out[i] = a host tensor of dtype dt and shape os[i] (tracked). */
static void outputs_new(const tb_op *op, tb_dtype dt, const tb_shape *os,
                        tb_tensor *out)
{
    for (int i = 0; i < op->n_out; i++)
        assert_int_equal(
            tb_tensor_create(&out[i], tb_op_out_dtype(op, i, dt), &os[i]), 0);
}

static void outputs_free(const tb_op *op, tb_tensor *t)
{
    for (int i = 0; i < op->n_out; i++)
        tb_tensor_destroy(&t[i]);
}

/* An f64 copy of t. */
static void to_f64(const tb_tensor *t, tb_tensor *d)
{
    tb_shape s = tb_tensor_shape(t);
    assert_int_equal(tb_tensor_create(d, TB_F64, &s), 0);
    for (int64_t k = 0; k < tb_tensor_numel(t); k++)
        tb_tensor_set(d, k, tb_tensor_get(t, k));
}

/* A run of one row on guarded copies of a case's inputs. */
typedef struct run {
    gbuf gi[TB_MAX_INPUTS], go[TB_MAX_OUTPUTS];
    tb_tensor in[TB_MAX_INPUTS], out[TB_MAX_OUTPUTS];
    int rc;
} run;

/* Run fn on ctx with the case's inputs on misaligned canary-guarded
 * copies, into outputs of the same kind (an output that overwrites an
 * input: that copy); r->out holds the outputs until run_end. */
static void run_start(run *r, void *ctx, tb_kernel_fn fn, const tb_op *op,
                      tb_dtype dt, const prep *pc)
{
    const size_t off = misalign(dt);
    for (int i = 0; i < pc->n_in; i++) {
        tb_shape s = tb_tensor_shape(&pc->in[i]);
        tb_tensor_init(&r->in[i], pc->in[i].dtype, &s);
        r->in[i].data = gb_new(&r->gi[i], tb_tensor_nbytes(&r->in[i]), off);
        memcpy(r->in[i].data, pc->in[i].data, tb_tensor_nbytes(&r->in[i]));
    }
    for (int i = 0; i < op->n_out; i++) {
        tb_tensor_init(&r->out[i], tb_op_out_dtype(op, i, dt), &pc->os[i]);
        if (op->alias && op->alias[i] >= 0)
            r->out[i].data = r->in[op->alias[i]].data;
        else
            r->out[i].data =
                gb_new(&r->go[i], tb_tensor_nbytes(&r->out[i]), off);
    }
    r->rc = fn(ctx, pc->n_in ? r->in : NULL, r->out, &pc->p);
}

/* Free the run's buffers; false when a canary was overwritten. */
static bool run_end(run *r, const tb_op *op, const prep *pc)
{
    bool intact = true;
    for (int i = 0; i < op->n_out; i++)
        if (!(op->alias && op->alias[i] >= 0)) {
            intact = intact && gb_intact(&r->go[i]);
            gb_free(&r->go[i]);
        }
    for (int i = 0; i < pc->n_in; i++) {
        intact = intact && gb_intact(&r->gi[i]);
        gb_free(&r->gi[i]);
    }
    return intact;
}

/* The outputs of a run checked as the harness checks a case, against
 * want (f64); canonicalised alike, on copies, where the op says so. */
static tb_check check_against(const tb_op *op, tb_dtype dt, const prep *pc,
                              const tb_tensor *got, const tb_tensor *want)
{
    tb_check chk;
    if (!op->canon && op->check != TB_CHECK_FACTORIZATION) {
        tb_check_outputs(got, want, op->n_out, op->tol[dt], pc->terms,
                         &chk);
        return chk;
    }
    tb_tensor g[TB_MAX_OUTPUTS], w[TB_MAX_OUTPUTS];
    for (int i = 0; i < op->n_out; i++) {
        tb_shape s = tb_tensor_shape(&got[i]);
        assert_int_equal(
            tb_tensor_create(&g[i], tb_op_out_dtype(op, i, dt), &s), 0);
        memcpy(g[i].data, got[i].data, tb_tensor_nbytes(&got[i]));
        to_f64(&want[i], &w[i]);
    }
    if (op->canon) {
        op->canon(g, op->n_out);
        op->canon(w, op->n_out);
    }
    if (op->check == TB_CHECK_FACTORIZATION)
        tb_check_factorization(op, &pc->in[0], g, w, op->tol[dt], &chk);
    else
        tb_check_outputs(g, w, op->n_out, op->tol[dt], pc->terms, &chk);
    outputs_free(op, g);
    outputs_free(op, w);
    return chk;
}

/* Inputs, reference and C row of case oc (seeded by salt). */
static void prep_case(void *cctx, const tb_op *op, tb_dtype dt,
                      const ocase *oc, uint64_t salt, prep *pc)
{
    memset(pc, 0, sizeof *pc);
    assert_true(case_params(op, oc, &pc->p));
    assert_int_equal(
        tb_op_infer(op, oc->sh, oc->n_sh, &pc->p, pc->os, NULL, 0), 0);
    pc->n_in = op->n_in;
    rng_seed(salt);
    for (int i = 0; i < op->n_in; i++) {
        assert_int_equal(tb_tensor_create(&pc->in[i],
                                          tb_op_in_dtype(op, i, dt),
                                          &oc->sh[i]),
                         0);
        const tb_domain d = oc->dom ? oc->dom[i] : domain_of(op, i);
        /* indices (a target, an embedding's idx): integers below the
         * bound */
        const double ib = tb_op_index_bound(op, i, oc->sh, &pc->p);
        for (int64_t k = 0; k < tb_tensor_numel(&pc->in[i]); k++)
            tb_tensor_set(&pc->in[i], k,
                          ib > 0 ? fmin(floor(rng_uniform(0, ib)), ib - 1)
                          : !oc->specials ? rng_uniform(d.lo, d.hi)
                          : rng_next() & 1
                              ? test_value(true)
                              : floor(rng_uniform(-512, 512)) / 256);
    }
    tb_tensor_init(&pc->hdr, dt, &oc->sh[0]);
    const double rlen =
        op->reduce_len
            ? op->reduce_len(op, oc->sh, pc->os, &pc->p, dt)
            : 1.0;
    pc->terms = tb_check_terms(op, rlen);
    outputs_new(op, TB_F64, pc->os, pc->ref);
    assert_int_equal(op->ref(op->n_in ? pc->in : &pc->hdr, pc->ref, &pc->p),
                     0);
    const tb_cpu_krow *c = tb_cpu_krow_c(op->id, dt);
    run r;
    run_start(&r, cctx, c->fn, op, dt, pc);
    assert_int_equal(r.rc, 0);
    tb_check chk = check_against(op, dt, pc, r.out, pc->ref);
    if (!chk.passed)
        print_error("%s (C row) vs the reference: %lld bad, first [%lld] "
                    "got %.9g want %.9g\n",
                    c->name, (long long)chk.n_bad, (long long)chk.first_bad,
                    chk.first_bad_got, chk.first_bad_ref);
    for (int i = 0; i < op->n_out; i++)
        to_f64(&r.out[i], &pc->cref[i]);
    assert_true(run_end(&r, op, pc));
    assert_true(chk.passed);
}

static void prep_free(const tb_op *op, prep *pc)
{
    for (int i = 0; i < pc->n_in; i++)
        tb_tensor_destroy(&pc->in[i]);
    outputs_free(op, pc->ref);
    outputs_free(op, pc->cref);
}

/* One run on instance ctx (isa value isa, threads): the row the backend
 * hands out is the ladder's, and its outputs pass both checks. */
static void run_case(void *ctx, const char *isa, int threads,
                     const tb_op *op, tb_dtype dt, const prep *pc, int ci)
{
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    const tb_cpu_krow *want =
        tb_cpu_krow_find(rows, n, op->id, dt, tb_cpu_isa(ctx));
    const char *impl = NULL;
    tb_kernel_fn fn = B->kernel(ctx, op, dt, &pc->p, &impl).fn;
    assert_non_null(want);
    assert_ptr_equal(fn, want->fn);
    if (op->category == TB_CAT_CONTRACTION) {
        /* the row's name, then "(equation...)" (einsum_c.c) */
        const size_t nl = strlen(want->name);
        assert_int_equal(strncmp(impl, want->name, nl), 0);
        assert_int_equal(impl[nl], '(');
    } else {
        assert_ptr_equal(impl, want->name);
    }
    run r;
    run_start(&r, ctx, fn, op, dt, pc);
    assert_int_equal(r.rc, 0);
    const tb_check vr = check_against(op, dt, pc, r.out, pc->ref);
    tb_check vc = {.passed = true};
    if (op->check != TB_CHECK_FACTORIZATION)
        vc = check_against(op, dt, pc, r.out, pc->cref);
    const bool intact = run_end(&r, op, pc);
    if (!intact)
        print_error("%s isa=%s threads=%d case %d: canary overwritten\n",
                    impl, isa, threads, ci);
    const tb_check *bad = !vr.passed ? &vr : !vc.passed ? &vc : NULL;
    if (bad)
        print_error("%s isa=%s threads=%d case %d: vs %s: %lld bad, first "
                    "output %d [%lld] got %.9g want %.9g\n",
                    impl, isa, threads, ci,
                    bad == &vr ? "the reference" : "the C row",
                    (long long)bad->n_bad, bad->first_bad_output,
                    (long long)bad->first_bad, bad->first_bad_got,
                    bad->first_bad_ref);
    assert_true(intact);
    assert_true(vr.passed);
    assert_true(vc.passed);
}

/* ---- the test of one op ---------------------------------------------- */

static void *instance(const char *isa, const char *threads)
{
    const char *vals[2] = {isa, threads};
    void *ctx = NULL;
    char err[256];
    if (B->create(B, vals, &ctx, err, sizeof err))
        fail_msg("cpu create isa=%s threads=%s: %s", isa, threads, err);
    return ctx;
}

/* The rows of (op, dt), those this machine runs and those it cannot. */
static void print_rows(const tb_op *op, tb_dtype dt, int ncases)
{
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    char ran[512] = "", skip[256] = "";
    for (size_t i = 0; i < n; i++) {
        if (rows[i].op != op->id || rows[i].dtype != dt)
            continue;
        char *to = rows[i].min_isa < n_levels() ? ran : skip;
        size_t len = strlen(to), cap = to == ran ? sizeof ran : sizeof skip;
        snprintf(to + len, cap - len, " %s", rows[i].name);
    }
    print_message("# op_%s %s: %d cases; rows%s%s%s\n", op->name,
                  tb_dtype_name(dt), ncases, ran,
                  skip[0] ? "; not run here:" : "", skip);
}

void test_op(void **state)
{
    const tb_op *op = tb_op_get((tb_op_id)(intptr_t)*state);
    assert_non_null(op);
    family_fn fam = family_of(op);
    if (!fam)
        fail_msg("%s: the cpu backend has rows for it, but no family of "
                 "tests/checkasm/rows.c generates its inputs (category %s)",
                 op->name, tb_op_category_name(op->category));
    static cases all, fit;
    all.n = fit.n = 0;
    fam(op, &all);
    for (int i = 0; i < all.n; i++)
        if (case_fits(op, &all.c[i]))
            fit.c[fit.n++] = all.c[i];
    if (fit.n == 0)
        fail_msg("%s: none of its family's %d cases fits its shape rule",
                 op->name, all.n);
    tb_axis ax[TB_MAX_AXES];
    assert_int_equal(B->axes(B, ax, TB_MAX_AXES), 2);
    void *cctx = instance("scalar", "1");
    for (int dt = 0; dt < TB_DTYPE_COUNT; dt++) {
        if (!tb_cpu_krow_c(op->id, (tb_dtype)dt))
            continue;
        print_rows(op, (tb_dtype)dt, fit.n);
        /* bf16/f16 rows are their level's conversions around the f32
         * rows tested above: every other case (and every big one), each
         * level at one thread, and auto (the best) at the other thread
         * counts, not every pair: under ASan the full cross doubled the
         * program's time */
        const bool half = tb_dtype_is_half((tb_dtype)dt);
#define HALF_SKIP(ci)                                                     \
    (half && (ci) % 2 && !fit.c[ci].big && !fit.c[ci].every)
        static prep pc[MAXC];
        for (int ci = 0; ci < fit.n; ci++)
            if (!HALF_SKIP(ci))
                prep_case(cctx, op, (tb_dtype)dt, &fit.c[ci],
                          (uint64_t)op->id * 1000003u +
                              (uint64_t)dt * 101u + (uint64_t)ci,
                          &pc[ci]);
        for (int iv = 0; iv < ax[0].n_values; iv++)
            for (int tv = 0; tv < ax[1].n_values; tv++) {
                const bool is_auto = !strcmp(ax[0].values[iv], "auto");
                if (half && (tv > 0) != is_auto)
                    continue;
                /* under sanitizers (ASan+UBSan: memory and undefined
                 * behaviour, the same rows) auto is skipped: it runs the
                 * best level's row, tested under its own name; the
                 * plain build runs it (CI's time limit) */
                if (!half && is_auto && TB_SANITIZED)
                    continue;
                void *ctx = instance(ax[0].values[iv], ax[1].values[tv]);
                for (int ci = 0; ci < fit.n; ci++)
                    if (!HALF_SKIP(ci) &&
                        (!fit.c[ci].big || tb_cpu_isa(ctx) > TB_ISA_SCALAR))
                        run_case(ctx, ax[0].values[iv], tv + 1, op,
                                 (tb_dtype)dt, &pc[ci], ci);
                B->destroy(ctx);
            }
        for (int ci = 0; ci < fit.n; ci++)
            if (!HALF_SKIP(ci))
                prep_free(op, &pc[ci]);
#undef HALF_SKIP
    }
    B->destroy(cctx);
}

int checkasm_op_tests(struct CMUnitTest *t, int max)
{
    size_t n;
    const tb_cpu_krow *rows = tb_cpu_krows(&n);
    int k = 0;
    bool seen[TB_OP_COUNT] = {false};
    static char names[TB_OP_COUNT][48];
    for (size_t i = 0; i < n; i++) {
        const tb_op_id id = rows[i].op;
        if (seen[id])
            continue;
        seen[id] = true;
        assert_true(k < max);
        snprintf(names[id], sizeof names[id], "op_%s", tb_op_get(id)->name);
        t[k++] = (struct CMUnitTest){names[id], test_op, setup, teardown,
                                     (void *)(intptr_t)id};
    }
    return k;
}
