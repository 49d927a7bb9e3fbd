/* Backend interface: an object, like ggml's ggml_backend_i: a table of
 * function pointers plus the backend's own data in one struct.
 *
 * Every slot that needs no instance (probe, axes, create, host, env)
 * takes the backend itself as `self`, so one set of functions can serve
 * many backends (each plugin is a tb_backend whose `data` is its plugin
 * record); every slot of an instance takes the instance's ctx, which
 * create made.  A kernel is handed out with the context to call it with
 * (tb_kernel), so a backend needs no per-kernel trampolines.
 *
 * A backend owns the memory its kernels read and write (host or device),
 * so the interface has alloc/upload/download/sync from the start.  The
 * harness creates one instance per combination of the backend's parameter
 * axes (e.g. threads=1, threads=2), looks kernels up by (op, dtype,
 * params) and times them.  kernel() returning a NULL fn means
 * "unsupported": it is reported as such, never silently replaced by
 * another backend.
 *
 * A backend knows nothing about the harness. Slots marked (optional) may
 * be NULL; the tb_backend_* wrappers in registry.c supply the defaults.
 * A run-time module's placeholder (module.c) fills only name, doc,
 * device_memory, probe, axes and create until its probe has loaded the
 * module and the registry lists the module's own backend instead. */
#ifndef TB_BACKENDS_BACKEND_H
#define TB_BACKENDS_BACKEND_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "../ops/op.h"
#include "../ops/tensor.h"

#define TB_MAX_AXES 4
#define TB_MAX_AXIS_VALUES 32

/* A parameter axis a backend offers, e.g. threads = 1..N. */
typedef struct tb_axis {
    const char *name;
    int n_values;
    const char *values[TB_MAX_AXIS_VALUES];
    int def; /* index into values used when a config does not name it */
    const char *doc;
} tb_axis;

/* Cumulative counts since the instance was created. */
typedef struct tb_backend_counters {
    uint64_t kernel_launches;
    uint64_t memcpy_count;
    uint64_t memcpy_bytes;
    uint64_t device_allocs;
    uint64_t device_alloc_bytes;
} tb_backend_counters;

/* What a number of calls did on a device, per call, as a device
 * profiler saw it (the CUDA module: CUPTI activity records).  When
 * `valid` is false every figure is unknown and `reason` says why
 * (profiler absent, refused, records dropped...): never read as zero. */
#define TB_DEV_MAX_KERNELS 32
#define TB_DEV_NAME_MAX 256

typedef enum {
    TB_DEV_H2D,
    TB_DEV_D2H,
    TB_DEV_D2D,
    TB_DEV_OTHER, /* host to host, arrays, peer to peer */
    TB_DEV_NDIR,
} tb_dev_dir;

typedef struct tb_dev_kernel {
    char name[TB_DEV_NAME_MAX]; /* demangled */
    double count;               /* launches per call */
    double ns;                  /* device time per call */
} tb_dev_kernel;

typedef struct tb_dev_counts {
    bool valid;
    char reason[256];
    uint64_t iters; /* calls counted over */
    double kernel_launches;
    double memcpy_count[TB_DEV_NDIR], memcpy_bytes[TB_DEV_NDIR];
    double memsets, memset_bytes;
    double device_allocs, device_alloc_bytes;
    double device_frees, device_free_bytes;
    int n_kernels; /* kernels in order of first launch */
    tb_dev_kernel kernel[TB_DEV_MAX_KERNELS];
    double kernels_unlisted; /* launches of kernels beyond the list */
} tb_dev_counts;

/* A device's measured peaks and its vendor figures (the `peak` slot).
 * Rates are per second; 0 = unknown (a vendor figure the device does not
 * give, a measurement that failed: `why` then says which). */
typedef enum {
    TB_DEV_PEAK_COPY,  /* a[i] = b[i] */
    TB_DEV_PEAK_READ,  /* s += a[i] */
    TB_DEV_PEAK_TRIAD, /* a[i] = b[i] + s * c[i] */
    TB_DEV_NPEAK_BW,
} tb_dev_peak_bw;

