/* References of the transfer ops (category transfer: copy_h2d, copy_d2h,
 * copy_d2d).  A copy moves bytes and changes none: the reference is the
 * input's values, and the ops' tolerance is exact (0, 0), so a backend
 * passes the check only when every element it copied equals the source
 * (inputs are drawn from [-1, 1], which holds no NaN, so equal values
 * are equal bytes up to the sign of zero). */
#include "ref.h"

int tb_ref_copy_h2d(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return tb_ref_copy(in, out, p);
}

int tb_ref_copy_d2h(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return tb_ref_copy(in, out, p);
}

int tb_ref_copy_d2d(const tb_tensor *in, tb_tensor *out, const tb_params *p)
{
    return tb_ref_copy(in, out, p);
}
