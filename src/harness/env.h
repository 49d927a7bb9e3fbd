/* Environment capture: everything about the machine and the build that a
 * reader needs to trust (or distrust) a result, plus noise warnings. */
#ifndef TB_HARNESS_ENV_H
#define TB_HARNESS_ENV_H

#include <cjson/cJSON.h>

/* Build a new JSON object describing this machine and build (see
 * docs/FORMAT.md, "env").  Never fails on missing information: fields
 * that cannot be read are null.  Caller owns the result (cJSON_Delete).
 * Includes "warnings": an array of strings (noisy-machine warnings). */
cJSON *tb_env_capture(void);

/* Number of online CPUs (>= 1). */
int tb_env_ncpus(void);
/* Physical memory in bytes (MemTotal), and currently available memory
 * (MemAvailable); 0 if unreadable. */
unsigned long long tb_env_mem_total(void);
unsigned long long tb_env_mem_available(void);

/* The 1-minute load average now, NAN when /proc/loadavg is unreadable. */
double tb_env_load1(void);

/* env.process (docs/FORMAT.md): the environment variables that change
 * what runs (LD_PRELOAD, GLIBC_TUNABLES, OMP_*, MALLOC_*, OPENBLAS_*,
 * TBENCH_*...), the CPU affinity and the cgroup's CPU quota.  NULL on
 * allocation failure. */
cJSON *tb_env_process(void);
/* Warnings about process (tb_env_process's object) into warnings: an
 * affinity or a quota below the online CPUs, LD_PRELOAD or
 * GLIBC_TUNABLES set. */
void tb_env_process_warnings(const cJSON *process, cJSON *warnings);

#endif
