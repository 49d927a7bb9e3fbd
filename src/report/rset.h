/* A result set: the result files a report or a set of charts reads,
 * each loaded and checked by the one loader (resultsio.h) and given a
 * role (the run being reported, a side-by-side file such as
 * compare_numpy.py's, a baseline, or one run of a history), and a flat
 * array of their cases with the fields plot and report use, taken from
 * the loader's typed records. */
#ifndef TB_REPORT_RSET_H
#define TB_REPORT_RSET_H

#include <stdbool.h>
#include <stddef.h>

#include "compare.h"
#include "resultsio.h"

#define TB_RSET_MAX_DOCS 256

typedef enum {
    TB_ROLE_MAIN,     /* the run being reported / plotted */
    TB_ROLE_WITH,     /* side by side (--with): NumPy, PyTorch... */
    TB_ROLE_BASELINE, /* --baseline */
    TB_ROLE_HISTORY,  /* an older run of the same matrix */
} tb_role;

/* The roles of a mask of roles (bit 1 << role). */
#define TB_RSET_MASK(r) (1u << (r))

/* One case of one document: the loader's record and the fields plot and
 * report read, copied from it.  Pointers point into the document. */
typedef struct tb_rcase {
    const tb_rescase *rc; /* the checked, typed record */
    int doc;              /* index into tb_rset.docs */
    tb_role role;
    const char *id, *op, *dtype, *backend, *status;
    const char *category; /* "other" when the record has none */
    const char *message;  /* NULL when none */
    const char *key;      /* OP[PARAMS]/SHAPES/DTYPE (tb_rescase.key) */
    const char *opp;      /* OP[PARAMS] */
    const char *shapes;   /* SHAPES, e.g. 256x256,256x256 */
    const char *variant;  /* BACKEND[AXES], e.g. cpu[threads=1] */
    bool ok;              /* status "ok" (rc->timed) */
    double items, flops, bytes, reduce_len; /* the cost model; NAN if absent */
    /* from stats and throughput; NAN unless ok (rates NAN when null) */
    double median, ci_lo, ci_hi, ci_rel, mad, p5, p95, min;
    double gb_s, gflop_s, items_s;
    int n;                    /* samples (0 unless ok) */
    double iters;             /* iters_per_sample */
    const char *stop_reason;  /* NULL unless ok and recorded */
    const double *samples;    /* the n samples, NULL unless ok */
    const double *counters;   /* rc->counters, NULL when it has none */
} tb_rcase;

typedef struct tb_rdoc {
    tb_resfile *file; /* owned: path (as read), doc, checked records */
    tb_role role;
    int first;        /* index into tb_rset.cases of its first case */
} tb_rdoc;

typedef struct tb_rset {
    int n_docs;
    tb_rdoc docs[TB_RSET_MAX_DOCS];
    int n, cap;
    tb_rcase *cases; /* documents' cases in load order, each in file order */
    /* The key index, rebuilt by every load so that a lookup by key costs
     * the cases of that key, not all cases: key_next[i] is the next case
     * after i (in s->cases order) with the same key, -1 after the last;
     * key_slots (a power of two, open addressing) hold the first case of
     * each key, -1 when empty. */
    int *key_next;
    int *key_slots;
    size_t n_slots;
} tb_rset;

/* Load the result file at path (or PATH/results.json when path is a run
 * folder) with tb_resfile_load and add it to s with the given role.  On
 * failure err holds the loader's one line "PATH: what" and s is
 * unchanged.  Returns 0, the loader's TB_EIO / TB_EPARSE / TB_EINVAL /
 * TB_ENOMEM, or TB_ERANGE (more than TB_RSET_MAX_DOCS files). */
int tb_rset_load(tb_rset *s, const char *path, tb_role role, char *err,
                 size_t errlen);

/* Free everything s holds (not s itself); s may be zeroed or NULL. */
void tb_rset_free(tb_rset *s);

/* Counter k (TB_RES_CTR_*) of c per iteration, NAN when not recorded. */
double tb_rcase_counter(const tb_rcase *c, int k);

/* The value of c's "threads" axis, "" when it has none. */
const char *tb_rcase_threads(const tb_rcase *c);

/* How well c fits as the reference backend that speedups are measured
 * against: backend "cpu" with isa=scalar, else "cpu" with threads=1.
 * Higher is better; -1 when c is not eligible.  Among the cases of one
 * key the eligible one with the highest score (first in file order on
 * ties) is the reference. */
int tb_rcase_ref_score(const tb_rcase *c);

/* The reference case for key among ok cases of the roles in mask (bit
 * 1 << role), or NULL. */
const tb_rcase *tb_rset_reference(const tb_rset *s, const char *key,
                                  unsigned mask);

/* The first case (index into s->cases) whose key is key, -1 when none;
 * the next ones: s->key_next[i].  For loops over the cases of one key:
 *   for (int k = tb_rset_key_first(s, key); k >= 0; k = s->key_next[k]) */
int tb_rset_key_first(const tb_rset *s, const char *key);

/* The case of document doc that is its file's record r, or NULL. */
const tb_rcase *tb_rset_case_of(const tb_rset *s, int doc,
                                const tb_rescase *r);

/* The index of the first document of role r, or -1. */
int tb_rset_first(const tb_rset *s, tb_role r);

/* Compare the first BASELINE document of s (old) with its first MAIN
 * document (new) exactly as `tbench compare BASELINE MAIN --threshold T`
 * does (tb_compare with tb_cmp_opts_default and threshold T, a
 * fraction), so the report and the change chart give compare's verdicts.
 * s must outlive *out.  Returns 0, TB_EINVAL (no MAIN or BASELINE
 * document, or no case id in common: compare's message in err) or
 * TB_ENOMEM; free with tb_cmp_free. */
int tb_rset_compare(const tb_rset *s, double threshold, tb_cmp *out,
                    char *err, size_t errlen);

/* The noisiest ok MAIN cases: indices into s->cases of at most want of
 * them (want <= 0: 8), by MAD / median, largest first (file order among
 * equals).  Returns the count and *idx (heap; NULL when the count is
 * 0), or -1 when out of memory. */
int tb_rset_noisiest(const tb_rset *s, int want, int **idx);

#endif
