/* Human-readable output: the summary table on stdout and the progress
 * line on stderr. */
#ifndef TB_REPORT_TABLE_H
#define TB_REPORT_TABLE_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* Format a duration in ns with a unit chosen for 3-4 significant digits
 * ("812 ns", "12.3 us", "4.56 ms", "1.20 s"); returns buf. */
char *tb_fmt_ns(double ns, char *buf, size_t len);

/* Print the summary table of a result document's cases to f. */
void tb_table_print(FILE *f, const cJSON *doc);

/* How a table is laid out for a terminal. */
typedef struct tb_table_style {
    /* Fit each case on one line of this many columns: the id tail all
     * cases share said once above, ids shortened in the middle, a legend
     * under the table (0: ids in full, no legend). */
    int width;
    /* Escape sequence that colours a status word ("" or NULL: none);
     * NULL function: no colour.  Reset with "\033[0m". */
    const char *(*color)(const char *status);
} tb_table_style;

void tb_table_print_styled(FILE *f, const cJSON *doc,
                           const tb_table_style *st);

/* The same table of a loaded result file (`run` reads its results.json
 * back through the loader rather than keep the document). */
typedef struct tb_resfile tb_resfile;
void tb_table_print_file(FILE *f, const tb_resfile *r,
                         const tb_table_style *st);

/* s shortened to at most max bytes (at least 8) by replacing its middle
 * with "...", so both ends stay readable; s itself when it fits.  Writes
 * into buf (len > max) and returns it. */
const char *tb_shorten_middle(const char *s, int max, char *buf, size_t len);

#endif