typedef struct tb_dev_peaks {
    char name[128];       /* the device, as the runtime names it */
    int cc_major, cc_minor, sms;
    double l2_bytes, mem_bytes, free_bytes;
    double mem_clock_khz, sm_clock_khz; /* the runtime's peak clocks */
    int bus_bits;
    double vendor_bw;                      /* bytes/s */
    double vendor_flops[TB_DTYPE_COUNT];   /* FMA FLOP/s per dtype */
    double array_bytes;                    /* per array of the bw kernels */
    int reps;                              /* repetitions per figure */
    double bw_best[TB_DEV_NPEAK_BW], bw_median[TB_DEV_NPEAK_BW];
    double flops_best[TB_DTYPE_COUNT], flops_median[TB_DTYPE_COUNT];
    char why[256]; /* why a figure is missing; "" when none is */
} tb_dev_peaks;

/* What the kernels of a host CPU backend run at (the `host` slot): the
 * one way the harness learns the cpu backend's SIMD level and its cap,
 * without its private headers. */
typedef struct tb_backend_host {
    /* The SIMD level of the kernels ("scalar", "avx2", "avx512"): for
     * axis values, what an instance created with them runs (an "auto"
     * level resolved); for none, the best level this CPU, OS and build
     * allow under the cap. */
    const char *isa;
    /* Threads a kernel call uses (1 for no axis values). */
    int threads;
    /* The cap on the level as the process environment sets it
     * (TBENCH_ISA), verbatim: NULL when unset, empty or "auto". */
    const char *isa_cap;
    /* isa_cap when it names no level: instances refuse to start; else
     * NULL. */
    const char *isa_cap_error;
} tb_backend_host;

/* Runs `iters` calls of the case being counted; 0 or a TB_E* code. */
typedef int (*tb_count_run_fn)(void *arg, uint64_t iters);

/* A kernel function: computes out[0..n_out) from in[0..n_in) with
 * parameters p.  Tensors live in the backend's memory.  Returns 0 or a
 * TB_E* code. */
typedef int (*tb_kernel_fn)(void *ctx, const tb_tensor *in, tb_tensor *out,
                            const tb_params *p);

/* A kernel as lookup hands it out: call fn(ctx, ...).  ctx is what the
 * backend chose (the built-in backends: the instance; a plugin instance:
 * a record of its own that lives until the instance is destroyed), so a
 * caller never passes the instance itself.  fn NULL: unsupported. */
typedef struct tb_kernel {
    tb_kernel_fn fn;
    void *ctx;
} tb_kernel;

static inline int tb_kernel_call(const tb_kernel *k, const tb_tensor *in,
                                 tb_tensor *out, const tb_params *p)
{
    return k->fn(k->ctx, in, out, p);
}

/* What a backend says about its environment (the `env` slot): one member
 * of the result's env object, `key`, holding the fields in order (a
 * string NULL or "" is written null), and an optional warning for
 * env.warnings.  The strings must live until the next call of the slot. */
#define TB_BACKEND_ENV_FIELDS 8

typedef struct tb_backend_env_field {
    const char *key;
    bool is_num; /* num, else str */
    const char *str;
    double num;
} tb_backend_env_field;

typedef struct tb_backend_env {
    const char *key; /* NULL: nothing to say */
    int n_fields;
    tb_backend_env_field field[TB_BACKEND_ENV_FIELDS];
    char warning[512]; /* "" for none */
} tb_backend_env;

typedef struct tb_backend tb_backend;

/* When this layout changes, rename the CUDA module's entry point
 * (tb_module_backend_N: module.c, cuda/module.cu, cuda/exports.map) in
 * the same commit, so that a module of another build is refused. */
struct tb_backend {
    const char *name;
    const char *doc;
    /* The backend's own data (a plugin: its plugin record); NULL for
     * the built-in backends.  Only the backend's slots read it. */
    void *data;

    /* Is this backend usable on this machine?  0 if so; otherwise
     * TB_EUNAVAILABLE with a reason such as "no CUDA driver".  Probing a
     * placeholder of a run-time module loads the module: find the
     * backend again afterwards (tb_backend_probe does). */
    int (*probe)(const tb_backend *self, char *reason, size_t len);

