/* einsum's equation: parsed against the operand shapes, and the plan
 * that runs it on the existing building blocks.
 *
 * Equation: one term of letters (a-z, A-Z) per operand, separated by
 * ',', then optionally "->" and the output's letters.  A letter repeated
 * within a term takes that term's diagonal; a letter absent from the
 * output is summed over; without "->" the output is the letters that
 * appear exactly once, in ASCII order (NumPy's and PyTorch's rule).  No
 * ellipsis: "..." is refused (every dim is named by a letter).
 *
 * Plan: the operands are contracted pairwise, greedily (of all pairs of
 * the terms still to contract, the one whose result has the fewest
 * elements; the first such pair on a tie).  A pair (X, Y) runs as
 *   1. a gather of X (and of Y) when X holds a diagonal or a letter no
 *      other term nor the output needs (summed out first);
 *   2. a batched GEMM: the letters of both that stay are the batch, the
 *      letters of both that go are K, X's own are M, Y's own N; the
 *      GEMM reads A [batch, M, K] and B [batch, K, N] row-major
 *      (gemm.h has no transpose flags), so an operand whose letters do
 *      not lie in such an order is permuted into a buffer first (a
 *      gather without sums); of the role and letter orders possible, the
 *      one copying the fewest elements is taken;
 *   3. a gather of the last result into the output's order, when it is
 *      not already in it (a single operand: one gather).
 * tb_einsum_plan is pure (shapes in, steps out): the shape rule, the
 * cost model, the cpu rows and test_einsum share it. */
#ifndef TB_OPS_EINSUM_H
#define TB_OPS_EINSUM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../base/hostdev.h"
#include "op.h"

#define TB_EIN_LETTERS 52 /* a-z, A-Z */
#define TB_EIN_TERM_MAX 16 /* letters of an intermediate term */
#define TB_EIN_SLOTS (TB_MAX_INPUTS + 16)
#define TB_EIN_STEPS 16

/* A term: its letters (indices into tb_einsum's letters) in memory
 * order, row-major. */
typedef struct tb_ein_term {
    int n;
    int8_t l[2 * TB_EIN_TERM_MAX]; /* room for a pair's union */
} tb_ein_term;

typedef struct tb_einsum {
    int n_in;
    tb_ein_term in[TB_MAX_INPUTS]; /* may repeat a letter (a diagonal) */
    tb_ein_term out;               /* no letter twice */
    int n_letters;
    char letter[TB_EIN_LETTERS];   /* the character of each index */
    int64_t size[TB_EIN_LETTERS];
} tb_einsum;

typedef enum { TB_EIN_GATHER, TB_EIN_GEMM } tb_ein_kind;

/* Slots: 0..n_in-1 the operands, then the plan's buffers; -1 is the
 * output. */
typedef struct tb_ein_step {
    tb_ein_kind kind;
    int a, b; /* slots read: gather a; GEMM A = a, B = b */
    int dst;  /* slot written (a buffer, or -1 the output) */
    /* gather: dst holds a's letters in dst_t's order, letters of a not
     * in dst_t summed (a repeated letter read along its diagonal) */
    tb_ein_term dst_t;
    /* GEMM: batch x (M x K) * (K x N) */
    int64_t batch, M, N, K;
    double flops;
} tb_ein_step;

typedef struct tb_ein_plan {
    int n_steps;
    tb_ein_step step[TB_EIN_STEPS];
    int n_slots; /* operands and buffers */
    tb_ein_term term[TB_EIN_SLOTS];
    int64_t numel[TB_EIN_SLOTS];
    double flops; /* of all steps */
    int n_copies; /* gathers without a sum (permutes) */
    /* the order of the pairs, operands as slots ("(0,1),(2,3)") */
    char pairs[96];
} tb_ein_plan;

/* A gather step as strides: dst element o (row-major over dst_t's
 * letters, sizes size[], source strides st[]) is the sum, over the
 * summed letters' index t (row-major over ssize[], source strides
 * sst[]), of src[offset(o) + offset(t)].  A letter repeated in the
 * source term has the sum of its positions' strides: its diagonal.
 * The one description of a gather for every backend that runs the plan
 * (cpu, cuda), so the index arithmetic is the same everywhere. */
