/* Host tests of the CUDA module's device arithmetic
 * (src/backends/cuda/devinfo.h, compiled here as C11: no GPU needed):
 * the L2 flush size of l2=cold, the vendor peaks `tbench peak` records
 * beside its measured ones, and the peak kernels' FLOP and byte counts
 * and array sizes.
 *
 * The vendor figures are checked against NVIDIA's datasheets (A100 SXM4
 * 40GB: 1555 GB/s, 19.5 TFLOP/s FP32, 9.7 FP64; H100 SXM5: 3.35 TB/s,
 * 67 TFLOP/s FP32, 34 FP64; L4: 300 GB/s, 30.3 TFLOP/s FP32) from the
 * clocks and widths cudart reports for those GPUs; the kernel counts
 * against brute-force loops that count every FMA and every byte. */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include <cmocka.h>

#include "backends/cuda/devinfo.h"

#define MIB ((int64_t)1 << 20)

static void assert_rel(double got, double want, double tol)
{
    double d = got > want ? got - want : want - got;
    if (d > tol * want) {
        fprintf(stderr, "got %.6g, want %.6g (rel tol %g)\n", got, want,
                tol);
        fail();
    }
}

static void test_l2_flush_bytes(void **state)
{
    (void)state;
    /* H100: 50 MiB L2 -> 100 MiB; A100 40 MiB -> 80 MiB */
    assert_int_equal(tb_di_l2_flush_bytes(50 * MIB), 100 * MIB);
    assert_int_equal(tb_di_l2_flush_bytes(40 * MIB), 80 * MIB);
    /* T4: 4 MiB -> 8 MiB; odd sizes round up to whole 2 MiB */
    assert_int_equal(tb_di_l2_flush_bytes(4 * MIB), 8 * MIB);
    assert_int_equal(tb_di_l2_flush_bytes(3 * MIB + 1), 8 * MIB);
    assert_int_equal(tb_di_l2_flush_bytes(1), 2 * MIB);
    /* unknown: more than any L2 */
    assert_int_equal(tb_di_l2_flush_bytes(0), TB_DI_L2_UNKNOWN_FLUSH);
    assert_int_equal(tb_di_l2_flush_bytes(-5), TB_DI_L2_UNKNOWN_FLUSH);
    assert_true(TB_DI_L2_UNKNOWN_FLUSH >= 2 * 126 * MIB);
    /* always at least twice the L2, never more than 2 MiB over */
    for (int64_t l2 = 1; l2 < 300 * MIB; l2 = l2 * 3 + 7) {
        int64_t b = tb_di_l2_flush_bytes(l2);
        assert_true(b >= 2 * l2);
        assert_true(b < 2 * l2 + 2 * MIB);
        assert_int_equal(b % (2 * MIB), 0);
    }
}

static void test_vendor_bandwidth(void **state)
{
    (void)state;
    /* cudaDevAttrMemoryClockRate (kHz) and GlobalMemoryBusWidth (bits) */
    assert_rel(tb_di_vendor_bw(1215000, 5120), 1555e9, 0.001); /* A100 */
    assert_rel(tb_di_vendor_bw(2619000, 5120), 3.35e12, 0.001); /* H100 */
    assert_rel(tb_di_vendor_bw(6251000, 192), 300e9, 0.001);    /* L4 */
    assert_true(tb_di_vendor_bw(0, 5120) == 0);
    assert_true(tb_di_vendor_bw(1215000, 0) == 0);
}

