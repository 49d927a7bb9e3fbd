/* Reference kernels of the creation ops (placeholder: being written). */
#include "ref.h"

#include "error.h"

#define STUB(name)                                                        \
    int tb_ref_##name(const tb_tensor *in, tb_tensor *out,                \
                      const tb_params *p)                                 \
    {                                                                     \
        (void)in, (void)out, (void)p;                                     \
        return TB_EUNSUPPORTED;                                           \
    }
STUB(zeros) STUB(ones) STUB(full) STUB(arange) STUB(rand_uniform)
STUB(rand_normal) STUB(copy)
