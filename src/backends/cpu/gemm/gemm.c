/* Native GEMM framework: argument checks, kernel selection, the work
 * split over threads, and (through gemm_impl.inc, once per precision) the
 * packing and blocking loops around the micro-kernels.  Portable C: the
 * SIMD micro-kernels live in gemm_avx2.c / gemm_avx512.c, built with
 * their own -m flags, and are only called after the ISA check below.
 * Contract: gemm.h. */
#include "gemm.h"

#include <pthread.h>
#include <sched.h>
#include <stdatomic.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/cpu/cpu_config.h"
#include "backends/cpu/gemm/gemm_kernels.h"
#include "backends/cpu/isa.h"
#include "ops/half.h"
#include "base/error.h"

/* Which SIMD kernel libraries this build has: gemm/meson.build builds
 * them under the same conditions (cpu_have_avx2 / cpu_have_avx512 of
 * ../meson.build) that set these. */
#define GEMM_HAVE_AVX2 TB_CPU_HAVE_AVX2
#define GEMM_HAVE_AVX512 TB_CPU_HAVE_AVX512

/* Most parts of one call (threads started by tb_gemm_f32/f64, or parts
 * handed to a caller's parallel-for). */
#define GEMM_MAX_PARTS 64

/* ---- ISA ------------------------------------------------------------ */

/* 0 when `isa` is a known level that is built in and runs on this CPU
 * (isa.c's detector, which reads the CPU once per process). */
static int gemm_isa_check(int isa)
{
    if (isa < TB_ISA_SCALAR || isa >= TB_ISA_COUNT)
        return TB_EUNSUPPORTED;
    if (isa == TB_ISA_SCALAR)
        return 0;
    return isa <= tb_cpu_isa_detect() ? 0 : TB_EUNSUPPORTED;
}

/* ---- argument checks ------------------------------------------------ */

/* Bytes spanned by a rows x cols matrix with row stride ld (0 when
 * empty), or -1 when that overflows or exceeds PTRDIFF_MAX. */
static int64_t gemm_span(int64_t rows, int64_t cols, int64_t ld,
                         size_t esz)
{
    if (rows == 0 || cols == 0)
        return 0;
    int64_t n, bytes;
    if (__builtin_mul_overflow(rows - 1, ld, &n) ||
        __builtin_add_overflow(n, cols, &n) ||
        __builtin_mul_overflow(n, (int64_t)esz, &bytes) ||
        (uint64_t)bytes > (uint64_t)PTRDIFF_MAX)
        return -1;
    return bytes;
}

/* Do the byte ranges [p, p+np) and [q, q+nq) intersect? */
static int gemm_overlap(const void *p, int64_t np, const void *q,
                        int64_t nq)
{
    if (np == 0 || nq == 0)
        return 0;
    uintptr_t a = (uintptr_t)p, b = (uintptr_t)q;
    return a < b + (uintptr_t)nq && b < a + (uintptr_t)np;
}

/* Validate the arguments of tb_gemm_*: see gemm.h for the rules. */
static int gemm_check_args(int64_t M, int64_t N, int64_t K, const void *A,
                           int64_t lda, const void *B, int64_t ldb,
                           const void *C, int64_t ldc, int nthreads,
                           size_t esz, int trans)
{
    const int ta = trans & TB_GEMM_TRANS_A, tb = trans & TB_GEMM_TRANS_B;
    if (M < 0 || N < 0 || K < 0 || nthreads < 1)
        return TB_EINVAL;
    if (lda < (ta ? M : K) || ldb < (tb ? K : N) || ldc < N || lda < 0 ||
        ldb < 0 || ldc < 0 || (trans & ~(TB_GEMM_TRANS_A | TB_GEMM_TRANS_B)))
        return TB_EINVAL;
    int64_t sa = ta ? gemm_span(K, M, lda, esz) : gemm_span(M, K, lda, esz);
    int64_t sb = tb ? gemm_span(N, K, ldb, esz) : gemm_span(K, N, ldb, esz);
    int64_t sc = gemm_span(M, N, ldc, esz);
    if (sa < 0 || sb < 0 || sc < 0)
        return TB_EINVAL;
    if ((sa && !A) || (sb && !B) || (sc && !C))
        return TB_EINVAL;
    if (gemm_overlap(C, sc, A, sa) || gemm_overlap(C, sc, B, sb))
        return TB_EINVAL;
    return 0;
}

