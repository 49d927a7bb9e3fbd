/* TB_HOSTDEV: the storage class of a small inline function that C code
 * and the CUDA module's device code both call, so that one definition
 * serves both (the counter-based random stream of ops/rand.h, its
 * SplitMix64 mixer in base/rng.h).  In C and in host-only C++ it is
 * `static inline`; under nvcc it also makes a __device__ copy.  Such a
 * function must stay valid C11 and CUDA C++ and call only functions
 * that are TB_HOSTDEV themselves (or plain arithmetic). */
#ifndef TB_BASE_HOSTDEV_H
#define TB_BASE_HOSTDEV_H

#ifdef __CUDACC__
#define TB_HOSTDEV static __host__ __device__ __forceinline__
#else
#define TB_HOSTDEV static inline
#endif

#endif
