/* Measured machine peaks and roofline fractions.
 *
 * tb_peaks_measure() measures, on this machine, right now:
 *  - memory bandwidth of four kernels (copy a = b; add a = b + c;
 *    triad a = b + s*c; read s += a) at working sets sized to L2, L3 and
 *    DRAM, for 1..N threads (pthreads, pinned where allowed, each thread
 *    first-touching the data it uses);
 *  - the FMA peak in FLOP/s per ISA level (scalar = the portable
 *    build's baseline, avx2, avx512: each only where the CPU has it),
 *    dtype and thread count, from independent register-only chains
 *    (and at avx512bf16 int8's, vpdpbusd chains, in ops/s at 2 per
 *    multiply-add: matmul_int8's roof);
 *  - the core clock in GHz, from one chain of dependent integer adds
 *    (1 cycle each) on one thread.
 * Every figure is the best of several repetitions (peaks are maxima);
 * the median, the worst and the spread of the repetitions come with it.
 * The result is a JSON object (schema "tbench.peaks/1", docs/FORMAT.md,
 * "peaks"), cached (tb_peak_cache_path) per machine and tbench
 * version, and copied into every run's results.json.
 *
 * tb_roofline_compute() turns a case (FLOPs, bytes, time, dtype, thread
 * count, ISA) and a peaks object into its roofline: attainable time =
 * max(FLOPs / peak FLOP/s, bytes / bandwidth of its working-set level),
 * fraction = attainable time / measured time (= achieved / attainable
 * FLOP/s or GB/s). */
#ifndef TB_HARNESS_PEAK_H
#define TB_HARNESS_PEAK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdio.h>

#include <cjson/cJSON.h>

#include "../ops/op.h"
#include "../ops/tensor.h"

#define TB_PEAKS_SCHEMA "tbench.peaks/1"
#define TB_PEAK_CACHE_SCHEMA "tbench.peak-cache/1"
/* The measuring method's version, part of the cache key (key.method): a
 * cached entry measured by another method (or before the key had one:
 * method 1) is measured again.  2: the L3 working set capped at 4x the
 * L2 per thread (06f1763).  3: sets of 4 MiB and more on huge pages
 * where THP allows, as tensors are (ops/alloc.h).  4: an L1 level (half
 * the L1 data cache per thread), so that a case whose working set fits
 * the L1 is no longer held to the L2's bandwidth.  5: the avx512bf16
 * level's figures (isa.h), so that a case run at it finds its roof
 * (method 4's cache has none, and an isa=auto case there had none).
 * 6: the avx512bf16 level's dot-product roofs, bf16 (vdpbf16ps chains)
 * and int8 (vpdpbusd), so that a bf16 matmul and matmul_int8 there find
 * theirs (method 5's cache has none).  7: the L3's bandwidth at larger
 * sets too (a quarter, half and three quarters of it), shown beside the
 * few-MiB figure the roofline uses (method 6's cache has that only).
 * 8: and at its whole size, the set an in-place op or optimizer whose
 * arrays fill the L3 is held to (method 7 held a 32 MiB footprint to
 * the 24 MiB set's figure: optimistic). */
#define TB_PEAK_METHOD 8
/* Where the cache lives: the file TB_PEAK_CACHE_ENV names, else
 * $XDG_CACHE_HOME/tbench/peak-cache.json, else
 * $HOME/.cache/tbench/peak-cache.json (one cache per user and machine,
 * whatever the working directory), else, with neither variable set,
 * TB_PEAK_CACHE_DEFAULT relative to the working directory. */
#define TB_PEAK_CACHE_DEFAULT "results/peak-cache.json"
#define TB_PEAK_CACHE_ENV "TBENCH_PEAK_CACHE"

/* Defaults: repetitions per figure and the minimum duration of one. */
#define TB_PEAK_REPS 7
#define TB_PEAK_REP_TIME_S 0.02
#define TB_PEAK_QUICK_REPS 3
#define TB_PEAK_QUICK_REP_TIME_S 0.005
/* DRAM working set as a multiple of the L3 size, summed over all L3
 * instances (--quick: half). */
#define TB_PEAK_DRAM_L3_MULT 8
/* The L3 working set per thread, in L2 sizes (at most half the L3 over
 * all threads). */
