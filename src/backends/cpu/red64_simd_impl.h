/* lamb and lbfgs f64's loops at the SIMD levels (AVX2: 4 lanes, AVX-512:
 * 8; dvec_simd.h's rd), for inclusion by f64_avx2.c and f64_avx512.c
 * only: optim_red.h's phases (the same formulas, operation for
 * operation) W lanes wide, for optim.c's driver, which splits the
 * elements into TB_OPTIM_CHUNKS chunks and adds their sums in order.
 * Within a chunk the sums run in two vector accumulators each, added lane
 * by lane at its end, rather than one double in index order: the same
 * bits at any thread count still, within TOL_OPT of the C rows
 * (checkasm). */
#ifndef TB_BACKENDS_CPU_RED64_SIMD_IMPL_H
#define TB_BACKENDS_CPU_RED64_SIMD_IMPL_H

#include <math.h>
#include <stdint.h>

#include "dvec_simd.h"
#include "optim_red.h"
#include "vsum64_simd.h"

/* lamb's phases on [b, e) (optim_red.h's TB_RED_LAMB_*) */
static void r64_lamb(const tb_red_job *r, int64_t b, int64_t e,
                     double part[2])
{
    const tb_optim_job *j = r->j;
    const double *pi = j->in[0], *gi = j->in[1];
    const double *mi = j->in[2], *vi = j->in[3];
    double *po = j->out[0], *mo = j->out[1], *vo = j->out[2];
    const int mom = r->phase == TB_RED_LAMB_MOMENTS, has_wd = j->wd != 0;
    const rd b1 = rs_d1(j->b1), omb1 = rs_d1(j->omb1);
    const rd b2 = rs_d1(j->b2), omb2 = rs_d1(j->omb2);
    const rd rbc1 = rs_d1(j->c2), rbc2 = rs_d1(j->scale);
    const rd eps = rs_d1(j->eps), wd = rs_d1(j->wd), c = rs_d1(r->c);
    rd s0 = rs_d1(0.0), s1 = s0;
    int64_t i = b;
    for (; i + RS_W <= e; i += RS_W) {
        const rd p = rs_loadd(pi + i);
        rd m, v;
        if (mom) {
            const rd g = rs_loadd(gi + i);
            m = rs_add(rs_mul(b1, rs_loadd(mi + i)), rs_mul(omb1, g));
            v = rs_add(rs_mul(b2, rs_loadd(vi + i)),
                       rs_mul(omb2, rs_mul(g, g)));
        } else {
            m = rs_loadd(mo + i);
            v = rs_loadd(vo + i);
        }
        rd u = rs_div(rs_mul(m, rbc1),
                      rs_add(rs_sqrt(rs_mul(v, rbc2)), eps));
        if (has_wd)
            u = rs_add(u, rs_mul(wd, p));
        if (mom) {
            s0 = rs_fma(p, p, s0);
            s1 = rs_fma(u, u, s1);
            rs_stored(mo + i, m);
            rs_stored(vo + i, v);
        } else {
            rs_stored(po + i, rs_sub(p, rs_mul(c, u)));
        }
    }
    double a0 = dx_hsum(s0), a1 = dx_hsum(s1);
    for (; i < e; i++) { /* optim_red.h's loop */
        double p = pi[i], m, v;
        if (mom) {
            double g = gi[i];
            m = j->b1 * mi[i] + j->omb1 * g;
            v = j->b2 * vi[i] + j->omb2 * (g * g);
        } else {
            m = mo[i];
            v = vo[i];
        }
        double u = m * j->c2 / (sqrt(v * j->scale) + j->eps);
        if (has_wd)
            u = u + j->wd * p;
        if (mom) {
            a0 += p * p;
            a1 += u * u;
            mo[i] = m;
            vo[i] = v;
        } else {
            po[i] = p - r->c * u;
        }
    }
    part[0] += a0;
    part[1] += a1;
}

/* the phase r->phase on [b, e), its sums added to part (optim.c's
 * red_fn) */
static void r64_red(const tb_red_job *r, int64_t b, int64_t e,
                    double part[2])
{
    const double *a = r->a, *bb = r->b;
    double *q = r->q, *o = r->out;
    const double c = r->c;
    const rd vc = rs_d1(c);
    rd s0 = rs_d1(0.0), s1 = s0, t0 = s0, t1 = s0;
    int64_t i = b;
    double x0 = 0, x1 = 0;
    switch (r->phase) {
    case TB_RED_LAMB_MOMENTS:
    case TB_RED_LAMB_UPDATE:
        r64_lamb(r, b, e, part);
        return;
    case TB_RED_DOT2:
        for (; i + 2 * RS_W <= e; i += 2 * RS_W) {
            const rd u0 = rs_loadd(bb + i), u1 = rs_loadd(bb + i + RS_W);
            s0 = rs_fma(rs_loadd(a + i), u0, s0);
            s1 = rs_fma(rs_loadd(a + i + RS_W), u1, s1);
            t0 = rs_fma(u0, u0, t0);
            t1 = rs_fma(u1, u1, t1);
        }
        x0 = dx_hsum(rs_add(s0, s1));
        x1 = dx_hsum(rs_add(t0, t1));
        for (; i < e; i++) {
            x0 += a[i] * bb[i];
            x1 += bb[i] * bb[i];
        }
        break;
    case TB_RED_DOT:
        for (; i + 2 * RS_W <= e; i += 2 * RS_W) {
            s0 = rs_fma(rs_loadd(a + i), rs_loadd(q + i), s0);
            s1 = rs_fma(rs_loadd(a + i + RS_W), rs_loadd(q + i + RS_W), s1);
        }
        x0 = dx_hsum(rs_add(s0, s1));
        for (; i < e; i++)
            x0 += a[i] * q[i];
        break;
    case TB_RED_AXPY:
        for (; i + RS_W <= e; i += RS_W)
            rs_stored(q + i,
                      rs_add(rs_loadd(q + i), rs_mul(vc, rs_loadd(a + i))));
        for (; i < e; i++)
            q[i] = q[i] + c * a[i];
        break;
    case TB_RED_SCALE:
        for (; i + RS_W <= e; i += RS_W)
            rs_stored(q + i, rs_mul(vc, rs_loadd(a + i)));
        for (; i < e; i++)
            q[i] = c * a[i];
        break;
    case TB_RED_STEP:
        for (; i + RS_W <= e; i += RS_W)
            rs_stored(o + i,
                      rs_add(rs_loadd(a + i), rs_mul(vc, rs_loadd(q + i))));
        for (; i < e; i++)
            o[i] = a[i] + c * q[i];
        break;
    }
    part[0] += x0;
    part[1] += x1;
}

/* optim_red.h's tb_cpu_red_f64_<lv> */
#define R64_ENTRIES(lv)                                                   \
    void tb_cpu_red_f64_##lv(const tb_red_job *r, int64_t b, int64_t e,   \
                             double part[2])                              \
    {                                                                     \
        r64_red(r, b, e, part);                                           \
    }

#endif