/* ---- work split ----------------------------------------------------- */

static _Atomic int64_t gemm_par_min_macs = TB_GEMM_PAR_MIN_MACS;

int64_t tb_gemm_set_par_min_macs(int64_t macs)
{
    return atomic_exchange(&gemm_par_min_macs, macs);
}

/* Split C over at most nthreads parts: slices of whole micro-tiles along
 * M or N, whichever divides more evenly (M on a tie: each part then
 * packs its own rows of A and streams all of B).  One part below
 * gemm_par_min_macs multiply-adds. */
static void gemm_plan_split(int64_t M, int64_t N, int64_t K, int mr,
                            int nr, int nthreads, int *split_n,
                            int64_t *slice, int *nslices)
{
    int64_t um = (M + mr - 1) / mr, un = (N + nr - 1) / nr;
    int64_t p = nthreads < GEMM_MAX_PARTS ? nthreads : GEMM_MAX_PARTS;
    /* M*N*K may overflow int64 for absurd shapes: compare in double. */
    if ((double)M * (double)N * (double)K <
        (double)atomic_load_explicit(&gemm_par_min_macs,
                                     memory_order_relaxed))
        p = 1;
    /* Units per part along each dimension, and the busiest part's share
     * of the critical path (smaller is better). */
    int64_t pm = p < um ? p : um, pn = p < un ? p : un;
    int64_t per_m = (um + pm - 1) / pm, per_n = (un + pn - 1) / pn;
    /* Time ~ per_x tiles of the split dimension x the whole other one. */
    double tm = (double)per_m * (double)un, tn = (double)per_n * (double)um;
    *split_n = tn < tm;
    if (*split_n) {
        *slice = per_n * nr;
        *nslices = (int)((un + per_n - 1) / per_n);
    } else {
        *slice = per_m * mr;
        *nslices = (int)((um + per_m - 1) / per_m);
    }
}

/* ---- parallel-for --------------------------------------------------- */

typedef struct gemm_thread_arg {
    tb_gemm_task_fn fn;
    void *arg;
    int part, nparts;
} gemm_thread_arg;

static void *gemm_thread_main(void *p)
{
    const gemm_thread_arg *t = p;
    t->fn(t->arg, t->part, t->nparts);
    return NULL;
}

/* Fork-join: parts 1..n-1 on new threads, part 0 on the caller; a part
 * whose thread cannot be started runs on the caller afterwards. */
static void gemm_fork_join(int n, tb_gemm_task_fn fn, void *arg)
{
    pthread_t tid[GEMM_MAX_PARTS];
    gemm_thread_arg targ[GEMM_MAX_PARTS];
    int started[GEMM_MAX_PARTS] = {0};
    for (int i = 1; i < n; i++) {
        targ[i] = (gemm_thread_arg){fn, arg, i, n};
        started[i] = pthread_create(&tid[i], NULL, gemm_thread_main,
                                    &targ[i]) == 0;
    }
    fn(arg, 0, n);
    for (int i = 1; i < n; i++) {
        if (started[i])
            pthread_join(tid[i], NULL);
        else
            fn(arg, i, n);
    }
}

/* Run parts [0, n) of fn through par (see tb_gemm_parallel) or, when par
 * is NULL, on threads of our own.  n == 1 always runs inline. */
static void gemm_parallel_run(const tb_gemm_parallel *par, int n,
                              tb_gemm_task_fn fn, void *arg)
{
    if (n <= 1)
        fn(arg, 0, 1);
    else if (par && par->run)
        par->run(par->ctx, n, fn, arg);
    else
        gemm_fork_join(n, fn, arg);
}

/* ---- shared packing of B ------------------------------------------- */