#define TB_PEAK_L3_L2_MULT 4
/* The L3's larger sets, over all threads: 1/4, 2/4 ... of its size, up
 * to this many quarters, the whole L3 the last (each measured where it
 * exceeds the level's own set on that many threads). */
#define TB_PEAK_L3_QUARTERS 4
/* DRAM working set when the cache sizes are unknown. */
#define TB_PEAK_DRAM_FALLBACK_BYTES (256u << 20)

typedef struct tb_peak_opts {
    bool quick;        /* fewer, shorter repetitions; DRAM 4x L3 */
    int reps;          /* repetitions per figure; 0: default */
    double rep_time_s; /* minimum time of one repetition; 0: default */
    int max_threads;   /* 0: every CPU this process may run on */
    /* Overrides in bytes (tests); 0: from sysfs via the environment
     * capture.  l1 (data), l2 and l3 are the cache sizes (the working
     * sets are half of them), dram the total DRAM working set. */
    size_t l1_bytes, l2_bytes, l3_bytes, dram_bytes;
    FILE *progress; /* one line per figure group, or NULL */
} tb_peak_opts;

/* Measure the peaks of this machine.  On success *out is a new
 * "tbench.peaks/1" object (caller deletes).  Returns 0, TB_ENOMEM (the
 * working sets could not be allocated) or TB_EINVAL, with a one-line
 * reason in err.  Takes seconds (about 18 s by default on 2 CPUs since
 * each bandwidth kernel is also timed at the level below, 10 s before,
 * 6 s before the L3's larger sets; 2026-11-30, load 1.4; a few seconds
 * with quick). */
/* The core clock now, in GHz: one chain of dependent adds on the calling
 * thread for about `ns` nanoseconds of its CPU time (the method of the
 * peaks' "clock", one repetition). */
double tb_peak_core_ghz(double ns);

int tb_peaks_measure(const tb_peak_opts *o, cJSON **out, char *err,
                     size_t errlen);

/* The cache key of this machine and build: {"cpu_model", "logical_cpus",
 * "tbench_version"}.  Caller deletes; NULL on allocation failure. */
cJSON *tb_peaks_key(void);
/* Does peaks' "key" equal key (every field)? */
bool tb_peaks_key_match(const cJSON *peaks, const cJSON *key);

/* The cache file: $TBENCH_PEAK_CACHE if set and non-empty, else
 * TB_PEAK_CACHE_DEFAULT. */
const char *tb_peak_cache_path(void);
/* Load the entry of path whose key equals key.  Returns 0 with a new
 * object in *peaks (caller deletes), TB_ENOTFOUND (no file, or no entry
 * for this key), or TB_EIO / TB_EPARSE / TB_ENOMEM with the reason in
 * err ("path: ..."). */
int tb_peak_cache_load(const char *path, const cJSON *key, cJSON **peaks,
                       char *err, size_t errlen);
/* Store peaks in the cache at path (created with its directory if
 * needed; written atomically), replacing the entry with the same key —
 * except that a quick measurement never replaces a full one (then 0 with
 * the reason in err; otherwise err is emptied on success).  An
 * unreadable or corrupt cache file is replaced.  0, TB_EIO, TB_ENOMEM or
 * TB_EINVAL (peaks has no key), with the reason in err. */
int tb_peak_cache_store(const char *path, const cJSON *peaks, char *err,
                        size_t errlen);

/* For `tbench run`: with measure, measure (full) and store in the cache;
 * otherwise load this machine's entry from the cache.  Notes and
 * warnings go to stderr unless quiet.  Returns a new object or NULL (not
 * measured yet, or it failed: the run then has "peaks": null). */
cJSON *tb_peaks_for_run(bool measure, bool quiet);

/* Print peaks as tables (bandwidth per level/threads/kernel, FMA per
 * ISA/dtype/threads). */
void tb_peaks_print(FILE *f, const cJSON *peaks);

/* ---- roofline -------------------------------------------------------- */

