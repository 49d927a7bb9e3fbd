/* The note printed under `tbench run`'s table: threads=N cases slower
 * than the same case at threads=1. */
#ifndef TB_REPORT_SLOWTHREADS_H
#define TB_REPORT_SLOWTHREADS_H

#include <stdio.h>
#include <cjson/cJSON.h>

/* For every case of a result document (read through the loader's
 * checks, tb_resfile_from_doc) whose backend ran with threads=N (N > 1)
 * and that `tbench compare` would call regressed against the same case
 * with threads=1 (tb_cmp_pair, compare.h), print one line to f:
 *   note: ID is 2.00x slower than with threads=1 (context switches per
 *   call, voluntary V vs V1, involuntary I vs I1)
 * (one line each; the context switches usually explain it: a thread
 * waiting for a core).  Returns the number of lines printed (0 when
 * the document does not load). */
int tb_note_slow_threads(FILE *f, const cJSON *doc);

/* The same notes for a loaded result file. */
typedef struct tb_resfile tb_resfile;
int tb_note_slow_threads_file(FILE *f, const tb_resfile *r);

#endif
