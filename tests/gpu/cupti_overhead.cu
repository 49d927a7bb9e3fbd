/* What an attached CUPTI costs kernel launches, and whether detaching it
 * (cuptiFinalize, as src/backends/cuda/cupti_pass.c does after each
 * counting pass) gives that back (review WL1).  Needs a GPU: built and run
 * by scripts/gpu_check.sh --full, whose gpu_check.py `cupti-overhead`
 * judges its output.
 *
 * One process alternates the two states many times, so that a drift of
 * the machine falls on both alike: "attached" is CUPTI after a pass like
 * tbench's (the activity kinds enabled, a few launches, disabled again,
 * buffers flushed: its hooks stay), "detached" the same followed by
 * cuptiFinalize.  Each state is timed as blocks of back-to-back launches
 * of an empty kernel (the launch-bound case, where a per-launch hook
 * shows most), the order of the two swapped every repetition; "never"
 * is as many blocks before CUPTI was first touched.  The last line:
 *   cupti_overhead never_ns=N attached_ns=N detached_ns=N
 *       attached_over_detached=R detached_over_never=R
 *       never_min_ns=N detached_min_ns=N detached_min_over_never_min=R
 *       reps=N launches=N
 * with medians of the per-launch times and of the paired ratios, and the
 * fastest block of each state.  "never" cannot alternate with the others
 * (it ends when CUPTI is loaded), so its median is taken minutes apart
 * from theirs: on an H200 machine the blocks of one state varied from
 * 3.6 to 5.3 us per launch, and the medians' ratio read 0.99 in one
 * session and 1.06 in the next.  Interference only adds time to a block,
 * so the fastest block of each state, with as many blocks in each, is
 * what gpu_check.py judges. */
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <vector>

#include <cuda_runtime.h>
#include <cupti.h>

__global__ void k_empty(int *p)
{
    if (p)
        *p = 0;
}

static double now_ns()
{
    timespec t;
    clock_gettime(CLOCK_MONOTONIC, &t);
    return t.tv_sec * 1e9 + t.tv_nsec;
}

static void check(cudaError_t e, const char *what)
{
    if (e != cudaSuccess) {
        fprintf(stderr, "cupti_overhead: %s: %s\n", what,
                cudaGetErrorString(e));
        exit(1);
    }
}

static void cupti(CUptiResult r, const char *what)
{
    if (r != CUPTI_SUCCESS) {
        const char *m = "?";
        cuptiGetResultString(r, &m);
        fprintf(stderr, "cupti_overhead: %s: %s\n", what, m);
        exit(1);
    }
}

/* ns per launch over n back-to-back launches and one synchronize */
static double block(int n)
{
    check(cudaDeviceSynchronize(), "sync");
    double t0 = now_ns();
    for (int i = 0; i < n; i++)
        k_empty<<<1, 32>>>(nullptr);
    check(cudaDeviceSynchronize(), "sync");
    return (now_ns() - t0) / n;
}

static double median(std::vector<double> v)
{
    std::sort(v.begin(), v.end());
    size_t m = v.size() / 2;
    return v.size() % 2 ? v[m] : (v[m - 1] + v[m]) / 2;
}

static void CUPTIAPI requested(uint8_t **buf, size_t *size, size_t *max)
{
    *size = 8u << 20;
    *buf = (uint8_t *)aligned_alloc(8, *size);
    *max = 0;
}

static void CUPTIAPI completed(CUcontext, uint32_t, uint8_t *buf, size_t,
                               size_t)
{
    free(buf);
}

static const CUpti_ActivityKind kinds[] = {
    CUPTI_ACTIVITY_KIND_CONCURRENT_KERNEL, CUPTI_ACTIVITY_KIND_MEMCPY,
    CUPTI_ACTIVITY_KIND_MEMSET, CUPTI_ACTIVITY_KIND_MEMORY2};

/* a counting pass as tbench makes it, leaving CUPTI attached */
static void pass()
{
    cupti(cuptiActivityRegisterCallbacks(requested, completed), "register");
    for (CUpti_ActivityKind k : kinds)
        cupti(cuptiActivityEnable(k), "enable");
    block(10);
    for (CUpti_ActivityKind k : kinds)
        cupti(cuptiActivityDisable(k), "disable");
    cupti(cuptiActivityFlushAll(CUPTI_ACTIVITY_FLAG_FLUSH_FORCED), "flush");
}

int main(int argc, char **argv)
{
    int reps = argc > 1 ? atoi(argv[1]) : 21;
    int n = argc > 2 ? atoi(argv[2]) : 4000;
    if (reps < 3 || n < 10) {
        fprintf(stderr, "usage: cupti_overhead [REPS >= 3] [LAUNCHES >= 10]\n");
        return 2;
    }
    check(cudaFree(0), "init");
    block(n); /* warm */
    std::vector<double> never, att, det, r_ad, r_dn;
    for (int i = 0; i < reps; i++)
        never.push_back(block(n));
    double nv = median(never);
    for (int r = 0; r < reps; r++) {
        double a, d;
        if (r % 2 == 0) { /* attached first */
            pass();
            a = block(n);
            cupti(cuptiFinalize(), "finalize");
            d = block(n);
        } else { /* detached (since the last finalize) first */
            d = block(n);
            pass();
            a = block(n);
            cupti(cuptiFinalize(), "finalize");
        }
        att.push_back(a);
        det.push_back(d);
        r_ad.push_back(a / d);
        r_dn.push_back(d / nv);
    }
    for (int r = 0; r < reps; r++)
        printf("rep %d attached %.1f detached %.1f ns\n", r, att[r], det[r]);
    for (int r = 0; r < reps; r++)
        printf("never %d %.1f ns\n", r, never[r]);
    double nmin = *std::min_element(never.begin(), never.end());
    double dmin = *std::min_element(det.begin(), det.end());
    printf("cupti_overhead never_ns=%.1f attached_ns=%.1f detached_ns=%.1f "
           "attached_over_detached=%.4f detached_over_never=%.4f "
           "never_min_ns=%.1f detached_min_ns=%.1f "
           "detached_min_over_never_min=%.4f reps=%d launches=%d\n",
           nv, median(att), median(det), median(r_ad), median(r_dn), nmin,
           dmin, dmin / nmin, reps, n);
    return 0;
}
