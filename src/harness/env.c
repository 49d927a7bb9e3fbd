/* Environment capture: machine, OS, build and noise warnings as JSON.
 *
 * Everything here is best effort.  Containers, VMs and non-x86 machines
 * lack many of the files read below; a value that cannot be read becomes
 * JSON null and nothing fails.  Parsing is deliberately plain: fixed
 * buffers, fgets/sscanf, every length bounded. */
#include "harness/env.h"

#include <csv.h>
#include <gnu/libc-version.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <time.h>
#include <unistd.h>

#include "../backends/backend.h"
#include "ops/calib.h"
#include "../backends/plugin.h"
#include "tb_commit.h"
#include "tb_config.h"
#include "env_gpu.h"

#define TB_ENV_LINE_MAX 16384 /* cpuinfo "flags" lines run ~2 KiB */
#define TB_ENV_STR_MAX 256
#define TB_ENV_MAX_CORES 4096 /* (physical id, core id) pairs tracked */
#define TB_ENV_MAX_CACHES 32

#define TB_STR2(x) #x
#define TB_STR(x) TB_STR2(x)

/* ---- small JSON helpers (all accept a NULL parent, as cJSON does) ---- */

static void json_add(cJSON *obj, const char *key, cJSON *item)
{
    if (item && !cJSON_AddItemToObject(obj, key, item))
        cJSON_Delete(item);
}

static void json_push(cJSON *arr, cJSON *item)
{
    if (item && !cJSON_AddItemToArray(arr, item))
        cJSON_Delete(item);
}

/* s == NULL or "" becomes null. */
static void json_add_str(cJSON *obj, const char *key, const char *s)
{
    if (s && s[0])
        cJSON_AddStringToObject(obj, key, s);
    else
        cJSON_AddNullToObject(obj, key);
}


/* ---- file reading helpers ---- */

/* Read one line of f into buf[size] without the newline.  A longer line
 * is truncated and its remainder discarded, so the next call starts on a
 * real line boundary.  Returns 0 at end of file, 1 for a whole line, 2 for
 * a truncated one. */
static int read_line(FILE *f, char *buf, size_t size)
{
    if (!fgets(buf, (int)size, f))
        return 0;
    size_t len = strlen(buf);
    if (len > 0 && buf[len - 1] == '\n') {
        buf[len - 1] = '\0';
        return 1;
    }
    int c = fgetc(f);
    if (c == EOF || c == '\n')
        return 1; /* last line without a newline, or an exact fit */
    while (c != EOF && c != '\n')
        c = fgetc(f);
    return 2;
}

static void rstrip(char *s)
{
    size_t len = strlen(s);
    while (len > 0 && (s[len - 1] == '\n' || s[len - 1] == ' ' ||
                       s[len - 1] == '\t' || s[len - 1] == '\r'))
        s[--len] = '\0';
}

/* First line of a small file (sysfs, /proc), trailing whitespace removed.
 * Returns 0 on success (possibly empty), -1 if unreadable. */
static int read_first_line(const char *path, char *buf, size_t size)
{
    FILE *f = fopen(path, "r");
    if (!f)
        return -1;
    int ok = read_line(f, buf, size);
    fclose(f);
    if (!ok)
        return -1;
    rstrip(buf);
    return 0;
}

/* Split "key<ws>: value" in place.  Returns 0 and sets *key, *val (both
 * trimmed), or -1 if there is no colon. */
static int split_kv(char *line, char **key, char **val)
{
    char *colon = strchr(line, ':');
    if (!colon)
        return -1;
    *colon = '\0';
    rstrip(line);
    char *v = colon + 1;
    while (*v == ' ' || *v == '\t')
        v++;
    rstrip(v);
    *key = line;
    *val = v;
    return 0;
}

static void copy_str(char *dst, size_t size, const char *src)
{
    snprintf(dst, size, "%s", src);
}

/* ---- /proc/cpuinfo ---- */

