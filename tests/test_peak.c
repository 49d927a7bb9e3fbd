/* Tests for the machine peaks and the roofline (src/harness/peak.c) and
 * their place in results.json (src/report/results.c).
 *
 *  1. measure_structure: a tiny measurement (2 repetitions of 1 ms, L2
 *     64 KiB, L3 512 KiB, DRAM 4 MiB, up to 2 threads) has every figure
 *     the format promises, each positive with best >= median >= worst and
 *     a spread in [0, 1], one FMA figure per ISA the CPU has (checked
 *     independently with __builtin_cpu_supports) per dtype per thread
 *     count.  Structure and sanity only: no timing is asserted, and the
 *     ordering of the bandwidth levels is not either (a VM does not
 *     guarantee L2 > L3 > DRAM).  The core clock: its figure, in
 *     0.3-8 GHz.
 *  2. cache: store / load round trip, other keys, quick never replacing
 *     full, corrupt and missing files, $TBENCH_PEAK_CACHE.
 *  3. roofline arithmetic on fixed numbers: which level a working set
 *     falls in (per-thread L2), memory- and compute-bound cases, the ISA
 *     choice (named / best), missing figures, bad input.
 *  4. results.json: "peaks" null by default, then a case's "roofline"
 *     from the fixed peaks; null for non-ok cases and backends without a
 *     threads axis.
 *  5. tbench peak: usage errors. */
#include <errno.h>
#include <math.h>
#include <sched.h>
#include <setjmp.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "backends/cpu/cpu_config.h"
#include "backends/cpu/peak_loops.h"
#include "cli/commands.h"
#include "harness/peak.h"
#include "harness/plan.h"
#include "harness/runner.h"
#include "base/error.h"
#include "ops/op.h"
#include "harness/results.h"

extern const tb_backend tb_backend_cpu;

static char tmpdir[256];

/* ---- helpers ------------------------------------------------------------- */

static const cJSON *get(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    if (!v)
        print_error("missing key '%s'\n", k);
    assert_non_null(v);
    return v;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    assert_true(cJSON_IsNumber(v));
    return v->valuedouble;
}

static const char *str(const cJSON *o, const char *k)
{
    const cJSON *v = get(o, k);
    assert_true(cJSON_IsString(v));
    return v->valuestring;
}

static bool near(double a, double b)
{
    return fabs(a - b) <= 1e-12 * fmax(fabs(a), fabs(b));
}

/* Peaks with fixed numbers for the arithmetic tests.  L2 1 MiB per
 * thread, L3 32 MiB shared; bandwidth (GB/s) and FMA (GFLOP/s) figures
 * for 1 and 2 threads, an int8 dot figure (GOP/s) for 1. */
static const char fixed_peaks[] =
    "{\"schema\":\"tbench.peaks/1\","
    "\"key\":{\"cpu_model\":\"Test CPU\",\"logical_cpus\":2,"
    "\"tbench_version\":\"0.0.0\"},"
    "\"date\":\"2000-01-01T00:00:00Z\",\"quick\":false,\"repetitions\":3,"
    "\"min_rep_time_s\":0.01,\"threads\":[1,2],"
    "\"levels\":["
    "{\"name\":\"L2\",\"capacity_bytes\":1048576,\"per_thread\":true,"
    "\"working_set_bytes\":524288},"
    "{\"name\":\"L3\",\"capacity_bytes\":33554432,\"per_thread\":false,"
    "\"working_set_bytes\":16777216},"
    "{\"name\":\"DRAM\",\"capacity_bytes\":null,\"per_thread\":false,"
    "\"working_set_bytes\":268435456}],"
    "\"bandwidth_isa\":\"avx512\","
    "\"bandwidth\":["
    "{\"kernel\":\"add\",\"level\":\"L2\",\"threads\":1,\"best_gb_s\":100},"
    "{\"kernel\":\"add\",\"level\":\"L3\",\"threads\":1,\"best_gb_s\":50},"
    "{\"kernel\":\"add\",\"level\":\"DRAM\",\"threads\":1,\"best_gb_s\":20},"
    "{\"kernel\":\"read\",\"level\":\"DRAM\",\"threads\":1,"
    "\"best_gb_s\":25},"
    "{\"kernel\":\"copy\",\"level\":\"L3\",\"threads\":1,\"best_gb_s\":40},"
    "{\"kernel\":\"add\",\"level\":\"L2\",\"threads\":2,\"best_gb_s\":200},"
    "{\"kernel\":\"add\",\"level\":\"L3\",\"threads\":2,\"best_gb_s\":80},"
    "{\"kernel\":\"copy\",\"level\":\"L3\",\"threads\":2,\"best_gb_s\":30}],"
    "\"flops\":["
    "{\"isa\":\"scalar\",\"dtype\":\"f32\",\"threads\":1,"
    "\"best_gflop_s\":10},"
    "{\"isa\":\"avx512\",\"dtype\":\"f32\",\"threads\":1,"
    "\"best_gflop_s\":200},"
    "{\"isa\":\"avx2\",\"dtype\":\"f32\",\"threads\":1,"
    "\"best_gflop_s\":100},"
    "{\"isa\":\"avx512\",\"dtype\":\"f64\",\"threads\":1,"
    "\"best_gflop_s\":100},"
    "{\"isa\":\"avx512\",\"dtype\":\"f32\",\"threads\":2,"
    "\"best_gflop_s\":400},"
    "{\"isa\":\"avx2\",\"dtype\":\"f32\",\"threads\":2,"
    "\"best_gflop_s\":50},"
    "{\"isa\":\"avx512bf16\",\"dtype\":\"int8\",\"threads\":1,"
    "\"best_gflop_s\":800}],"
    "\"pinned\":true,\"notes\":[],\"duration_s\":1}";

static cJSON *fixed(void)
{
    cJSON *p = cJSON_Parse(fixed_peaks);
    assert_non_null(p);
    return p;
}

/* ---- 1. measurement structure -------------------------------------------- */

static bool cpu_has_isa(const char *isa)
{
    if (!strcmp(isa, "scalar"))
        return true;
#if defined(__x86_64__) || defined(__i386__)
    __builtin_cpu_init();
    if (!strcmp(isa, "avx2"))
        return __builtin_cpu_supports("avx2") &&
               __builtin_cpu_supports("fma");
    if (!strcmp(isa, "avx512"))
        return __builtin_cpu_supports("avx512f");
    if (!strcmp(isa, "avx512bf16"))
        return __builtin_cpu_supports("avx512bf16") &&
               __builtin_cpu_supports("avx512vnni");
#endif
    return false;
}

static void check_figure(const cJSON *e, const char *unit)
{
    char k[32];
    snprintf(k, sizeof k, "best_%s", unit);
    double best = num(e, k);
    snprintf(k, sizeof k, "median_%s", unit);
    double med = num(e, k);
    snprintf(k, sizeof k, "worst_%s", unit);
    double worst = num(e, k);
    double spread = num(e, "spread");
    assert_true(worst > 0 && isfinite(best));
    assert_true(best >= med && med >= worst);
    assert_true(spread >= 0 && spread <= 1);
    assert_true(near(spread, (best - worst) / best));
}

