/* The CUDA module's 16-bit storage types and the dtype traits of its
 * kernel templates (CUDA C++ only).
 *
 * cu_bf16 and cu_f16 hold a bf16 or f16 bit pattern: the layout of
 * cuda_bf16.h's __nv_bfloat16 and cuda_fp16.h's __half (asserted; cuBLAS
 * reads them as CUDA_R_16BF / CUDA_R_16F), but with conversions of
 * their own (half_bits.h: the cpu backend's bits, NaNs included) and no
 * arithmetic: a kernel template instantiated with one of them must widen
 * (`(float)x` or `(double)x`, exact), compute in cu_acc<T> and round
 * once (`T(v)`); anything else fails to compile.  That is PyTorch's
 * numerics and the cpu backend's (src/backends/cpu/half.c): storage in
 * the dtype, arithmetic in f32, one rounding per result.  A double
 * result (the reductions' double sums) is rounded to f32 first, as the
 * cpu row's f32 kernel would have, then to the 16-bit format. */
#ifndef TB_BACKENDS_CUDA_HALF_CUH
#define TB_BACKENDS_CUDA_HALF_CUH

#include <cuda_bf16.h>
#include <cuda_fp16.h>

#include "half_bits.h"

extern "C" {
#include "../../ops/tensor.h"
}

#define CU_HALF_TYPE(name, to_f32, from_f32)                              \
    struct name {                                                         \
        uint16_t bits;                                                    \
        name() = default;                                                 \
        __host__ __device__ explicit name(float f)                        \
            : bits(from_f32(f))                                           \
        {                                                                 \
        }                                                                 \
        __host__ __device__ explicit name(double d)                       \
            : bits(from_f32((float)d))                                    \
        {                                                                 \
        }                                                                 \
        __host__ __device__ explicit name(int i)                          \
            : bits(from_f32((float)i))                                    \
        {                                                                 \
        }                                                                 \
        __host__ __device__ explicit operator float() const               \
        {                                                                 \
            return to_f32(bits);                                          \
        }                                                                 \
        __host__ __device__ explicit operator double() const              \
        {                                                                 \
            return (double)to_f32(bits);                                  \
        }                                                                 \
    };
CU_HALF_TYPE(cu_bf16, tb_cu_bf16_to_f32, tb_cu_f32_to_bf16)
CU_HALF_TYPE(cu_f16, tb_cu_f16_to_f32, tb_cu_f32_to_f16)
#undef CU_HALF_TYPE

static_assert(sizeof(cu_bf16) == sizeof(__nv_bfloat16) &&
                  alignof(cu_bf16) <= alignof(__nv_bfloat16),
              "cu_bf16 is __nv_bfloat16's layout");
static_assert(sizeof(cu_f16) == sizeof(__half) &&
                  alignof(cu_f16) <= alignof(__half),
              "cu_f16 is __half's layout");

/* Per storage type: its dtype, and the type it computes in (f32 for
 * f32, bf16 and f16; f64 for f64: tb_dtype_compute). */
template <tb_dtype D, typename A> struct cu_num_is {
    typedef A acc;
    static constexpr tb_dtype dt = D;
};
template <typename T> struct cu_num;
template <> struct cu_num<float> : cu_num_is<TB_F32, float> {};
template <> struct cu_num<double> : cu_num_is<TB_F64, double> {};
template <> struct cu_num<cu_bf16> : cu_num_is<TB_BF16, float> {};
template <> struct cu_num<cu_f16> : cu_num_is<TB_F16, float> {};

template <typename T> using cu_acc = typename cu_num<T>::acc;

template <typename T>
static constexpr __host__ __device__ tb_dtype cu_dtype_of()
{
    return cu_num<T>::dt;
}

/* Load widened, store rounded once: the identity for f32 and f64. */
template <typename T>
static __host__ __device__ __forceinline__ cu_acc<T> cu_ld(T x)
{
    return (cu_acc<T>)x;
}

template <typename T>
static __host__ __device__ __forceinline__ T cu_st(cu_acc<T> v)
{
    return T(v);
}

#endif
