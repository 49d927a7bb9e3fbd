/* libFuzzer harness: the .npy reader (src/ops/npy.c) on any bytes, as
 * `tbench exec --input FILE` reads them: the header parser directly, and
 * the whole reader through a file.  Seeds: tests/fuzz/corpus/npy. */
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "ops/npy.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static char path[64];

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tb_dtype dt;
    tb_shape sh;
    const char *why;
    if (size > 10)
        (void)tb_npy_parse_header((const char *)data + 10, size - 10, &dt,
                                  &sh, &why);
    if (!path[0])
        snprintf(path, sizeof path, "/tmp/tbench-fuzz-npy-%ld.npy",
                 (long)getpid());
    FILE *f = fopen(path, "wb");
    if (!f)
        abort();
    if (fwrite(data, 1, size, f) != size)
        abort();
    fclose(f);
    tb_tensor t;
    char err[512];
    if (tb_npy_read(path, &t, err, sizeof err) == 0)
        tb_tensor_destroy(&t);
    unlink(path);
    return 0;
}
