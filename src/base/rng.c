/* xoshiro256** seeded by SplitMix64: see rng.h. */
#include "rng.h"

/* splitmix64 is a bijection of its state, so the four words it yields are
 * never all zero (the one state xoshiro must avoid). */
void tb_rng_seed(tb_rng *r, uint64_t seed)
{
    uint64_t sm = seed;
    for (int i = 0; i < 4; i++)
        r->s[i] = tb_splitmix64_next(&sm);
}

static inline uint64_t rotl64(uint64_t x, int k)
{
    return (x << k) | (x >> (64 - k));
}

uint64_t tb_rng_next(tb_rng *r)
{
    uint64_t *s = r->s;
    uint64_t result = rotl64(s[1] * 5, 7) * 9;
    uint64_t t = s[1] << 17;
    s[2] ^= s[0];
    s[3] ^= s[1];
    s[1] ^= s[2];
    s[0] ^= s[3];
    s[2] ^= t;
    s[3] = rotl64(s[3], 45);
    return result;
}

double tb_rng_uniform(tb_rng *r)
{
    /* Top 53 bits scaled by 2^-53: every value is k * 2^-53, k < 2^53. */
    return (double)(tb_rng_next(r) >> 11) * 0x1.0p-53;
}

/* Unbiased integer in [0, n), n >= 1.  Lemire's multiply-shift with
 * rejection on 32-bit draws (no division on the common path); falls back
 * to modulo rejection on 64-bit draws for n >= 2^32. */
uint64_t tb_rng_below(tb_rng *r, uint64_t n)
{
    if (n <= UINT32_MAX) {
        uint32_t bound = (uint32_t)n;
        uint64_t m = (tb_rng_next(r) >> 32) * bound;
        uint32_t low = (uint32_t)m;
        if (low < bound) {
            uint32_t threshold = (uint32_t)(-bound) % bound;
            while (low < threshold) {
                m = (tb_rng_next(r) >> 32) * bound;
                low = (uint32_t)m;
            }
        }
        return m >> 32;
    }
    uint64_t bound = n;
    uint64_t threshold = (0 - bound) % bound;
    uint64_t v;
    do {
        v = tb_rng_next(r);
    } while (v < threshold);
    return v % bound;
}

