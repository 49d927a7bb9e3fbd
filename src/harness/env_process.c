/* The process settings that change what is measured (env.process,
 * docs/FORMAT.md): environment variables read by the dynamic loader,
 * glibc, OpenMP and the BLAS libraries and tbench itself, the CPUs this
 * process may run on, and the cgroup's CPU quota. */
#include "env.h"

#include <math.h>
#include <sched.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

extern char **environ;

/* Names recorded whole, and prefixes of names recorded. */
static const char *const exact[] = {"LD_PRELOAD", "LD_LIBRARY_PATH",
                                    "LD_BIND_NOW", "GLIBC_TUNABLES",
                                    "CUDA_VISIBLE_DEVICES"};
static const char *const prefixes[] = {"TBENCH_", "OMP_", "GOMP_", "KMP_",
                                       "MALLOC_", "OPENBLAS_", "MKL_",
                                       "BLIS_", "CUDA_LAUNCH_"};

static bool recorded(const char *name, size_t len)
{
    for (size_t i = 0; i < sizeof exact / sizeof exact[0]; i++)
        if (strlen(exact[i]) == len && !strncmp(name, exact[i], len))
            return true;
    for (size_t i = 0; i < sizeof prefixes / sizeof prefixes[0]; i++) {
        size_t p = strlen(prefixes[i]);
        if (len > p && !strncmp(name, prefixes[i], p))
            return true;
    }
    return false;
}

static cJSON *variables(void)
{
    cJSON *o = cJSON_CreateObject();
    for (char **e = environ; o && e && *e; e++) {
        const char *eq = strchr(*e, '=');
        if (!eq || !recorded(*e, (size_t)(eq - *e)))
            continue;
        char name[256];
        snprintf(name, sizeof name, "%.*s", (int)(eq - *e), *e);
        cJSON_AddStringToObject(o, name, eq + 1);
    }
    return o;
}

/* "0-3,6" of the set, and its count. */
static int cpu_list(const cpu_set_t *set, char *buf, size_t len)
{
    size_t u = 0;
    int count = 0;
    buf[0] = '\0';
    for (int c = 0; c < CPU_SETSIZE; c++) {
        if (!CPU_ISSET(c, set))
            continue;
        int last = c;
        while (last + 1 < CPU_SETSIZE && CPU_ISSET(last + 1, set))
            last++;
        count += last - c + 1;
        if (u < len)
            u += (size_t)(last > c ? snprintf(buf + u, len - u, "%s%d-%d",
                                              u ? "," : "", c, last)
                                   : snprintf(buf + u, len - u, "%s%d",
                                              u ? "," : "", c));
        c = last;
    }
    return count;
}

/* The cgroup v2 CPU quota of this process in CPUs (quota / period of
 * its cpu.max), INFINITY for "max", NAN when unreadable; line: the file's
 * text. */
static double cgroup_cpus(char *line, size_t len)
{
    char rel[600] = "", path[700];
    line[0] = '\0';
    FILE *f = fopen("/proc/self/cgroup", "r");
    if (f) {
        /* "0::/user.slice/..." on cgroup v2 */
        char l[600];
        while (fgets(l, sizeof l, f))
            if (!strncmp(l, "0::", 3)) {
                snprintf(rel, sizeof rel, "%s", l + 3);
                rel[strcspn(rel, "\n")] = '\0';
            }
        fclose(f);
    }
    snprintf(path, sizeof path, "/sys/fs/cgroup%s/cpu.max",
             strcmp(rel, "/") ? rel : "");
    f = fopen(path, "r");
    if (!f)
        return NAN;
    if (!fgets(line, (int)len, f))
        line[0] = '\0';
    fclose(f);
    line[strcspn(line, "\n")] = '\0';
    char quota[32];
    double period;
    if (sscanf(line, "%31s %lf", quota, &period) != 2 || !(period > 0))
        return NAN;
    if (!strcmp(quota, "max"))
        return INFINITY;
    return strtod(quota, NULL) / period;
}

double tb_env_load1(void)
{
    double v = NAN;
    FILE *f = fopen("/proc/loadavg", "r");
    if (f) {
        if (fscanf(f, "%lf", &v) != 1)
            v = NAN;
        fclose(f);
    }
    return v;
}

cJSON *tb_env_process(void)
{
    cJSON *o = cJSON_CreateObject();
    if (!o)
        return NULL;
    cJSON_AddItemToObject(o, "variables", variables());
    cpu_set_t set;
    char list[1024];
    if (sched_getaffinity(0, sizeof set, &set) == 0) {
        int n = cpu_list(&set, list, sizeof list);
        cJSON_AddStringToObject(o, "affinity", list);
        cJSON_AddNumberToObject(o, "affinity_cpus", n);
    } else {
        cJSON_AddNullToObject(o, "affinity");
        cJSON_AddNullToObject(o, "affinity_cpus");
    }
    char line[128];
    double q = cgroup_cpus(line, sizeof line);
    if (line[0])
        cJSON_AddStringToObject(o, "cgroup_cpu_max", line);
    else
        cJSON_AddNullToObject(o, "cgroup_cpu_max");
    if (isfinite(q))
        cJSON_AddNumberToObject(o, "cgroup_cpus", q);
    else
        cJSON_AddNullToObject(o, "cgroup_cpus");
    return o;
}

void tb_env_process_warnings(const cJSON *process, cJSON *warnings)
{
    char w[600];
    long online = sysconf(_SC_NPROCESSORS_ONLN);
    const cJSON *a = cJSON_GetObjectItemCaseSensitive(process,
                                                      "affinity_cpus");
    if (cJSON_IsNumber(a) && a->valuedouble < (double)online) {
        snprintf(w, sizeof w, "this process may run on %d of the %ld "
                 "online CPUs (CPU affinity %s): thread counts above %d "
                 "share CPUs", a->valueint, online,
                 cJSON_GetStringValue(cJSON_GetObjectItemCaseSensitive(
                     process, "affinity")), a->valueint);
        cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }
    const cJSON *q = cJSON_GetObjectItemCaseSensitive(process,
                                                      "cgroup_cpus");
    if (cJSON_IsNumber(q) && q->valuedouble < (double)online) {
        snprintf(w, sizeof w, "the cgroup's CPU quota is %.2f CPUs (%ld "
                 "online): threads are throttled beyond it", q->valuedouble,
                 online);
        cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }
    const cJSON *v = cJSON_GetObjectItemCaseSensitive(process, "variables");
    static const char *const loud[] = {"LD_PRELOAD", "GLIBC_TUNABLES"};
    for (size_t i = 0; i < sizeof loud / sizeof loud[0]; i++) {
        const char *s = cJSON_GetStringValue(
            cJSON_GetObjectItemCaseSensitive(v, loud[i]));
        if (!s || !*s)
            continue;
        snprintf(w, sizeof w, "%s is set ('%.300s'): it changes the code "
                 "that runs (preloaded libraries, glibc's choice of CPU "
                 "features)", loud[i], s);
        cJSON_AddItemToArray(warnings, cJSON_CreateString(w));
    }
}
