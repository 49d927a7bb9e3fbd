#include "check.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "stats.h"

void tb_check_outputs(const tb_tensor *got, const tb_tensor *ref, int n_out,
                      tb_tol tol, double reduce_len, tb_check *out)
{
    memset(out, 0, sizeof *out);
    out->rtol = tol.rtol;
    out->atol = tol.atol * sqrt(reduce_len > 1 ? reduce_len : 1);
    out->first_bad = -1;
    out->method = "full";
    for (int o = 0; o < n_out; o++) {
        int64_t n = tb_tensor_numel(&ref[o]);
        const double *r = ref[o].data;
        for (int64_t i = 0; i < n; i++) {
            double g = tb_tensor_get(&got[o], i);
            double e = fabs(g - r[i]);
            bool ok;
            if (isnan(r[i]) || isnan(g))
                ok = isnan(r[i]) && isnan(g);
            else if (isinf(r[i]) || isinf(g))
                ok = g == r[i];
            else {
                ok = e <= out->atol + out->rtol * fabs(r[i]);
                if (e > out->max_abs_err)
                    out->max_abs_err = e;
                if (r[i] != 0 && e / fabs(r[i]) > out->max_rel_err)
                    out->max_rel_err = e / fabs(r[i]);
            }
            if (!ok) {
                if (out->first_bad < 0) {
                    out->first_bad = i;
                    out->first_bad_output = o;
                    out->first_bad_got = g;
                    out->first_bad_ref = r[i];
                }
                out->n_bad++;
            }
        }
    }
    out->passed = out->n_bad == 0;
}

/* Element i of a contiguous host tensor. */
static double at(const tb_tensor *t, int64_t i)
{
    return t->dtype == TB_F32 ? ((const float *)t->data)[i]
                              : ((const double *)t->data)[i];
}

void tb_check_matmul_projection(const tb_tensor *a, const tb_tensor *b,
                                const tb_tensor *c, tb_tol tol,
                                uint64_t seed, tb_check *out)
{
    memset(out, 0, sizeof *out);
    out->method = "projection";
    out->first_bad = -1;
    int nd = c->ndim;
    int64_t M = c->shape[nd - 2], N = c->shape[nd - 1];
    int64_t K = a->shape[nd - 1];
    int64_t batches = tb_tensor_numel(c) / (M * N);
    out->rtol = tol.rtol;
    out->atol = tol.atol * sqrt(K > 1 ? (double)K : 1);
    double *v = malloc((size_t)N * sizeof *v);
    double *bv = malloc((size_t)K * sizeof *bv);
    if (!v || !bv) {
        free(v);
        free(bv);
        out->n_bad = 1; /* cannot check: never pass silently */
        return;
    }
    tb_rng rng;
    tb_rng_seed(&rng, seed ^ 0x9e3779b97f4a7c15ull);
    for (int64_t j = 0; j < N; j++)
        v[j] = 2 * tb_rng_uniform(&rng) - 1;
    for (int64_t bt = 0; bt < batches; bt++) {
        int64_t ao = bt * M * K, bo = bt * K * N, co = bt * M * N;
        for (int64_t k = 0; k < K; k++) {
            double s = 0;
            for (int64_t j = 0; j < N; j++)
                s += at(b, bo + k * N + j) * v[j];
            bv[k] = s;
        }
        for (int64_t i = 0; i < M; i++) {
            double want = 0, got = 0, bound = 0;
            for (int64_t k = 0; k < K; k++)
                want += at(a, ao + i * K + k) * bv[k];
            for (int64_t j = 0; j < N; j++) {
                double cij = at(c, co + i * N + j);
                got += cij * v[j];
                bound += (out->atol + out->rtol * fabs(cij)) * fabs(v[j]);
            }
            double e = fabs(got - want);
            bool ok = e <= bound;
            if (isnan(got) || isnan(want))
                ok = false;
            if (e > out->max_abs_err)
                out->max_abs_err = e;
            if (want != 0 && e / fabs(want) > out->max_rel_err)
                out->max_rel_err = e / fabs(want);
            if (!ok) {
                if (out->first_bad < 0) {
                    out->first_bad = co + i * N;
                    out->first_bad_got = got;
                    out->first_bad_ref = want;
                }
                out->n_bad++;
            }
        }
    }
    free(v);
    free(bv);
    out->passed = out->n_bad == 0;
}
