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

#endif
