/* Calibration ops: work of a known size, for measuring the harness.
 *
 * calib_work [n]: a chain of steps of dependent integer instructions
 * (each step a shift, an xor, a multiply and an add on one 64-bit value,
 * every one waiting for the one before), repeated round(n * scale) times,
 * where scale is TBENCH_CALIB_SCALE (1 when unset).  The work is thus
 * known exactly: n vs 1.02 n is an injected 2% slowdown, and the scale
 * injects it without a rebuild or a change of case id.  The output [1]
 * is the top 24 bits of the final value (exact in f32 and f64), so the
 * chain cannot be removed by a compiler and the reference checks it.
 *
 * calib_spin [1], parameter ns: spins on CLOCK_MONOTONIC until ns have
 * passed; a known time, for checking timer cost, overhead subtraction
 * and batching (`tbench selftest`).  The output [1] is 0. */
#ifndef TB_OPS_CALIB_H
#define TB_OPS_CALIB_H

#include <stdint.h>

#include "op.h"

/* The chain: its start value and one step. */
#define TB_CALIB_SEED UINT64_C(0x9e3779b97f4a7c15)
#define TB_CALIB_MUL UINT64_C(0xbf58476d1ce4e5b9)
#define TB_CALIB_ADD UINT64_C(0x94d049bb133111eb)

/* TBENCH_CALIB_SCALE: unset or empty -> 1; otherwise a decimal number in
 * (0, 1000].  Read once and cached (tb_calib_scale_reload re-reads it, for
 * tests).  A malformed value counts as 1; tb_calib_scale_env_error names
 * it so the command line can refuse it before anything runs. */
double tb_calib_scale(void);
void tb_calib_scale_reload(void);
/* The malformed value of TBENCH_CALIB_SCALE, or NULL when it is unset,
 * empty or valid. */
const char *tb_calib_scale_env_error(void);
/* Parse s as a scale: 0 and *out on success, -1 when it is not a finite
 * number in (0, 1000]. */
int tb_calib_scale_parse(const char *s, double *out);

/* Steps of calib_work for a shape of n elements at scale: round(n *
 * scale), at least 1. */
uint64_t tb_calib_steps(int64_t n, double scale);

/* The op table's rules for both ops (op.c rows). */
int tb_calib_shape(const tb_op *op, const tb_shape *in, const tb_params *p,
                   tb_shape *out, char *err, size_t errlen);
double tb_calib_flops(const tb_op *op, const tb_shape *in,
                      const tb_shape *out, const tb_params *p, tb_dtype dt);
double tb_calib_bytes(const tb_op *op, const tb_shape *in,
                      const tb_shape *out, const tb_params *p, tb_dtype dt);

#endif
