/* The note printed under `tbench run`'s table: threads=N cases slower
 * than the same case at threads=1. */
#ifndef TB_REPORT_SLOWTHREADS_H
#define TB_REPORT_SLOWTHREADS_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* For every case of a result document whose backend ran with threads=N
 * (N > 1) and that is significantly slower than the same id with
 * threads=1 (compare's test: Mann-Whitney p below compare's alpha and
 * the median beyond its threshold), print one line to f:
 *   note: ID is 2.00x slower than with threads=1 (context switches per
 *   call, voluntary V vs V1, involuntary I vs I1)
 * (one line each; the context switches usually explain it: a thread
 * waiting for a core).  Returns the number of lines printed. */
int tb_note_slow_threads(FILE *f, const cJSON *doc);

#endif
