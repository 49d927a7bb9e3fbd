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

#endif
