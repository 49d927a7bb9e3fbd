/* Reference kernels of the optimizer steps (placeholder: being written). */
#include "ref.h"

#include "error.h"

#define STUB(name)                                                        \
    int tb_ref_##name(const tb_tensor *in, tb_tensor *out,                \
                      const tb_params *p)                                 \
    {                                                                     \
        (void)in, (void)out, (void)p;                                     \
        return TB_EUNSUPPORTED;                                           \
    }
STUB(sgd) STUB(sgd_momentum) STUB(adam) STUB(adamw) STUB(adagrad)
STUB(adamax) STUB(nadam) STUB(radam)
