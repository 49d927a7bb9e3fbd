/* libFuzzer harness: the readers of the files a person writes, on any
 * bytes, as a command reads a file: the config parser
 * (src/harness/config.c, `tbench run`) and the targets file parser
 * (src/report/targets.c, `tbench targets`), which share the text level
 * (base/jsonc.c).  Seeds: tests/fuzz/corpus/config (configs, and
 * targets.json).  Built and run by scripts/fuzz.sh
 * (tests/fuzz/meson.build). */
#include <stddef.h>
#include <stdint.h>

#include "harness/config.h"
#include "report/targets.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_config cfg;
    tb_targets t;
    char err[512];
    if (tb_config_parse((const char *)data, size, "fuzz.json", &cfg, err,
                        sizeof err) == 0)
        tb_config_free(&cfg);
    if (tb_targets_parse((const char *)data, size, "fuzz.json", &t, err,
                         sizeof err) == 0)
        tb_targets_free(&t);
    return 0;
}