/* When the parts split M, B is packed once for all of them (cooperatively,
 * chunk by chunk: gemm_pack_b_shared_ in gemm_impl.inc) if the whole
 * packed B fits in this many bytes; above it each part packs its own B,
 * one (jc, pc) step at a time, as with one part.  Sharing a step-sized
 * buffer instead would make a part wait for a slower one to finish with
 * it, which deadlocks a parallel-for that runs parts one after another.
 * 16 MiB keeps the buffer within glibc's largest mmap threshold, so it
 * is reused from the heap across calls (no page faults per call); B of
 * 1024 x 1024 f32 (4 MiB) is shared, 4096 x 4096 (64 MiB) is not, where
 * the second pass over B costs about 1%. */
#define GEMM_SHARED_B_MAX (16.0 * 1024 * 1024)

/* Micro-panels per chunk of shared packing: 4 x 32 f32 columns x kc
 * rows, about 100 KiB, so two parts split a step of a 1024-wide B into
 * a few dozen chunks and finish it at about the same time. */
#define GEMM_B_GROUP 4

/* Wait until a chunk claimed by another part is packed (state 2).  The
 * packing part is running (it claimed the chunk), so this ends; yield
 * now and then in case it was preempted on an oversubscribed machine. */
static void gemm_wait_ready(_Atomic int *f)
{
    for (unsigned spin = 0;
         atomic_load_explicit(f, memory_order_acquire) != 2; spin++) {
        if ((spin & 1023) == 1023)
            sched_yield();
#if defined(__x86_64__) || defined(__i386__)
        else
            __builtin_ia32_pause();
#endif
    }
}

/* ---- the two precisions --------------------------------------------- */

/* Depth run of the packing loops: one 64-byte line of f32 source. */
#define GEMM_PACK_KB 16

/* The largest B a GEMM of at most 2 MR rows reads in place, unpacked
 * (gemm_impl.inc's gemm_block_): 8 MiB of B (8 x 2048 x 1024 f32, 8 x
 * 1024 x 1024 f64) ran 37-40% faster in place, 16 MiB (8 x 4096 x 1024
 * f32, 8 x 2048 x 1024 f64) 48-84% slower (tbench ab, 10 blocks, Zen 4,
 * 32 MiB L3). */
#ifndef GEMM_INPLACE_B_MAX
#define GEMM_INPLACE_B_MAX (8.0 * 1024 * 1024)
#endif

#define T float
#define SFX f32
#define GEMM_S_MR 4
#define GEMM_S_NR 8
#include "gemm_impl.inc"
#undef GEMM_S_NR
#undef GEMM_S_MR
#undef SFX
#undef T

#define T double
#define SFX f64
#define GEMM_S_MR 4
#define GEMM_S_NR 4
#include "gemm_impl.inc"
#undef GEMM_S_NR
#undef GEMM_S_MR
#undef SFX
#undef T

/* ---- kernel tables, indexed by tb_cpu_isa --------------------------- */

/* Cache blocking per kernel (kc, ksub, mc, nc) for this class of machine
 * (L1d 32-48 KiB, L2 1-2 MiB per core, a shared L3): the B micro-panel
 * (kc x nr, 24 KiB) stays in L1, the ksub packed A blocks (mc x kc each,
 * 300-600 KiB in all) in L2, the ksub packed B blocks (kc x nc each) in
 * L3.  ksub = 2 for AVX-512 f32 halves the passes over C (C traffic was
 * about 12% of the time at 4096^3 on a 2-vCPU Zen 5 VM; no gain was
 * measured for f64).  mc is an upper bound: the rows of a part are cut
 * into even blocks of whole micro-panels (gemm_block_).  AVX-512 f32 mc
 * 264 -> 396 (2 x 297 KiB of A in the 1 MiB L2: each B micro-panel
 * serves 33 calls, not 22) was worth about 3% at 4096^3, none at 1024.
 * Chosen by short A/B runs on that VM (see the commit note); overridable
 * at compile time for tuning. */
