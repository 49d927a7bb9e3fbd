/* The CUDA module's bf16/f16 conversions (src/backends/cuda/half_bits.h)
 * as nvcc compiles them (__host__ __device__ functions, host side)
 * against the cpu backend's (src/ops/half.h): the sweep of
 * tests/cuda_half_check.h, every 16-bit pattern and every f32 rounding
 * boundary.  tests/test_cuda_host.c runs the same sweep on the header
 * compiled as C11; the device side is the same source (memcpy bit
 * casts, integer arithmetic), run wherever a GPU is lent.  TAP output. */
#include <cstdio>

#include "cuda_half_check.h"

int main()
{
    long tried = 0;
    long bad = tb_half_check_all(&tried);
    printf("1..1\n");
    printf("# %ld conversions compared, %ld differ\n", tried, bad);
    bool ok = bad == 0 && tried > 4000000;
    printf("%s 1 - nvcc-compiled half_bits.h equals ops/half.h\n",
           ok ? "ok" : "not ok");
    return ok ? 0 : 1;
}