static void test_measure_structure(void **state)
{
    (void)state;
    tb_peak_opts o = {.reps = 2,
                      .rep_time_s = 0.001,
                      .max_threads = 2,
                      .l1_bytes = 16 << 10,
                      .l2_bytes = 64 << 10,
                      .l3_bytes = 1 << 20,
                      .dram_bytes = 4 << 20};
    char err[256] = "";
    cJSON *p = NULL;
    int rc = tb_peaks_measure(&o, &p, err, sizeof err);
    if (rc)
        print_error("measure: %s\n", err);
    assert_int_equal(rc, 0);
    assert_string_equal(str(p, "schema"), TB_PEAKS_SCHEMA);
    const cJSON *key = get(p, "key");
    assert_true(strlen(str(key, "cpu_model")) > 0);
    assert_true(num(key, "logical_cpus") >= 1);
    assert_true(cJSON_IsString(get(key, "tbench_version")));
    assert_true(cJSON_IsFalse(get(p, "quick")));
    assert_true(num(p, "repetitions") == 2);
    assert_true(near(num(p, "min_rep_time_s"), 0.001));
    assert_true(cJSON_IsBool(get(p, "pinned")));
    assert_true(cJSON_IsArray(get(p, "notes")));
    assert_true(num(p, "duration_s") > 0);
    assert_true(strlen(str(p, "date")) == 20);

    /* Thread counts: 1..min(2, CPUs), in order. */
    const cJSON *th = get(p, "threads");
    int nth = cJSON_GetArraySize(th);
    cpu_set_t set;
    assert_int_equal(sched_getaffinity(0, sizeof set, &set), 0);
    assert_int_equal(nth, CPU_COUNT(&set) >= 2 ? 2 : 1);
    for (int i = 0; i < nth; i++)
        assert_true(cJSON_GetArrayItem(th, i)->valuedouble == i + 1);

    /* Levels: the overrides, L1 and L2 per thread. */
    const cJSON *lv = get(p, "levels");
    assert_int_equal(cJSON_GetArraySize(lv), 4);
    const char *names[4] = {"L1", "L2", "L3", "DRAM"};
    const double cap[4] = {16 << 10, 64 << 10, 1 << 20, NAN};
    const double ws[4] = {8 << 10, 32 << 10, 512 << 10, 4 << 20};
    for (int i = 0; i < 4; i++) {
        const cJSON *l = cJSON_GetArrayItem(lv, i);
        assert_string_equal(str(l, "name"), names[i]);
        if (isnan(cap[i]))
            assert_true(cJSON_IsNull(get(l, "capacity_bytes")));
        else
            assert_true(num(l, "capacity_bytes") == cap[i]);
        assert_true(cJSON_IsTrue(get(l, "per_thread")) == (i <= 1));
        assert_true(num(l, "working_set_bytes") == ws[i]);
    }

    /* Bandwidth: 5 kernels x 4 levels x thread counts, all sane; the L3
     * at its own set and each larger quarter of it (256, 512, 768 KiB
     * and the whole 1 MiB over all threads): 4 sets on 1 thread, 3 on 2. */
    const cJSON *l3 = cJSON_GetArrayItem(lv, 2);
    const cJSON *more = get(l3, "more_working_sets_bytes");
    assert_int_equal(cJSON_GetArraySize(more), 4);
    for (int q = 0; q < 4; q++)
        assert_true(cJSON_GetArrayItem(more, q)->valuedouble ==
                    (q + 1) * (256 << 10));
    const char *bw_isa = str(p, "bandwidth_isa");
    assert_true(cpu_has_isa(bw_isa));
    const cJSON *bw = get(p, "bandwidth");
    assert_int_equal(cJSON_GetArraySize(bw),
                     5 * 3 * nth + 5 * (nth >= 2 ? 4 + 3 : 4));
    const char *kernels[5] = {"copy", "add", "triad", "read", "update"};
    const int arrays[5] = {2, 3, 3, 1, 2};
    for (int l = 0; l < 4; l++)
        for (int t = 1; t <= nth; t++)
            for (int k = 0; k < 5; k++) {
                /* The working sets: the level's (per thread for L1 and
                 * L2; for L3 at most 4x the L2 per thread: 256 KiB, so 1
                 * thread uses 256 KiB, 2 or more the level's 512 KiB),
                 * then the L3's larger quarters; each rounded down to
                 * whole 64-element array steps, in this order. */
                double want[4] = {l <= 1 ? ws[l] * t : ws[l]};
                int nwant = 1;
                if (l == 2 && want[0] / t > 4 * cap[1])
                    want[0] = 4 * cap[1] * t;
                for (int q = 1; l == 2 && q <= 4; q++)
                    if (q * (256 << 10) > want[nwant - 1])
                        want[nwant++] = q * (256 << 10);
                const cJSON *e;
                int n = 0;
                cJSON_ArrayForEach(e, bw)
                {
                    if (strcmp(str(e, "kernel"), kernels[k]) ||
                        strcmp(str(e, "level"), names[l]) ||
                        num(e, "threads") != t)
                        continue;
                    assert_true(n < nwant);
                    check_figure(e, "gb_s");
                    /* the widest level's loop or the SIMD one's below
                     * it (avx2 under avx512), whichever was faster */
                    const char *ei = str(e, "isa");
                    assert_true(!strcmp(ei, bw_isa) ||
                                (!strcmp(bw_isa, "avx512") &&
                                 !strcmp(ei, "avx2")));
                    double got = num(e, "working_set_bytes");
                    assert_true(got <= want[n]);
                    assert_true(got > want[n] - t * arrays[k] * 64 * 8);
                    n++;
                }
                assert_int_equal(n, nwant);
            }

    /* FMA: one figure per ISA the CPU has, per dtype, per thread count;
     * at avx512bf16 also int8's dot products. */
    const cJSON *fl = get(p, "flops");
    const char *isas[4] = {"scalar", "avx2", "avx512", "avx512bf16"};
    int want_n = 0;
    for (int i = 0; i < 4; i++)
        want_n += cpu_has_isa(isas[i]) ? 2 * nth : 0;
    /* and the avx512bf16 level's dot-product roofs (vdpbf16ps for bf16,
     * vpdpbusd for int8) */
    const bool dots = TB_CPU_HAVE_AVX512BF16 && cpu_has_isa("avx512bf16");
    want_n += dots ? 2 * nth : 0;
    assert_int_equal(cJSON_GetArraySize(fl), want_n);
    int n_bf16 = 0;
    const cJSON *e;
    cJSON_ArrayForEach(e, fl)
    {
        assert_true(cpu_has_isa(str(e, "isa")));
        const char *dt = str(e, "dtype");
        if (!strcmp(dt, "bf16")) {
            assert_string_equal(str(e, "isa"), "avx512bf16");
            n_bf16++;
        } else {
            assert_true(!strcmp(dt, "f32") || !strcmp(dt, "f64") ||
                        (!strcmp(dt, "int8") &&
                         !strcmp(str(e, "isa"), "avx512bf16")));
        }
        assert_true(num(e, "threads") >= 1 && num(e, "threads") <= nth);
        assert_true(num(e, "accumulators") >= 8);
        check_figure(e, "gflop_s");
    }
    assert_int_equal(n_bf16, dots ? nth : 0);

    /* The core clock: one figure, 1 thread, a plausible frequency for
     * any core this runs on (0.3-8 GHz; a chain the compiler folded or
     * split would give several times the true clock). */
    const cJSON *clk = get(p, "clock");
    assert_string_equal(str(clk, "method"), "dependent-add chain");
    assert_true(num(clk, "threads") == 1);
    assert_true(num(clk, "chain_adds") == 64);
    assert_true(num(clk, "repetitions") >= 3);
    check_figure(clk, "ghz");
    assert_true(num(clk, "median_ghz") >= 0.3 && num(clk, "median_ghz") <= 8);

    /* What was measured can be printed and used for a roofline. */
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    assert_non_null(f);
    tb_peaks_print(f, p);
    fclose(f);
    assert_non_null(strstr(buf, "memory bandwidth"));
    assert_non_null(strstr(buf, "FMA peak"));
    /* the int8 figures' own column */
    assert_true(!strstr(buf, "int8") == !cpu_has_isa("avx512bf16"));
    assert_non_null(strstr(buf, "core clock, GHz"));
    free(buf);
    tb_roofline_in in = {.flops = 1e6, .bytes = 1e5, .time_ns = 1e6,
                         .dtype = TB_F32, .threads = 1, .bw_kernel = "add"};
    tb_roofline r;
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_true(r.fraction > 0);
    cJSON_Delete(p);
}

