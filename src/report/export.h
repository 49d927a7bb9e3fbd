/* Export of a result file to the formats of common CI dashboards
 * (`tbench export`; field by field with examples in docs/FORMAT.md,
 * "export"):
 *   gbench - Google Benchmark's JSON (--benchmark_format=json);
 *   bmf    - Bencher Metric Format;
 *   gab    - github-action-benchmark's customSmallerIsBetter array.
 * Every value written is a value of the result file (or, for gbench's
 * cpu_time, documented as the same wall-clock median): nothing is
 * estimated. */
#ifndef TB_REPORT_EXPORT_H
#define TB_REPORT_EXPORT_H

#include <cjson/cJSON.h>

#include "resultsio.h"

typedef enum {
    TB_EXPORT_GBENCH,
    TB_EXPORT_BMF,
    TB_EXPORT_GAB,
} tb_export_format;

/* The format words, in tb_export_format's order. */
#define TB_EXPORT_FORMATS "gbench bmf gab"

/* A word of TB_EXPORT_FORMATS -> *fmt.  0 or TB_EINVAL. */
int tb_export_parse_format(const char *s, tb_export_format *fmt);

/* The export document of f in format fmt (caller frees with
 * cJSON_Delete), or NULL on allocation failure.  gbench lists every
 * case (those that did not run with error_occurred); bmf and gab list
 * the cases with status ok only, since their values must be numbers. */
cJSON *tb_export(const tb_resfile *f, tb_export_format fmt);

#endif
