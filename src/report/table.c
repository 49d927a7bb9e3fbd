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

/* The columns after the id (docs/FORMAT.md, "The run table"): status
 * (as wide as the widest status word of the table, at least 6), then
 * median, ci, GB/s, GFLOP/s and samples. */
#define TABLE_NUMS 44 /* "  " before the status, " %8s %6s %7s %7s %9s" */

void tb_table_print(FILE *f, const cJSON *doc)
{
    tb_table_print_styled(f, doc, NULL);
}

/* The "/"-separated tail every id of r shares when there are at least
 * two cases (e.g. "/f32/cpu[isa=auto,threads=1]"): its length, 0 when
 * none.  Never the whole of an id. */
static size_t common_tail(const tb_resfile *r)
{
    if (r->n < 2)
        return 0;
    const char *a = r->cases[0].id;
    size_t la = strlen(a), best = 0;
    for (size_t k = la; k-- > 1;) {
        if (a[k] != '/')
            continue;
        const char *t = a + k;
        size_t lt = la - k;
        bool all = true;
        for (int i = 1; i < r->n && all; i++) {
            const char *b = r->cases[i].id;
            size_t lb = strlen(b);
            all = lb > lt && !strcmp(b + lb - lt, t);
        }
        if (!all)
            break;
        best = lt;
    }
    return best;
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
    tb_table_print_file(f, r, sty);
    tb_resfile_free(r);
}

void tb_table_print_file(FILE *f, const tb_resfile *r,
                         const tb_table_style *sty)
{
    const bool fit = sty && sty->width > 0;
    int sw = 6; /* the status column */
    for (int i = 0; i < r->n; i++) {
        int l = (int)strlen(r->cases[i].status);
        if (r->cases[i].timed && l > sw)
            sw = l;
    }
    /* On a terminal: the tail all ids share is said once above the
     * table, and ids longer than what the line leaves are shortened in
     * the middle (never below 16), so every case is one line. */
    size_t tail = fit ? common_tail(r) : 0;
    int w = 4;
    for (int i = 0; i < r->n; i++) {
        int l = (int)(strlen(r->cases[i].id) - tail);
        if (l > w)
            w = l;
    }
    if (fit) {
        int room = sty->width - 1 - TABLE_NUMS - sw;
        if (room < 16)
            room = 16;
        if (w > room)
            w = room;
    }
    if (tail)
        fprintf(f, "every case id ends in %s\n",
                r->cases[0].id + strlen(r->cases[0].id) - tail);
    fprintf(f, "%-*s  %-*s %8s %6s %7s %7s %9s\n", w, "case", sw, "status",
            "median", "ci", "GB/s", "GFLOP/s", "samples");
    for (int i = 0; i < r->n; i++) {
        const tb_rescase *c = &r->cases[i];
        char idbuf[512], shortid[256];
        snprintf(idbuf, sizeof idbuf, "%.*s",
                 (int)(strlen(c->id) - tail), c->id);
        const char *id = idbuf;
        if (fit)
            id = tb_shorten_middle(idbuf, w, shortid, sizeof shortid);
        const char *on = sty && sty->color ? sty->color(c->status) : "";
        const char *off = on && *on ? "\033[0m" : "";
        if (!on)
            on = "";
        if (!c->timed) {
            char msg[512];
            const char *m = c->message ? c->message : "";
            if (fit) /* what the line leaves, shortened in the middle */
                m = tb_shorten_middle(m, sty->width - 4 - w -
                                      (int)strlen(c->status),
                                      msg, sizeof msg);
            fprintf(f, "%-*s  %s%s%s %s\n", w, id, on, c->status, off, m);
            continue;
        }
        char med[32], gb[32], gf[32], ci[32], smp[32];
        tb_fmt_ns(c->median_ns, med, sizeof med);
        snprintf(ci, sizeof ci, "%.1f%%", 100 * c->ci_rel);
        fmt_rate(c->gb_s, gb, sizeof gb);
        fmt_rate(c->gflop_s, gf, sizeof gf);
        snprintf(smp, sizeof smp, "%.0fx%.0f", (double)c->n,
                 c->iters_per_sample);
        fprintf(f, "%-*s  %s%-*s%s %8s %6s %7s %7s %9s\n", w, id, on, sw,
                c->status, off, med, ci, gb, gf, smp);
    }
    if (fit && r->n)
        fprintf(f, "median: time of one call; ci: its 95%% CI's width, %% "
                "of it; samples: n x calls\n");
}
