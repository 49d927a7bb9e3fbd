/* The roofline of a case against the measured peaks: attainable time =
 * max(FLOPs / peak FLOP/s, bytes / bandwidth of its working-set level),
 * fraction = attainable / measured.  See peak.h. */
#include "peak.h"

#include <math.h>
#include <stdio.h>
#include <string.h>

#include "../base/error.h"
#include "peak_json.h"

const char *tb_peaks_level(const cJSON *peaks, double bytes, int threads)
{
    const cJSON *levels = cJSON_GetObjectItemCaseSensitive(peaks, "levels");
    const cJSON *lv;
    const char *last = NULL;
    if (threads < 1)
        threads = 1;
    cJSON_ArrayForEach(lv, levels)
    {
        const char *name = pk_str(lv, "name");
        if (!name)
            continue;
        last = name;
        double cap = pk_num(lv, "capacity_bytes");
        if (isnan(cap))
            continue; /* no capacity: only as the last resort (DRAM) */
        if (cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(lv, "per_thread")))
            cap *= threads;
        if (bytes <= cap)
            return name;
    }
    return last;
}

const char *tb_roofline_bw_kernel(const tb_op *op)
{
    if (!op)
        return "copy";
    if (op->category == TB_CAT_REDUCTION)
        return "read";
    /* writes an input: no third array to allocate on write */
    if (op->category == TB_CAT_INPLACE || op->category == TB_CAT_OPTIMIZER)
        return "update";
    return op->n_in >= 2 ? "add" : "copy";
}

const char *tb_roofline_flop_dtype(const tb_op *op)
{
    return op && op->id == TB_OP_matmul_int8 ? "int8" : NULL;
}

/* Whether bandwidth entry e is the one its (kernel, level, threads)
 * takes for a footprint of fp bytes: of that count's sets, the largest
 * not above fp, or the smallest when every one is larger; an entry
 * without a set, or beside one without, always (the fastest of them
 * then wins, as without a footprint). */
static bool bw_pick(const cJSON *bws, const cJSON *e, double fp)
{
    const double ws = pk_num(e, "working_set_bytes");
    if (!(ws > 0))
        return true;
    const char *k = pk_str(e, "kernel"), *l = pk_str(e, "level");
    const double t = pk_num(e, "threads");
    const cJSON *o;
    cJSON_ArrayForEach(o, bws)
    {
        const char *ko = pk_str(o, "kernel"), *lo = pk_str(o, "level");
        if (o == e || !ko || !lo || strcmp(ko, k) || strcmp(lo, l) ||
            pk_num(o, "threads") != t)
            continue;
        const double w = pk_num(o, "working_set_bytes");
        if (!(w > 0))
            return true;
        if (ws <= fp ? (w > ws && w <= fp) : (w <= fp || w < ws))
            return false; /* o is the better pick */
    }
    return true;
}

int tb_roofline_compute(const cJSON *peaks, const tb_roofline_in *in,
                        tb_roofline *out)
{
    memset(out, 0, sizeof *out);
    if (!in || !pk_peaks_wellformed(peaks) || !(in->time_ns > 0) ||
        !(in->flops >= 0) || !(in->bytes >= 0) || !in->bw_kernel ||
        (unsigned)in->dtype >= TB_DTYPE_COUNT)
        return TB_EINVAL;
    const int threads = in->threads < 1 ? 1 : in->threads;
    out->threads = threads;
    snprintf(out->bw_kernel, sizeof out->bw_kernel, "%s", in->bw_kernel);
    const double fp = in->footprint_bytes > 0 ? in->footprint_bytes : 0;
    out->footprint_bytes = fp;
    const char *level = tb_peaks_level(peaks, fp > 0 ? fp : in->bytes,
                                       threads);
    if (!level)
        return TB_EINVAL;
    snprintf(out->level, sizeof out->level, "%s", level);

    double t_mem = 0, t_flop = 0;
    if (in->bytes > 0) {
        const cJSON *bws = cJSON_GetObjectItemCaseSensitive(peaks,
                                                            "bandwidth");
        /* this count measured, then the best of it and every fewer: of
         * every set the level was measured on, or with a footprint the
         * set bw_pick takes (the L3's larger quarters run slower; a
         * case's bytes are its traffic, not its footprint -- an in-place
         * op moves 1.5x its arrays -- and kernels that stream their
         * output past 20 MiB (drv_ew.c) beat the cached-store figures
         * there: 74 GB/s against 46 for a 24 MiB f64 add, back to back,
         * 2026-11-30; so only the cached kernels' footprint picks) */
        const cJSON *e = pk_find(bws, "kernel", in->bw_kernel, "level",
                                 level, threads);
        if (!e || !(pk_num(e, "best_gb_s") > 0))
            return TB_ENOTFOUND;
        cJSON_ArrayForEach(e, bws)
        {
            const char *k = pk_str(e, "kernel"), *l = pk_str(e, "level");
            double t = pk_num(e, "threads"), bw = pk_num(e, "best_gb_s");
            if (!k || !l || strcmp(k, in->bw_kernel) || strcmp(l, level) ||
                !(t >= 1 && t <= threads) || !(bw > out->bandwidth_gb_s) ||
                (fp > 0 && !bw_pick(bws, e, fp)))
                continue;
            out->bandwidth_gb_s = bw;
            out->bandwidth_threads = (int)t;
            double ws = pk_num(e, "working_set_bytes");
            out->bandwidth_ws_bytes = ws > 0 ? ws : 0;
        }
        t_mem = in->bytes / out->bandwidth_gb_s; /* GB/s = bytes per ns */
    }
    if (in->flops > 0) {
        const char *dt = in->flop_dtype ? in->flop_dtype
                                        : tb_dtype_name(in->dtype);
        const bool any = !in->isa || !strcmp(in->isa, "auto");
        const cJSON *e, *best = NULL;
        bool measured = false; /* a figure at this very count */
        cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(peaks, "flops"))
        {
            const char *isa = pk_str(e, "isa"), *d = pk_str(e, "dtype");
            double t = pk_num(e, "threads");
            if (!isa || !d || strcmp(d, dt) || !(t >= 1 && t <= threads) ||
                (!any && strcmp(isa, in->isa)) ||
                !(pk_num(e, "best_gflop_s") > 0))
                continue;
            measured = measured || t == threads;
            if (!best ||
                pk_num(e, "best_gflop_s") > pk_num(best, "best_gflop_s"))
                best = e;
        }
        if (!best || !measured)
            return TB_ENOTFOUND;
        out->peak_gflop_s = pk_num(best, "best_gflop_s");
        out->peak_threads = (int)pk_num(best, "threads");
        snprintf(out->isa, sizeof out->isa, "%s", pk_str(best, "isa"));
        snprintf(out->peak_dtype, sizeof out->peak_dtype, "%s", dt);
        t_flop = in->flops / out->peak_gflop_s; /* GFLOP/s = FLOP per ns */
    }
    return tb_roofline_bound(in, t_mem, t_flop, out);
}

