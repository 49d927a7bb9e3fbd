/* What the files of tbench peak share (peak.c measures, peak_cache.c
 * caches, peak_table.c prints, roofline.c bounds cases): reading a peaks
 * object (docs/FORMAT.md "peaks").  Private to src/harness. */
#ifndef TB_HARNESS_PEAK_JSON_H
#define TB_HARNESS_PEAK_JSON_H

#include <math.h>
#include <stdbool.h>
#include <string.h>

#include <cjson/cJSON.h>

#include "peak.h"

/* The bandwidth kernels of "bandwidth" entries ("kernel"), in the order
 * of the cpu backend's loops (peak_loops.h: TB_PEAK_COPY..TB_PEAK_READ). */
enum { PK_COPY, PK_ADD, PK_TRIAD, PK_READ, PK_UPDATE, PK_NBW };
static const char *const pk_bw_names[PK_NBW] = {"copy", "add", "triad",
                                                "read", "update"};

/* The parts of a peaks object that the roofline and the table read. */
static inline bool pk_peaks_wellformed(const cJSON *p)
{
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(p, "schema");
    return cJSON_IsObject(p) && cJSON_IsString(s) &&
           !strcmp(s->valuestring, TB_PEAKS_SCHEMA) &&
           cJSON_IsObject(cJSON_GetObjectItemCaseSensitive(p, "key")) &&
           cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "levels")) &&
           cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "bandwidth")) &&
           cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(p, "flops"));
}

static inline double pk_num(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsNumber(v) ? v->valuedouble : NAN;
}

static inline const char *pk_str(const cJSON *o, const char *key)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, key);
    return cJSON_IsString(v) ? v->valuestring : NULL;
}

/* The n-th entry (0 the first) of arr whose strings k1 and k2 are v1
 * and v2 and whose "threads" is threads, or NULL (a level measured on
 * several working sets has one such entry per set). */
static inline const cJSON *pk_find_nth(const cJSON *arr, const char *k1,
                                       const char *v1, const char *k2,
                                       const char *v2, int threads, int n)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        const char *a = pk_str(e, k1), *b = pk_str(e, k2);
        if (a && b && !strcmp(a, v1) && !strcmp(b, v2) &&
            pk_num(e, "threads") == threads && n-- == 0)
            return e;
    }
    return NULL;
}

/* The first such entry. */
static inline const cJSON *pk_find(const cJSON *arr, const char *k1,
                                   const char *v1, const char *k2,
                                   const char *v2, int threads)
{
    return pk_find_nth(arr, k1, v1, k2, v2, threads, 0);
}

#endif
