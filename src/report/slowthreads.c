/* The threads=N-slower-than-threads=1 note (slowthreads.h). */
#include "slowthreads.h"

#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "compare.h"
#include "resultsio.h"

/* Samples of a case record as doubles (heap) and their count; NULL
 * unless the case ran. */
static double *case_samples(const cJSON *c, size_t *n)
{
    const cJSON *x = cJSON_GetObjectItemCaseSensitive(
        cJSON_GetObjectItemCaseSensitive(c, "stats"), "samples_ns");
    int k = cJSON_GetArraySize(x);
    double *v = k > 0 ? malloc((size_t)k * sizeof *v) : NULL;
    if (!v)
        return NULL;
    int i = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, x)
        v[i++] = cJSON_IsNumber(e) ? e->valuedouble : NAN;
    *n = (size_t)k;
    return v;
}

/* slowthreads.h.  Moved here from cmd_run.c so that a test can feed it
 * a document with known samples. */
int tb_note_slow_threads(FILE *f, const cJSON *doc)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const cJSON *c;
    tb_cmp_opts o;
    tb_cmp_opts_default(&o);
    int printed = 0;
    cJSON_ArrayForEach(c, cases)
    {
        const cJSON *id = cJSON_GetObjectItemCaseSensitive(c, "id");
        if (!cJSON_IsString(id))
            continue;
        const char *t = strstr(id->valuestring, "threads=");
        if (!t)
            continue;
        const char *num = t + 8;
        size_t d = strspn(num, "0123456789");
        if (d == 0 || (d == 1 && num[0] == '1'))
            continue;
        char id1[1024];
        snprintf(id1, sizeof id1, "%.*s1%s", (int)(num - id->valuestring),
                 id->valuestring, num + d);
        const cJSON *one = NULL, *k;
        cJSON_ArrayForEach(k, cases)
        {
            const cJSON *kid = cJSON_GetObjectItemCaseSensitive(k, "id");
            if (cJSON_IsString(kid) && !strcmp(kid->valuestring, id1))
                one = k;
        }
        size_t na = 0, nb = 0;
        double *a = one ? case_samples(c, &na) : NULL;
        double *b = a ? case_samples(one, &nb) : NULL;
        tb_mwu u;
        double ma = tb_json_num(cJSON_GetObjectItemCaseSensitive(c, "stats"),
                                "median_ns"),
               mb = tb_json_num(
                   cJSON_GetObjectItemCaseSensitive(one, "stats"),
                   "median_ns");
        if (a && b && !tb_mann_whitney(a, na, b, nb, &u) && u.p < o.alpha &&
            ma > mb * (1 + o.threshold)) {
            const cJSON *ca = cJSON_GetObjectItemCaseSensitive(c, "counters"),
                        *cb = cJSON_GetObjectItemCaseSensitive(one,
                                                               "counters");
            printed++;
            fprintf(f, "note: %s is %.2fx slower than with threads=1 "
                    "(context switches per call, voluntary %.3g vs %.3g, "
                    "involuntary %.3g vs %.3g)\n",
                    id->valuestring, ma / mb,
                    tb_json_num(ca, "vol_ctx_switches"),
                    tb_json_num(cb, "vol_ctx_switches"),
                    tb_json_num(ca, "invol_ctx_switches"),
                    tb_json_num(cb, "invol_ctx_switches"));
        }
        free(a);
        free(b);
    }
    return printed;
}
