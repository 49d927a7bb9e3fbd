#include "table.h"

#include "resultsio.h"

#include <math.h>
#include <stdbool.h>
#include <string.h>

char *tb_fmt_ns(double ns, char *buf, size_t len)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    int u = 0;
    while (u < 3 && fabs(ns) >= 1000) {
        ns /= 1000;
        u++;
    }
    int prec = fabs(ns) >= 100 ? 0 : fabs(ns) >= 10 ? 1 : 2;
    snprintf(buf, len, "%.*f %s", prec, ns, units[u]);
    return buf;
}

/* Member k of o as a string, "" when it is not one. */
static const char *str(const cJSON *o, const char *k)
{
    const char *v = tb_json_str(o, k);
    return v ? v : "";
}

static void fmt_rate(double v, char *buf, size_t len)
{
    if (isnan(v))
        snprintf(buf, len, "-");
    else
        snprintf(buf, len, "%.*f", v >= 100 ? 1 : v >= 1 ? 2 : 3, v);
}

/* Ids longer than this get a line of their own (optimizer steps name
 * all their parameters), so the columns stay readable. */
#define TABLE_ID_MAX 72

const char *tb_shorten_middle(const char *s, int max, char *buf, size_t len)
{
    size_t n = strlen(s);
    if (max < 8)
        max = 8;
    if ((size_t)max >= len)
        max = (int)len - 1;
    if (n <= (size_t)max) {
        snprintf(buf, len, "%s", s);
        return buf;
    }
    size_t keep = (size_t)max - 3, head = (keep + 1) / 2,
           tail = keep - head;
    memcpy(buf, s, head);
    memcpy(buf + head, "...", 3);
    memcpy(buf + head + 3, s + n - tail, tail);
    buf[head + 3 + tail] = 0;
    return buf;
}

/* Columns of a table line besides the id. */
#define TABLE_REST 88

void tb_table_print(FILE *f, const cJSON *doc)
{
    tb_table_print_styled(f, doc, NULL);
}

void tb_table_print_styled(FILE *f, const cJSON *doc,
                           const tb_table_style *sty)
{
    const cJSON *cases = cJSON_GetObjectItemCaseSensitive(doc, "cases");
    const cJSON *c;
    int idmax = TABLE_ID_MAX, linemax = 0;
    bool shorten = sty && sty->width > 0;
    if (shorten) {
        /* ids shortened to what is left of the line; on a terminal too
         * narrow for that to stay readable (40), every id gets a line of
         * its own, shortened to the terminal's width */
        idmax = sty->width - TABLE_REST;
        if (idmax < 40) {
            idmax = 4;
            linemax = sty->width - 1;
        }
    }
    int w = 4;
    cJSON_ArrayForEach(c, cases)
    {
        int l = (int)strlen(str(c, "id"));
        if (shorten && !linemax && l > idmax)
            l = idmax;
        if (l > w && l <= idmax)
            w = l;
    }
    fprintf(f, "%-*s  %-12s %10s %7s %9s %9s %10s %7s  %s\n", w, "case",
            "status", "median", "ci", "GB/s", "GFLOP/s", "samples",
            "kern/it", "stop");
    cJSON_ArrayForEach(c, cases)
    {
        const cJSON *st = cJSON_GetObjectItemCaseSensitive(c, "stats");
        const char *status = str(c, "status");
        const char *id = str(c, "id");
        char shortid[256];
        if (shorten)
            id = tb_shorten_middle(id, linemax ? linemax : idmax, shortid,
                                   sizeof shortid);
        if ((int)strlen(id) > w) { /* whole, on a line of its own */
            fprintf(f, "%s\n", id);
            id = "";
        }
        const char *on = sty && sty->color ? sty->color(status) : "";
        const char *off = on && *on ? "\033[0m" : "";
        if (!on)
            on = "";
        if (!cJSON_IsObject(st)) {
            const char *msg = str(c, "message");
            fprintf(f, "%-*s  %s%-12s%s %s\n", w, id, on, status, off, msg);
            continue;
        }
        const cJSON *tp = cJSON_GetObjectItemCaseSensitive(c, "throughput");
        const cJSON *ct = cJSON_GetObjectItemCaseSensitive(c, "counters");
        char med[32], gb[32], gf[32], ci[32], smp[32];
        double m = tb_json_num(st, "median_ns");
        tb_fmt_ns(m, med, sizeof med);
        snprintf(ci, sizeof ci, "%.1f%%", 100 * tb_json_num(st, "ci_rel"));
        fmt_rate(tb_json_num(tp, "gb_s"), gb, sizeof gb);
        fmt_rate(tb_json_num(tp, "gflop_s"), gf, sizeof gf);
        snprintf(smp, sizeof smp, "%.0fx%.0f", tb_json_num(st, "n"),
                 tb_json_num(st, "iters_per_sample"));
        fprintf(f, "%-*s  %s%-12s%s %10s %7s %9s %9s %10s %7.2f  %s\n", w,
                id, on, status, off, med, ci, gb, gf, smp,
                tb_json_num(ct, "kernel_launches"), str(st, "stop_reason"));
    }
}
