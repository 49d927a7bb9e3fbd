/*
 * Optimizer-step loops of the cpu backend, written once and compiled at
 * every ISA level (optim.c: portable C; optim_avx2.c, optim_avx512.c:
 * only with their level's -m flags).
 *
 * This header has two parts:
 *  1. (once, include guard) the job every loop reads, and the entry
 *     points of the per-ISA files;
 *  2. (each time OPT_ET is defined) a loop template: with OPT_ET the
 *     element type (float or double), OPT_VT a vector type of it (a GCC
 *     vector such as __m512, or OPT_ET itself for the portable version)
 *     and OPT_NAME the function to define, it defines
 *         static int64_t OPT_NAME(const tb_optim_job *j, int64_t b,
 *                                 int64_t e);
 *     which steps elements [b, r) for the largest r <= e with r - b a
 *     multiple of the vector width, and returns r (the caller finishes
 *     [r, e) with the portable version).  The three macros are undefined
 *     at the end.  Before that include, OPT_SQRT, OPT_FMA, OPT_MAX,
 *     OPT_MIN and OPT_ABS must say how to take those of an OPT_VT.
 *     The mixed-precision form (bf16/f16 p and g, f32 state: ops/op.h's
 *     tb_op_in_dtype) is the same template with OPT_HT the 16-bit
 *     storage type of p and g, OPT_LDH(x, ptr, i) loading (widening)
 *     the lanes at ptr + i into x and OPT_STH(ptr, i, x) storing x
 *     rounded once to the dtype (all three also undefined at the end;
 *     without them p and g are OPT_ET): every value in between is the
 *     f32 template's, so the step is widen + the f32 loop + narrow, bit
 *     for bit, with p and g read and p written once as 16 bits.
 *
 * The loops use GCC's vector extensions: + - * / between vectors, and
 * between a vector and an OPT_ET scalar (broadcast), so one body serves
 * every width.  Every iteration loads all its inputs before it stores any
 * output, so an output may be the very buffer of an input (the optimizer
 * state updated in place); partial overlaps are refused by optim.c.
 */
#ifndef TB_BACKENDS_CPU_OPTIM_SIMD_H
#define TB_BACKENDS_CPU_OPTIM_SIMD_H

#include <stdbool.h>
#include <stdint.h>
#include <string.h>

/* One optimizer step over n elements: every scalar is computed once per
 * call in double (optim.c, optim_prepare) and rounded to the element
 * type by the loops.  Which fields an op uses is said in optim.c. */
typedef struct tb_optim_job {
    int op; /* tb_op_id */
    const void *in[4]; /* p, g, state 1, state 2 (NULL if absent) */
    void *out[3];      /* p, state 1, state 2 (may equal an input) */
    double lr;         /* step size of the update (bias-corrected) */
    double c2;         /* nadam: coefficient of m; sgd_momentum: 1-damp */
    double b1, omb1;   /* beta1, 1 - beta1 (sgd_momentum: momentum) */
    double b2, omb2;   /* beta2, 1 - beta2 */
    double scale;      /* of the second moment before/inside the sqrt */
    double eps;
    double wd;         /* L2 weight decay added to g (0: skipped) */
    double decay;      /* adamw: p *= decay first */
    double lo, hi;     /* adabound: the bounds of the step size */
    bool mom, nesterov, rect;
} tb_optim_job;

/* Entry points of optim_avx2.c, optim_avx512.c and optim_avx512bf16.c
 * (see part 2; bf16, f16: 16-bit p and g, f32 state). */