typedef struct tb_ein_gather {
    int nd, ns;
    int64_t size[TB_EIN_TERM_MAX], st[TB_EIN_TERM_MAX];
    int64_t ssize[TB_EIN_TERM_MAX], sst[TB_EIN_TERM_MAX];
    int64_t n, per; /* dst elements; terms of each sum */
} tb_ein_gather;

/* The gather of src_t (a slot's term) into dst_t's order. */
TB_HOSTDEV void tb_ein_gather_of(const tb_einsum *e, const tb_ein_term *src_t,
                                 const tb_ein_term *dst_t, tb_ein_gather *g)
{
    int64_t lst[TB_EIN_LETTERS], s = 1;
    bool in_src[TB_EIN_LETTERS], in_dst[TB_EIN_LETTERS];
    for (int l = 0; l < TB_EIN_LETTERS; l++) {
        lst[l] = 0;
        in_src[l] = in_dst[l] = false;
    }
    g->nd = g->ns = 0;
    g->n = g->per = 1;
    for (int d = src_t->n - 1; d >= 0; d--) {
        lst[src_t->l[d]] += s; /* a repeated letter: its diagonal */
        s *= e->size[src_t->l[d]];
    }
    for (int d = 0; d < dst_t->n; d++) {
        int l = dst_t->l[d];
        in_dst[l] = true;
        g->size[g->nd] = e->size[l];
        g->st[g->nd++] = lst[l];
        g->n *= e->size[l];
    }
    for (int d = 0; d < src_t->n; d++) {
        int l = src_t->l[d];
        if (in_dst[l] || in_src[l])
            continue;
        in_src[l] = true;
        g->ssize[g->ns] = e->size[l];
        g->sst[g->ns++] = lst[l];
        g->per *= e->size[l];
    }
}

/* The source offset of dst element o (dims size/st) or of sum term t
 * (dims ssize/sst): row-major decoding, last dim fastest. */
TB_HOSTDEV int64_t tb_ein_offset(int n, const int64_t *size,
                                 const int64_t *st, int64_t o)
{
    int64_t off = 0;
    for (int d = n - 1; d >= 0; d--) {
        off += (o % size[d]) * st[d];
        o /= size[d];
    }
    return off;
}

/* Parse equation eq against the n operand shapes in[].  Returns 0, or
 * TB_EPARAM / TB_ESHAPE with a one-line reason (naming `opname`) in
 * err. */
int tb_einsum_parse(const char *opname, const char *eq, const tb_shape *in,
                    int n, tb_einsum *e, char *err, size_t len);

/* The output shape of a parsed equation. */
void tb_einsum_out_shape(const tb_einsum *e, tb_shape *out);

/* The plan of a parsed equation; TB_EPARAM (an intermediate of more than
 * TB_EIN_TERM_MAX letters, or more steps than the plan holds) with the
 * reason in err. */
int tb_einsum_plan(const tb_einsum *e, tb_ein_plan *pl, char *err,
                   size_t len);

/* The plan in a line (the impl's text): its steps in order, "gemm b=8
 * m=256 n=256 k=256" (batch, M, N, K), "permute S", "diagonal S" or
 * "sum S" (a gather of slot S: an operand 0..n_in-1 or a buffer), after
 * "pairs (0,1),(4,2); " for 3 or 4 operands (the greedy order, each pair
 * two slots). */
char *tb_einsum_plan_text(const tb_einsum *e, const tb_ein_plan *pl,
                          char *buf, size_t len);

/* The op's equation parameter (param 0) or NULL; parse it against in[]
 * (op->n_in shapes). */
int tb_einsum_of(const tb_op *op, const tb_shape *in, const tb_params *p,
                 tb_einsum *e, char *err, size_t len);

/* tb_einsum_of then tb_einsum_plan, no message: the einsum ops'
 * einsum_plan slot. */
int tb_einsum_plan_of(const tb_op *op, const tb_shape *in,
                      const tb_params *p, tb_einsum *e, tb_ein_plan *pl);

#endif
