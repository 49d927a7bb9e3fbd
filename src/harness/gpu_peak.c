/* GPU peaks and the GPU roofline (gpu_peak.h). */
#include "gpu_peak.h"

#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include "../base/error.h"
#include "../base/fdio.h"

/* Longest the measuring child may take (a full measurement: seconds). */
#define GPU_PEAK_TIMEOUT_S 300

static const char *const bw_names[TB_DEV_NPEAK_BW] = {"copy", "read",
                                                      "triad"};

/* What the measuring child sends back. */
typedef struct {
    int rc;
    char err[256];
    tb_dev_peaks d;
} peak_msg;

/* In the child: an instance with every axis at its default, then the
 * slot. */
static void measure_here(const tb_backend *be, int reps, double rep_s,
                         peak_msg *m)
{
    tb_axis ax[TB_MAX_AXES];
    memset(ax, 0, sizeof ax);
    int n = be->axes ? be->axes(be, ax, TB_MAX_AXES) : 0;
    const char *vals[TB_MAX_AXES] = {NULL};
    for (int i = 0; i < n && i < TB_MAX_AXES; i++)
        vals[i] = ax[i].n_values > 0 ? ax[i].values[ax[i].def] : NULL;
    void *ctx = NULL;
    m->rc = be->create(be, vals, &ctx, m->err, sizeof m->err);
    if (m->rc)
        return;
    m->rc = be->peak(ctx, reps, rep_s, &m->d);
    if (m->rc && !m->d.why[0])
        snprintf(m->err, sizeof m->err, "peak: %s", tb_strerror(m->rc));
    be->destroy(ctx);
}

cJSON *tb_gpu_peaks_measure(const tb_backend *be, int reps, double rep_s)
{
    char reason[512] = "";
    if (!be)
        return tb_gpu_peaks_json("cuda", TB_EUNAVAILABLE, NULL,
                                 "no GPU backend in this build");
    if (tb_backend_probe(&be, reason, sizeof reason))
        return tb_gpu_peaks_json(be->name, TB_EUNAVAILABLE, NULL, reason);
    if (!be->peak)
        return tb_gpu_peaks_json(be->name, TB_EUNSUPPORTED, NULL,
                                 "the backend measures no device peaks");
    int fd[2];
    if (pipe(fd)) {
        snprintf(reason, sizeof reason, "pipe: %s", strerror(errno));
        return tb_gpu_peaks_json(be->name, TB_EIO, NULL, reason);
    }
    fflush(NULL);
    pid_t pid = fork();
    if (pid < 0) {
        snprintf(reason, sizeof reason, "fork: %s", strerror(errno));
        close(fd[0]);
        close(fd[1]);
        return tb_gpu_peaks_json(be->name, TB_EIO, NULL, reason);
    }
    if (pid == 0) {
        close(fd[0]);
        /* a hung device must not hang `tbench peak`: SIGALRM ends the
         * child, and the parent records why */
        alarm(GPU_PEAK_TIMEOUT_S);
        peak_msg *m = calloc(1, sizeof *m);
        if (m) {
            measure_here(be, reps, rep_s, m);
            tb_fd_write_all(fd[1], m, sizeof *m);
        }
        _exit(0); /* no atexit handlers: they belong to the parent */
    }
    close(fd[1]);
    peak_msg m;
    size_t got = 0;
    while (got < sizeof m) {
        ssize_t k = read(fd[0], (char *)&m + got, sizeof m - got);
        if (k < 0 && errno == EINTR)
            continue;
        if (k <= 0)
            break;
        got += (size_t)k;
    }
    close(fd[0]);
    int st = 0;
    while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
        ;
    if (got != sizeof m) {
        if (WIFSIGNALED(st) && WTERMSIG(st) == SIGALRM)
            snprintf(reason, sizeof reason,
                     "the measuring process did not finish in %d s (a "
                     "hung device?)", GPU_PEAK_TIMEOUT_S);
        else if (WIFSIGNALED(st))
            snprintf(reason, sizeof reason,
                     "the measuring process died of signal %d",
                     WTERMSIG(st));
        else
            snprintf(reason, sizeof reason,
                     "the measuring process exited without an answer");
        return tb_gpu_peaks_json(be->name, TB_EIO, NULL, reason);
    }
    m.err[sizeof m.err - 1] = '\0';
    m.d.why[sizeof m.d.why - 1] = '\0';
    m.d.name[sizeof m.d.name - 1] = '\0';
    if (m.rc && m.err[0] && !m.d.why[0]) /* create failed */
        return tb_gpu_peaks_json(be->name, m.rc, NULL, m.err);
    return tb_gpu_peaks_json(be->name, m.rc, &m.d, NULL);
}