/* The ISA extensions that matter for our kernels, in report order. */
static const char *const isa_names[] = {
    "sse4_1",   "sse4_2",      "avx",         "avx2",     "fma",
    "f16c",     "avx512f",     "avx512bw",    "avx512dq", "avx512vl",
    "avx512cd", "avx512_bf16", "avx512_vnni", "amx_tile",
    "avx512_fp16", "amx_bf16", "amx_int8",
};
#define TB_ENV_NISA (sizeof isa_names / sizeof isa_names[0])

typedef struct cpuinfo_facts {
    char model[TB_ENV_STR_MAX];  /* "" if absent */
    char vendor[TB_ENV_STR_MAX]; /* "" if absent */
    int have_mhz;
    double mhz;
    int have_flags;              /* an x86 "flags" line was seen */
    int isa[TB_ENV_NISA];        /* 1 if isa_names[i] is present */
    int hypervisor;
    long physical_cores;         /* -1 if not derivable */
} cpuinfo_facts;

typedef struct core_id {
    long pkg, core;
} core_id;

/* Scan the flag list of one "flags" line (modified in place). */
static void parse_flags(char *val, cpuinfo_facts *ci)
{
    char *save = NULL;
    ci->have_flags = 1;
    for (char *tok = strtok_r(val, " \t", &save); tok;
         tok = strtok_r(NULL, " \t", &save)) {
        if (strcmp(tok, "hypervisor") == 0) {
            ci->hypervisor = 1;
            continue;
        }
        for (size_t i = 0; i < TB_ENV_NISA; i++)
            if (strcmp(tok, isa_names[i]) == 0)
                ci->isa[i] = 1;
    }
}

/* Record the (physical id, core id) pair of the processor block that just
 * ended.  A block without both ids, or too many cores, makes the count
 * underivable (*ok = 0). */
static void end_block(core_id *cores, size_t *ncores, int *ok, long pkg,
                      long core)
{
    if (pkg < 0 || core < 0) {
        *ok = 0;
        return;
    }
    for (size_t i = 0; i < *ncores; i++)
        if (cores[i].pkg == pkg && cores[i].core == core)
            return;
    if (*ncores >= TB_ENV_MAX_CORES) {
        *ok = 0;
        return;
    }
    cores[*ncores].pkg = pkg;
    cores[*ncores].core = core;
    (*ncores)++;
}

/* Fill *ci from /proc/cpuinfo.  Model, vendor, MHz and flags come from
 * the first processor block; physical cores count distinct
 * (physical id, core id) pairs across all blocks. */
static void read_cpuinfo(cpuinfo_facts *ci)
{
    memset(ci, 0, sizeof *ci);
    ci->physical_cores = -1;

    FILE *f = fopen("/proc/cpuinfo", "r");
    if (!f)
        return;
    char *line = malloc(TB_ENV_LINE_MAX);
    core_id *cores = malloc(TB_ENV_MAX_CORES * sizeof *cores);
    if (!line || !cores) {
        free(line);
        free(cores);
        fclose(f);
        return;
    }

    size_t ncores = 0;
    int cores_ok = 1;
    int nblocks = 0;  /* processor blocks seen so far */
    int in_block = 0; /* inside a "processor" block */
    long pkg = -1, core = -1;

    for (;;) {
        int got = read_line(f, line, TB_ENV_LINE_MAX);
        if (got)
            rstrip(line);
        if (!got || line[0] == '\0') {
            if (in_block)
                end_block(cores, &ncores, &cores_ok, pkg, core);
            in_block = 0;
            pkg = core = -1;
            if (!got)
                break;
            continue;
        }
        char *key, *val;
        if (split_kv(line, &key, &val) != 0)
            continue;
        if (strcmp(key, "processor") == 0) {
            if (in_block) /* no blank line between blocks */
                end_block(cores, &ncores, &cores_ok, pkg, core);
            in_block = 1;
            pkg = core = -1;
            nblocks++;
            continue;
        }
        if (strcmp(key, "physical id") == 0) {
            if (sscanf(val, "%ld", &pkg) != 1)
                pkg = -1;
            continue;
        }
        if (strcmp(key, "core id") == 0) {
            if (sscanf(val, "%ld", &core) != 1)
                core = -1;
            continue;
        }
        if (nblocks > 1)
            continue; /* the rest comes from the first processor only */
        if (strcmp(key, "model name") == 0) {
            copy_str(ci->model, sizeof ci->model, val);
        } else if (strcmp(key, "vendor_id") == 0) {
            copy_str(ci->vendor, sizeof ci->vendor, val);
        } else if (strcmp(key, "cpu MHz") == 0) {
            double mhz;
            if (sscanf(val, "%lf", &mhz) == 1 && mhz > 0) {
                ci->mhz = mhz;
                ci->have_mhz = 1;
            }
        } else if (strcmp(key, "flags") == 0 && !ci->have_flags &&
                   got == 1) {
            /* A truncated flag list would silently drop (or, cut mid-word,
             * invent) flags; leave the ISA unknown instead. */
            parse_flags(val, ci);
        }
    }

    if (nblocks > 0 && cores_ok && ncores > 0)
        ci->physical_cores = (long)ncores;
    free(line);
    free(cores);
    fclose(f);
}

