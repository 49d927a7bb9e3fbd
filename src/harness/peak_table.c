/* `tbench peak`'s tables: bandwidth per level, thread count and kernel,
 * FMA (and int8 dot products) per ISA, dtype and thread count, the core
 * clock and the notes.
 * See peak.h. */
#include "peak.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "gpu_peak.h"
#include "peak_json.h"

static void pk_fmt_bytes(double b, char *buf, size_t len)
{
    if (b >= 1 << 30)
        snprintf(buf, len, "%.1f GiB", b / (1 << 30));
    else if (b >= 1 << 20)
        snprintf(buf, len, "%.1f MiB", b / (1 << 20));
    else
        snprintf(buf, len, "%.0f KiB", b / 1024);
}

/* "123.4 (5%)" or "-" for a missing figure. */
static void pk_fmt_fig(const cJSON *e, const char *unit, char *buf,
                       size_t len)
{
    char key[32];
    snprintf(key, sizeof key, "best_%s", unit);
    double best = pk_num(e, key), spread = pk_num(e, "spread");
    if (!e || isnan(best))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.1f (%.0f%%)", best, 100 * spread);
}

void tb_peaks_print(FILE *f, const cJSON *p)
{
    if (!pk_peaks_wellformed(p)) {
        fprintf(f, "(no valid peaks)\n");
        return;
    }
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(p, "key");
    const cJSON *counts = cJSON_GetObjectItemCaseSensitive(p, "threads");
    const cJSON *bw = cJSON_GetObjectItemCaseSensitive(p, "bandwidth");
    const cJSON *fl = cJSON_GetObjectItemCaseSensitive(p, "flops");
    const char *model = pk_str(key, "cpu_model");
    const char *date = pk_str(p, "date");
    const char *bw_isa = pk_str(p, "bandwidth_isa");
    fprintf(f, "machine peaks: %s, %.0f logical CPUs, measured %s%s\n",
            model ? model : "?", pk_num(key, "logical_cpus"),
            date ? date : "?",
            cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(p, "quick"))
                ? " (--quick)"
                : "");
    fprintf(f, "each figure: best of %.0f repetitions of at least %.0f ms "
               "(spread) = (best - worst) / best\n\n",
            pk_num(p, "repetitions"), pk_num(p, "min_rep_time_s") * 1e3);
    fprintf(f, "memory bandwidth, GB/s (%s kernels; bytes read + written, "
               "as STREAM counts them)\n",
            bw_isa ? bw_isa : "?");
    fprintf(f, "%-5s %7s %12s  %-13s %-13s %-13s %-13s %-13s\n", "level",
            "threads", "working set", "copy", "add", "triad", "read",
            "update");
    const cJSON *lv, *tc;
    cJSON_ArrayForEach(lv, cJSON_GetObjectItemCaseSensitive(p, "levels"))
    {
        const char *name = pk_str(lv, "name");
        if (!name)
            continue;
        cJSON_ArrayForEach(tc, counts)
        {
            int t = (int)tc->valuedouble;
            /* a line per set the level was measured on (the L3: its own
             * and its larger quarters), the n-th entry of each kernel */
            for (int n = 0;; n++) {
                char cells[PK_NBW][32], ws[32] = "-";
                bool any = false;
                for (int k = 0; k < PK_NBW; k++) {
                    const cJSON *e =
                        pk_find_nth(bw, "kernel", pk_bw_names[k], "level",
                                    name, t, n);
                    any = any || e;
                    pk_fmt_fig(e, "gb_s", cells[k], sizeof cells[k]);
                    if (e && k == PK_TRIAD)
                        pk_fmt_bytes(pk_num(e, "working_set_bytes"), ws,
                                     sizeof ws);
                }
                if (!any)
                    break;
                fprintf(f, "%-5s %7d %12s  %-13s %-13s %-13s %-13s %-13s\n",
                        name, t, ws, cells[0], cells[1], cells[2], cells[3],
                        cells[4]);
            }
        }
    }
    /* chains per thread: every entry's "accumulators" (one loop shape) */
    char nacc[32] = "?";
    const double acc = pk_num(cJSON_GetArrayItem(fl, 0), "accumulators");
    if (!isnan(acc))
        snprintf(nacc, sizeof nacc, "%.0f", acc);
    fprintf(f, "\nFMA peak, GFLOP/s (%s independent chains per thread; "
               "scalar = the portable baseline build)\n",
            nacc);
    /* columns: f32 and f64, then every other dtype of the figures in
     * the order first seen (bf16 and int8: avx512bf16's vdpbf16ps and vpdpbusd loops) */
    enum { PK_MAX_COLS = 8 };
    const char *cols[PK_MAX_COLS] = {"f32", "f64"};
    int ncols = 2;
    const cJSON *e;
    cJSON_ArrayForEach(e, fl)
    {
        const char *d = pk_str(e, "dtype");
        bool known = !d;
        for (int c = 0; c < ncols && !known; c++)
            known = !strcmp(cols[c], d);
        if (!known && ncols < PK_MAX_COLS)
            cols[ncols++] = d;
    }
    if (ncols > 2)
        fprintf(f, "(a dtype after f64: a dot-product instruction, bf16's "
                   "vdpbf16ps, 2 products into each f32 lane, int8's "
                   "vpdpbusd, 4 u8 x s8 products into each int32 lane; "
                   "GFLOP/s or GOP/s at 2 per multiply-add)\n");
    fprintf(f, "%-10s %7s", "isa", "threads");
    for (int c = 0; c < ncols; c++)
        fprintf(f, "  %-15s", cols[c]);
    fprintf(f, "\n");
    /* the levels in the order of their first figure (lowest first, as
     * tb_peaks_measure adds them) */
    const cJSON *first;
    cJSON_ArrayForEach(first, fl)
    {
        const char *isa = pk_str(first, "isa");
        const cJSON *prev;
        bool seen = !isa;
        cJSON_ArrayForEach(prev, fl)
        {
            if (prev == first || seen)
                break;
            const char *pi = pk_str(prev, "isa");
            seen = pi && !strcmp(pi, isa);
        }
        if (seen)
            continue;
        cJSON_ArrayForEach(tc, counts)
        {
            int t = (int)tc->valuedouble;
            char cells[PK_MAX_COLS][32];
            bool any = false;
            for (int c = 0; c < ncols; c++) {
                e = pk_find(fl, "isa", isa, "dtype", cols[c], t);
                any = any || e;
                pk_fmt_fig(e, "gflop_s", cells[c], sizeof cells[c]);
            }
            if (!any)
                continue;
            fprintf(f, "%-10s %7d", isa, t);
            for (int c = 0; c < ncols; c++)
                fprintf(f, "  %-15s", cells[c]);
            fprintf(f, "\n");
        }
    }
    const cJSON *clk = cJSON_GetObjectItemCaseSensitive(p, "clock");
    if (!isnan(pk_num(clk, "median_ghz")))
        fprintf(f, "\ncore clock, GHz (a chain of dependent integer adds, "
                   "1 thread): median %.2f, best %.2f (%.0f%%)\n",
                pk_num(clk, "median_ghz"), pk_num(clk, "best_ghz"),
                100 * pk_num(clk, "spread"));
    const cJSON *n;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(p, "notes"))
        if (cJSON_IsString(n))
            fprintf(f, "note: %s\n", n->valuestring);
    if (cJSON_IsFalse(cJSON_GetObjectItemCaseSensitive(p, "pinned")))
        fprintf(f, "note: threads could not be pinned to CPUs\n");
    tb_gpu_peaks_print(f, cJSON_GetObjectItemCaseSensitive(p, "gpu"));
}

