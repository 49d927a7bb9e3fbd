/* The web page's per-case details (html.h): for each ok case of the MAIN
 * document, a <details> with the samples histogram (inline SVG drawn
 * here), the median and its 95% CI, the samples, the counters and the
 * implementation that ran. */
#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/result_schema.h"
#include "../base/strbuf.h"
#include "html.h"
#include "mdtext.h"

#define sb tb_strbuf_add

void tb_html_esc(tb_strbuf *b, const char *s)
{
    for (const char *p = s; *p; p++) {
        switch (*p) {
        case '&': tb_strbuf_add(b, "&amp;"); break;
        case '<': tb_strbuf_add(b, "&lt;"); break;
        case '>': tb_strbuf_add(b, "&gt;"); break;
        case '"': tb_strbuf_add(b, "&quot;"); break;
        case '\'': tb_strbuf_add(b, "&#39;"); break;
        default: tb_strbuf_put(b, p, 1);
        }
    }
}

/* Histogram geometry: the plot area and the number of bins. */
enum { H_W = 360, H_H = 120, H_L = 8, H_R = 352, H_T = 8, H_B = 92,
       H_MAXBINS = 30 };

/* x of value v in [lo, hi] on the plot area. */
static double hx(double v, double lo, double hi)
{
    return hi > lo ? H_L + (v - lo) / (hi - lo) * (H_R - H_L)
                   : (H_L + H_R) / 2.0;
}

/* The samples of c (ns per iteration) as bars, the 95% CI of the median
 * as a band over them and the median as a line, min and max under the
 * axis. */
static void histogram(tb_strbuf *b, const tb_rcase *c)
{
    double lo = INFINITY, hi = -INFINITY;
    for (int i = 0; i < c->n; i++) {
        lo = fmin(lo, c->samples[i]);
        hi = fmax(hi, c->samples[i]);
    }
    int nb = (int)ceil(sqrt((double)c->n));
    nb = nb < 5 ? 5 : nb > H_MAXBINS ? H_MAXBINS : nb;
    if (!(hi > lo))
        nb = 1;
    int cnt[H_MAXBINS] = {0}, top = 1;
    for (int i = 0; i < c->n; i++) {
        int k = hi > lo ? (int)((c->samples[i] - lo) / (hi - lo) * nb) : 0;
        k = k < 0 ? 0 : k >= nb ? nb - 1 : k;
        if (++cnt[k] > top)
            top = cnt[k];
    }
    char a[32], z[32], m[32];
    sb(b, "<svg class=\"tb-hist\" width=\"%d\" height=\"%d\" viewBox=\"0 0 "
          "%d %d\" role=\"img\" aria-label=\"histogram of %d samples\">"
          "<rect width=\"%d\" height=\"%d\" fill=\"#fff\"/>",
       H_W, H_H, H_W, H_H, c->n, H_W, H_H);
    double bw = (double)(H_R - H_L) / nb;
    for (int k = 0; k < nb; k++) {
        double h = (double)cnt[k] / top * (H_B - H_T);
        if (cnt[k])
            sb(b, "<rect x=\"%.1f\" y=\"%.1f\" width=\"%.1f\" "
                  "height=\"%.1f\" fill=\"#1f77b4\" fill-opacity=\"0.8\">"
                  "<title>%d</title></rect>",
               H_L + k * bw + 0.5, H_B - h, fmax(bw - 1, 0.5), h, cnt[k]);
    }
    double x0 = hx(c->ci_lo, lo, hi), x1 = hx(c->ci_hi, lo, hi);
    sb(b, "<rect x=\"%.1f\" y=\"%d\" width=\"%.1f\" height=\"%d\" "
          "fill=\"#ff7f0e\" fill-opacity=\"0.3\"><title>95%% CI of the median</title></rect>",
       x0, H_T, fmax(x1 - x0, 1), H_B - H_T);
    double xm = hx(c->median, lo, hi);
    sb(b, "<line x1=\"%.1f\" x2=\"%.1f\" y1=\"%d\" y2=\"%d\" "
          "stroke=\"#d62728\" stroke-width=\"2\"/>"
          "<line x1=\"%d\" x2=\"%d\" y1=\"%d\" y2=\"%d\" stroke=\"#57606a\"/>",
       xm, xm, H_T, H_B, H_L, H_R, H_B, H_B);
    sb(b, "<g font-size=\"11\" fill=\"#1b1f24\" font-family=\"sans-serif\">"
          "<text x=\"%d\" y=\"%d\">%s</text><text x=\"%d\" y=\"%d\" "
          "text-anchor=\"end\">%s</text><text x=\"%d\" y=\"%d\" "
          "text-anchor=\"middle\" fill=\"#d62728\">median %s</text></g>"
          "</svg>",
       H_L, H_B + 13, tb_report_fmt_time(lo, c->median, a, sizeof a), H_R,
       H_B + 13, tb_report_fmt_time(hi, c->median, z, sizeof z), H_W / 2,
       H_B + 26, tb_report_fmt_time(c->median, c->median, m, sizeof m));
}