/* ---- caches (sysfs) ---- */

/* "48K", "1024K", "32M", "123" -> bytes.  Returns 0 on success. */
static int parse_size(const char *s, unsigned long long *out)
{
    char *end;
    unsigned long long v = strtoull(s, &end, 10);
    if (end == s)
        return -1;
    unsigned long long mul = 1;
    switch (*end) {
    case '\0':
        break;
    case 'K': case 'k':
        mul = 1ULL << 10;
        break;
    case 'M': case 'm':
        mul = 1ULL << 20;
        break;
    case 'G': case 'g':
        mul = 1ULL << 30;
        break;
    default:
        return -1;
    }
    if (*end && end[1] != '\0')
        return -1;
    if (v > ULLONG_MAX / mul)
        return -1;
    *out = v * mul;
    return 0;
}

/* Array of cpu0's caches, or NULL (caller adds null) if the sysfs cache
 * directory is absent. */
static cJSON *read_caches(void)
{
    static const char base[] = "/sys/devices/system/cpu/cpu0/cache";
    char path[TB_ENV_STR_MAX];
    char buf[TB_ENV_STR_MAX];
    struct stat st;

    snprintf(path, sizeof path, "%s/index0", base);
    if (stat(path, &st) != 0)
        return NULL;
    cJSON *arr = cJSON_CreateArray();
    if (!arr)
        return NULL;

    for (int i = 0; i < TB_ENV_MAX_CACHES; i++) {
        snprintf(path, sizeof path, "%s/index%d", base, i);
        if (stat(path, &st) != 0)
            break;
        cJSON *c = cJSON_CreateObject();
        if (!c)
            break;

        long level = 0;
        snprintf(path, sizeof path, "%s/index%d/level", base, i);
        int ok = read_first_line(path, buf, sizeof buf) == 0 &&
                 sscanf(buf, "%ld", &level) == 1;
        tb_env_add_num(c, "level", ok, (double)level);

        snprintf(path, sizeof path, "%s/index%d/type", base, i);
        ok = read_first_line(path, buf, sizeof buf) == 0;
        json_add_str(c, "type", ok ? buf : NULL);

        unsigned long long size = 0;
        snprintf(path, sizeof path, "%s/index%d/size", base, i);
        ok = read_first_line(path, buf, sizeof buf) == 0 &&
             parse_size(buf, &size) == 0;
        tb_env_add_num(c, "size_bytes", ok, (double)size);

        /* The kernel's list syntax, e.g. "0-1,64-65". */
        snprintf(path, sizeof path, "%s/index%d/shared_cpu_list", base, i);
        ok = read_first_line(path, buf, sizeof buf) == 0;
        json_add_str(c, "shared_cpus", ok ? buf : NULL);

        json_push(arr, c);
    }
    return arr;
}

/* ---- /proc/meminfo ---- */