#ifndef GEMM_AVX512_F32_BLOCKS
#define GEMM_AVX512_F32_BLOCKS 192, 2, 396, 4096
#endif
#ifndef GEMM_AVX512_F64_BLOCKS
#define GEMM_AVX512_F64_BLOCKS 192, 1, 192, 2048
#endif
#ifndef GEMM_AVX2_F32_BLOCKS
#define GEMM_AVX2_F32_BLOCKS 384, 1, 192, 4096
#endif
#ifndef GEMM_AVX2_F64_BLOCKS
#define GEMM_AVX2_F64_BLOCKS 384, 1, 96, 2048
#endif
#define GEMM_SCALAR_BLOCKS 256, 1, 128, 2048

/* Indexed by tb_cpu_isa; a level this build lacks has fn == NULL. */
static const gemm_kdesc_f32 gemm_kernels_f32[TB_ISA_COUNT] = {
    [TB_ISA_SCALAR] = {gemm_ukr_scalar_f32, "gemm_f32_scalar_4x8", 4, 8,
                       GEMM_SCALAR_BLOCKS, gemm_epi_scalar_f32, NULL, NULL},
#if GEMM_HAVE_AVX2
    [TB_ISA_AVX2] = {tb_gemm_ukr_f32_avx2_6x16, "gemm_f32_avx2_6x16",
                     TB_GEMM_AVX2_F32_MR, TB_GEMM_AVX2_F32_NR,
                     GEMM_AVX2_F32_BLOCKS, tb_gemm_epi_f32_avx2, NULL, NULL},
#endif
#if GEMM_HAVE_AVX512
#define GEMM_AVX512_F32                                                     \
    {tb_gemm_ukr_f32_avx512_12x32, "gemm_f32_avx512_12x32",                 \
     TB_GEMM_AVX512_F32_MR, TB_GEMM_AVX512_F32_NR, GEMM_AVX512_F32_BLOCKS,  \
     tb_gemm_epi_f32_avx512, tb_gemm_edge_f32_avx512_12x32,               \
     tb_gemm_pack_a_f32_avx512}
    [TB_ISA_AVX512] = GEMM_AVX512_F32,
    /* the avx512bf16 level (isa.h) multiplies f32 as avx512 does */
    [TB_ISA_AVX512BF16] = GEMM_AVX512_F32,
#endif
};

static const gemm_kdesc_f64 gemm_kernels_f64[TB_ISA_COUNT] = {
    [TB_ISA_SCALAR] = {gemm_ukr_scalar_f64, "gemm_f64_scalar_4x4", 4, 4,
                       GEMM_SCALAR_BLOCKS, gemm_epi_scalar_f64, NULL, NULL},
#if GEMM_HAVE_AVX2
    [TB_ISA_AVX2] = {tb_gemm_ukr_f64_avx2_6x8, "gemm_f64_avx2_6x8",
                     TB_GEMM_AVX2_F64_MR, TB_GEMM_AVX2_F64_NR,
                     GEMM_AVX2_F64_BLOCKS, tb_gemm_epi_f64_avx2, NULL, NULL},
#endif
#if GEMM_HAVE_AVX512
#define GEMM_AVX512_F64                                                     \
    {tb_gemm_ukr_f64_avx512_12x16, "gemm_f64_avx512_12x16",                 \
     TB_GEMM_AVX512_F64_MR, TB_GEMM_AVX512_F64_NR, GEMM_AVX512_F64_BLOCKS,  \
     tb_gemm_epi_f64_avx512, tb_gemm_edge_f64_avx512_12x16, NULL}
    [TB_ISA_AVX512] = GEMM_AVX512_F64,
    [TB_ISA_AVX512BF16] = GEMM_AVX512_F64,
#endif
};

/* ---- public API ----------------------------------------------------- */

int tb_gemm_f32_ep(int isa, int64_t M, int64_t N, int64_t K,
                   const float *A, int64_t lda, const float *B, int64_t ldb,
                   float *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par, const float *bias, int relu)
{
    int rc = gemm_isa_check(isa);
    if (rc)
        return rc;
    if (!gemm_kernels_f32[isa].fn)
        return TB_EUNSUPPORTED;
    return gemm_run_f32(&gemm_kernels_f32[isa], M, N, K, A, lda, B, ldb, C,
                        ldc, nthreads, par, bias, relu, 0);
}

