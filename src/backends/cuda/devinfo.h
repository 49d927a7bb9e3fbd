/* Device arithmetic of the CUDA module that does not need a GPU: the
 * size of the buffer that flushes the L2 cache (l2=cold), the vendor
 * ("on paper") peaks that `tbench peak` records beside its measured
 * ones, and the launch geometry of the peak kernels.  Plain C that nvcc
 * compiles as __host__ __device__ code, so the module and the host tests
 * (tests/test_cuda_peak.c) use the same functions. */
#ifndef TB_BACKENDS_CUDA_DEVINFO_H
#define TB_BACKENDS_CUDA_DEVINFO_H

#include <stdint.h>

#ifdef __CUDACC__
#define TB_DI_FN __host__ __device__ static inline
#else
#define TB_DI_FN static inline
#endif

/* When the device does not say its L2 size (0 or an error): larger than
 * the L2 of any GPU this module is built for (H100: 50 MiB; the biggest
 * Blackwell parts: 126 MiB), so the flush still evicts everything. */
#define TB_DI_L2_UNKNOWN_FLUSH ((int64_t)256 << 20)

/* Bytes to overwrite so that nothing a kernel touched before stays in an
 * L2 of l2_bytes: twice its size (the cache is not strictly LRU and
 * hashes addresses over its slices), rounded up to 2 MiB so the buffer
 * is whole pages; TB_DI_L2_UNKNOWN_FLUSH when l2_bytes <= 0. */
TB_DI_FN int64_t tb_di_l2_flush_bytes(int64_t l2_bytes)
{
    if (l2_bytes <= 0)
        return TB_DI_L2_UNKNOWN_FLUSH;
    const int64_t gran = (int64_t)2 << 20;
    int64_t b = 2 * l2_bytes;
    return (b + gran - 1) / gran * gran;
}

/* FP32 and FP64 FMA lanes per SM of compute capability major.minor, as
 * NVIDIA's tuning guides give them; 0 when this table does not know the
 * architecture (the vendor figure is then null, never guessed). */
TB_DI_FN int tb_di_fp32_lanes(int major, int minor)
{
    if (major == 7 && minor == 5)
        return 64; /* Turing */
    if (major == 8 && minor == 0)
        return 64; /* A100 */
    if (major == 8 && (minor == 6 || minor == 7 || minor == 9))
        return 128; /* GA10x, Orin, Ada */
    if (major == 9 && minor == 0)
        return 128; /* H100, H200 */
    if (major == 10 || major == 12)
        return 128; /* Blackwell */
    return 0;
}

TB_DI_FN int tb_di_fp64_lanes(int major, int minor)
{
    if (major == 7 && minor == 5)
        return 2;
    if (major == 8 && minor == 0)
        return 32;
    if (major == 8 && (minor == 6 || minor == 7 || minor == 9))
        return 2;
    if (major == 9 && minor == 0)
        return 64;
    if (major == 10 && minor == 0)
        return 64; /* B200 */
    if (major == 12)
        return 2;
    return 0;
}

/* Vendor memory bandwidth in bytes/s: memory clock (kHz, as cudart's
 * cudaDevAttrMemoryClockRate gives it) x bus width (bits) / 8 x 2 (two
 * transfers per clock: DDR, and HBM's clock as reported); 0 when either
 * is unknown (<= 0). */
TB_DI_FN double tb_di_vendor_bw(int64_t mem_clock_khz, int bus_bits)
{
    if (mem_clock_khz <= 0 || bus_bits <= 0)
        return 0;
    return (double)mem_clock_khz * 1e3 * ((double)bus_bits / 8) * 2;
}

/* Vendor FMA throughput in FLOP/s: SMs x lanes x clock (kHz) x 2 (an FMA
 * is two operations); 0 when any factor is unknown (<= 0). */
TB_DI_FN double tb_di_vendor_flops(int sms, int lanes, int64_t clock_khz)
{
    if (sms <= 0 || lanes <= 0 || clock_khz <= 0)
        return 0;
    return (double)sms * lanes * (double)clock_khz * 1e3 * 2;
}

/* ---- the peak kernels' arithmetic -------------------------------------- */

/* Independent FMA chains per thread of the FMA kernel (enough to hide
 * the FMA pipeline's latency of about 4 cycles at full occupancy) and
 * FMAs per chain per loop trip. */
#define TB_DI_FMA_CHAINS 8
#define TB_DI_FMA_UNROLL 16

/* FLOPs one launch of the FMA kernel does: every thread of blocks x
 * threads runs `trips` trips of CHAINS x UNROLL FMAs of 2 FLOPs each. */
TB_DI_FN double tb_di_fma_flops(int64_t blocks, int threads, int64_t trips)
{
    return (double)blocks * threads * (double)trips * TB_DI_FMA_CHAINS *
           TB_DI_FMA_UNROLL * 2;
}

/* Bytes one stream kernel moves over n elements of elem bytes each:
 * copy (read one, write one array), read (read one: a sum), triad (read
 * two, write one: a = b + s * c). */
typedef enum {
    TB_DI_COPY,
    TB_DI_READ,
    TB_DI_TRIAD,
    TB_DI_NSTREAM,
} tb_di_stream;

TB_DI_FN double tb_di_stream_bytes(tb_di_stream k, int64_t n, int elem)
{
    int arrays = k == TB_DI_COPY ? 2 : k == TB_DI_READ ? 1
                 : k == TB_DI_TRIAD ? 3 : 0;
    if (n <= 0 || elem <= 0)
        return 0;
    return (double)arrays * (double)n * elem;
}

/* Elements per array of the bandwidth kernels: each array is at least
 * 8 x the L2 (so the L2 holds at most an eighth of what a pass reads and
 * the figure is DRAM's), at least 64 MiB, and all arrays fit in half of
 * the free memory; 0 when they cannot (less memory than that). */
TB_DI_FN int64_t tb_di_stream_elems(int64_t l2_bytes, int64_t free_bytes,
                                    int elem, int arrays)
{
    if (elem <= 0 || arrays <= 0 || free_bytes <= 0)
        return 0;
    int64_t want = 8 * (l2_bytes > 0 ? l2_bytes : TB_DI_L2_UNKNOWN_FLUSH);
    if (want < ((int64_t)64 << 20))
        want = (int64_t)64 << 20;
    int64_t cap = free_bytes / 2 / arrays;
    if (want > cap)
        return 0;
    return want / elem;
}

#endif
