/* The threads=N-slower-than-threads=1 note (slowthreads.h). */
#include "slowthreads.h"

#include "compare.h"
#include "resultsio.h"

/* slowthreads.h.  Moved here from cmd_run.c so that a test can feed it
 * a document with known samples. */
int tb_note_slow_threads(FILE *f, const cJSON *doc)
{
    tb_resfile *r;
    char err[512];
    if (tb_resfile_from_doc("results.json", doc, &r, err, sizeof err))
        return 0; /* the table above says why */
    int printed = tb_note_slow_threads_file(f, r);
    tb_resfile_free(r);
    return printed;
}

int tb_note_slow_threads_file(FILE *f, const tb_resfile *r)
{
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    int printed = 0;
    for (int i = 0; i < r->n; i++) {
        const tb_rescase *c = &r->cases[i];
        const tb_rescase *one = c->timed ? tb_resfile_one_thread(r, c)
                                         : NULL;
        tb_cmp_case v;
        if (!one || !one->timed || tb_cmp_pair(one, c, &o, &v) ||
            v.time != TB_TIME_REGRESSED)
            continue;
        printed++;
        fprintf(f, "note: %s is %.2fx slower than with threads=1 (context "
                "switches per call, voluntary %.3g vs %.3g, involuntary "
                "%.3g vs %.3g)\n",
                c->id, c->median_ns / one->median_ns,
                c->counters[TB_RES_CTR_VOL_CTX_SWITCHES],
                one->counters[TB_RES_CTR_VOL_CTX_SWITCHES],
                c->counters[TB_RES_CTR_INVOL_CTX_SWITCHES],
                one->counters[TB_RES_CTR_INVOL_CTX_SWITCHES]);
    }
    return printed;
}