int tb_gemm_f64_ep(int isa, int64_t M, int64_t N, int64_t K,
                   const double *A, int64_t lda, const double *B,
                   int64_t ldb, double *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par, const double *bias,
                   int relu)
{
    int rc = gemm_isa_check(isa);
    if (rc)
        return rc;
    if (!gemm_kernels_f64[isa].fn)
        return TB_EUNSUPPORTED;
    return gemm_run_f64(&gemm_kernels_f64[isa], M, N, K, A, lda, B, ldb, C,
                        ldc, nthreads, par, bias, relu, 0);
}

int tb_gemm_f32_ex(int isa, int64_t M, int64_t N, int64_t K,
                   const float *A, int64_t lda, const float *B, int64_t ldb,
                   float *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par)
{
    return tb_gemm_f32_ep(isa, M, N, K, A, lda, B, ldb, C, ldc, nthreads,
                          par, NULL, 0);
}

int tb_gemm_f64_ex(int isa, int64_t M, int64_t N, int64_t K,
                   const double *A, int64_t lda, const double *B,
                   int64_t ldb, double *C, int64_t ldc, int nthreads,
                   const tb_gemm_parallel *par)
{
    return tb_gemm_f64_ep(isa, M, N, K, A, lda, B, ldb, C, ldc, nthreads,
                          par, NULL, 0);
}

int tb_gemm_f32(int isa, int64_t M, int64_t N, int64_t K, const float *A,
                int64_t lda, const float *B, int64_t ldb, float *C,
                int64_t ldc, int nthreads)
{
    return tb_gemm_f32_ex(isa, M, N, K, A, lda, B, ldb, C, ldc, nthreads,
                          NULL);
}

int tb_gemm_f64(int isa, int64_t M, int64_t N, int64_t K, const double *A,
                int64_t lda, const double *B, int64_t ldb, double *C,
                int64_t ldc, int nthreads)
{
    return tb_gemm_f64_ex(isa, M, N, K, A, lda, B, ldb, C, ldc, nthreads,
                          NULL);
}

int tb_gemm_tr(int isa, int f64, int trans, int64_t M, int64_t N,
               int64_t K, const void *A, int64_t lda, const void *B,
               int64_t ldb, void *C, int64_t ldc, int nthreads,
               const tb_gemm_parallel *par)
{
    int rc = gemm_isa_check(isa);
    if (rc)
        return rc;
    if (f64)
        return gemm_kernels_f64[isa].fn
                   ? gemm_run_f64(&gemm_kernels_f64[isa], M, N, K, A, lda,
                                  B, ldb, C, ldc, nthreads, par, NULL, 0,
                                  trans)
                   : TB_EUNSUPPORTED;
    return gemm_kernels_f32[isa].fn
               ? gemm_run_f32(&gemm_kernels_f32[isa], M, N, K, A, lda, B,
                              ldb, C, ldc, nthreads, par, NULL, 0, trans)
               : TB_EUNSUPPORTED;
}

/* ---- C = A B^T for few rows (tb_gemm_nt_small) ----------------------- */

#if GEMM_HAVE_AVX512
typedef struct gemm_nt_job {
    int64_t M, N, K, lda, ldb, ldc;
    const void *A, *B;
    void *C;
    int f64;
} gemm_nt_job;

static void gemm_nt_task(void *arg, int part, int used)
{
    const gemm_nt_job *j = arg;
    /* column pairs split evenly: no sum depends on the split */
    const int64_t pairs = (j->N + 1) / 2;
    const int64_t lo = 2 * (pairs * part / used);
    const int64_t hi2 = 2 * (pairs * (part + 1) / used);
    const int64_t hi = hi2 < j->N ? hi2 : j->N;
    if (j->f64)
        tb_gemm_nt_f64_avx512(j->M, lo, hi, j->K, j->A, j->lda, j->B,
                              j->ldb, j->C, j->ldc);
    else
        tb_gemm_nt_f32_avx512(j->M, lo, hi, j->K, j->A, j->lda, j->B,
                              j->ldb, j->C, j->ldc);
}
#endif

