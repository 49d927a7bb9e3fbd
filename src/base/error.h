/* Error codes shared by every layer of tbench.
 *
 * Functions return int: 0 on success, a negative TB_E* code on failure.
 * The X-macro below is the single source of both the enum and the text
 * returned by tb_strerror(), so the two can never drift apart. */
#ifndef TB_BASE_ERROR_H
#define TB_BASE_ERROR_H

#define TB_ERRNO_MAP(X)                                                   \
    X(NOMEM, "out of memory")                                             \
    X(INVAL, "invalid argument")                                          \
    X(SHAPE, "invalid shape")                                             \
    X(DTYPE, "unsupported dtype")                                         \
    X(PARAM, "invalid parameter")                                         \
    X(UNSUPPORTED, "operation not supported by backend")                  \
    X(UNAVAILABLE, "backend not available")                               \
    X(IO, "input/output error")                                           \
    X(PARSE, "parse error")                                               \
    X(RANGE, "value out of range")                                        \
    X(NOTFOUND, "not found")                                              \
    X(NUMERIC, "numerical failure")                                       \
    X(CONVERGE, "the iteration did not converge")                        \
    X(FAIL, "the backend reported a failure")

typedef enum {
    TB_OK = 0,
    TB_E__BASE = -1000,
#define TB_ERR_ENUM(name, text) TB_E##name,
    TB_ERRNO_MAP(TB_ERR_ENUM)
#undef TB_ERR_ENUM
} tb_error;

/* Human-readable text for an error code; never NULL. */
const char *tb_strerror(int err);

#endif