static void test_measure_invalid(void **state)
{
    (void)state;
    char err[256] = "";
    cJSON *p = (cJSON *)1;
    tb_peak_opts o = {.reps = -1};
    assert_int_equal(tb_peaks_measure(&o, &p, err, sizeof err), TB_EINVAL);
    assert_null(p);
    assert_non_null(strstr(err, "peak"));
    assert_int_equal(tb_peaks_measure(NULL, NULL, err, sizeof err),
                     TB_EINVAL);
}

/* ---- 2. cache ------------------------------------------------------------ */

static void write_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "w");
    assert_non_null(f);
    fputs(text, f);
    fclose(f);
}

/* fixed() with this machine's key (or another one) and "quick". */
static cJSON *keyed(bool this_machine, bool quick, double marker)
{
    cJSON *p = fixed();
    cJSON *key = this_machine ? tb_peaks_key() : cJSON_Parse(
        "{\"cpu_model\":\"Other\",\"logical_cpus\":64,"
        "\"tbench_version\":\"0.1.0\"}");
    assert_non_null(key);
    cJSON_ReplaceItemInObjectCaseSensitive(p, "key", key);
    cJSON_ReplaceItemInObjectCaseSensitive(p, "quick",
                                           cJSON_CreateBool(quick));
    cJSON_ReplaceItemInObjectCaseSensitive(p, "duration_s",
                                           cJSON_CreateNumber(marker));
    return p;
}

static void test_cache_roundtrip(void **state)
{
    (void)state;
    char path[512], err[512] = "";
    snprintf(path, sizeof path, "%s/sub/dir/peak-cache.json", tmpdir);
    cJSON *key = tb_peaks_key(), *got = NULL;
    assert_non_null(key);

    /* No file yet. */
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err),
                     TB_ENOTFOUND);
    assert_null(got);

    /* Store this machine's (full) and another machine's entry. */
    cJSON *mine = keyed(true, false, 1), *other = keyed(false, false, 2);
    assert_int_equal(tb_peak_cache_store(path, mine, err, sizeof err), 0);
    assert_int_equal(tb_peak_cache_store(path, other, err, sizeof err), 0);
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err), 0);
    assert_true(cJSON_Compare(got, mine, true));
    cJSON_Delete(got);
    cJSON *okey = cJSON_Duplicate(get(other, "key"), true);
    assert_int_equal(tb_peak_cache_load(path, okey, &got, err, sizeof err),
                     0);
    assert_true(cJSON_Compare(got, other, true));
    cJSON_Delete(got);
    assert_true(tb_peaks_key_match(mine, key));
    assert_false(tb_peaks_key_match(other, key));
    assert_false(tb_peaks_key_match(NULL, key));
    /* the key carries the method; an entry cached before it had one
     * (method 1) or by another method does not match */
    assert_true(num(key, "method") == TB_PEAK_METHOD);
    cJSON *old = cJSON_Duplicate(mine, true);
    cJSON *okeyd = cJSON_GetObjectItemCaseSensitive(old, "key");
    cJSON_DeleteItemFromObjectCaseSensitive(okeyd, "method");
    assert_false(tb_peaks_key_match(old, key));
    cJSON_AddItemToObject(okeyd, "method", cJSON_CreateString("2"));
    assert_false(tb_peaks_key_match(old, key));
    cJSON_ReplaceItemInObjectCaseSensitive(
        okeyd, "method", cJSON_CreateNumber(TB_PEAK_METHOD + 1));
    assert_false(tb_peaks_key_match(old, key));
    cJSON_ReplaceItemInObjectCaseSensitive(
        okeyd, "method", cJSON_CreateNumber(TB_PEAK_METHOD));
    assert_true(tb_peaks_key_match(old, key));
    cJSON_Delete(old);

    /* A quick measurement never replaces a full one... */
    cJSON *quick = keyed(true, true, 3);
    assert_int_equal(tb_peak_cache_store(path, quick, err, sizeof err), 0);
    /* ...and says so, so `tbench peak --quick` does not claim it cached */
    assert_non_null(strstr(err, "keeps its full measurement"));
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err), 0);
    assert_true(num(got, "duration_s") == 1);
    cJSON_Delete(got);
    /* ...a full one replaces it (and a quick one replaces a quick one). */
    cJSON *full2 = keyed(true, false, 4);
    assert_int_equal(tb_peak_cache_store(path, full2, err, sizeof err), 0);
    assert_string_equal(err, ""); /* stored: no reason */
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err), 0);
    assert_true(num(got, "duration_s") == 4);
    cJSON_Delete(got);

    /* The file holds one entry per key. */
    FILE *f = fopen(path, "r");
    assert_non_null(f);
    char text[16384];
    size_t n = fread(text, 1, sizeof text - 1, f);
    fclose(f);
    text[n] = '\0';
    cJSON *doc = cJSON_Parse(text);
    assert_non_null(doc);
    assert_string_equal(str(doc, "schema"), TB_PEAK_CACHE_SCHEMA);
    assert_int_equal(cJSON_GetArraySize(get(doc, "entries")), 2);
    cJSON_Delete(doc);

    /* Malformed input is refused. */
    cJSON *bad = cJSON_CreateObject();
    assert_int_equal(tb_peak_cache_store(path, bad, err, sizeof err),
                     TB_EINVAL);
    cJSON_Delete(bad);

    /* A corrupt file: load says so, store replaces it. */
    write_text(path, "{not json");
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err),
                     TB_EPARSE);
    assert_non_null(strstr(err, path));
    write_text(path, "{\"schema\":\"something-else\",\"entries\":[]}");
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err),
                     TB_EPARSE);
    assert_int_equal(tb_peak_cache_store(path, mine, err, sizeof err), 0);
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err), 0);
    assert_true(cJSON_Compare(got, mine, true));
    cJSON_Delete(got);
    assert_int_equal(tb_peak_cache_load(path, okey, &got, err, sizeof err),
                     TB_ENOTFOUND);

    /* An entry for this machine without its figures is malformed. */
    cJSON *cache = cJSON_Parse("{\"schema\":\"tbench.peak-cache/1\","
                               "\"entries\":[{\"schema\":"
                               "\"tbench.peaks/1\"}]}");
    assert_non_null(cache);
    cJSON_AddItemToObject(cJSON_GetArrayItem(get(cache, "entries"), 0),
                          "key", cJSON_Duplicate(key, true));
    char *ctext = cJSON_Print(cache);
    write_text(path, ctext);
    free(ctext);
    cJSON_Delete(cache);
    assert_int_equal(tb_peak_cache_load(path, key, &got, err, sizeof err),
                     TB_EPARSE);
    assert_non_null(strstr(err, "malformed"));
    assert_null(got);

    unlink(path);
    cJSON_Delete(mine);
    cJSON_Delete(other);
    cJSON_Delete(quick);
    cJSON_Delete(full2);
    cJSON_Delete(okey);
    cJSON_Delete(key);
}