static void add_rate(cJSON *o, const char *k, double v, double scale)
{
    if (v > 0)
        cJSON_AddNumberToObject(o, k, v * scale);
    else
        cJSON_AddNullToObject(o, k);
}

cJSON *tb_gpu_peaks_json(const char *backend, int rc, const tb_dev_peaks *d,
                         const char *reason)
{
    cJSON *g = cJSON_CreateObject();
    if (!g)
        return NULL;
    cJSON_AddStringToObject(g, "backend", backend ? backend : "?");
    bool any = false;
    for (int k = 0; d && k < TB_DEV_NPEAK_BW; k++)
        any = any || d->bw_best[k] > 0;
    for (int t = 0; d && t < TB_DTYPE_COUNT; t++)
        any = any || d->flops_best[t] > 0;
    cJSON_AddBoolToObject(g, "available", d && any);
    char why[512] = "";
    if (!d)
        snprintf(why, sizeof why, "%s", reason ? reason : "unknown");
    else if (d->why[0])
        snprintf(why, sizeof why, "%s", d->why);
    else if (rc)
        snprintf(why, sizeof why, "peak: %s", tb_strerror(rc));
    cJSON_AddItemToObject(g, "reason", why[0] ? cJSON_CreateString(why)
                                              : cJSON_CreateNull());
    if (!d) {
        cJSON_AddNullToObject(g, "device");
        cJSON_AddItemToObject(g, "bandwidth", cJSON_CreateArray());
        cJSON_AddItemToObject(g, "flops", cJSON_CreateArray());
        return g;
    }
    cJSON *dev = cJSON_AddObjectToObject(g, "device");
    cJSON_AddNumberToObject(dev, "index", 0);
    cJSON_AddStringToObject(dev, "name", d->name);
    char cc[16];
    snprintf(cc, sizeof cc, "%d.%d", d->cc_major, d->cc_minor);
    cJSON_AddStringToObject(dev, "compute_capability", cc);
    cJSON_AddNumberToObject(dev, "sm_count", d->sms);
    cJSON_AddNumberToObject(dev, "l2_bytes", d->l2_bytes);
    cJSON_AddNumberToObject(dev, "memory_bytes", d->mem_bytes);
    cJSON_AddNumberToObject(dev, "sm_clock_mhz", d->sm_clock_khz / 1e3);
    cJSON_AddNumberToObject(dev, "memory_clock_mhz", d->mem_clock_khz / 1e3);
    cJSON_AddNumberToObject(dev, "bus_width_bits", d->bus_bits);
    cJSON_AddNumberToObject(g, "repetitions", d->reps);
    add_rate(g, "array_bytes", d->array_bytes, 1);
    cJSON *bw = cJSON_AddArrayToObject(g, "bandwidth");
    for (int k = 0; bw && k < TB_DEV_NPEAK_BW; k++) {
        if (!(d->bw_best[k] > 0))
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(bw, e);
        cJSON_AddStringToObject(e, "kernel", bw_names[k]);
        add_rate(e, "best_gb_s", d->bw_best[k], 1e-9);
        add_rate(e, "median_gb_s", d->bw_median[k], 1e-9);
        add_rate(e, "vendor_gb_s", d->vendor_bw, 1e-9);
    }
    cJSON *fl = cJSON_AddArrayToObject(g, "flops");
    for (int t = 0; fl && t < TB_DTYPE_COUNT; t++) {
        if (!(d->flops_best[t] > 0))
            continue;
        cJSON *e = cJSON_CreateObject();
        cJSON_AddItemToArray(fl, e);
        cJSON_AddStringToObject(e, "dtype", tb_dtype_name((tb_dtype)t));
        add_rate(e, "best_gflop_s", d->flops_best[t], 1e-9);
        add_rate(e, "median_gflop_s", d->flops_median[t], 1e-9);
        add_rate(e, "vendor_gflop_s", d->vendor_flops[t], 1e-9);
    }
    return g;
}

static double num(const cJSON *o, const char *k)
{
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(o, k);
    return cJSON_IsNumber(v) ? v->valuedouble : -1;
}

static const cJSON *find(const cJSON *arr, const char *key, const char *v)
{
    const cJSON *e;
    cJSON_ArrayForEach(e, arr)
    {
        const cJSON *s = cJSON_GetObjectItemCaseSensitive(e, key);
        if (cJSON_IsString(s) && !strcmp(s->valuestring, v))
            return e;
    }
    return NULL;
}