/* Value of a "Key: N kB" line of /proc/meminfo in bytes, 0 if absent. */
static unsigned long long meminfo_bytes(const char *want)
{
    FILE *f = fopen("/proc/meminfo", "r");
    if (!f)
        return 0;
    char line[TB_ENV_STR_MAX];
    unsigned long long bytes = 0;
    while (read_line(f, line, sizeof line)) {
        char *key, *val;
        if (split_kv(line, &key, &val) != 0 || strcmp(key, want) != 0)
            continue;
        unsigned long long kb;
        if (sscanf(val, "%llu", &kb) == 1 && kb <= ULLONG_MAX / 1024)
            bytes = kb * 1024;
        break;
    }
    fclose(f);
    return bytes;
}

/* ---- OS ---- */

/* PRETTY_NAME from os-release (quotes removed) into buf; 0 on success. */
static int read_os_name(char *buf, size_t size)
{
    static const char *const paths[] = {"/etc/os-release",
                                        "/usr/lib/os-release"};
    char line[TB_ENV_STR_MAX];
    for (size_t p = 0; p < sizeof paths / sizeof paths[0]; p++) {
        FILE *f = fopen(paths[p], "r");
        if (!f)
            continue;
        int found = 0;
        while (read_line(f, line, sizeof line)) {
            if (strncmp(line, "PRETTY_NAME=", 12) != 0)
                continue;
            char *v = line + 12;
            rstrip(v);
            size_t len = strlen(v);
            if (len >= 2 && (v[0] == '"' || v[0] == '\'') &&
                v[len - 1] == v[0]) {
                v[len - 1] = '\0';
                v++;
            }
            copy_str(buf, size, v);
            found = buf[0] != '\0';
            break;
        }
        fclose(f);
        if (found)
            return 0;
    }
    return -1;
}

/* ---- public ---- */

int tb_env_ncpus(void)
{
    long n = sysconf(_SC_NPROCESSORS_ONLN);
    if (n < 1)
        return 1;
    return n > INT_MAX ? INT_MAX : (int)n;
}

unsigned long long tb_env_mem_total(void)
{
    return meminfo_bytes("MemTotal");
}

unsigned long long tb_env_mem_available(void)
{
    return meminfo_bytes("MemAvailable");
}

static void add_warning(cJSON *warnings, const char *text)
{
    json_push(warnings, cJSON_CreateString(text));
}

static cJSON *capture_cpu(const cpuinfo_facts *ci, long ncpus,
                          const char *governor)
{
    cJSON *cpu = cJSON_CreateObject();
    if (!cpu)
        return NULL;
    json_add_str(cpu, "model", ci->model);
    json_add_str(cpu, "vendor", ci->vendor);

    if (ci->have_flags) {
        cJSON *isa = cJSON_CreateArray();
        for (size_t i = 0; i < TB_ENV_NISA; i++)
            if (ci->isa[i])
                json_push(isa, cJSON_CreateString(isa_names[i]));
        if (isa)
            json_add(cpu, "isa", isa);
        else
            cJSON_AddNullToObject(cpu, "isa");
    } else {
        cJSON_AddNullToObject(cpu, "isa");
    }

    /* The SIMD level the cpu backend's kernels may use, and the
     * TBENCH_ISA cap that lowered it (null: none), so a capped run is
     * told apart from an uncapped one without reading case ids. */
    tb_backend_host host;
    tb_backend_host_info(tb_backend_host_cpu(), NULL, &host);
    json_add_str(cpu, "isa_cap", host.isa_cap);
    json_add_str(cpu, "isa_used", host.isa);

    tb_env_add_num(cpu, "logical_cpus", ncpus >= 1, (double)ncpus);
    tb_env_add_num(cpu, "physical_cores", ci->physical_cores > 0,
                 (double)ci->physical_cores);
    /* "cpu MHz" of the first processor exactly as /proc/cpuinfo reports
     * it: nominal (TSC) on most VMs, a momentary reading on bare metal
     * with frequency scaling.  Not a measured clock rate. */
    tb_env_add_num(cpu, "mhz", ci->have_mhz, ci->mhz);

    cJSON *caches = read_caches();
    if (caches)
        json_add(cpu, "caches", caches);
    else
        cJSON_AddNullToObject(cpu, "caches");

    json_add_str(cpu, "governor", governor);
    return cpu;
}