    /* Fill the axes this backend offers on this machine; returns count. */
    int (*axes)(const tb_backend *self, tb_axis *out, int max);

    /* Create an instance for one choice per axis (values[i] is a value of
     * axis i, in the order axes() returned them). */
    int (*create)(const tb_backend *self, const char *const *values,
                  void **ctx, char *err, size_t errlen);
    void (*destroy)(void *ctx);

    /* Memory: t's header (dtype, shape, strides) is filled by the caller;
     * alloc sets t->data. upload/download copy between a host tensor and
     * a backend tensor of the same shape and dtype. */
    int (*alloc)(void *ctx, tb_tensor *t);
    void (*free)(void *ctx, tb_tensor *t);
    int (*upload)(void *ctx, tb_tensor *dst, const tb_tensor *src);
    int (*download)(void *ctx, tb_tensor *dst, const tb_tensor *src);
    int (*sync)(void *ctx); /* (optional) wait for queued work */

    /* Kernel for (op, dtype, params), or {NULL, NULL} if unsupported.
     * *impl names the implementation that will run (e.g.
     * "add_f32_scalar").  The kernel stays valid until destroy. */
    tb_kernel (*kernel)(void *ctx, const tb_op *op, tb_dtype dt,
                        const tb_params *p, const char **impl);

    /* (optional) Cumulative counters since create. */
    void (*counters)(void *ctx, tb_backend_counters *out);

    /* (optional) Counting pass, never inside timed samples: start the
     * device profiler, call run(arg, iters), wait for the device, stop,
     * and fill *out with the per-call counts (out->valid false with the
     * reason when they are unknown).  Returns run's error, else 0. */
    int (*count)(void *ctx, tb_count_run_fn run, void *arg, uint64_t iters,
                 tb_dev_counts *out);
    /* (optional) A device clock around a batch of calls: timer_start
     * queues a start mark on the instance's queue before the batch's
     * first call, timer_stop queues an end mark after its last call,
     * waits for it and gives the device time between the marks in *ns.
     * 0, or a TB_E* code (TB_EUNSUPPORTED: no device clock); the harness
     * then records host wall time only. */
    int (*timer_start)(void *ctx);
    int (*timer_stop)(void *ctx, double *ns);
    /* Its tensors live in device memory, apart from the host's: a case
     * may then time its host transfers (config "transfers": every call
     * uploads the inputs from host memory with upload() and downloads the
     * outputs with download()).  false: host memory (cpu, blas,
     * plugins), where such cases are not planned. */
    bool device_memory;
    /* (optional) Called before each timed sample, outside its clocks: get
     * the instance's device ready for the next call as the instance was
     * configured (the CUDA module with l2=cold overwrites a buffer of
     * twice the L2 cache size and waits for it).  Returns 1 when it did
     * something only the next call sees, so that each sample must be one
     * call; 0 when it did nothing; or a negative TB_E* code. */
    int (*sample_prep)(void *ctx);
    /* (optional) The PCI bus id ("00000000:01:00.0") of the NVIDIA GPU
     * the instance runs on, so that the harness can read its clocks
     * through NVML; 0, or a TB_E* code (TB_EUNSUPPORTED: none). */
    int (*device_pci)(void *ctx, char *buf, size_t len);
    /* (optional) Measure the instance's device peaks (memory bandwidth
     * of copy/read/triad kernels, FMA throughput per dtype) with `reps`
     * repetitions of at least rep_s seconds each, and fill *out with
     * them and the vendor figures.  0, or a TB_E* code with out->why. */
    int (*peak)(void *ctx, int reps, double rep_s, tb_dev_peaks *out);
    /* (optional) Host CPU backends (cpu): fill *out for an instance of
     * axis values `values` (one per axis, in axes() order), or for the
     * process when values is NULL.  Needs no instance; callable in any
     * process.  0, or TB_EPARAM for values create() would refuse. */
    int (*host)(const tb_backend *self, const char *const *values,
                tb_backend_host *out);
    /* (optional) Describe the backend's environment for the result's
     * env object (the blas backend: OpenBLAS's configuration, core type
     * and threads, and a warning when its kernels are older than the
     * CPU).  cpu_flags: the CPU's ISA flags as env.cpu.isa records them
     * (NULL-terminated), or NULL when they are unknown.  Needs no
     * instance.  0 with out->key NULL when there is nothing to say. */
    int (*env)(const tb_backend *self, const char *const *cpu_flags,
               tb_backend_env *out);
    /* (optional) The kernel for a case whose inputs are views (a config
     * "layout" other than contiguous: tensor.h): as kernel(), given the
     * inputs' headers in[0..op->n_in) (shapes and strides; data is not
     * read).  {NULL, NULL} when no kernel of the backend reads such
     * inputs; *why then says why (one line, static storage).  NULL
     * slot: every such case is unsupported, "kernel needs contiguous
     * input". */
    tb_kernel (*kernel_view)(void *ctx, const tb_op *op, tb_dtype dt,
                             const tb_params *p, const tb_tensor *in,
                             const char **impl, const char **why);
};