static void test_cache_path_env(void **state)
{
    (void)state;
    const char *saved = getenv(TB_PEAK_CACHE_ENV);
    char keep[512] = "";
    if (saved)
        snprintf(keep, sizeof keep, "%s", saved);
    setenv(TB_PEAK_CACHE_ENV, "/tmp/x/y.json", 1);
    assert_string_equal(tb_peak_cache_path(), "/tmp/x/y.json");
    /* unset or empty: the user's cache directory, whatever the cwd */
    const char *envs[] = {"XDG_CACHE_HOME", "HOME"};
    char old[2][512];
    bool had[2];
    for (int i = 0; i < 2; i++) {
        const char *v = getenv(envs[i]);
        had[i] = v != NULL;
        snprintf(old[i], sizeof old[i], "%s", v ? v : "");
    }
    setenv(TB_PEAK_CACHE_ENV, "", 1);
    setenv("XDG_CACHE_HOME", "/xdg/cache", 1);
    setenv("HOME", "/home/u", 1);
    assert_string_equal(tb_peak_cache_path(),
                        "/xdg/cache/tbench/peak-cache.json");
    unsetenv(TB_PEAK_CACHE_ENV);
    setenv("XDG_CACHE_HOME", "relative/ignored", 1);
    assert_string_equal(tb_peak_cache_path(),
                        "/home/u/.cache/tbench/peak-cache.json");
    unsetenv("XDG_CACHE_HOME");
    unsetenv("HOME");
    assert_string_equal(tb_peak_cache_path(), TB_PEAK_CACHE_DEFAULT);
    for (int i = 0; i < 2; i++)
        if (had[i])
            setenv(envs[i], old[i], 1);
    if (saved)
        setenv(TB_PEAK_CACHE_ENV, keep, 1);
}

/* ---- 2b. the bandwidth loops compute what they say ------------------------ */

/* Every level's five kernels against their formulas, on values whose
 * sums and products are exact in double (so any order agrees). */
static void test_bw_loops(void **state)
{
    (void)state;
    enum { N = 4 * TB_PEAK_ELEM_STEP };
    double *a = aligned_alloc(64, N * sizeof *a);
    double *b = aligned_alloc(64, N * sizeof *b);
    double *c = aligned_alloc(64, N * sizeof *c);
    assert_true(a && b && c);
    int levels = 0;
    for (int lv = 0; lv < TB_PEAK_LEVELS; lv++) {
        const tb_peak_loops *L = tb_cpu_peak_loops(lv);
        if (!L)
            continue;
        levels++;
        for (int k = 0; k < TB_PEAK_NBW && L->bw[0]; k++) {
            for (int i = 0; i < N; i++) {
                a[i] = 2 + (i & 3);
                b[i] = 0.5 * i;
                c[i] = 1 + 0.25 * i;
            }
            double r = L->bw[k](a, b, c, N, 3.0);
            double sum = 0;
            for (int i = 0; i < N; i++) {
                double a0 = 2 + (i & 3), want;
                switch (k) {
                case TB_PEAK_COPY: want = b[i]; break;
                case TB_PEAK_ADD: want = b[i] + c[i]; break;
                case TB_PEAK_TRIAD: want = b[i] + 3.0 * c[i]; break;
                case TB_PEAK_UPDATE: want = 3.0 * b[i] - a0; break;
                default: want = a0; sum += a0; break; /* read */
                }
                if (a[i] != want)
                    fail_msg("%s kernel %d: a[%d] = %g, want %g", L->isa, k,
                             i, a[i], want);
            }
            if (k == TB_PEAK_READ)
                assert_true(r == sum);
            else
                assert_true(r == a[0]);
        }
    }
    assert_true(levels >= 1); /* the portable level always runs */
    free(a);
    free(b);
    free(c);
}

/* The int8 dot loop does the multiply-adds it counts: with the peak's m
 * and c (bytes 100 and 1, peak_avx512bf16.c) every multiply-add adds 100
 * to an int32 lane, and the chains start at 0..11 in each of 16 lanes;
 * the returned sum of every lane of every chain is then 16 x 66 + 100 x
 * (flops_per_iter / 2) x iters (a loop with a chain or a product less,
 * or a count that claims more, fails).  (bf16's loop adds 0 each step:
 * its count is test_measure_structure's.) */
static void test_dot_loops(void **state)
{
    (void)state;
    int n = 0;
    for (int lv = 0; lv < TB_PEAK_LEVELS; lv++) {
        const tb_peak_loops *L = tb_cpu_peak_loops(lv);
        for (int d = 0; L && d < TB_PEAK_NDOT; d++) {
            if (!L->dot[d].fn || strcmp(L->dot[d].dtype, "int8"))
                continue;
            n++;
            assert_string_equal(L->isa, "avx512bf16");
            assert_true(L->dot[d].flops_per_iter == 12 * 16 * 4 * 2);
            for (long iters = 1; iters <= 1000; iters *= 10) {
                const double got = L->dot[d].fn(iters, 0.9999999, 1e-7);
                const double want =
                    16 * 66 + 100 * (L->dot[d].flops_per_iter / 2) * iters;
                if (got != want)
                    fail_msg("%s %s: %ld iterations: %.17g, want %.17g",
                             L->isa, L->dot[d].dtype, iters, got, want);
            }
        }
    }
    assert_int_equal(n, cpu_has_isa("avx512bf16") ? 1 : 0);
}

/* ---- 3. roofline arithmetic ---------------------------------------------- */