static cJSON *capture_build(void)
{
    cJSON *b = cJSON_CreateObject();
    if (!b)
        return NULL;
    json_add_str(b, "tbench_version", TB_VERSION);
    json_add_str(b, "git_commit", TB_GIT_COMMIT);
    json_add_str(b, "compiler", TB_CC_ID);
    json_add_str(b, "compiler_version_string", __VERSION__);
    /* An empty c_args is a real value, not a missing one. */
    cJSON_AddStringToObject(b, "c_args", TB_C_ARGS);
    json_add_str(b, "build_type", TB_BUILD_TYPE);
    json_add_str(b, "optimization", TB_OPTIMIZATION);
    json_add_str(b, "sanitize", TB_SANITIZE);
    /* Build settings that change the numbers: link-time optimization,
     * profile-guided optimization, fast-math (-ffast-math or -Ofast in
     * c_args: the compiler then says so with __FAST_MATH__), asserts. */
    cJSON_AddStringToObject(b, "c_link_args", TB_C_LINK_ARGS);
    cJSON_AddBoolToObject(b, "lto", TB_LTO ? 1 : 0);
    json_add_str(b, "pgo", TB_PGO);
#ifdef __FAST_MATH__
    cJSON_AddBoolToObject(b, "fast_math", 1);
#else
    cJSON_AddBoolToObject(b, "fast_math", 0);
#endif
    json_add_str(b, "ndebug", TB_NDEBUG);
    cJSON_AddBoolToObject(b, "debug", TB_DEBUG_BUILD ? 1 : 0);
    cJSON_AddBoolToObject(b, "openblas", HAVE_OPENBLAS ? 1 : 0);
    cJSON_AddBoolToObject(b, "cuda_module", HAVE_CUDA_MODULE ? 1 : 0);
    /* what the module was compiled for; null without the module */
    json_add_str(b, "gpu_archs", TB_GPU_ARCHS);
    return b;
}

static cJSON *capture_libraries(void)
{
    char csv_version[64];
    cJSON *l = cJSON_CreateObject();
    if (!l)
        return NULL;
    json_add_str(l, "cjson", cJSON_Version());
    /* libcsv has no run-time version query; this is the header we built
     * against. */
    snprintf(csv_version, sizeof csv_version, "%s.%s.%s", TB_STR(CSV_MAJOR),
             TB_STR(CSV_MINOR), TB_STR(CSV_RELEASE));
    json_add_str(l, "libcsv", csv_version);
    json_add_str(l, "libc", gnu_get_libc_version());
    return l;
}

/* Noise warnings, one full sentence each. */
static cJSON *capture_warnings(const cpuinfo_facts *ci, long ncpus,
                               const char *governor, int have_load,
                               double load1)
{
    char msg[512];
    cJSON *w = cJSON_CreateArray();
    if (!w)
        return NULL;

    if (governor && governor[0] && strcmp(governor, "performance") != 0) {
        snprintf(msg, sizeof msg,
                 "The CPU frequency governor is '%s', not 'performance': "
                 "clock speed can change during the run and add noise "
                 "(try 'cpupower frequency-set -g performance').",
                 governor);
        add_warning(w, msg);
    }
    if (have_load && ncpus >= 1 && load1 > 0.5 * (double)ncpus) {
        snprintf(msg, sizeof msg,
                 "The 1-minute load average is %.2f, above half of the %ld "
                 "logical CPUs (%.1f): other processes are competing for "
                 "the CPUs and timings will be noisy.",
                 load1, ncpus, 0.5 * (double)ncpus);
        add_warning(w, msg);
    }
#if TB_DEBUG_BUILD
    snprintf(msg, sizeof msg,
             "tbench was built as a debug or unoptimized build (buildtype "
             "'%s', optimization '%s'): timings do not represent optimized "
             "code; rebuild with -Dbuildtype=release.",
             TB_BUILD_TYPE, TB_OPTIMIZATION);
    add_warning(w, msg);
#endif
#ifdef __FAST_MATH__
    add_warning(w, "tbench was built with fast-math (-ffast-math or -Ofast "
                   "in c_args): the compiler may reorder floating-point "
                   "arithmetic and drop NaN/Inf handling, so results and "
                   "timings are not those of a standard build.");
#endif
    if (TB_SANITIZED) {
        snprintf(msg, sizeof msg,
                 "tbench was built with sanitizers (%s): the "
                 "instrumentation slows the code down, so timings are not "
                 "representative; rebuild with -Db_sanitize=none.",
                 TB_SANITIZE);
        add_warning(w, msg);
    }
    if (ci->hypervisor) {
        add_warning(w, "The CPU reports the 'hypervisor' flag, so this is "
                       "a virtual machine: timings include virtualization "
                       "noise (steal time, other guests sharing caches and "
                       "memory bandwidth).");
    }
    const char *fault = getenv("TBENCH_FAULT");
    if (fault && *fault) {
        snprintf(msg, sizeof msg,
                 "TBENCH_FAULT is set ('%.200s'): the cases it names are "
                 "made to crash or hang on purpose, to test isolation.",
                 fault);
        add_warning(w, msg);
    }
    return w;
}

