/* Reading result files for `tbench plot` and `tbench report`, and the
 * Markdown report (docs/PERFORMANCE.md).
 *
 * The report only reads result files (schema tbench.results/1,
 * docs/FORMAT.md): every number it prints comes from them, and nothing
 * in it depends on the clock or the machine it is generated on, so the
 * same files always give the same text (the golden test relies on it).
 *
 * A tb_rset holds one or more result files, each loaded and checked by
 * the one loader (resultsio.h, tb_resfile_load) and given a role (the run
 * being reported, a side-by-side file such as compare_numpy.py's, a
 * baseline, or one run of a history), and a flat array of their cases
 * with the fields plot and report need derived from the loaded records.
 * The baseline verdicts are those of `tbench compare` (compare.h). */
#ifndef TB_REPORT_REPORT_H
#define TB_REPORT_REPORT_H

#include <stdbool.h>
#include <stddef.h>

#include <cjson/cJSON.h>

#include "compare.h"
#include "resultsio.h"

#define TB_RSET_MAX_DOCS 256

typedef enum {
    TB_ROLE_MAIN,     /* the run being reported / plotted */
    TB_ROLE_WITH,     /* side by side (--with): NumPy, PyTorch... */
    TB_ROLE_BASELINE, /* --baseline */
    TB_ROLE_HISTORY,  /* an older run of the same matrix */
} tb_role;

/* One case of one document: the loader's record plus what plot and
 * report derive from it.  Pointers point into the document. */
typedef struct tb_rcase {
    const tb_rescase *rc; /* the checked record */
    const cJSON *j;       /* the case object (rc->json) */
    int doc;              /* index into tb_rset.docs */
    tb_role role;
    const char *id, *op, *category, *dtype, *backend, *status;
    const char *message; /* NULL when none */
    char key[512];       /* the id without its backend: OP[PARAMS]/SHAPES/DTYPE */
    char opp[256];       /* OP[PARAMS] */
    char shapes[256];    /* SHAPES, e.g. 256x256,256x256 */
    char variant[256];   /* BACKEND[AXES], e.g. cpu[threads=1] */
    bool ok;             /* status "ok" (rc->timed) */
    double items, flops, bytes, reduce_len; /* the cost model; NAN if absent */
    /* from stats and throughput; NAN unless ok (rates NAN when null) */
    double median, ci_lo, ci_hi, ci_rel, mad, p5, p95, min;
    double gb_s, gflop_s, items_s;
    int n;                    /* samples (0 unless ok) */
    double iters;             /* iters_per_sample */
    const char *stop_reason;  /* NULL unless ok */
    const double *samples;    /* the n samples, NULL unless ok */
    const cJSON *counters;    /* NULL when null */
} tb_rcase;

typedef struct tb_rdoc {
    tb_resfile *file; /* owned: path (as read), doc, checked records */
    tb_role role;
} tb_rdoc;

typedef struct tb_rset {
    int n_docs;
    tb_rdoc docs[TB_RSET_MAX_DOCS];
    int n, cap;
    tb_rcase *cases; /* documents' cases in load order, each in file order */
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

/* Compare the first BASELINE document of s (old) with its first MAIN
 * document (new) exactly as `tbench compare BASELINE MAIN --threshold T`
 * does (tb_compare with tb_cmp_opts_default and threshold T, a
 * fraction), so the report and the change chart give compare's verdicts.
 * s must outlive *out.  Returns 0, TB_EINVAL (no MAIN or BASELINE
 * document, or no case id in common: compare's message in err) or
 * TB_ENOMEM; free with tb_cmp_free. */
int tb_rset_compare(const tb_rset *s, double threshold, tb_cmp *out,
                    char *err, size_t errlen);

/* A time in ns printed with 3-4 significant digits in a unit suited to
 * `scale` (the same value gives the same unit): "812 ns", "4.56 ms". */
char *tb_report_fmt_time(double ns, double scale, char *buf, size_t len);

struct tb_chart_list;

typedef struct tb_report_opts {
    const char *command;      /* the command that made the report (top) */
    const char *generated_by; /* optional: the script that ran command */
    const char *chart_dir;    /* charts folder relative to the .md */
    const struct tb_chart_list *charts; /* NULL: no charts */
    const tb_cmp *baseline; /* tb_rset_compare's result, or NULL: no
                               baseline section */
    double anomaly;     /* scaling anomaly factor (3) */
    int n_noisy;        /* rows in the noisiest-cases table (8) */
} tb_report_opts;

/* The Markdown report of s: the MAIN document is the run reported, WITH
 * documents are put side by side, and o->baseline (the comparison of the
 * BASELINE document with the MAIN one) gives the baseline section.  A
 * section without data is left out.  *md is heap text (caller frees).
 * 0, TB_EINVAL (no MAIN document) or TB_ENOMEM. */
int tb_report_markdown(const tb_rset *s, const tb_report_opts *o,
                       char **md);

#endif