typedef struct tb_roofline_in {
    double flops;    /* per call (the op's FLOP model) */
    double bytes;    /* per call (the op's byte model) */
    double time_ns;  /* measured time per call (the median) */
    tb_dtype dtype;
    int threads;     /* the case's thread count (1 without such axis) */
    const char *isa; /* the case's ISA; NULL or "auto": the best measured */
    const char *bw_kernel; /* "copy", "add", "triad", "read", "update" */
    /* the "dtype" of the FLOP roof's peak figures when not dtype's
     * (tb_roofline_flop_dtype: "int8" for matmul_int8), else NULL */
    const char *flop_dtype;
    /* the bytes of the case's arrays (its inputs and the outputs that are
     * not an input's buffer), set for the ops whose kernels store cached
     * (results.c: in-place forms, optimizers, reductions): the level is
     * the one that holds them and its figure the one measured on the
     * largest set not above them (the fastest set when every set is
     * larger), not the fastest of every set; 0: the level of `bytes`,
     * the fastest figure */
    double footprint_bytes;
} tb_roofline_in;

typedef struct tb_roofline {
    char level[8];       /* working-set level of the case's bytes */
    char isa[16];        /* ISA of peak_gflop_s ("" when flops == 0) */
    char peak_dtype[8];  /* dtype of peak_gflop_s ("" when flops == 0):
                            the case's, or f32 for a 16-bit case on a CPU
                            without 16-bit arithmetic (results.c), or
                            flop_dtype ("int8") */
    char bw_kernel[8];
    int threads;
    /* The roofs are monotone in threads: t threads can do at least what
     * fewer threads did (the others idle), so each roof is the best
     * figure measured at any count up to the case's (that count measured
     * too); *_threads says which count gave it. */
    double bandwidth_gb_s; /* best measured (kernel, level, <= threads) */
    int bandwidth_threads;
    /* the working set that figure was measured on (of a level measured
     * on several, the fastest's, or with a footprint the set it picks);
     * 0 when unknown (a GPU's figure, peaks without sets) */
    double bandwidth_ws_bytes;
    /* tb_roofline_in.footprint_bytes when it chose the level and set; 0
     * when the case's bytes did */
    double footprint_bytes;
    double peak_gflop_s;   /* best measured (isa, dtype, <= threads); 0
                              when flops == 0 */
    int peak_threads;      /* 0 when flops == 0 */
    double min_time_ns;    /* max(flops / peak, bytes / bandwidth) */
    double attainable_gflop_s; /* flops / min_time (0 when flops == 0) */
    double attainable_gb_s;    /* bytes / min_time */
    double fraction;           /* min_time / time_ns */
    bool memory_bound;         /* the bytes term is the larger */
} tb_roofline;

/* The level ("L1", "L2", "L3", "DRAM") of a working set of `bytes` run on
 * `threads` threads: the first level of peaks' "levels" whose capacity
 * holds it (a per-thread cache counts threads times), else the last
 * level.  NULL if peaks has no levels. */
const char *tb_peaks_level(const cJSON *peaks, double bytes, int threads);

/* The bandwidth kernel whose access pattern matches op: "read" for
 * reductions, "update" for ops that write an input (in-place ops,
 * optimizers), "add" for other ops with two or more inputs, else
 * "copy". */
const char *tb_roofline_bw_kernel(const tb_op *op);

/* The dtype of the peak figures that bound op's FLOPs when it is not the
 * case's (tb_roofline_in.flop_dtype): "int8" for matmul_int8, whose
 * multiply-adds are u8 x s8 products summed in int32 (`tbench peak`'s
 * int8 dot loop, measured at avx512bf16 only: at the other levels such
 * a case has no compute roof and so no roofline); NULL for other ops. */
const char *tb_roofline_flop_dtype(const tb_op *op);

/* Roofline of one case.  Returns 0, TB_ENOTFOUND (peaks has no figure
 * for this thread count, ISA, dtype or level) or TB_EINVAL (malformed
 * input or peaks). */
int tb_roofline_compute(const cJSON *peaks, const tb_roofline_in *in,
                        tb_roofline *out);
/* The end of tb_roofline_compute and of tb_gpu_roofline: out's bound
 * from the memory and compute times (ns; 0 where the case has no bytes
 * or no FLOPs): memory_bound, min_time_ns, attainable rates, fraction.
 * TB_EINVAL when neither is positive (nothing to bound), else 0. */
int tb_roofline_bound(const tb_roofline_in *in, double t_mem, double t_flop,
                      tb_roofline *out);
/* The roofline as a results.json "roofline" object (docs/FORMAT.md).
 * NULL on allocation failure. */
cJSON *tb_roofline_json(const tb_roofline *r);

#endif
