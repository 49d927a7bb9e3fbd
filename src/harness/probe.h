/* Counters around a timed region: the tracked allocator, the backend's
 * own counters and the process's page faults and context switches. */
#ifndef TB_HARNESS_PROBE_H
#define TB_HARNESS_PROBE_H

#include <stdint.h>

#include "../backends/backend.h"
#include "../base/result_schema.h"
#include "../ops/alloc.h"

typedef struct tb_probe_snap {
    tb_alloc_stats alloc;
    tb_backend_counters be;
    long minflt, majflt, nvcsw, nivcsw; /* getrusage(RUSAGE_SELF) */
} tb_probe_snap;

/* Per-iteration counters, indexed by TB_RES_CTR_* (base/result_schema.h,
 * documented in docs/FORMAT.md, "counters"). */
typedef struct tb_counters {
    double v[TB_RES_NCOUNTERS_ALL];
} tb_counters;

void tb_probe_take(tb_probe_snap *s, const tb_backend *b, void *ctx);
/* Counters per iteration between a and b over `iters` iterations. */
void tb_probe_diff(const tb_probe_snap *a, const tb_probe_snap *b,
                   uint64_t iters, tb_counters *out);

#endif