static void test_vendor_flops(void **state)
{
    (void)state;
    /* A100 SXM4: 108 SMs, 1410 MHz; H100 SXM5: 132 SMs, 1980 MHz;
     * L4: 58 SMs, 2040 MHz */
    assert_int_equal(tb_di_fp32_lanes(8, 0), 64);
    assert_int_equal(tb_di_fp64_lanes(8, 0), 32);
    assert_rel(tb_di_vendor_flops(108, tb_di_fp32_lanes(8, 0), 1410000),
               19.5e12, 0.002);
    assert_rel(tb_di_vendor_flops(108, tb_di_fp64_lanes(8, 0), 1410000),
               9.7e12, 0.006);
    assert_rel(tb_di_vendor_flops(132, tb_di_fp32_lanes(9, 0), 1980000),
               67e12, 0.002);
    assert_rel(tb_di_vendor_flops(132, tb_di_fp64_lanes(9, 0), 1980000),
               34e12, 0.02);
    assert_rel(tb_di_vendor_flops(58, tb_di_fp32_lanes(8, 9), 2040000),
               30.3e12, 0.01);
    /* unknown architecture: no figure, never a guess */
    assert_int_equal(tb_di_fp32_lanes(6, 0), 0);
    assert_int_equal(tb_di_fp64_lanes(11, 0), 0);
    assert_true(tb_di_vendor_flops(108, 0, 1410000) == 0);
    assert_true(tb_di_vendor_flops(0, 64, 1410000) == 0);
}

/* The FMA kernel's FLOPs against a loop that counts them one by one. */
static void test_fma_flops(void **state)
{
    (void)state;
    const int64_t grid[] = {1, 3, 132};
    const int blk[] = {32, 256};
    const int64_t trips[] = {1, 5, 64};
    for (int g = 0; g < 3; g++)
        for (int b = 0; b < 2; b++)
            for (int t = 0; t < 3; t++) {
                double n = 0;
                for (int64_t x = 0; x < grid[g] * blk[b]; x++)
                    for (int64_t k = 0; k < trips[t]; k++)
                        for (int u = 0; u < TB_DI_FMA_UNROLL; u++)
                            for (int c = 0; c < TB_DI_FMA_CHAINS; c++)
                                n += 2;
                assert_true(tb_di_fma_flops(grid[g], blk[b], trips[t]) ==
                            n);
            }
}

static void test_stream_bytes(void **state)
{
    (void)state;
    assert_true(tb_di_stream_bytes(TB_DI_COPY, 1000, 4) == 8000);
    assert_true(tb_di_stream_bytes(TB_DI_READ, 1000, 8) == 8000);
    assert_true(tb_di_stream_bytes(TB_DI_TRIAD, 1000, 4) == 12000);
    assert_true(tb_di_stream_bytes(TB_DI_NSTREAM, 1000, 4) == 0);
    assert_true(tb_di_stream_bytes(TB_DI_COPY, 0, 4) == 0);
}

static void test_stream_elems(void **state)
{
    (void)state;
    /* H100: 50 MiB L2, 79 GiB free: 400 MiB per array */
    int64_t n = tb_di_stream_elems(50 * MIB, 79 * 1024 * MIB, 4, 3);
    assert_int_equal(n, 400 * MIB / 4);
    /* small L2: the 64 MiB floor */
    assert_int_equal(tb_di_stream_elems(4 * MIB, 16 * 1024 * MIB, 8, 3),
                     64 * MIB / 8);
    /* not enough memory: 0, not a smaller array that the L2 would hold */
    assert_int_equal(tb_di_stream_elems(50 * MIB, 1024 * MIB, 4, 3), 0);
    assert_int_equal(tb_di_stream_elems(50 * MIB, 0, 4, 3), 0);
    /* the arrays fit in half the free memory */
    for (int64_t fr = 512 * MIB; fr < 200 * 1024 * MIB; fr *= 3) {
        int64_t e = tb_di_stream_elems(40 * MIB, fr, 4, 3);
        assert_true(e == 0 || 3 * e * 4 <= fr / 2);
        assert_true(e == 0 || e * 4 >= 8 * 40 * MIB);
    }
}

int main(void)
{
    const struct CMUnitTest tests[] = {
        cmocka_unit_test(test_l2_flush_bytes),
        cmocka_unit_test(test_vendor_bandwidth),
        cmocka_unit_test(test_vendor_flops),
        cmocka_unit_test(test_fma_flops),
        cmocka_unit_test(test_stream_bytes),
        cmocka_unit_test(test_stream_elems),
    };
    return cmocka_run_group_tests(tests, NULL, NULL);
}