/* Most backends registered at run time (plugins) after the built-in
 * ones. */
#define TB_MAX_REGISTERED 16

/* All backends in a fixed order: the built-in ones (a run-time module
 * by its placeholder until it is loaded, then by its own backend), then
 * the registered ones in registration order. */
const tb_backend *const *tb_backend_list(int *n);
const tb_backend *tb_backend_find(const char *name);

/* List b after the backends registered before it.  0, or TB_EINVAL when
 * TB_MAX_REGISTERED are registered.  b must outlive the process's use of
 * the registry.  The caller checks that its name is free. */
int tb_backend_register(const tb_backend *b);
/* A run-time module has loaded: list `loaded` where `placeholder` was. */
void tb_backend_replace(const tb_backend *placeholder,
                        const tb_backend *loaded);

/* The file run-time module `name` ("cuda") was loaded from, and in
 * *from (may be NULL) why that folder: "TBENCH_MODULE_DIR", "build tree"
 * (only the build's own tbench looks there) or "install prefix"; NULL
 * when it has not loaded (src/backends/module.c). */
const char *tb_module_loaded(const char *name, const char **from);

/* (*b)->probe, then *b found again: a module's placeholder becomes the
 * module's own backend once the probe has loaded it. */
int tb_backend_probe(const tb_backend **b, char *reason, size_t len);

/* The first backend with a `host` slot (the cpu backend): the one that
 * describes the host CPU's kernels. */
const tb_backend *tb_backend_host_cpu(void);

/* Wrappers that supply defaults for optional slots. */
int tb_backend_sync(const tb_backend *b, void *ctx);
void tb_backend_counters_read(const tb_backend *b, void *ctx,
                              tb_backend_counters *out);
/* b->count, or for a backend without one: out not valid, with the
 * reason "backend NAME counts no device activity", and 0. */
int tb_backend_count(const tb_backend *b, void *ctx, tb_count_run_fn run,
                     void *arg, uint64_t iters, tb_dev_counts *out);
/* TB_EUNSUPPORTED when b has no device timer. */
int tb_backend_timer_start(const tb_backend *b, void *ctx);
int tb_backend_timer_stop(const tb_backend *b, void *ctx, double *ns);
/* b->sample_prep, or 0 (nothing to do) for a backend without one. */
int tb_backend_sample_prep(const tb_backend *b, void *ctx);
/* b->device_pci, or TB_EUNSUPPORTED for a backend without one. */
int tb_backend_device_pci(const tb_backend *b, void *ctx, char *buf,
                          size_t len);
/* b->host, or TB_EUNSUPPORTED (*out zeroed) for a backend without one
 * (b NULL included). */
int tb_backend_host_info(const tb_backend *b, const char *const *values,
                         tb_backend_host *out);
/* b->env, or 0 with out->key NULL (*out zeroed first) for a backend
 * without one. */
int tb_backend_env_info(const tb_backend *b, const char *const *cpu_flags,
                        tb_backend_env *out);

#endif
