#include "error.h"

const char *tb_strerror(int err)
{
    switch (err) {
    case TB_OK:
        return "success";
#define TB_ERR_CASE(name, text)                                           \
    case TB_E##name:                                                      \
        return text;
        TB_ERRNO_MAP(TB_ERR_CASE)
#undef TB_ERR_CASE
    default:
        return "unknown error";
    }
}
