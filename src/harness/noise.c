/* The machine besides the measurement: see noise.h. */
#include "noise.h"

#include <math.h>
#include <stdio.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "timer.h"
#include "env.h"

static double tv_s(struct timeval t)
{
    return (double)t.tv_sec + (double)t.tv_usec / 1e6;
}

/* CPU seconds of this process and its waited-for children. */
static double own_cpu_s(void)
{
    struct rusage self, kids;
    if (getrusage(RUSAGE_SELF, &self) || getrusage(RUSAGE_CHILDREN, &kids))
        return NAN;
    return tv_s(self.ru_utime) + tv_s(self.ru_stime) + tv_s(kids.ru_utime) +
           tv_s(kids.ru_stime);
}

void tb_noise_take(tb_noise_snap *s)
{
    memset(s, 0, sizeof *s);
    s->load1 = tb_env_load1();
    s->wall_s = (double)tb_now_ns() / 1e9;
    s->own_s = own_cpu_s();
    FILE *f = fopen("/proc/stat", "r");
    if (!f)
        return;
    /* cpu  user nice system idle iowait irq softirq steal guest gn */
    unsigned long long v[8] = {0};
    if (fscanf(f, "cpu %llu %llu %llu %llu %llu %llu %llu %llu", &v[0],
               &v[1], &v[2], &v[3], &v[4], &v[5], &v[6], &v[7]) >= 4) {
        double hz = (double)sysconf(_SC_CLK_TCK);
        hz = hz > 0 ? hz : 100;
        double all = 0;
        for (int i = 0; i < 8; i++)
            all += (double)v[i];
        s->total_s = all / hz;
        s->steal_s = (double)v[7] / hz;
        s->busy_s = (all - (double)v[3] - (double)v[4] - (double)v[7]) / hz;
        s->ok = true;
    }
    fclose(f);
}

void tb_noise_diff(const tb_noise_snap *a, const tb_noise_snap *b,
                   tb_noise *out)
{
    out->seconds = b->wall_s - a->wall_s;
    out->cpus = tb_env_ncpus();
    out->load_start = a->load1;
    out->load_end = b->load1;
    out->steal = out->other_cpus = NAN;
    double total = b->total_s - a->total_s;
    if (!a->ok || !b->ok || !(total > 0) || !(out->seconds > 0))
        return;
    out->steal = (b->steal_s - a->steal_s) / total;
    double other = (b->busy_s - a->busy_s) - (b->own_s - a->own_s);
    /* the kernel's ticks and getrusage's clock differ by a tick or so */
    out->other_cpus = other > 0 ? other / out->seconds : 0;
}

void tb_noise_print(FILE *f, const char *what, const tb_noise *n)
{
    if (isnan(n->load_start) && isnan(n->steal))
        return;
    fprintf(f, "%s (%.0f s): load average %.2f -> %.2f on %d CPU%s", what,
            n->seconds, n->load_start, n->load_end, n->cpus,
            n->cpus == 1 ? "" : "s");
    if (!isnan(n->steal))
        fprintf(f, ", steal %.1f%% of CPU time, other processes %.2f "
                "CPUs", 100 * n->steal, n->other_cpus);
    fputc('\n', f);
}

static cJSON *num(double x)
{
    return isfinite(x) ? cJSON_CreateNumber(x) : cJSON_CreateNull();
}

cJSON *tb_noise_json(const tb_noise *n)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddItemToObject(o, "seconds", num(n->seconds));
    cJSON_AddNumberToObject(o, "cpus", n->cpus);
    cJSON_AddItemToObject(o, "load_start", num(n->load_start));
    cJSON_AddItemToObject(o, "load_end", num(n->load_end));
    cJSON_AddItemToObject(o, "steal", num(n->steal));
    cJSON_AddItemToObject(o, "other_cpus", num(n->other_cpus));
    return o;
}
