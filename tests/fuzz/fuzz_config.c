/* libFuzzer harness: the config parser (src/harness/config.c) on any
 * bytes, as `tbench run` reads a file.  Seeds: tests/fuzz/corpus/config.
 * Built and run by scripts/fuzz.sh (tests/fuzz/meson.build). */
#include <stddef.h>
#include <stdint.h>

#include "harness/config.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_config cfg;
    char err[512];
    if (tb_config_parse((const char *)data, size, "fuzz.json", &cfg, err,
                        sizeof err) == 0)
        tb_config_free(&cfg);
    return 0;
}