/* One term and its escaped value. */
static void kv(tb_strbuf *b, const char *k, const char *v)
{
    sb(b, "<dt>%s</dt><dd>", k);
    tb_html_esc(b, v);
    sb(b, "</dd>");
}

/* The figures of c as a definition list. */
static void figures(tb_strbuf *b, const tb_rcase *c)
{
    char t[64], u[64], v[160];
    sb(b, "<dl class=\"tb-kv\">");
    kv(b, "Median", tb_report_fmt_time(c->median, c->median, t, sizeof t));
    snprintf(v, sizeof v, "%s – %s",
             tb_report_fmt_time(c->ci_lo, c->median, t, sizeof t),
             tb_report_fmt_time(c->ci_hi, c->median, u, sizeof u));
    kv(b, "95% CI", v);
    kv(b, "Minimum", tb_report_fmt_time(c->min, c->median, t, sizeof t));
    snprintf(v, sizeof v, "%d x %.0f iterations", c->n, c->iters);
    kv(b, "Samples", v);
    if (c->stop_reason)
        kv(b, "Stopped by", c->stop_reason);
    kv(b, "Implementation", c->rc->impl ? c->rc->impl : "not recorded");
    if (c->rc->instr_isa)
        kv(b, "ISA that ran", c->rc->instr_isa);
    if (!isnan(c->gb_s))
        kv(b, "GB/s", tb_md_num(c->gb_s, v, sizeof v));
    if (!isnan(c->gflop_s))
        kv(b, "GFLOP/s", tb_md_num(c->gflop_s, v, sizeof v));
    if (!isnan(c->rc->instructions)) {
        snprintf(t, sizeof t, "Instructions (%s)",
                 c->rc->instr_source ? c->rc->instr_source : "?");
        sb(b, "<dt>");
        tb_html_esc(b, t);
        sb(b, "</dt><dd>%s per call</dd>",
           tb_md_num(c->rc->instructions, v, sizeof v));
    }
    /* the counters per call: the non-zero ones, then the zero ones on
     * one line */
    int zeros = 0;
    for (int k = 0; c->counters && k < TB_RES_NCOUNTERS_ALL; k++) {
        if (isnan(c->counters[k]) || c->counters[k] == 0) {
            zeros += c->counters[k] == 0;
            continue;
        }
        sb(b, "<dt>");
        tb_html_esc(b, tb_res_counter_name(k));
        sb(b, "</dt><dd>%s per call</dd>",
           tb_md_num(c->counters[k], v, sizeof v));
    }
    if (zeros) {
        sb(b, "<dt>Zero per call</dt><dd>");
        for (int k = 0; k < TB_RES_NCOUNTERS_ALL; k++)
            if (c->counters[k] == 0)
                sb(b, "%s%s", tb_res_counter_name(k), --zeros ? ", " : "");
        sb(b, "</dd>");
    }
    sb(b, "</dl>");
}

void tb_html_cases(const tb_rset *s, tb_strbuf *b)
{
    int n = 0;
    for (int i = 0; i < s->n; i++)
        n += s->cases[i].ok && s->cases[i].role == TB_ROLE_MAIN &&
             s->cases[i].samples;
    if (!n)
        return;
    sb(b, "<h2 id=\"case-details\">Case details</h2>\n<p>Each measured "
          "case of the reported run: the histogram of its per-call "
          "samples (blue; the red line is the median, the band "
          "its 95%% bootstrap confidence interval), its counters per "
          "call and the implementation that ran. The box at the top "
          "filters them by id.</p>\n");
    for (int i = 0; i < s->n; i++) {
        const tb_rcase *c = &s->cases[i];
        if (!c->ok || c->role != TB_ROLE_MAIN || !c->samples)
            continue;
        char t[64];
        sb(b, "<details class=\"tb-case\" data-id=\"");
        tb_html_esc(b, c->id);
        sb(b, "\"><summary><code>");
        tb_html_esc(b, c->id);
        sb(b, "</code> %s</summary><div class=\"tb-case-body\">",
           tb_report_fmt_time(c->median, c->median, t, sizeof t));
        histogram(b, c);
        figures(b, c);
        sb(b, "</div></details>\n");
    }
}