int tb_gpu_roofline(const cJSON *peaks, const tb_roofline_in *in,
                    tb_roofline *out)
{
    memset(out, 0, sizeof *out);
    if (!in || !in->bw_kernel || !(in->time_ns > 0) || !(in->flops >= 0) ||
        !(in->bytes >= 0) || (unsigned)in->dtype >= TB_DTYPE_COUNT)
        return TB_EINVAL;
    const cJSON *g = cJSON_GetObjectItemCaseSensitive(peaks, "gpu");
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "available")))
        return TB_ENOTFOUND;
    /* the GPU kernel with the case's access pattern: two inputs and an
     * output are triad's (an input written in place too) */
    const char *k = !strcmp(in->bw_kernel, "add") ||
                            !strcmp(in->bw_kernel, "update")
                        ? "triad"
                        : in->bw_kernel;
    snprintf(out->bw_kernel, sizeof out->bw_kernel, "%s", k);
    snprintf(out->level, sizeof out->level, "GPU");
    out->threads = 1;
    double t_mem = 0, t_flop = 0;
    if (in->bytes > 0) {
        double bw = num(find(cJSON_GetObjectItemCaseSensitive(g, "bandwidth"),
                             "kernel", k),
                        "best_gb_s");
        if (!(bw > 0))
            return TB_ENOTFOUND;
        out->bandwidth_gb_s = bw;
        out->bandwidth_threads = 1; /* the device's figure */
        t_mem = in->bytes / bw;
    }
    if (in->flops > 0) {
        double pk = num(find(cJSON_GetObjectItemCaseSensitive(g, "flops"),
                             "dtype", tb_dtype_name(in->dtype)),
                        "best_gflop_s");
        if (!(pk > 0))
            return TB_ENOTFOUND;
        out->peak_gflop_s = pk;
        out->peak_threads = 1;
        snprintf(out->isa, sizeof out->isa, "gpu");
        t_flop = in->flops / pk;
    }
    return tb_roofline_bound(in, t_mem, t_flop, out);
}

static void fig(char *b, size_t n, double v)
{
    if (v > 0)
        snprintf(b, n, "%.1f", v);
    else
        snprintf(b, n, "-");
}

/* The table of g[key] under its header (head, best_head, "median",
 * "vendor"): a row per entry, named by its label_key, with its best_UNIT,
 * median_UNIT and vendor_UNIT figures. */
static void print_rows(FILE *f, const cJSON *g, const char *key,
                       const char *label_key, const char *unit,
                       const char *head, const char *best_head)
{
    char kb[32], km[32], kv[32];
    snprintf(kb, sizeof kb, "best_%s", unit);
    snprintf(km, sizeof km, "median_%s", unit);
    snprintf(kv, sizeof kv, "vendor_%s", unit);
    fprintf(f, "%-12s %12s %12s %12s\n", head, best_head, "median",
            "vendor");
    const cJSON *e;
    cJSON_ArrayForEach(e, cJSON_GetObjectItemCaseSensitive(g, key))
    {
        const cJSON *k = cJSON_GetObjectItemCaseSensitive(e, label_key);
        char a[32], b[32], c[32];
        fig(a, sizeof a, num(e, kb));
        fig(b, sizeof b, num(e, km));
        fig(c, sizeof c, num(e, kv));
        fprintf(f, "%-12s %12s %12s %12s\n",
                cJSON_IsString(k) ? k->valuestring : "?", a, b, c);
    }
}

void tb_gpu_peaks_print(FILE *f, const cJSON *g)
{
    if (!cJSON_IsObject(g))
        return;
    const cJSON *be = cJSON_GetObjectItemCaseSensitive(g, "backend");
    const cJSON *why = cJSON_GetObjectItemCaseSensitive(g, "reason");
    const char *name = cJSON_IsString(be) ? be->valuestring : "?";
    if (!cJSON_IsTrue(cJSON_GetObjectItemCaseSensitive(g, "available"))) {
        fprintf(f, "\nGPU peaks: %s unavailable: %s\n", name,
                cJSON_IsString(why) ? why->valuestring : "?");
        return;
    }
    const cJSON *d = cJSON_GetObjectItemCaseSensitive(g, "device");
    const cJSON *dn = cJSON_GetObjectItemCaseSensitive(d, "name");
    const cJSON *cc = cJSON_GetObjectItemCaseSensitive(d, "compute_capability");
    fprintf(f, "\nGPU peaks (%s device 0: %s, compute capability %s, %.0f "
               "SMs): best of %.0f repetitions, median beside it; vendor = "
               "memory clock x bus width x 2, SMs x FMA lanes x clock x 2\n",
            name, cJSON_IsString(dn) ? dn->valuestring : "?",
            cJSON_IsString(cc) ? cc->valuestring : "?", num(d, "sm_count"),
            num(g, "repetitions"));
    print_rows(f, g, "bandwidth", "kernel", "gb_s", "bandwidth",
               "best GB/s");
    print_rows(f, g, "flops", "dtype", "gflop_s", "FMA", "best GFLOP/s");
    if (cJSON_IsString(why))
        fprintf(f, "note: %s\n", why->valuestring);
}
