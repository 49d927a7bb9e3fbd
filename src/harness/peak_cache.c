/* The peak cache: one file per user and machine holding the measured
 * peaks of each (CPU model, CPUs, tbench version, method), read by every
 * `tbench run` for its roofline fractions.  See peak.h. */
#include "peak.h"

#include <errno.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "../base/error.h"
#include "../base/fileio.h"
#include "env.h"
#include "gpu_peak.h"
#include "peak_json.h"

const char *tb_peak_cache_path(void)
{
    static char buf[4096];
    const char *e = getenv(TB_PEAK_CACHE_ENV);
    if (e && e[0])
        return e;
    const char *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    /* XDG base directories: a relative XDG_CACHE_HOME is to be ignored */
    if (xdg && xdg[0] == '/' &&
        snprintf(buf, sizeof buf, "%s/tbench/peak-cache.json", xdg) <
            (int)sizeof buf)
        return buf;
    if (home && home[0] == '/' &&
        snprintf(buf, sizeof buf, "%s/.cache/tbench/peak-cache.json", home) <
            (int)sizeof buf)
        return buf;
    return TB_PEAK_CACHE_DEFAULT;
}

/* Read and parse the cache file.  0 (*doc set), TB_ENOTFOUND (no file),
 * TB_EIO, TB_ENOMEM or TB_EPARSE (not a peak cache). */
static int pk_cache_read(const char *path, cJSON **doc, char *err,
                         size_t errlen)
{
    *doc = NULL;
    struct stat st;
    if (stat(path, &st) != 0) {
        if (errno == ENOENT)
            return TB_ENOTFOUND;
        snprintf(err, errlen, "%s: %s", path, strerror(errno));
        return TB_EIO;
    }
    char *text = NULL;
    size_t len = 0;
    int rc = tb_read_file(path, &text, &len, err, errlen);
    if (rc)
        return rc;
    cJSON *d = cJSON_ParseWithLength(text, len);
    free(text);
    const cJSON *s = cJSON_GetObjectItemCaseSensitive(d, "schema");
    if (!d || !cJSON_IsString(s) ||
        strcmp(s->valuestring, TB_PEAK_CACHE_SCHEMA) ||
        !cJSON_IsArray(cJSON_GetObjectItemCaseSensitive(d, "entries"))) {
        cJSON_Delete(d);
        snprintf(err, errlen, "%s: not a tbench peak cache (schema \"%s\")",
                 path, TB_PEAK_CACHE_SCHEMA);
        return TB_EPARSE;
    }
    *doc = d;
    return 0;
}

int tb_peak_cache_load(const char *path, const cJSON *key, cJSON **peaks,
                       char *err, size_t errlen)
{
    *peaks = NULL;
    cJSON *doc;
    int rc = pk_cache_read(path, &doc, err, errlen);
    if (rc)
        return rc;
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(doc, "entries"))
    {
        if (!tb_peaks_key_match(e, key))
            continue;
        if (!pk_peaks_wellformed(e)) {
            snprintf(err, errlen, "%s: the entry for this machine is "
                                  "malformed; rerun 'tbench peak'",
                     path);
            rc = TB_EPARSE;
        } else if (!(*peaks = cJSON_Duplicate(e, true))) {
            snprintf(err, errlen, "%s: out of memory", path);
            rc = TB_ENOMEM;
        }
        break;
    }
    cJSON_Delete(doc);
    if (!rc && !*peaks)
        rc = TB_ENOTFOUND;
    return rc;
}

