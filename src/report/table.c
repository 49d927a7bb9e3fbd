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

/* The width of the id column: the longest id that fits idmax (ids
 * shortened to idmax when shorten and not linemax), at least 4. */
static int id_width(const tb_resfile *r, bool shorten, int idmax,
                    int linemax)
{
    int w = 4;
    for (int i = 0; i < r->n; i++) {
        int l = (int)strlen(r->cases[i].id);
        if (shorten && !linemax && l > idmax)
            l = idmax;
        if (l > w && l <= idmax)
            w = l;
    }
    return w;
}

void tb_table_print_styled(FILE *f, const cJSON *doc,
                           const tb_table_style *sty)
{
    tb_resfile *r;
    char err[512];
    if (tb_resfile_from_doc("results.json", doc, &r, err, sizeof err)) {
        fprintf(f, "no table: %s\n", err);
        return;
    }
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
    int w = id_width(r, shorten, idmax, linemax);
    fprintf(f, "%-*s  %-12s %10s %7s %9s %9s %10s %7s  %s\n", w, "case",
            "status", "median", "ci", "GB/s", "GFLOP/s", "samples",
            "kern/it", "stop");
    for (int i = 0; i < r->n; i++) {
        const tb_rescase *c = &r->cases[i];
        const char *id = c->id;
        char shortid[256];
        if (shorten)
            id = tb_shorten_middle(id, linemax ? linemax : idmax, shortid,
                                   sizeof shortid);
        if ((int)strlen(id) > w) { /* whole, on a line of its own */
            fprintf(f, "%s\n", id);
            id = "";
        }
        const char *on = sty && sty->color ? sty->color(c->status) : "";
        const char *off = on && *on ? "\033[0m" : "";
        if (!on)
            on = "";
        if (!c->timed) {
            fprintf(f, "%-*s  %s%-12s%s %s\n", w, id, on, c->status, off,
                    c->message ? c->message : "");
            continue;
        }
        char med[32], gb[32], gf[32], ci[32], smp[32];
        tb_fmt_ns(c->median_ns, med, sizeof med);
        snprintf(ci, sizeof ci, "%.1f%%", 100 * c->ci_rel);
        fmt_rate(c->gb_s, gb, sizeof gb);
        fmt_rate(c->gflop_s, gf, sizeof gf);
        snprintf(smp, sizeof smp, "%.0fx%.0f", (double)c->n,
                 c->iters_per_sample);
        fprintf(f, "%-*s  %s%-12s%s %10s %7s %9s %9s %10s %7.2f  %s\n", w,
                id, on, c->status, off, med, ci, gb, gf, smp,
                c->counters[TB_RES_CTR_KERNEL_LAUNCHES],
                c->f.stats_stop_reason ? c->f.stats_stop_reason : "");
    }
    tb_resfile_free(r);
}
