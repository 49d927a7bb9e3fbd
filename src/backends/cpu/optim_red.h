/*
 * The loops of the optimizer steps that reduce over the whole tensor
 * (lamb, lbfgs; optim.c), written once for f32 and f64.
 *
 * This header has two parts:
 *  1. (once, include guard) the phases and the job every loop reads;
 *  2. (each time RED_ET is defined) with RED_ET the element type,
 *     RED_SQRT its square root and RED_NAME the function to define, it
 *     defines
 *         static void RED_NAME(const tb_red_job *r, int64_t b, int64_t e,
 *                              double part[3]);
 *     which runs phase r->phase on elements [b, e), adding its sums (in
 *     double, in index order) to part[0] and part[1].  The three macros
 *     are undefined at the end.  lamb's mixed-precision form (bf16/f16 p
 *     and g, f32 state) is the same loop with RED_HT the 16-bit type of
 *     p and g, RED_LDH(ptr, i) its element i widened and RED_STH(ptr, i,
 *     x) x stored rounded once (undefined at the end too; the vector
 *     phases are lbfgs's, never run in that form).
 *
 * Every element is read before it is written, so p and the state may be
 * updated in place.
 */
#ifndef TB_BACKENDS_CPU_OPTIM_RED_H
#define TB_BACKENDS_CPU_OPTIM_RED_H

#include <math.h>
#include <stdint.h>

#include "optim_simd.h"

#include "../../ops/optim_math.h"

typedef enum {
    /* lamb: new m, v written; part = (sum p^2, sum r^2) */
    TB_RED_LAMB_MOMENTS,
    /* lamb: p -= c r, r recomputed from the new m, v */
    TB_RED_LAMB_UPDATE,
    TB_RED_DOT2, /* part = (sum a b, sum b b) */
    /* lbfgs's fused passes: q = c a (axpy 0), q + c a (axpy 1) or q
     * (axpy 2: no update pending), then q *= c2 when scale2, each
     * rounded to the element type, stored; then part[0] = sum b q
     * (UPD_DOT; UPD_DOT3 with part[1] = sum b y, part[2] = sum y y, the
     * sums of DOT2 on (b, y)) or out = p + lr q (UPD_STEP) */
    TB_RED_UPD_DOT,
    TB_RED_UPD_DOT3,
    TB_RED_UPD_STEP,
} tb_red_phase;

/* One phase over n elements (a parallel pass of optim.c). */
typedef struct tb_red_job {
    const tb_optim_job *j; /* lamb: operands and scalars */
    int64_t n;
    tb_red_phase phase;
    const void *a, *b; /* operands of the vector phases */
    const void *y;     /* UPD_DOT3's second vector */
    const void *p;     /* UPD_STEP's base */
    void *q, *out;
    double c, c2;
    int axpy, scale2; /* the UPD_* phases' update (above) */
    double part[TB_OPTIM_CHUNKS][3]; /* per chunk, summed in order */
} tb_red_job;

/* The loops at the SIMD levels, the same phases on the same elements
 * (optim_red_simd.h, defined in optim_red_avx2.c and
 * optim_red_avx512.c): tb_cpu_red_<dt>_<level>, dt f32, f64, or bf16
 * and f16 (lamb's mixed-precision form: 16-bit p and g, f32 state). */
#define TB_CPU_RED_DECL(dt, lv)                                           \
    void tb_cpu_red_##dt##_##lv(const tb_red_job *r, int64_t b,           \
                                int64_t e, double part[3]);
#define TB_CPU_RED_DECLS(lv)                                              \
    TB_CPU_RED_DECL(f32, lv) TB_CPU_RED_DECL(f64, lv)                     \
    TB_CPU_RED_DECL(bf16, lv) TB_CPU_RED_DECL(f16, lv)
TB_CPU_RED_DECLS(avx2)
TB_CPU_RED_DECLS(avx512)

#endif /* TB_BACKENDS_CPU_OPTIM_RED_H */

/* ---- part 2: the loops ------------------------------------------------ */
#ifdef RED_ET

#ifndef RED_HT /* p and g of the element type */
#define RED_HT RED_ET
#define RED_LDH(ptr, i) ((ptr)[i])
#define RED_STH(ptr, i, x) ((ptr)[i] = (x))
#endif

static void RED_NAME(const tb_red_job *r, int64_t b, int64_t e,
                     double part[3])
{
    typedef RED_ET et;
    const tb_optim_job *j = r->j;
    const et *a = r->a, *bb = r->b, *yy = r->y;
    et *q = r->q;
    const et c = (et)r->c;
    double s0 = 0, s1 = 0, s2 = 0;

    switch (r->phase) {
    case TB_RED_LAMB_MOMENTS:
    case TB_RED_LAMB_UPDATE: {
        const RED_HT *pi = j->in[0], *gi = j->in[1];
        const et *mi = j->in[2], *vi = j->in[3];
        RED_HT *po = j->out[0];
        et *mo = j->out[1], *vo = j->out[2];
        const et b1 = (et)j->b1, omb1 = (et)j->omb1;
        const et b2 = (et)j->b2, omb2 = (et)j->omb2;
        const et rbc1 = (et)j->c2, rbc2 = (et)j->scale;
        const et eps = (et)j->eps, wd = (et)j->wd;
        const int has_wd = j->wd != 0;
        for (int64_t i = b; i < e; i++) {
            et p = RED_LDH(pi, i), m, v;
            if (r->phase == TB_RED_LAMB_MOMENTS) {
                et g = RED_LDH(gi, i);
                m = b1 * mi[i] + omb1 * g;
                v = b2 * vi[i] + omb2 * (g * g);
            } else {
                m = mo[i];
                v = vo[i];
            }
            et u = m * rbc1 / (RED_SQRT(v * rbc2) + eps);
            if (has_wd)
                u = u + wd * p;
            if (r->phase == TB_RED_LAMB_MOMENTS) {
                s0 += (double)p * p;
                s1 += (double)u * u;
                mo[i] = m;
                vo[i] = v;
            } else {
                RED_STH(po, i, p - c * u);
            }
        }
        break;
    }
    case TB_RED_DOT2:
        for (int64_t i = b; i < e; i++) {
            s0 += (double)a[i] * bb[i];
            s1 += (double)bb[i] * bb[i];
        }
        break;
    case TB_RED_UPD_DOT:
    case TB_RED_UPD_DOT3:
    case TB_RED_UPD_STEP: {
        const et c2 = (et)r->c2, lr = (et)j->lr, *pp = r->p;
        et *o = r->out;
        const int dot = r->phase != TB_RED_UPD_STEP;
        const int dot3 = r->phase == TB_RED_UPD_DOT3;
        for (int64_t i = b; i < e; i++) {
            et t = r->axpy == 2 ? q[i]
                   : r->axpy    ? q[i] + c * a[i]
                                : c * a[i];
            if (r->scale2)
                t = c2 * t;
            q[i] = t;
            if (dot3) {
                s1 += (double)bb[i] * yy[i];
                s2 += (double)yy[i] * yy[i];
            }
            if (dot)
                s0 += (double)bb[i] * t;
            else
                o[i] = pp[i] + lr * t;
        }
        break;
    }
    }
    part[0] += s0;
    part[1] += s1;
    part[2] += s2;
}

#undef RED_HT
#undef RED_LDH
#undef RED_STH
#undef RED_ET
#undef RED_SQRT
#undef RED_NAME
#endif /* RED_ET */