int tb_gemm_nt_small(int isa, int f64, int64_t M, int64_t N, int64_t K,
                     const void *A, int64_t lda, const void *B, int64_t ldb,
                     void *C, int64_t ldc, int nthreads,
                     const tb_gemm_parallel *par)
{
#if GEMM_HAVE_AVX512
    if (isa < TB_ISA_AVX512 || gemm_isa_check(isa) ||
        M < 1 || M > TB_GEMM_NT_MMAX || N < 1 || K < TB_GEMM_NT_KMIN ||
        lda < K || ldb < K || ldc < N || !A || !B || !C || nthreads < 1)
        return TB_EUNSUPPORTED;
    gemm_nt_job j = {M, N, K, lda, ldb, ldc, A, B, C, f64 != 0};
    const int64_t macs = M * N * K;
    int parts = nthreads;
    if (parts > (N + 1) / 2)
        parts = (int)((N + 1) / 2);
    if (parts > 1 && par &&
        macs >= atomic_load_explicit(&gemm_par_min_macs,
                                     memory_order_relaxed))
        par->run(par->ctx, parts, gemm_nt_task, &j);
    else
        gemm_nt_task(&j, 0, 1);
    return 0;
#else
    (void)isa, (void)f64, (void)M, (void)N, (void)K, (void)A, (void)lda;
    (void)B, (void)ldb, (void)C, (void)ldc, (void)nthreads, (void)par;
    return TB_EUNSUPPORTED;
#endif
}

const char *tb_gemm_impl_name(int isa, int dtype_is_f64)
{
    if (isa < 0 || isa >= TB_ISA_COUNT)
        return NULL;
    return dtype_is_f64 ? gemm_kernels_f64[isa].name
                        : gemm_kernels_f32[isa].name;
}

/* ---- bf16 (AVX512_BF16) ---------------------------------------------- */

/* Blocking of the bf16 kernel (kc in k elements, even): the B
 * micro-panel kc/2 x 32 words (24 KiB) in L1, the ksub packed A blocks
 * (mc x kc bf16, 2 x 297 KiB) in L2, the packed B blocks in L3: the f32
 * GEMM's bytes, twice its depth. */
#if TB_CPU_HAVE_AVX512BF16
#ifndef GEMM_BF16_BLOCKS
#define GEMM_BF16_BLOCKS 384, 2, 396, 4096
#endif

typedef struct gemm_bf16_run {
    tb_gemm_bf16_job j;
    int split_n;
    int64_t slice;
    int nslices;
    uint32_t *buf; /* per part: ksub A blocks, then ksub B blocks */
    size_t part_words;
} gemm_bf16_run;

static void gemm_bf16_task(void *arg, int part, int used)
{
    const gemm_bf16_run *r = arg;
    uint32_t *ap = r->buf + (size_t)part * r->part_words;
    uint32_t *bp = ap + r->j.a_stride * (size_t)r->j.ksub;
    for (int s = part; s < r->nslices; s += used) {
        const int64_t lo = (int64_t)s * r->slice;
        if (r->split_n) {
            const int64_t hi = r->j.N - lo < r->slice ? r->j.N : lo + r->slice;
            tb_gemm_bf16_block_avx512bf16(&r->j, ap, bp, 0, r->j.M, lo, hi);
        } else {
            const int64_t hi = r->j.M - lo < r->slice ? r->j.M : lo + r->slice;
            tb_gemm_bf16_block_avx512bf16(&r->j, ap, bp, lo, hi, 0, r->j.N);
        }
    }
}
#endif

/* K == 0: every sum is 0, then bias and relu, rounded once. */
static void gemm_bf16_empty(int64_t M, int64_t N, uint16_t *C, int64_t ldc,
                            const uint16_t *bias, int ep)
{
    for (int64_t i = 0; i < M; i++)
        for (int64_t q = 0; q < N; q++) {
            float v = 0.0f;
            if (bias)
                v += tb_bf16_to_f32(
                    bias[ep & TB_GEMM_EP_ROW_BIAS ? i : q]);
            if ((ep & TB_GEMM_EP_RELU) && v <= 0)
                v = 0.0f;
            C[i * ldc + q] = tb_f32_to_bf16(v);
        }
}