static void test_level_selection(void **state)
{
    (void)state;
    cJSON *p = fixed();
    const double MiB = 1048576;
    assert_string_equal(tb_peaks_level(p, 0, 1), "L2");
    assert_string_equal(tb_peaks_level(p, MiB, 1), "L2");
    assert_string_equal(tb_peaks_level(p, MiB + 1, 1), "L3");
    /* L2 is per thread: two threads hold twice as much. */
    assert_string_equal(tb_peaks_level(p, 1.5 * MiB, 2), "L2");
    assert_string_equal(tb_peaks_level(p, 2 * MiB + 1, 2), "L3");
    assert_string_equal(tb_peaks_level(p, 32 * MiB, 1), "L3");
    assert_string_equal(tb_peaks_level(p, 32 * MiB + 1, 1), "DRAM");
    assert_string_equal(tb_peaks_level(p, 1e12, 4), "DRAM");
    assert_string_equal(tb_peaks_level(p, MiB, 0), "L2"); /* as 1 thread */
    assert_null(tb_peaks_level(NULL, MiB, 1));
    cJSON_Delete(p);

    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_sum)), "read");
    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_mean)),
                        "read");
    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_add)), "add");
    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_matmul)),
                        "add");
    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_relu)),
                        "copy");
    /* matmul_int8's multiply-adds: the int8 figures */
    assert_string_equal(
        tb_roofline_flop_dtype(tb_op_get(TB_OP_matmul_int8)), "int8");
    assert_null(tb_roofline_flop_dtype(tb_op_get(TB_OP_matmul)));
    assert_null(tb_roofline_flop_dtype(NULL));
    /* in place: an input written, no third array */
    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_add_)),
                        "update");
    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_sgd)),
                        "update");
    assert_string_equal(tb_roofline_bw_kernel(tb_op_get(TB_OP_transpose)),
                        "copy");
}

static void test_roofline_fixed(void **state)
{
    (void)state;
    cJSON *p = fixed();
    tb_roofline r;

    /* Memory-bound: 12 MB (L3, add 50 GB/s) -> 240 us; 1 MFLOP at the
     * best f32 peak (avx512, 200 GFLOP/s) -> 5 us.  Took 480 us. */
    tb_roofline_in in = {.flops = 1e6, .bytes = 12e6, .time_ns = 480e3,
                         .dtype = TB_F32, .threads = 1, .isa = NULL,
                         .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.level, "L3");
    assert_string_equal(r.bw_kernel, "add");
    assert_string_equal(r.isa, "avx512");
    assert_int_equal(r.threads, 1);
    assert_true(r.memory_bound);
    assert_true(near(r.bandwidth_gb_s, 50));
    assert_true(near(r.peak_gflop_s, 200));
    assert_true(near(r.min_time_ns, 240e3));
    assert_true(near(r.fraction, 0.5));
    assert_true(near(r.attainable_gb_s, 50));
    assert_true(near(r.attainable_gflop_s, 1e6 / 240e3));

    /* Compute-bound: 2 GFLOP at 200 GFLOP/s = 10 ms vs 3 MB at 50 GB/s =
     * 60 us.  Took 20 ms: fraction 0.5; with isa avx2 (100 GFLOP/s): 1. */
    in = (tb_roofline_in){.flops = 2e9, .bytes = 3e6, .time_ns = 20e6,
                          .dtype = TB_F32, .threads = 1, .isa = "auto",
                          .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_false(r.memory_bound);
    assert_string_equal(r.isa, "avx512");
    assert_true(near(r.min_time_ns, 10e6));
    assert_true(near(r.fraction, 0.5));
    assert_true(near(r.attainable_gflop_s, 200));
    assert_true(near(r.attainable_gb_s, 3e6 / 10e6));
    in.isa = "avx2";
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.isa, "avx2");
    assert_true(near(r.fraction, 1.0));
    in.isa = "scalar";
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_true(near(r.fraction, 10.0)); /* faster than that ISA's peak */

    /* Two threads: L2 holds 2 MiB, add at 200 GB/s. */
    in = (tb_roofline_in){.flops = 0, .bytes = 1.5 * 1048576,
                          .time_ns = 1.5 * 1048576 / 100, .dtype = TB_F32,
                          .threads = 2, .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.level, "L2");
    assert_true(near(r.bandwidth_gb_s, 200));
    assert_true(near(r.fraction, 0.5));
    assert_int_equal(r.bandwidth_threads, 2);
    /* No FLOPs: no ISA, memory-bound, attainable FLOP/s 0. */
    assert_string_equal(r.isa, "");
    assert_int_equal(r.peak_threads, 0);
    assert_true(r.memory_bound);
    assert_true(r.attainable_gflop_s == 0);

    /* Roofs are monotone in threads: the 2-thread L3 copy figure (30
     * GB/s) is below the 1-thread one (40), so a 2-thread case is held to
     * 40, which one of its threads alone reached; likewise avx2's f32 FMA
     * (50 at 2 threads, 100 at 1). */
    in = (tb_roofline_in){.flops = 0, .bytes = 8e6, .time_ns = 8e6 / 20,
                          .dtype = TB_F32, .threads = 2,
                          .bw_kernel = "copy"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.level, "L3");
    assert_true(near(r.bandwidth_gb_s, 40));
    assert_int_equal(r.bandwidth_threads, 1);
    assert_true(near(r.fraction, 0.5));
    in = (tb_roofline_in){.flops = 1e9, .bytes = 1e3, .time_ns = 1e9 / 50,
                          .dtype = TB_F32, .threads = 2, .isa = "avx2",
                          .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_true(near(r.peak_gflop_s, 100));
    assert_int_equal(r.peak_threads, 1);
    assert_true(near(r.fraction, 0.5));
    /* ... and a 1-thread case never borrows the 2-thread figure. */
    in.threads = 1;
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_true(near(r.peak_gflop_s, 100));

    /* int8 (a case of dtype f32 bounded by the int8 figures): 8 G ops
     * at 800 GOP/s = 10 ms in 20 ms; at a level without an int8 figure
     * (avx2) no compute roof, though f32 has one there. */
    in = (tb_roofline_in){.flops = 8e9, .bytes = 3e6, .time_ns = 20e6,
                          .dtype = TB_F32, .threads = 1, .isa = NULL,
                          .bw_kernel = "add", .flop_dtype = "int8"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.isa, "avx512bf16");
    assert_string_equal(r.peak_dtype, "int8");
    assert_true(near(r.peak_gflop_s, 800));
    assert_true(near(r.fraction, 0.5));
    in.isa = "avx512bf16";
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_true(near(r.fraction, 0.5));
    in.isa = "avx2";
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    in.isa = NULL;
    in.threads = 2; /* no int8 figure at 2 threads */
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);

    /* A DRAM-sized reduction reads at 25 GB/s. */
    in = (tb_roofline_in){.flops = 64e6, .bytes = 256e6, .time_ns = 20e6,
                          .dtype = TB_F64, .threads = 1,
                          .bw_kernel = "read"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.level, "DRAM");
    assert_true(near(r.fraction, (256e6 / 25) / 20e6));

    /* Missing figures: thread count, ISA, dtype at 2 threads, kernel. */
    in = (tb_roofline_in){.flops = 1e6, .bytes = 12e6, .time_ns = 1e6,
                          .dtype = TB_F32, .threads = 3,
                          .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    in.threads = 1;
    in.isa = "sse9";
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    in.isa = NULL;
    in.threads = 2;
    in.dtype = TB_F64;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    in.threads = 1;
    in.dtype = TB_F32;
    in.bw_kernel = "triad";
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);

    /* Bad input. */
    in.bw_kernel = "add";
    in.time_ns = 0;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_EINVAL);
    in.time_ns = NAN;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_EINVAL);
    in.time_ns = 1;
    in.bytes = -1;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_EINVAL);
    in.bytes = 0;
    in.flops = 0;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_EINVAL);
    in.bytes = 1;
    assert_int_equal(tb_roofline_compute(NULL, &in, &r), TB_EINVAL);
    assert_int_equal(tb_roofline_compute(p, NULL, &r), TB_EINVAL);
    cJSON *notpeaks = cJSON_Parse("{\"schema\":\"tbench.peaks/1\"}");
    assert_int_equal(tb_roofline_compute(notpeaks, &in, &r), TB_EINVAL);
    cJSON_Delete(notpeaks);
    cJSON_Delete(p);
}

