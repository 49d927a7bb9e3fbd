/* tbench plugin ABI: benchmark your own tensor library with tbench.
 *
 * A plugin is a shared object that exports one function,
 *
 *     const tbp_plugin *tbench_plugin(void);       (TBP_ENTRY_NAME)
 *
 * returning a table of function pointers that tbench treats exactly like
 * a built-in backend: every op of tbench's op table that the plugin
 * returns a kernel for is checked against tbench's double-precision
 * reference, timed, counted, compared and reported.  Build it against
 * this one header (pkg-config --cflags tbench-plugin) and load it with
 * `tbench run --plugin PATH[:LABEL]` or the TBENCH_PLUGIN_PATH variable.
 * docs/PLUGINS.md is the guide; examples/plugins/ holds two plugins.
 *
 * This header is self-contained C99/C11 and C++ (extern "C"); it
 * declares types only and needs no library at link time.
 *
 * Conventions for every slot below:
 *  - Functions return 0 on success or a negative TBP_E* code.
 *  - Where a slot takes (char *msg, size_t len) it writes a one-line,
 *    NUL-terminated reason into msg (at most len bytes, snprintf-style)
 *    when it fails; tbench prints it next to the plugin's name.
 *  - tbench calls a plugin from one thread at a time.  probe, axes and
 *    the load happen in the tbench process before it forks its worker
 *    processes (and once before that in a short-lived trial process, so
 *    that a plugin that crashes, hangs or exits there is unavailable
 *    instead of fatal); create and everything after it happen in a
 *    worker.  So probe must not create device contexts or threads (do
 *    that in create).
 *  - Slots marked (optional) may be NULL; the text says what tbench
 *    does instead.
 *
 * ABI policy (docs/PLUGINS.md, "ABI policy"): TBP_ABI_MAJOR changes when
 * anything already in this header changes meaning, layout or order;
 * tbench refuses a plugin of another major version.  A minor version
 * only appends optional slots at the end of tbp_plugin (and says which
 * in the history below); a plugin built for an older minor version runs
 * on a newer tbench (the slots its smaller `size` does not reach count
 * as NULL), one built for a newer minor version than the tbench that
 * loads it is refused.  Op and dtype names are stable: an op keeps its
 * name and the meaning and order of its inputs, outputs and parameters;
 * new ops may appear in any version (a plugin simply never sees them).
 *
 * History: 1.0  first version.
 *          1.1  dtypes bf16 and f16 (TBP_BF16, TBP_F16; names "bf16",
 *               "f16"): offered only to plugins built for 1.1 or later,
 *               so a 1.0 plugin is never handed 16-bit elements. */
#ifndef TBENCH_PLUGIN_H
#define TBENCH_PLUGIN_H

#include <stddef.h>
#include <stdint.h>