int tb_gemm_bf16_ep(int isa, int64_t M, int64_t N, int64_t K,
                    const uint16_t *A, int64_t lda, const uint16_t *B,
                    int64_t ldb, uint16_t *C, int64_t ldc, int nthreads,
                    const tb_gemm_parallel *par, const uint16_t *bias,
                    int ep)
{
    int rc = gemm_isa_check(isa);
    if (rc)
        return rc;
    if (isa != TB_ISA_AVX512BF16 || !TB_CPU_HAVE_AVX512BF16)
        return TB_EUNSUPPORTED;
    if ((rc = gemm_check_args(M, N, K, A, lda, B, ldb, C, ldc, nthreads,
                              sizeof *C, 0)))
        return rc;
    if (ep & ~(TB_GEMM_EP_RELU | TB_GEMM_EP_ROW_BIAS))
        return TB_EINVAL;
    const int64_t nbias = ep & TB_GEMM_EP_ROW_BIAS ? M : N;
    if (bias && gemm_overlap(C, gemm_span(M, N, ldc, sizeof *C), bias,
                             nbias * (int64_t)sizeof *C))
        return TB_EINVAL;
    if (M == 0 || N == 0)
        return 0;
    if (K == 0) {
        gemm_bf16_empty(M, N, C, ldc, bias, ep);
        return 0;
    }
#if TB_CPU_HAVE_AVX512BF16
    static const int64_t blocks[4] = {GEMM_BF16_BLOCKS};
    const int64_t KC = blocks[0], MC = blocks[2], NC = blocks[3];
    enum { MR = TB_GEMM_BF16_MR, NR = TB_GEMM_BF16_NR };
    gemm_bf16_run r = {.j = {.M = M, .N = N, .K = K, .A = A, .B = B,
                             .lda = lda, .ldb = ldb, .C = C, .ldc = ldc,
                             .bias = bias, .relu = (ep & TB_GEMM_EP_RELU) != 0,
                             .row_bias = (ep & TB_GEMM_EP_ROW_BIAS) != 0,
                             .mc = MC,
                             .nc = NC}};
    /* even depth blocks of an even length */
    const int64_t nkb0 = (K + KC - 1) / KC;
    r.j.kc = (K + nkb0 - 1) / nkb0;
    r.j.kc += r.j.kc & 1;
    const int64_t nkb = (K + r.j.kc - 1) / r.j.kc;
    r.j.ksub = blocks[1] < nkb ? (int)blocks[1] : (int)nkb;
    gemm_plan_split(M, N, K, MR, NR, nthreads, &r.split_n, &r.slice,
                    &r.nslices);
    const int64_t rows = r.split_n ? M : r.slice;
    const int64_t cols = r.split_n ? r.slice : N;
    const int64_t mcap = rows < MC ? rows : MC, ncap = cols < NC ? cols : NC;
    const size_t kp = (size_t)(r.j.kc / 2), line = 16; /* words */
    const size_t a_w = (size_t)((mcap + MR - 1) / MR * MR) * kp;
    const size_t b_w = (size_t)((ncap + NR - 1) / NR * NR) * kp;
    r.j.a_stride = (a_w + line - 1) / line * line;
    r.j.b_stride = (b_w + line - 1) / line * line;
    r.part_words = (r.j.a_stride + r.j.b_stride) * (size_t)r.j.ksub;
    const size_t acc_bytes =
        nkb > 1 ? ((size_t)M * (size_t)N * sizeof(float) + 63) / 64 * 64
                : 0;
    int own;
    char *mem = tb_gemm_scratch_get(
        acc_bytes + r.part_words * (size_t)r.nslices * sizeof(uint32_t),
        &own);
    if (!mem)
        return TB_ENOMEM;
    r.j.acc = acc_bytes ? (float *)(void *)mem : NULL;
    r.buf = (uint32_t *)(void *)(mem + acc_bytes);
    gemm_parallel_run(par, r.nslices, gemm_bf16_task, &r);
    tb_gemm_scratch_put(mem, own);
    return 0;
#else
    (void)par;
    return TB_EUNSUPPORTED;
#endif
}