int tb_peak_cache_store(const char *path, const cJSON *peaks, char *err,
                        size_t errlen)
{
    const cJSON *key = cJSON_GetObjectItemCaseSensitive(peaks, "key");
    if (err && errlen)
        err[0] = '\0';
    if (!pk_peaks_wellformed(peaks)) {
        snprintf(err, errlen, "%s: not storing malformed peaks", path);
        return TB_EINVAL;
    }
    cJSON *doc = NULL;
    char ignored[256];
    if (pk_cache_read(path, &doc, ignored, sizeof ignored)) {
        /* Absent, unreadable or corrupt: start a new cache. */
        doc = cJSON_CreateObject();
        if (doc) {
            cJSON_AddStringToObject(doc, "schema", TB_PEAK_CACHE_SCHEMA);
            cJSON_AddArrayToObject(doc, "entries");
        }
    }
    cJSON *entries = cJSON_GetObjectItemCaseSensitive(doc, "entries");
    cJSON *copy = cJSON_Duplicate(peaks, true);
    if (!doc || !entries || !copy) {
        cJSON_Delete(doc);
        cJSON_Delete(copy);
        snprintf(err, errlen, "%s: out of memory", path);
        return TB_ENOMEM;
    }
    int idx = 0;
    bool replaced = false;
    const cJSON *e;
    cJSON_ArrayForEach(e, entries)
    {
        if (tb_peaks_key_match(e, key)) {
            bool old_full = !cJSON_IsTrue(
                cJSON_GetObjectItemCaseSensitive(e, "quick"));
            bool new_quick =
                cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(peaks, "quick"));
            if (old_full && new_quick && pk_peaks_wellformed(e)) {
                const char *when = pk_str(e, "date");
                snprintf(err, errlen,
                         "%s keeps its full measurement of %s over this "
                         "--quick one (run 'tbench peak' to replace it)",
                         path, when ? when : "an earlier date");
                cJSON_Delete(copy); /* keep the full measurement */
                cJSON_Delete(doc);
                return 0;
            }
            cJSON_ReplaceItemInArray(entries, idx, copy);
            replaced = true;
            break;
        }
        idx++;
    }
    if (!replaced)
        cJSON_AddItemToArray(entries, copy);

    char dir[PATH_MAX];
    snprintf(dir, sizeof dir, "%s", path);
    char *slash = strrchr(dir, '/');
    int rc = 0;
    if (slash && slash != dir) {
        *slash = '\0';
        rc = tb_mkdir_p(dir, err, errlen);
    }
    char *text = rc ? NULL : cJSON_Print(doc);
    if (!rc && !text) {
        snprintf(err, errlen, "%s: out of memory", path);
        rc = TB_ENOMEM;
    }
    if (!rc)
        rc = tb_write_atomic(path, text, strlen(text), err, errlen);
    free(text);
    cJSON_Delete(doc);
    return rc;
}

cJSON *tb_peaks_for_run(bool measure, bool quiet)
{
    char err[1024] = "";
    const char *path = tb_peak_cache_path();
    cJSON *peaks = NULL;
    if (measure) {
        if (!quiet)
            fprintf(stderr, "tbench: measuring the machine peaks "
                            "(--peaks; a few seconds)\n");
        tb_peak_opts o = {0};
        if (tb_peaks_measure(&o, &peaks, err, sizeof err)) {
            fprintf(stderr, "tbench: warning: %s; no roofline fractions\n",
                    err);
            return NULL;
        }
        if (tb_peak_cache_store(path, peaks, err, sizeof err) && !quiet)
            fprintf(stderr, "tbench: warning: peaks not cached: %s\n", err);
        return peaks;
    }
    cJSON *key = tb_peaks_key();
    int rc = key ? tb_peak_cache_load(path, key, &peaks, err, sizeof err)
                 : TB_ENOMEM;
    cJSON_Delete(key);
    if (rc == TB_ENOTFOUND && !quiet)
        fprintf(stderr,
                "tbench: note: no measured peaks for this machine in %s, "
                "so no roofline fractions (run 'tbench peak' once, or "
                "'tbench run --peaks')\n",
                path);
    else if (rc && rc != TB_ENOTFOUND && !quiet)
        fprintf(stderr, "tbench: warning: %s; no roofline fractions\n",
                err[0] ? err : tb_strerror(rc));
    const cJSON *n;
    cJSON_ArrayForEach(n, cJSON_GetObjectItemCaseSensitive(peaks, "notes"))
        if (!quiet && cJSON_IsString(n) &&
            strstr(n->valuestring, "load average"))
            fprintf(stderr,
                    "tbench: warning: the cached peaks in %s (%s) were %s; "
                    "roofline fractions may be too high\n",
                    path, pk_str(peaks, "date") ? pk_str(peaks, "date") : "?",
                    n->valuestring);
    return peaks;
}

