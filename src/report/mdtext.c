/* The report's number and cell formats (mdtext.h). */
#include "mdtext.h"

#include <math.h>
#include <stdio.h>

char *tb_report_fmt_time(double ns, double scale, char *buf, size_t len)
{
    static const char *const units[] = {"ns", "us", "ms", "s"};
    int u = 0;
    double div = 1;
    while (u < 3 && fabs(scale) >= 1000 * div) {
        div *= 1000;
        u++;
    }
    double v = ns / div;
    int prec = fabs(v) >= 100 ? 0 : fabs(v) >= 10 ? 1 : 2;
    snprintf(buf, len, "%.*f %s", prec, v, units[u]);
    return buf;
}

char *tb_md_num(double v, char *buf, size_t len)
{
    double a = fabs(v);
    if (isnan(v))
        snprintf(buf, len, "n/a");
    else if (a >= 100 || a == 0 || (a < 1e15 && v == floor(v)))
        snprintf(buf, len, "%.0f", v);
    else if (a >= 10)
        snprintf(buf, len, "%.1f", v);
    else if (a >= 1)
        snprintf(buf, len, "%.2f", v);
    else if (a >= 0.001)
        snprintf(buf, len, "%.3g", v);
    else
        snprintf(buf, len, "%.2e", v);
    return buf;
}

double tb_md_scale(double v, double base, int most, int *unit)
{
    int u = 0;
    while (u < most && fabs(v) >= base) {
        v /= base;
        u++;
    }
    *unit = u;
    return v;
}

/* v in units[u] (each base times the one before; u from tb_md_scale,
 * at most `most`): tb_md_num's digits, sep, the unit. */
static char *md_units(double v, double base, const char *const *units,
                      int most, const char *sep, char *buf, size_t len)
{
    int u;
    v = tb_md_scale(v, base, most, &u);
    char n[32];
    snprintf(buf, len, "%s%s%s", tb_md_num(v, n, sizeof n), sep, units[u]);
    return buf;
}

char *tb_md_rate(double v, char *buf, size_t len)
{
    static const char *const pfx[] = {"", "k", "M", "G", "T"};
    return md_units(v, 1000, pfx, 4, "", buf, len);
}

char *tb_md_bytes(double v, char *buf, size_t len)
{
    static const char *const units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
    return md_units(v, 1024, units, 4, " ", buf, len);
}

char *tb_md_pct(double frac, char *buf, size_t len)
{
    snprintf(buf, len, "%+.1f%%", 100 * frac);
    return buf;
}

const char *tb_md_cell(const char *s, char *buf, size_t len)
{
    size_t o = 0;
    for (; s && *s && o + 3 < len; s++) {
        char ch = *s;
        if (ch == '|') {
            buf[o++] = '\\';
            buf[o++] = '|';
        } else if (ch == '\n' || ch == '\r' || ch == '\t') {
            buf[o++] = ' ';
        } else if (ch == '`') {
            buf[o++] = '\'';
        } else {
            buf[o++] = ch;
        }
    }
    buf[o] = '\0';
    return buf;
}