/* A bf16 case at the avx512bf16 level (or auto) finds that level's bf16
 * dot-product roof; at a lower level, or another dtype, never. */
static void test_roofline_bf16(void **state)
{
    (void)state;
    cJSON *p = fixed();
    cJSON *e = cJSON_Parse("{\"isa\":\"avx512bf16\",\"dtype\":\"bf16\","
                           "\"threads\":1,\"best_gflop_s\":400}");
    assert_non_null(e);
    cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(p, "flops"), e);
    tb_roofline r;
    /* 4 GFLOP at 400 GFLOP/s = 10 ms; took 20 ms */
    tb_roofline_in in = {.flops = 4e9, .bytes = 3e6, .time_ns = 20e6,
                         .dtype = TB_BF16, .threads = 1,
                         .isa = "avx512bf16", .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.isa, "avx512bf16");
    assert_string_equal(r.peak_dtype, "bf16");
    assert_true(near(r.peak_gflop_s, 400));
    assert_true(near(r.fraction, 0.5));
    in.isa = "auto";
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.isa, "avx512bf16");
    /* lower levels have no bf16 roof of their own */
    in.isa = "avx512";
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    in.isa = "avx2";
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    /* nor f16, nor 2 threads (none measured there) */
    in.isa = "avx512bf16";
    in.dtype = TB_F16;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    in.dtype = TB_BF16;
    in.threads = 2;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    /* an f32 case keeps the f32 roof */
    in = (tb_roofline_in){.flops = 2e9, .bytes = 3e6, .time_ns = 20e6,
                          .dtype = TB_F32, .threads = 1, .isa = "auto",
                          .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    assert_string_equal(r.isa, "avx512");
    assert_true(near(r.peak_gflop_s, 200));
    cJSON_Delete(p);
}

/* The L3 measured at several sets: a case is held to the fastest figure
 * of its level over every set and every thread count up to its own
 * (without a footprint the larger sets' slower figures are shown, not
 * used), and the roofline names the set of the figure it used. */
static void test_roofline_l3_sets(void **state)
{
    (void)state;
    cJSON *p = fixed();
    const double MiB = 1048576;
    static const struct {
        int t;
        double ws_mib, gb_s;
    } pts[] = {{1, 4, 90}, {1, 8, 95}, {1, 16, 70}, {1, 24, 60},
               {2, 8, 150}, {2, 16, 100}, {2, 24, 65}};
    cJSON *bw = cJSON_CreateArray();
    for (size_t i = 0; i < sizeof pts / sizeof pts[0]; i++) {
        cJSON *e = cJSON_CreateObject();
        cJSON_AddStringToObject(e, "kernel", "add");
        cJSON_AddStringToObject(e, "level", "L3");
        cJSON_AddNumberToObject(e, "threads", pts[i].t);
        cJSON_AddNumberToObject(e, "working_set_bytes", pts[i].ws_mib * MiB);
        cJSON_AddNumberToObject(e, "best_gb_s", pts[i].gb_s);
        cJSON_AddItemToArray(bw, e);
    }
    cJSON_ReplaceItemInObjectCaseSensitive(p, "bandwidth", bw);
    /* Without a footprint (fp 0): the fastest set, whatever the bytes.
     * With one (a cached-store kernel's arrays): the level that holds
     * the footprint, and of each thread count's sets the largest not
     * above it (the smallest when all are larger), the fastest of those
     * over the counts. */
    static const struct {
        int threads;
        double mib, fp_mib, gb_s, ws_mib;
        int bw_threads;
    } cases[] = {
        {1, 2, 0, 95, 8, 1},    /* the fastest set, not the first */
        {1, 12, 0, 95, 8, 1},   /* nor the largest its bytes reach */
        {1, 30, 0, 95, 8, 1},
        {2, 6, 0, 150, 8, 2},   /* 2 threads' fastest above 1 thread's */
        {2, 30, 0, 150, 8, 2},
        {1, 24, 16, 70, 16, 1}, /* 1.5x traffic: the footprint's set */
        {1, 24, 20, 70, 16, 1}, /* between sets: the smaller one */
        {1, 24, 12, 95, 8, 1},
        {1, 6, 6, 90, 4, 1},
        {1, 6, 3, 90, 4, 1},    /* below every set: the smallest */
        {1, 40, 28, 60, 24, 1}, /* traffic past the L3, arrays in it */
        {2, 40, 28, 65, 24, 2},
        {2, 24, 16, 100, 16, 2},
        {2, 12, 6, 150, 8, 2},  /* 2 threads: none below 8 MiB: it */
    };
    for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
        tb_roofline r;
        tb_roofline_in in = {.bytes = cases[i].mib * MiB, .time_ns = 1e6,
                             .dtype = TB_F64, .threads = cases[i].threads,
                             .bw_kernel = "add",
                             .footprint_bytes = cases[i].fp_mib * MiB};
        assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
        assert_string_equal(r.level, "L3");
        assert_true(near(r.bandwidth_gb_s, cases[i].gb_s));
        assert_true(r.bandwidth_ws_bytes == cases[i].ws_mib * MiB);
        assert_int_equal(r.bandwidth_threads, cases[i].bw_threads);
        assert_true(near(r.min_time_ns, in.bytes / cases[i].gb_s));
        cJSON *o = tb_roofline_json(&r);
        assert_non_null(o);
        assert_true(num(o, "bandwidth_working_set_bytes") ==
                    cases[i].ws_mib * MiB);
        const cJSON *fp = get(o, "footprint_bytes");
        assert_true(cases[i].fp_mib > 0
                        ? num(o, "footprint_bytes") == cases[i].fp_mib * MiB
                        : cJSON_IsNull(fp));
        cJSON_Delete(o);
    }
    cJSON_Delete(p);
}

static void test_roofline_json(void **state)
{
    (void)state;
    cJSON *p = fixed();
    tb_roofline r;
    tb_roofline_in in = {.flops = 1e6, .bytes = 12e6, .time_ns = 480e3,
                         .dtype = TB_F32, .threads = 1, .bw_kernel = "add"};
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    cJSON *o = tb_roofline_json(&r);
    assert_non_null(o);
    assert_int_equal(cJSON_GetArraySize(o), 16);
    assert_string_equal(str(o, "peak_dtype"), "f32");
    assert_true(num(o, "bandwidth_threads") == 1);
    /* the fixed figures carry no working set; no footprint given */
    assert_true(cJSON_IsNull(get(o, "bandwidth_working_set_bytes")));
    assert_true(cJSON_IsNull(get(o, "footprint_bytes")));
    assert_true(num(o, "peak_threads") == 1);
    assert_string_equal(str(o, "level"), "L3");
    assert_true(num(o, "threads") == 1);
    assert_string_equal(str(o, "bw_kernel"), "add");
    assert_true(near(num(o, "bandwidth_gb_s"), 50));
    assert_string_equal(str(o, "isa"), "avx512");
    assert_true(near(num(o, "peak_gflop_s"), 200));
    assert_true(near(num(o, "attainable_gflop_s"), 1e6 / 240e3));
    assert_true(near(num(o, "attainable_gb_s"), 50));
    assert_string_equal(str(o, "bound"), "memory");
    assert_true(near(num(o, "min_time_ns"), 240e3));
    assert_true(near(num(o, "fraction"), 0.5));
    cJSON_Delete(o);
    in.flops = 0;
    assert_int_equal(tb_roofline_compute(p, &in, &r), 0);
    o = tb_roofline_json(&r);
    assert_true(cJSON_IsNull(get(o, "isa")));
    assert_true(cJSON_IsNull(get(o, "peak_gflop_s")));
    assert_true(cJSON_IsNull(get(o, "attainable_gflop_s")));
    assert_true(cJSON_IsNull(get(o, "peak_dtype")));
    cJSON_Delete(o);
    /* a 16-bit dtype has no FMA figure of its own in the peaks: no roof
     * (results.c holds it to f32's where the CPU lacks 16-bit units) */
    in.flops = 1e6;
    in.dtype = TB_BF16;
    assert_int_equal(tb_roofline_compute(p, &in, &r), TB_ENOTFOUND);
    cJSON_Delete(p);
}