int tb_roofline_bound(const tb_roofline_in *in, double t_mem, double t_flop,
                      tb_roofline *out)
{
    if (!(t_mem > 0) && !(t_flop > 0))
        return TB_EINVAL; /* nothing to bound: no bytes, no FLOPs */
    out->memory_bound = t_mem >= t_flop;
    out->min_time_ns = out->memory_bound ? t_mem : t_flop;
    out->attainable_gflop_s = in->flops / out->min_time_ns;
    out->attainable_gb_s = in->bytes / out->min_time_ns;
    out->fraction = out->min_time_ns / in->time_ns;
    return 0;
}

cJSON *tb_roofline_json(const tb_roofline *r)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddStringToObject(o, "level", r->level);
    cJSON_AddNumberToObject(o, "threads", r->threads);
    cJSON_AddStringToObject(o, "bw_kernel", r->bw_kernel);
    cJSON_AddNumberToObject(o, "bandwidth_gb_s", r->bandwidth_gb_s);
    if (r->bandwidth_threads)
        cJSON_AddNumberToObject(o, "bandwidth_threads", r->bandwidth_threads);
    else
        cJSON_AddNullToObject(o, "bandwidth_threads");
    if (r->bandwidth_ws_bytes > 0)
        cJSON_AddNumberToObject(o, "bandwidth_working_set_bytes",
                                r->bandwidth_ws_bytes);
    else
        cJSON_AddNullToObject(o, "bandwidth_working_set_bytes");
    if (r->footprint_bytes > 0)
        cJSON_AddNumberToObject(o, "footprint_bytes", r->footprint_bytes);
    else
        cJSON_AddNullToObject(o, "footprint_bytes");
    if (r->isa[0]) {
        cJSON_AddStringToObject(o, "isa", r->isa);
        cJSON_AddNumberToObject(o, "peak_gflop_s", r->peak_gflop_s);
        cJSON_AddNumberToObject(o, "peak_threads", r->peak_threads);
        cJSON_AddNumberToObject(o, "attainable_gflop_s",
                                r->attainable_gflop_s);
        if (r->peak_dtype[0])
            cJSON_AddStringToObject(o, "peak_dtype", r->peak_dtype);
        else
            cJSON_AddNullToObject(o, "peak_dtype");
    } else {
        cJSON_AddNullToObject(o, "isa");
        cJSON_AddNullToObject(o, "peak_gflop_s");
        cJSON_AddNullToObject(o, "peak_threads");
        cJSON_AddNullToObject(o, "attainable_gflop_s");
        cJSON_AddNullToObject(o, "peak_dtype");
    }
    cJSON_AddNumberToObject(o, "attainable_gb_s", r->attainable_gb_s);
    cJSON_AddStringToObject(o, "bound", r->memory_bound ? "memory"
                                                        : "compute");
    cJSON_AddNumberToObject(o, "min_time_ns", r->min_time_ns);
    cJSON_AddNumberToObject(o, "fraction", r->fraction);
    if (cJSON_GetArraySize(o) != 16) {
        cJSON_Delete(o);
        return NULL;
    }
    return o;
}