/* What each backend says about its environment (its `env` slot: the
 * blas backend's env.openblas), after env.warnings: a member of env per
 * backend that has something to say, and its warning appended to
 * env.warnings.  The backends judge against the ISA flags env.cpu.isa
 * records. */
static void capture_backends(cJSON *env, const cpuinfo_facts *ci)
{
    const char *flags[TB_ENV_NISA + 1];
    size_t nf = 0;
    for (size_t i = 0; i < TB_ENV_NISA; i++)
        if (ci->isa[i])
            flags[nf++] = isa_names[i];
    flags[nf] = NULL;
    int n;
    const tb_backend *const *list = tb_backend_list(&n);
    for (int i = 0; i < n; i++) {
        tb_backend_env be;
        if (tb_backend_env_info(list[i], ci->have_flags ? flags : NULL,
                                &be) || !be.key)
            continue;
        cJSON *o = cJSON_CreateObject();
        if (!o)
            return;
        for (int f = 0; f < be.n_fields && f < TB_BACKEND_ENV_FIELDS; f++) {
            if (be.field[f].is_num)
                cJSON_AddNumberToObject(o, be.field[f].key, be.field[f].num);
            else
                json_add_str(o, be.field[f].key, be.field[f].str);
        }
        json_add(env, be.key, o);
        if (be.warning[0])
            add_warning(cJSON_GetObjectItemCaseSensitive(env, "warnings"),
                        be.warning);
    }
}

/* The plugins this process loaded (src/backends/plugin.h), in load
 * order: backend name, file, the plugin's version string (null when it
 * has none or did not load) and whether it loaded. */
static cJSON *capture_plugins(void)
{
    cJSON *arr = cJSON_CreateArray();
    for (int i = 0; arr && i < tb_plugin_count(); i++) {
        const tb_backend *b = tb_plugin_backend(i);
        cJSON *o = cJSON_CreateObject();
        if (!o)
            break;
        cJSON_AddStringToObject(o, "name", b->name);
        cJSON_AddStringToObject(o, "path", tb_plugin_path(b));
        json_add_str(o, "version", tb_plugin_version(b));
        cJSON_AddBoolToObject(o, "loaded", tb_plugin_loaded(b));
        cJSON_AddItemToArray(arr, o);
    }
    return arr;
}

/* The run-time modules loaded: {"cuda": {"path", "from"}} or
 * {"cuda": null} (src/backends/module.c). */
static cJSON *capture_modules(void)
{
    cJSON *o = cJSON_CreateObject();
    const char *from = NULL, *path = tb_module_loaded("cuda", &from);
    cJSON *m = path ? cJSON_CreateObject() : cJSON_CreateNull();
    if (path && m) {
        cJSON_AddStringToObject(m, "path", path);
        cJSON_AddStringToObject(m, "from", from);
    }
    if (o)
        json_add(o, "cuda", m);
    else
        cJSON_Delete(m);
    return o;
}

