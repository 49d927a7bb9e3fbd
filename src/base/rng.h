/* Random numbers for the whole program: the SplitMix64 mixer and stream
 * (Steele, Lea, Flood 2014) and a xoshiro256** generator seeded from it.
 *
 * SplitMix64 is the one integer mixer tbench uses: ops/rand.h builds the
 * counter-based stream of rand_uniform/rand_normal on tb_splitmix64_mix,
 * the tests draw their inputs from tb_splitmix64_next, and tb_rng (inputs
 * of every case, bootstrap resamples) is seeded by it.  Everything is
 * deterministic for a given seed. */
#ifndef TB_BASE_RNG_H
#define TB_BASE_RNG_H

#include <stdint.h>

#include "hostdev.h"

#define TB_SPLITMIX64_GAMMA UINT64_C(0x9e3779b97f4a7c15)

/* The SplitMix64 output function (a bijection of 64-bit words); device
 * code calls it too (hostdev.h). */
TB_HOSTDEV uint64_t tb_splitmix64_mix(uint64_t z)
{
    z = (z ^ (z >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
    z = (z ^ (z >> 27)) * UINT64_C(0x94d049bb133111eb);
    return z ^ (z >> 31);
}

/* The next output of the SplitMix64 generator whose state is *state. */
static inline uint64_t tb_splitmix64_next(uint64_t *state)
{
    *state += TB_SPLITMIX64_GAMMA;
    return tb_splitmix64_mix(*state);
}

#define TB_FNV1A_BASIS UINT64_C(14695981039346656037)

/* FNV-1a (64 bits) of the string s (NULL: none) continued from h; start
 * from TB_FNV1A_BASIS.  The digest of a plan's case ids (harness/shard.h,
 * checked again by merge) and of config texts in merge's messages. */
static inline uint64_t tb_fnv1a(uint64_t h, const char *s)
{
    for (; s && *s; s++)
        h = (h ^ (unsigned char)*s) * UINT64_C(1099511628211);
    return h;
}

/* Deterministic PRNG (xoshiro256**, Blackman and Vigna 2018). */
typedef struct tb_rng {
    uint64_t s[4];
} tb_rng;

void tb_rng_seed(tb_rng *r, uint64_t seed); /* SplitMix64 expansion */
uint64_t tb_rng_next(tb_rng *r);
double tb_rng_uniform(tb_rng *r); /* [0, 1) with 53 random bits */

/* Unbiased integer in [0, n), n >= 1 (Lemire's multiply-shift with
 * rejection). */
uint64_t tb_rng_below(tb_rng *r, uint64_t n);

#endif
