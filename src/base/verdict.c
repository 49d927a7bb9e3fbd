/* The one verdict on a measured change: see verdict.h. */
#include "verdict.h"

#include <math.h>

tb_res_verdict tb_verdict_judge(const tb_verdict_in *in)
{
    double t = in->threshold, fl = fmax(in->floor, t);
    /* comparisons with NAN are false: a NAN figure never decides */
    int sig = in->p < in->alpha;
    if (sig && in->ci_low > 0 && in->change > fl)
        return TB_RES_VERDICT_REGRESSED;
    if (sig && in->ci_high < 0 && 1 + in->change < 1 / (1 + fl))
        return TB_RES_VERDICT_IMPROVED;
    if (t >= 0 && in->ci_low >= 1 / (1 + t) - 1 && in->ci_high <= t &&
        in->mde <= t)
        return TB_RES_VERDICT_UNCHANGED;
    return TB_RES_VERDICT_INCONCLUSIVE;
}
