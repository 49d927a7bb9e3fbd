#include "check.h"

#include <math.h>
#include <string.h>

void tb_check_outputs(const tb_tensor *got, const tb_tensor *ref, int n_out,
                      tb_tol tol, double reduce_len, tb_check *out)
{
    memset(out, 0, sizeof *out);
    out->rtol = tol.rtol;
    out->atol = tol.atol * sqrt(reduce_len > 1 ? reduce_len : 1);
    out->first_bad = -1;
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