/* ---- 4. results.json ----------------------------------------------------- */

static tb_dtype results_dtype = TB_F32; /* of the next results_case */
/* its isa axis (NULL: none) and its kernel's name */
static const char *results_isa = NULL, *results_impl = "add_f32_c";
static tb_op_id results_op = TB_OP_add;  /* likewise */

static void results_case(cJSON *doc, const tb_backend *be, int n_axes,
                         const char *threads, tb_status status,
                         double median)
{
    tb_case c;
    memset(&c, 0, sizeof c);
    c.id = "add/test";
    c.op = tb_op_get(results_op);
    c.dtype = results_dtype;
    c.n_in = 2;
    const tb_shape sh[2] = {{.ndim = 1, .dim = {1000000}},
                            {.ndim = 1, .dim = {1000000}}};
    c.in = c.out = sh;
    c.backend = be;
    c.n_axes = n_axes;
    c.axis_name[0] = "threads";
    c.axis_value[0] = threads;
    if (results_isa && n_axes == 1) {
        c.n_axes = 2;
        c.axis_name[1] = "isa";
        c.axis_value[1] = results_isa;
    }
    c.unavailable_reason = "";
    /* the op's cost models (the harness's plan.c): add of 1e6 elements
     * is 1e6 FLOPs and 3 tensors of 1e6 elements of the dtype's size */
    if (results_op == TB_OP_add) {
        tb_params pr = {0};
        tb_params_defaults(c.op, &pr);
        c.flops = c.op->flops(c.op, sh, sh, &pr, c.dtype);
        c.bytes = c.op->bytes(c.op, sh, sh, &pr, c.dtype);
        assert_true(c.flops == 1e6);
        assert_true(c.bytes == 3e6 * (double)tb_dtype_size(c.dtype));
    } else { /* another op's figures, stated (not its shapes' model) */
        c.flops = 1e6;
        c.bytes = 12e6;
    }
    c.items = 1e6;
    c.reduce_len = 1;
    tb_result r;
    memset(&r, 0, sizeof r);
    double samples[1] = {median};
    r.status = status;
    r.impl = results_impl;
    r.checked = status == TB_STATUS_OK;
    r.samples_ns = samples;
    r.n_samples = 1;
    r.iters_per_sample = 1;
    r.stop_reason = "max_samples";
    r.stats.n = 1;
    r.stats.median = median;
    if (status != TB_STATUS_OK)
        snprintf(r.message, sizeof r.message, "not run");
    assert_int_equal(tb_results_add_case(doc, &c, &r), 0);
}

