/* Numbers and text as the Markdown report prints them (report.c and its
 * section files, training.c): every figure with a fixed rule, so the
 * same files always give the same text. */
#ifndef TB_REPORT_MDTEXT_H
#define TB_REPORT_MDTEXT_H

#include <stddef.h>

/* A time in ns printed with 3-4 significant digits in a unit suited to
 * `scale` (the same value gives the same unit): "812 ns", "4.56 ms".
 * Returns buf. */
char *tb_report_fmt_time(double ns, double scale, char *buf, size_t len);

/* v with 3 significant digits, no exponent for ordinary magnitudes
 * ("n/a" for NAN).  Returns buf. */
char *tb_md_num(double v, char *buf, size_t len);

/* v divided by base while |v| >= base, at most `most` times; *unit
 * says how many (the index of the unit's prefix). */
double tb_md_scale(double v, double base, int most, int *unit);

/* A large rate with an SI prefix: "12.1G" (items/s, steps/s). */
char *tb_md_rate(double v, char *buf, size_t len);

/* Bytes in binary units: "4.00 MiB". */
char *tb_md_bytes(double v, char *buf, size_t len);

/* A fraction as a signed percentage: "+1.5%". */
char *tb_md_pct(double frac, char *buf, size_t len);

/* s made safe inside a Markdown table cell: '|' escaped, line breaks and
 * tabs made spaces, backticks quotes; truncated to fit len.  Returns
 * buf. */
const char *tb_md_cell(const char *s, char *buf, size_t len);

#endif
