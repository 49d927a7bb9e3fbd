/* Helpers shared by the cmocka tests.
 *
 * Leak check: call leak_mark() in a setup and leak_check() in the
 * teardown, which returns -1 (the test fails) when the live bytes of the
 * tracked allocator changed; leak_setup/leak_teardown are those as
 * cmocka fixtures.  SHAPE(2, 3) builds a tb_shape; splitmix64_next gives
 * deterministic random bits; cpu_instance makes a cpu backend instance
 * of an ISA level and a thread count (the test fails when it cannot). */
#ifndef TB_TESTS_TESTUTIL_H
#define TB_TESTS_TESTUTIL_H

#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include <cmocka.h>

#include "backends/backend.h"
#include "base/rng.h"
#include "ops/alloc.h"
#include "ops/tensor.h"

static int64_t leak_live_at_mark;

static inline int64_t leak_live_bytes(void)
{
    tb_alloc_stats st;
    tb_alloc_stats_read(&st);
    return st.live_bytes;
}

static inline void leak_mark(void)
{
    leak_live_at_mark = leak_live_bytes();
}

static inline int leak_check(void)
{
    int64_t now = leak_live_bytes();
    if (now != leak_live_at_mark) {
        print_error("leak: %lld tracked bytes live at setup, %lld at "
                    "teardown\n",
                    (long long)leak_live_at_mark, (long long)now);
        return -1;
    }
    return 0;
}

/* cmocka fixtures around each test: the leak check above. */
static inline int leak_setup(void **state)
{
    (void)state;
    leak_mark();
    return 0;
}

static inline int leak_teardown(void **state)
{
    (void)state;
    return leak_check();
}

/* splitmix64: the next 64 random bits of *state (deterministic inputs);
 * the one SplitMix64 of base/rng.h. */
static inline uint64_t splitmix64_next(uint64_t *state)
{
    return tb_splitmix64_next(state);
}

/* An instance of backend b (the cpu backend) with its isa and threads
 * axes set; the test fails when b refuses them. */
static inline void *cpu_instance(const tb_backend *b, const char *isa,
                                 const char *threads)
{
    const char *vals[2] = {isa, threads};
    void *ctx = NULL;
    char err[256] = "";
    if (b->create(b, vals, &ctx, err, sizeof err))
        fail_msg("cpu create isa=%s threads=%s: %s", isa, threads, err);
    return ctx;
}

static inline tb_shape shape_of(int ndim, const int64_t *dims)
{
    tb_shape s;
    memset(&s, 0, sizeof s);
    s.ndim = ndim;
    for (int i = 0; i < ndim; i++)
        s.dim[i] = dims[i];
    return s;
}

#define SHAPE(...)                                                        \
    shape_of((int)(sizeof((int64_t[]){__VA_ARGS__}) / sizeof(int64_t)),  \
             (int64_t[]){__VA_ARGS__})

#endif