static void test_results_roofline(void **state)
{
    (void)state;
    cJSON *doc = tb_results_new(NULL, NULL, 0, 10);
    assert_non_null(doc);
    assert_true(cJSON_IsNull(get(doc, "peaks"))); /* not measured */
    results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_OK, 480e3);
    assert_int_equal(tb_results_set_peaks(doc, fixed()), 0);
    assert_string_equal(str(get(doc, "peaks"), "schema"), TB_PEAKS_SCHEMA);
    results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_OK, 480e3);
    results_case(doc, &tb_backend_cpu, 1, "2", TB_STATUS_OK, 480e3);
    results_case(doc, &tb_backend_cpu, 1, "7", TB_STATUS_OK, 480e3);
    results_case(doc, &tb_backend_cpu, 0, "", TB_STATUS_OK, 480e3);
    results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_UNSUPPORTED, 0);
    const cJSON *cases = get(doc, "cases");
    assert_int_equal(cJSON_GetArraySize(cases), 6);
    /* Before the peaks: null. */
    assert_true(cJSON_IsNull(get(cJSON_GetArrayItem(cases, 0), "roofline")));
    /* 12 MB at L3 add 50 GB/s in 480 us: 0.5. */
    const cJSON *rl = get(cJSON_GetArrayItem(cases, 1), "roofline");
    assert_true(cJSON_IsObject(rl));
    assert_string_equal(str(rl, "level"), "L3");
    assert_true(near(num(rl, "fraction"), 0.5));
    /* 2 threads: L3 add 80 GB/s. */
    rl = get(cJSON_GetArrayItem(cases, 2), "roofline");
    assert_true(near(num(rl, "fraction"), (12e6 / 80) / 480e3));
    /* No figure for 7 threads, no threads axis, not run: null. */
    for (int i = 3; i < 6; i++)
        assert_true(
            cJSON_IsNull(get(cJSON_GetArrayItem(cases, i), "roofline")));
    /* bf16: its 2-byte traffic (6 MB at L3 add 50 GB/s: 120 us of the
     * 480 measured) and f32's FMA peak, whatever 16-bit units the env's
     * cpu.isa lists (the cpu rows compute in f32; the peaks hold no bf16
     * figure), also where a bf16 figure of its kernel's level is in the
     * peaks (k = 3: add_bf16_avx512 at isa avx512 widens to f32; k = 4:
     * add_bf16_avx2) */
    static const char *const envs[] = {
        "{\"cpu\": {\"isa\": [\"avx2\", \"fma\", \"f16c\"]}}",
        "{\"cpu\": {\"isa\": [\"avx512f\", \"amx_bf16\"]}}",
        "{\"cpu\": {\"isa\": null}}"};
    results_dtype = TB_BF16;
    for (int k = 0; k < 5; k++) {
        results_isa = k < 3 ? NULL : "avx512";
        results_impl = k == 3 ? "add_bf16_avx512" : "add_bf16_avx2";
        if (k < 3) {
            cJSON_ReplaceItemInObjectCaseSensitive(doc, "env",
                                                   cJSON_Parse(envs[k]));
        } else if (k == 3) {
            cJSON *pk = fixed();
            cJSON *e = cJSON_Parse("{\"isa\":\"avx512\",\"dtype\":\"bf16\","
                                   "\"threads\":1,\"best_gflop_s\":800}");
            assert_non_null(e);
            cJSON_AddItemToArray(cJSON_GetObjectItemCaseSensitive(pk, "flops"),
                                 e);
            assert_int_equal(tb_results_set_peaks(doc, pk), 0);
        }
        results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_OK, 480e3);
        rl = get(cJSON_GetArrayItem(cases, 6 + k), "roofline");
        assert_true(cJSON_IsObject(rl));
        assert_string_equal(str(rl, "bound"), "memory");
        assert_true(near(num(rl, "min_time_ns"), 6e6 / 50));
        assert_true(near(num(rl, "attainable_gb_s") * num(rl, "min_time_ns"),
                         6e6));
        assert_true(near(num(rl, "fraction"), 0.25));
        assert_string_equal(str(rl, "peak_dtype"), "f32");
        assert_true(near(num(rl, "peak_gflop_s"), 200));
    }
    /* a matrix product's bf16 kernel of the bf16 figure's level: that
     * figure is its roof (1e6 FLOPs, 12 MB at 50 GB/s in 480 us) */
    results_op = TB_OP_matmul;
    results_impl = "matmul_bf16_avx512";
    results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_OK, 480e3);
    results_op = TB_OP_add;
    rl = get(cJSON_GetArrayItem(cases, 11), "roofline");
    assert_string_equal(str(rl, "peak_dtype"), "bf16");
    assert_true(near(num(rl, "peak_gflop_s"), 800));
    assert_true(near(num(rl, "fraction"), 0.5));
    /* so do linear and conv2d, whose bf16 rows of that level are GEMMs
     * too (categories fused and conv); max_pool2d (conv) widens: f32 */
    static const struct {
        tb_op_id op;
        const char *impl, *dt;
    } gemm_ops[] = {{TB_OP_linear, "linear_bf16_avx512", "bf16"},
                    {TB_OP_conv2d, "conv2d_bf16_avx512", "bf16"},
                    {TB_OP_max_pool2d, "max_pool2d_bf16_avx512", "f32"}};
    for (int k = 0; k < 3; k++) {
        results_op = gemm_ops[k].op;
        results_impl = gemm_ops[k].impl;
        results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_OK, 480e3);
        rl = get(cJSON_GetArrayItem(cases, 12 + k), "roofline");
        assert_string_equal(str(rl, "peak_dtype"), gemm_ops[k].dt);
    }
    results_op = TB_OP_add;
    results_dtype = TB_F32;
    results_isa = NULL;
    results_impl = "add_f32_c";
    /* matmul_int8 (f32): the int8 figure, 1e6 ops at 800 GOP/s against
     * 12 MB at L3 add 50 GB/s: memory-bound, but the compute roof is
     * int8's */
    results_op = TB_OP_matmul_int8;
    results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_OK, 480e3);
    results_op = TB_OP_add;
    rl = get(cJSON_GetArrayItem(cases, 15), "roofline");
    assert_string_equal(str(rl, "peak_dtype"), "int8");
    assert_string_equal(str(rl, "isa"), "avx512bf16");
    assert_true(near(num(rl, "peak_gflop_s"), 800));
    assert_true(near(num(rl, "fraction"), 0.5));
    /* an in-place op: its footprint is its two inputs (the output is
     * the first one's buffer), 8 MB, what picked the level; add (not in
     * place) has none */
    cJSON *upd = cJSON_Parse("{\"kernel\":\"update\",\"level\":\"L3\","
                             "\"threads\":1,\"best_gb_s\":60}");
    assert_non_null(upd);
    cJSON_AddItemToArray(
        cJSON_GetObjectItemCaseSensitive(
            cJSON_GetObjectItemCaseSensitive(doc, "peaks"), "bandwidth"),
        upd);
    results_op = TB_OP_add_;
    results_case(doc, &tb_backend_cpu, 1, "1", TB_STATUS_OK, 480e3);
    results_op = TB_OP_add;
    rl = get(cJSON_GetArrayItem(cases, 16), "roofline");
    assert_true(num(rl, "footprint_bytes") == 8e6);
    assert_string_equal(str(rl, "bw_kernel"), "update");
    assert_true(near(num(rl, "fraction"), (12e6 / 60) / 480e3));
    assert_true(cJSON_IsNull(get(get(cJSON_GetArrayItem(cases, 15),
                                     "roofline"), "footprint_bytes")));
    assert_int_equal(tb_results_set_peaks(doc, NULL), 0);
    assert_true(cJSON_IsNull(get(doc, "peaks")));
    cJSON_Delete(doc);
}

/* ---- 5. the command ------------------------------------------------------ */

/* main.c provides these to every command; this test stands in for it.
 * Usage errors set usage_errors so the test sees they were reported. */
static int usage_errors;

void tb_usage(FILE *f)
{
    fputs("usage: tbench <command> [options]\n", f);
}

void tb_cmd_usage(FILE *f, const char *cmd)
{
    fprintf(f, "usage: tbench %s [options]\n", cmd);
}

int tb_usage_error(const char *fmt, const char *arg)
{
    usage_errors++;
    fprintf(stderr, "tbench: ");
    fprintf(stderr, fmt, arg);
    fprintf(stderr, "\n");
    return TB_EXIT_USAGE;
}

static void test_cmd_usage(void **state)
{
    (void)state;
    char *a1[] = {"peak", "--bogus", NULL};
    assert_int_equal(tb_cmd_peak(2, a1), TB_EXIT_USAGE);
    char *a2[] = {"peak", "-o", NULL};
    assert_int_equal(tb_cmd_peak(2, a2), TB_EXIT_USAGE);
    char *a3[] = {"peak", "extra", NULL};
    assert_int_equal(tb_cmd_peak(2, a3), TB_EXIT_USAGE);
    /* the option errors are printed by tb_opt_error (opts.c); the stray
     * argument goes through tb_usage_error */
    assert_int_equal(usage_errors, 1);
}

static int group_setup(void **state)
{
    (void)state;
    snprintf(tmpdir, sizeof tmpdir, "/tmp/tbench-test-peak-XXXXXX");
    return mkdtemp(tmpdir) ? 0 : -1;
}

static int group_teardown(void **state)
{
    (void)state;
    char path[512];
    snprintf(path, sizeof path, "%s/sub/dir/peak-cache.json", tmpdir);
    unlink(path); /* left behind if test_cache_roundtrip failed */
    snprintf(path, sizeof path, "%s/sub/dir", tmpdir);
    rmdir(path);
    snprintf(path, sizeof path, "%s/sub", tmpdir);
    rmdir(path);
    return rmdir(tmpdir) == 0 ? 0 : -1;
}

#define T(name) cmocka_unit_test(test_##name)

int main(int argc, char **argv)
{
    const struct CMUnitTest tests[] = {
        T(measure_structure),
        T(measure_invalid),
        T(cache_roundtrip),
        T(cache_path_env),
        T(bw_loops),
        T(dot_loops),
        T(level_selection),
        T(roofline_fixed), T(roofline_bf16),
        T(roofline_json), T(roofline_l3_sets),
        T(results_roofline),
        T(cmd_usage),
    };
    for (int i = 1; i < argc; i++) {
        if (strcmp(argv[i], "--filter") == 0 && i + 1 < argc) {
            cmocka_set_test_filter(argv[++i]);
        } else {
            fprintf(stderr, "usage: %s [--filter PATTERN]\n", argv[0]);
            return 2;
        }
    }
    return cmocka_run_group_tests(tests, group_setup, group_teardown);
}
