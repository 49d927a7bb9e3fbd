/* What the parts of test_checkasm share (the files of tests/checkasm/): the
 * backend under test, the printed seed, the random numbers, the levels,
 * canary-guarded buffers and the fixtures; and every part's tests. */
#ifndef TB_TESTS_CHECKASM_H
#define TB_TESTS_CHECKASM_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "backends/backend.h"

extern const tb_backend tb_backend_cpu;
#define B (&tb_backend_cpu)

/* The seed of every input (--seed), printed at the start. */
extern uint64_t seed;
/* The vmath sweeps' stride over the 2^32 bit patterns (--vmath-stride,
 * --vmath-exhaustive: 1). */
extern uint64_t vm_stride;

uint64_t rng_next(void);
double rng_uniform(double lo, double hi);
void rng_seed(uint64_t salt);

/* Levels usable here: scalar .. best (CPU, OS, TBENCH_ISA, build). */
int n_levels(void);
int n_dvec_levels(void); /* n_levels() up to avx512 */

/* nbytes at GUARD + off bytes into a fresh tracked buffer whose every
 * other byte is CANARY; gb_intact: none of those overwritten. */
#define GUARD 64
#define CANARY 0xa5
typedef struct gbuf {
    unsigned char *base;
    size_t total;
    void *p; /* base + GUARD + off */
    size_t nbytes;
    size_t off;
} gbuf;
void *gb_new(gbuf *g, size_t nbytes, size_t off);
bool gb_intact(const gbuf *g);
void gb_free(gbuf *g);

/* Misalignment of operands of type dt (element-aligned, off the 64-byte
 * boundary); offsets over a line for the streaming-store kernels. */
size_t misalign(tb_dtype dt);
size_t nt_off(tb_dtype dt, int i);
/* Element-wise test values in [-2, 2], with specials sprinkled in. */
double test_value(bool specials);
void fill(void *p, tb_dtype dt, int64_t n, bool specials);
double get(const void *p, tb_dtype dt, int64_t i);
/* Bitwise equal (signed zeros apart), or both NaN. */
bool same(double a, double b);
/* A shape of nd dims. */
tb_shape S(int nd, ...);

/* vmath.c's sweep, shared by the other ulp sweeps: the error of got in
 * ulps of the exact want (float), and the inputs chunk by chunk (every
 * vm_stride-th bit pattern, then 2^18 random floats in [-30, 30]; *pos
 * is the cursor; returns the chunk's length, 0 at the end). */
enum { VM_CHUNK = 4096 };
double ulp_error(float got, double want);
int vm_inputs(uint64_t *pos, float *x);

int setup(void **state);
int teardown(void **state);

/* kernels.c */
void test_kernel_binary(void **state);
void test_kernel_binary_inplace(void **state);
void test_kernel_add_relu(void **state);
void test_kernel_relu(void **state);
void test_kernel_sum(void **state);
void test_kernel_log_softmax(void **state);
void test_kernel_softmax(void **state);
void test_kernel_log_softmax_special(void **state);
void test_kernel_softmax_special(void **state);
void test_kernel_transpose(void **state);
void test_kernel_transpose_nt(void **state);
void test_tp_planes(void **state);
void test_kernel_pool(void **state);
void test_kernel_pool_ties(void **state);
void test_kernel_zero(void **state);
/* rows.c: the test of one op (state: its tb_op_id); fill t with one
 * test per op that has rows in the cpu backend's table, and return how
 * many (at most max). */
struct CMUnitTest;
void test_op(void **state);
int checkasm_op_tests(struct CMUnitTest *t, int max);
/* vmath.c */
void test_vmath_ulp(void **state);
void test_vmath_special(void **state);
void test_vmath_paths(void **state);
void test_vmath_log_lanes(void **state);
void test_vmath_edges(void **state);
/* simd_rows.c */
void test_xs_special(void **state);
void test_xs_softplus_ulp(void **state);
void test_xs_ew_f64(void **state);
void test_xs_special_f64(void **state);
void test_xs_reduce_special(void **state);
void test_xs_argmax_blocks(void **state);
void test_xs_argmax_snaps_f64(void **state);
void test_f64_fill_exact(void **state);
void test_f32_bcast_exact(void **state);
void test_xs_reduce_special_f64(void **state);
void test_bw_act_sweep(void **state);
void test_bw_pool_special(void **state);
void test_bw_binary_rows(void **state);
/* rand_pow.c */
void test_rand_ops(void **state);
void test_rand_half(void **state);
void test_rand_vmath(void **state);
void test_dropout_rows(void **state);
void test_rand_decide(void **state);
void test_pow_special(void **state);
void test_pow_ulp(void **state);
void test_pow_sizes(void **state);
void test_permute_tiled(void **state);
void test_f64_ulp(void **state);
void test_f64_act_ulp(void **state);
void test_f64_bwd_ulp(void **state);
void test_pow64_ulp(void **state);
void test_rand_bm64_ulp(void **state);
/* half_rows.c */
void test_half_rows_exact(void **state);
void test_half_arange(void **state);

/* optim_half.c */
void test_optim_half_exact(void **state);
void test_optim_ymm_exact(void **state);
void test_lsm64_ulp(void **state);

#endif