#ifdef __cplusplus
extern "C" {
#endif

#define TBP_ABI_MAJOR 1
#define TBP_ABI_MINOR 1
/* The version a plugin stores in tbp_plugin.abi_version. */
#define TBP_ABI_VERSION ((uint32_t)TBP_ABI_MAJOR << 16 | TBP_ABI_MINOR)

/* The symbol tbench looks up with dlsym. */
#define TBP_ENTRY_NAME "tbench_plugin"

/* Return codes.  A kernel that returns one makes its case `error`, with
 * the code's meaning as the message (TBP_EFAIL and any code not listed
 * here: "the backend reported a failure"). */
#define TBP_OK 0
#define TBP_ENOMEM (-1)       /* out of memory (host or device) */
#define TBP_EINVAL (-2)       /* a bad argument (tensor header, value) */
#define TBP_ESHAPE (-3)       /* shapes the kernel cannot take */
#define TBP_EUNSUPPORTED (-4) /* not implemented */
#define TBP_EUNAVAILABLE (-5) /* cannot run on this machine */
#define TBP_ENUMERIC (-6)     /* numerical failure (did not converge) */
#define TBP_EFAIL (-7)        /* any other failure */

/* Element types.  In a tensor the code is stable: 0 f32, 1 f64, 2 bf16,
 * 3 f16.  In kernel lookup the dtype is given by its name, "f32", "f64",
 * "bf16" or "f16"; a future dtype gets a new name and code and is never
 * offered to a plugin that returns no kernel for it, nor to one built
 * for an ABI before it.  bf16 (since 1.1) is the upper 16 bits of an f32
 * (8 exponent, 7 significand bits); f16 (since 1.1) IEEE 754 binary16;
 * both stored as uint16_t, and tbench checks their results as PyTorch
 * computes them: in f32, each result rounded once to nearest even
 * (tolerances in units of the dtype's epsilon, `tbench list --json`). */
#define TBP_F32 0
#define TBP_F64 1
#define TBP_BF16 2 /* since ABI 1.1 */
#define TBP_F16 3  /* since ABI 1.1 */

#define TBP_MAX_DIMS 8
#define TBP_MAX_INPUTS 4
#define TBP_MAX_OUTPUTS 3
#define TBP_MAX_PARAMS 8
#define TBP_MAX_AXES 4
#define TBP_MAX_AXIS_VALUES 32

/* A strided, row-major view of memory the plugin owns (host or device).
 * tbench fills dtype, ndim, shape and strides (in elements, not bytes);
 * tbench's tensors are contiguous, 64-byte aligned when on the host.
 * data is set by the plugin's alloc (or tbench's host allocator).  The
 * reserved fields belong to tbench: a plugin neither reads nor writes
 * them. */
typedef struct tbp_tensor {
    int32_t dtype; /* TBP_F32, TBP_F64, TBP_BF16 or TBP_F16 */
    int32_t ndim;  /* 0..TBP_MAX_DIMS; 0 is a scalar (one element) */
    int64_t shape[TBP_MAX_DIMS];
    int64_t strides[TBP_MAX_DIMS];
    void *data;
    const void *reserved0;
    void *reserved1;
    unsigned char reserved2;
} tbp_tensor;

/* A kernel's parameters: bit i of `set` says parameter i has a value in
 * v[i].  Parameter i is the op's i-th parameter as tbp_op.params names
 * them (the order of `tbench list`); ints and bools are stored as exact
 * doubles.  Optional parameters may be unset (their absence has a
 * meaning, e.g. "no axis" = all elements); the others always have a
 * value (tbench fills defaults). */
typedef struct tbp_params {
    uint32_t set;
    double v[TBP_MAX_PARAMS];
} tbp_params;

/* What tbench tells kernel lookup about an op. */
typedef struct tbp_op {
    const char *name; /* stable op name, e.g. "add", "matmul" */
    int n_in, n_out;  /* number of input and output tensors */
    int n_params;
    const char *params[TBP_MAX_PARAMS]; /* parameter names, in index order */
} tbp_op;

/* Index of parameter `name` of op, or -1: resolve indices by name once at
 * lookup, then read p->v[index] in the kernel. */
static inline int tbp_param_index(const tbp_op *op, const char *name)
{
    for (int i = 0; i < op->n_params; i++) {
        const char *a = op->params[i], *b = name;
        while (*a && *a == *b) {
            a++;
            b++;
        }
        if (*a == *b)
            return i;
    }
    return -1;
}

/* A parameter axis the plugin offers (e.g. threads = 1, 2, 4): tbench
 * creates one instance per combination of axis values a config asks for.
 * The strings must stay valid while the plugin is loaded. */
typedef struct tbp_axis {
    const char *name;  /* 1-31 chars of [A-Za-z0-9_] */
    int n_values;      /* 1..TBP_MAX_AXIS_VALUES */
    const char *values[TBP_MAX_AXIS_VALUES];
    int def;           /* index into values used when a config is silent */
    const char *doc;   /* one line, or NULL */
} tbp_axis;

/* Cumulative counts since create.  tbench reports per-iteration
 * differences; counts the plugin does not keep stay 0. */
typedef struct tbp_counters {
    uint64_t kernel_launches; /* kernels (or device kernels) started */
    uint64_t memcpy_count;    /* host<->device copies */
    uint64_t memcpy_bytes;
    uint64_t device_allocs;   /* allocations through the plugin's alloc */
    uint64_t device_alloc_bytes;
} tbp_counters;

/* A kernel: computes out[0..op.n_out) from in[0..op.n_in) with
 * parameters p.  ctx is the instance from create.  The tensors live in
 * the plugin's memory, with the shapes tbench's shape rule gave (never
 * checked again by tbench: a kernel checks what it relies on).  Returns
 * 0 or a TBP_E* code.  For device plugins the kernel may return before
 * the work is done; tbench calls sync before it reads the clock. */
typedef int (*tbp_kernel_fn)(void *ctx, const tbp_tensor *in,
                             tbp_tensor *out, const tbp_params *p);

typedef struct tbp_plugin {
    /* --- header: checked before any slot is used --------------------- */
    uint32_t abi_version;  /* TBP_ABI_VERSION */
    uint32_t size;         /* sizeof(tbp_plugin) */
    uint32_t tensor_size;  /* sizeof(tbp_tensor) */
    uint32_t params_size;  /* sizeof(tbp_params) */

    /* Backend name in results and configs: 1-31 chars of [A-Za-z0-9_-],
     * not a built-in backend's name ("cpu", "blas", "cuda").  A label
     * given with --plugin PATH:LABEL replaces it. */
    const char *name;
    const char *doc;     /* one line for `tbench list` */
    const char *version; /* (optional) the library's version, or NULL */

    /* Can the plugin run here?  0, or TBP_EUNAVAILABLE with a reason
     * ("no device found").  Cheap, no side effects that a fork breaks. */
    int (*probe)(char *reason, size_t len);

    /* (optional) Fill up to max axes; returns how many.  NULL: none. */
    int (*axes)(tbp_axis *out, int max);

    /* Make an instance for one value per axis (values[i] belongs to axis
     * i, in the order axes returned them; n_values axes).  *ctx is
     * passed back to every slot below. */
    int (*create)(const char *const *values, int n_values, void **ctx,
                  char *err, size_t len);
    void (*destroy)(void *ctx);

    /* (optional, all four or none) Memory.  alloc: t's header is filled
     * by tbench, set t->data to a buffer for a contiguous tensor of that
     * shape.  free: release it.  upload/download: copy between a host
     * tensor (src of upload, dst of download, ordinary contiguous host
     * memory) and a plugin tensor of the same dtype and shape.  NULL:
     * host memory: tbench allocates (64-byte aligned) and copies, and
     * counts copies and allocations itself. */
    int (*alloc)(void *ctx, tbp_tensor *t);
    void (*free)(void *ctx, tbp_tensor *t);
    int (*upload)(void *ctx, tbp_tensor *dst, const tbp_tensor *src);
    int (*download)(void *ctx, tbp_tensor *dst, const tbp_tensor *src);
    /* (optional) Wait for all queued work.  NULL: work is synchronous. */
    int (*sync)(void *ctx);

    /* The kernel for op, dtype ("f32", "f64"; since 1.1 "bf16", "f16")
     * and parameters, or NULL if
     * unsupported (the case is reported `unsupported`; tbench never
     * substitutes another kernel).  *impl may be set to a name for the
     * code that runs ("add_f32_avx2"), valid while the plugin is
     * loaded; else tbench names it after the op.  The same function may
     * serve many ops; p is also passed to every call. */
    tbp_kernel_fn (*kernel)(void *ctx, const tbp_op *op, const char *dtype,
                            const tbp_params *p, const char **impl);

    /* (optional) Cumulative counters since create; NULL: tbench counts
     * kernel calls as launches and, for host memory, copies and
     * allocations. */
    void (*counters)(void *ctx, tbp_counters *out);

    /* (optional) Device timer, for plugins whose kernels run
     * asynchronously: timer_start records a start event on the queue the
     * kernels use, timer_stop an end event, waits for it and returns the
     * elapsed nanoseconds in *ns.  ABI 1.0 tbench validates and records
     * whether a plugin has one but times every case with the host clock
     * around the kernels and sync (docs/PLUGINS.md). */
    int (*timer_start)(void *ctx);
    int (*timer_stop)(void *ctx, double *ns);
} tbp_plugin;

/* The entry point's type.  The returned table must stay valid while the
 * plugin is loaded (a static const object). */
typedef const tbp_plugin *(*tbp_entry_fn)(void);

/* Fills the header of a tbp_plugin initializer in C:
 *     static const tbp_plugin p = { TBP_PLUGIN_HEADER, .name = ... };
 * (C++ does not mix positional and designated initializers: there, set
 * the four header fields and the slots by assignment.) */
#define TBP_PLUGIN_HEADER                                               \
    TBP_ABI_VERSION, sizeof(tbp_plugin), sizeof(tbp_tensor),             \
        sizeof(tbp_params)

#if defined(__GNUC__)
#define TBP_EXPORT __attribute__((visibility("default")))
#else
#define TBP_EXPORT
#endif

#ifdef __cplusplus
}
#endif

#endif