int64_t tb_optim_f32_avx2(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_f64_avx2(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_bf16_avx2(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_f16_avx2(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_f32_avx512(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_f64_avx512(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_bf16_avx512(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_f16_avx512(const tb_optim_job *j, int64_t b, int64_t e);
int64_t tb_optim_bf16_avx512bf16(const tb_optim_job *j, int64_t b,
                                 int64_t e);
/* optim_avx512.c's f64 loop over 256-bit vectors, on [b, b + (e - b) /
 * 8 * 8) (the zmm loop's vectors): optim.c's branch for sgd and adamax
 * f64 over large arrays on AMD CPUs. */
int64_t tb_optim_f64_avx512_ymm(const tb_optim_job *j, int64_t b,
                                int64_t e);

#endif /* TB_BACKENDS_CPU_OPTIM_SIMD_H */

/* ---- part 2: the loop template -------------------------------------- */
#ifdef OPT_ET

#include "../../ops/op.h"

/* Unaligned vector access (memcpy compiles to one load/store). */
#define OPT_LD(x, ptr, i) memcpy(&(x), (ptr) + (i), sizeof(x))
#define OPT_ST(ptr, i, x) memcpy((ptr) + (i), &(x), sizeof(x))
#ifndef OPT_HT /* p and g of the element type */
#define OPT_HT OPT_ET
#define OPT_LDH(x, ptr, i) OPT_LD(x, ptr, i)
#define OPT_STH(ptr, i, x) OPT_ST(ptr, i, x)
#endif

static int64_t OPT_NAME(const tb_optim_job *j, int64_t b, int64_t e)
{
    typedef OPT_ET et;
    typedef OPT_VT vt;
    const int64_t L = (int64_t)(sizeof(vt) / sizeof(et));
    const int64_t end = b + (e - b) / L * L;
    const OPT_HT *pi = j->in[0], *gi = j->in[1];
    const et *s1i = j->in[2], *s2i = j->in[3];
    OPT_HT *po = j->out[0];
    et *s1o = j->out[1], *s2o = j->out[2];
    const et lr = (et)j->lr, c2 = (et)j->c2, wd = (et)j->wd;
    const et b1 = (et)j->b1, omb1 = (et)j->omb1;
    const et b2 = (et)j->b2, omb2 = (et)j->omb2;
    const et scale = (et)j->scale, eps = (et)j->eps;
    const et decay = (et)j->decay;
    const et lo = (et)j->lo, hi = (et)j->hi;
    const bool has_wd = j->wd != 0;
    vt p, g, m, v;

    switch (j->op) {
    case TB_OP_sgd:
        for (int64_t i = b; i < end; i += L) {
            OPT_LDH(p, pi, i);
            OPT_LDH(g, gi, i);
            if (has_wd)
                g = OPT_FMA(p, wd, g);
            p = p - lr * g;
            OPT_STH(po, i, p);
        }
        break;
    case TB_OP_sgd_momentum:
        for (int64_t i = b; i < end; i += L) {
            OPT_LDH(p, pi, i);
            OPT_LDH(g, gi, i);
            OPT_LD(m, s1i, i);
            if (has_wd)
                g = OPT_FMA(p, wd, g);
            if (j->mom) {
                m = OPT_FMA(m, b1, c2 * g);
                g = j->nesterov ? OPT_FMA(m, b1, g) : m;
            }
            p = p - lr * g;
            OPT_STH(po, i, p);
            OPT_ST(s1o, i, m);
        }
        break;
    case TB_OP_adam:
    case TB_OP_adamw:
    case TB_OP_nadam:
    case TB_OP_radam:
    case TB_OP_adabound:
        for (int64_t i = b; i < end; i += L) {
            OPT_LDH(p, pi, i);
            OPT_LDH(g, gi, i);
            OPT_LD(m, s1i, i);
            OPT_LD(v, s2i, i);
            if (j->op == TB_OP_adamw)
                p = p * decay;
            else if (has_wd)
                g = OPT_FMA(p, wd, g);
            m = OPT_FMA(m, b1, omb1 * g);
            v = OPT_FMA(v, b2, omb2 * (g * g));
            vt d;
            switch (j->op) {
            case TB_OP_nadam: /* denom = sqrt(v / bc2) + eps */
                d = OPT_SQRT(v * scale) + eps;
                p = p - OPT_FMA(g, lr, c2 * m) / d;
                break;
            case TB_OP_adabound: /* clamp(lr / (sqrt(v) + eps), lo, hi) */
                d = lr / (OPT_SQRT(v) + eps);
                d = OPT_MIN(OPT_MAX(d, (vt){0} + lo), (vt){0} + hi);
                p = p - d * m;
                break;
            case TB_OP_radam:
                if (j->rect) {
                    d = OPT_SQRT(v) + eps;
                    p = p - lr * m / d;
                } else {
                    p = p - lr * m;
                }
                break;
            default: /* denom = sqrt(v) / sqrt(bc2) + eps */
                d = OPT_FMA(OPT_SQRT(v), scale, (vt){0} + eps);
                p = p - lr * m / d;
                break;
            }
            OPT_STH(po, i, p);
            OPT_ST(s1o, i, m);
            OPT_ST(s2o, i, v);
        }
        break;
    case TB_OP_adagrad:
        for (int64_t i = b; i < end; i += L) {
            OPT_LDH(p, pi, i);
            OPT_LDH(g, gi, i);
            OPT_LD(v, s1i, i);
            if (has_wd)
                g = OPT_FMA(p, wd, g);
            v = OPT_FMA(g, g, v);
            p = p - lr * g / (OPT_SQRT(v) + eps);
            OPT_STH(po, i, p);
            OPT_ST(s1o, i, v);
        }
        break;
    case TB_OP_adamax:
        for (int64_t i = b; i < end; i += L) {
            OPT_LDH(p, pi, i);
            OPT_LDH(g, gi, i);
            OPT_LD(m, s1i, i);
            OPT_LD(v, s2i, i);
            if (has_wd)
                g = OPT_FMA(p, wd, g);
            m = OPT_FMA(m, b1, omb1 * g);
            v = OPT_MAX(v * b2, OPT_ABS(g) + eps);
            p = p - lr * m / v;
            OPT_STH(po, i, p);
            OPT_ST(s1o, i, m);
            OPT_ST(s2o, i, v);
        }
        break;
    default:
        return b; /* optim.c never asks: nothing done */
    }
    return end;
}

#undef OPT_LD
#undef OPT_ST
#undef OPT_HT
#undef OPT_LDH
#undef OPT_STH
#undef OPT_ET
#undef OPT_VT
#undef OPT_NAME
#endif /* OPT_ET */
