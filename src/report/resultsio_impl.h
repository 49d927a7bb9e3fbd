/* The loader's own parts (resultsio.c, resultsio_case.c,
 * resultsio_run.c): not for the renderers, which include resultsio.h
 * only. */
#ifndef TB_REPORT_RESULTSIO_IMPL_H
#define TB_REPORT_RESULTSIO_IMPL_H

#include <stdbool.h>
#include <stddef.h>

#include "resultsio.h"

/* err = "PATH: " + printf(fmt, ...).  Returns code. */
int tb_res_fail(char *err, size_t errlen, const char *path, int code,
                const char *fmt, ...) __attribute__((format(printf, 5, 6)));

/* n zeroed bytes (aligned for any type) that live as long as f, or NULL
 * when out of memory. */
void *tb_res_alloc(tb_resfile *f, size_t n);

/* A copy of the n bytes at s, NUL-terminated, in f's arena; NULL when
 * out of memory. */
char *tb_res_strndup(tb_resfile *f, const char *s, size_t n);

/* Free f's arena and its table of shared strings (tb_resfile_free). */
void tb_res_arena_free(tb_resfile *f);

/* One copy of string s (or NULL) in f's arena, shared by every caller
 * that keeps the same text: a result file says "ok", "f32", "cpu" and
 * "scalar" in every record.  *s replaced by the copy; false when out of
 * memory. */
bool tb_res_share(tb_resfile *f, const char **s);

/* Every string of c that points into its record's tree copied into f's
 * arena (shared where the text repeats: tb_res_share), so that the tree
 * can go: the file then keeps the typed record alone (resultsio.c,
 * load_split).  c->json becomes NULL.  false when out of memory. */
bool tb_res_detach_case(tb_resfile *f, tb_rescase *c);

/* Member k of o: a string or NULL; a finite number or NAN; an object
 * or NULL. */
const char *tb_res_str(const cJSON *o, const char *k);
double tb_res_num(const cJSON *o, const char *k);
const cJSON *tb_res_obj(const cJSON *o, const char *k);

/* The string items of array a (NULL or not an array: none) into f's
 * arena: *n of them, of *items items in all when items is not NULL.
 * false when out of memory. */
bool tb_res_strings(tb_resfile *f, const cJSON *a, const char *const **out,
                    int *n, int *items);

/* The first number in v (depth-first) that is not finite, or NULL; its
 * path, appended at buf[at], goes to buf.  cJSON reads 1e999 as
 * infinity, which no command can compute with and no JSON writer can
 * write back. */
const cJSON *tb_res_nonfinite(const cJSON *v, char *buf, size_t len,
                              size_t at);

/* Check record cj (cases[idx] of f, an object) and fill c from it: the
 * identity, the id's parts, the timed fields of an "ok" record, cupti
 * and the scalar fields of TB_RES_CASE_FIELDS.  0 or a TB_E* code with
 * the message in err. */
int tb_res_load_case(tb_resfile *f, tb_rescase *c, const cJSON *cj, int idx,
                     char *err, size_t errlen);

/* Check "breakdown" and "breakdown_reason" of record cj (cases[idx])
 * into c (resultsio_breakdown.c).  0 or a TB_E* code with the message
 * in err. */
int tb_res_load_breakdown(tb_resfile *f, tb_rescase *c, const cJSON *cj,
                          int idx, char *err, size_t errlen);

/* Fill f's run-level fields (env, peaks, config, summary, shard) from
 * its checked document.  0 or TB_ENOMEM. */
int tb_res_load_run(tb_resfile *f);

#endif