cJSON *tb_env_capture(void)
{
    cJSON *env = cJSON_CreateObject();
    if (!env)
        return NULL;

    cpuinfo_facts ci;
    read_cpuinfo(&ci);
    long ncpus = sysconf(_SC_NPROCESSORS_ONLN);

    char governor[TB_ENV_STR_MAX];
    int have_governor =
        read_first_line(
            "/sys/devices/system/cpu/cpu0/cpufreq/scaling_governor",
            governor, sizeof governor) == 0 &&
        governor[0] != '\0';
    const char *gov = have_governor ? governor : NULL;

    json_add(env, "cpu", capture_cpu(&ci, ncpus, gov));

    cJSON *mem = cJSON_CreateObject();
    unsigned long long total = tb_env_mem_total();
    unsigned long long avail = tb_env_mem_available();
    tb_env_add_num(mem, "total_bytes", total > 0, (double)total);
    tb_env_add_num(mem, "available_bytes", avail > 0, (double)avail);
    /* the bracketed word of "always [madvise] never": whether tensors
     * of 4 MiB and more, which ask for huge pages (ops/alloc.c), get
     * them */
    char thp[TB_ENV_STR_MAX];
    const char *thp_mode = NULL;
    if (read_first_line("/sys/kernel/mm/transparent_hugepage/enabled", thp,
                        sizeof thp) == 0) {
        char *l = strchr(thp, '['), *r = l ? strchr(l, ']') : NULL;
        if (r) {
            *r = '\0';
            thp_mode = l + 1;
        }
    }
    json_add_str(mem, "transparent_hugepage", thp_mode);
    json_add(env, "memory", mem);

    struct utsname un;
    int have_uname = uname(&un) == 0;
    char os_name[TB_ENV_STR_MAX];
    int have_os = read_os_name(os_name, sizeof os_name) == 0;
    cJSON *os = cJSON_CreateObject();
    json_add_str(os, "name", have_os ? os_name : NULL);
    json_add_str(os, "kernel", have_uname ? un.release : NULL);
    json_add_str(os, "machine", have_uname ? un.machine : NULL);
    json_add(env, "os", os);

    char host[TB_ENV_STR_MAX];
    int have_host = gethostname(host, sizeof host - 1) == 0;
    host[sizeof host - 1] = '\0';
    json_add_str(env, "hostname", have_host ? host : NULL);

    char date[32];
    time_t now = time(NULL);
    struct tm tm;
    int have_date = now != (time_t)-1 && gmtime_r(&now, &tm) &&
                    strftime(date, sizeof date, "%Y-%m-%dT%H:%M:%SZ",
                             &tm) > 0;
    json_add_str(env, "date", have_date ? date : NULL);

    char buf[TB_ENV_STR_MAX];
    double load[3] = {0, 0, 0};
    int have_load =
        read_first_line("/proc/loadavg", buf, sizeof buf) == 0 &&
        sscanf(buf, "%lf %lf %lf", &load[0], &load[1], &load[2]) == 3;
    if (have_load)
        json_add(env, "loadavg", cJSON_CreateDoubleArray(load, 3));
    else
        cJSON_AddNullToObject(env, "loadavg");

    json_add(env, "build", capture_build());
    json_add(env, "libraries", capture_libraries());
    json_add(env, "plugins", capture_plugins());
    json_add(env, "modules", capture_modules());
    cJSON *process = tb_env_process();
    json_add(env, "process", process);

    cJSON *clk = cJSON_CreateObject();
    struct timespec res = {0, 0};
    int have_res = clock_getres(CLOCK_MONOTONIC, &res) == 0;
    cJSON_AddStringToObject(clk, "source", "CLOCK_MONOTONIC");
    tb_env_add_num(clk, "resolution_ns", have_res,
                 (double)res.tv_sec * 1e9 + (double)res.tv_nsec);
    json_add(env, "clock", clk);

    cJSON *warnings = capture_warnings(&ci, ncpus, gov, have_load, load[0]);
    if (warnings && process)
        tb_env_process_warnings(process, warnings);
    json_add(env, "warnings", warnings);
    capture_backends(env, &ci);
    /* calib_work's work factor (src/ops/calib.h): 1 unless an injected
     * slowdown is being measured */
    cJSON_AddNumberToObject(env, "calib_scale", tb_calib_scale());
    json_add(env, "gpu", tb_env_gpu());
    return env;
}
