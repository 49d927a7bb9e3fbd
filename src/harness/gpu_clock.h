/* Clock state of an NVIDIA GPU during a case: its SM clock and the
 * reasons NVML gives for holding it down (power cap, thermal slowdown,
 * ...), read at the start and end of each round's sampling and every
 * TB_GPU_CLOCK_PERIOD_NS between samples (never inside a sample's
 * clocks), so that a case timed while the GPU throttled says so.
 *
 * NVML (libnvidia-ml.so.1, or TBENCH_NVML_LIB) is loaded with dlopen on
 * first use in the process that times cases; its absence is not an
 * error but the record's reason.  The device is found by the PCI bus
 * id the backend gives (tb_backend.device_pci), which is the same GPU
 * whatever order CUDA and NVML enumerate devices in.  The struct is
 * plain data: it crosses the worker socket inside tb_result. */
#ifndef TB_HARNESS_GPU_CLOCK_H
#define TB_HARNESS_GPU_CLOCK_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include <cjson/cJSON.h>

/* NVML's clocks event (throttle) reason bits that lower the clock for
 * a cause the run does not control: software power cap, hardware
 * slowdown, software and hardware thermal slowdown, power brake. */
#define TB_GPU_THROTTLE_MASK 0xECull

/* Time between two readings while sampling. */
#define TB_GPU_CLOCK_PERIOD_NS 10000000.0

typedef struct tb_gpu_clock {
    bool requested;  /* the backend named a GPU: the record is not null */
    bool valid;      /* readings were taken (else reason says why) */
    char pci[32];    /* PCI bus id the backend gave */
    char reason[224];
    int readings;
    unsigned sm_start, sm_end, sm_min, sm_max; /* MHz */
    uint64_t reasons_start, reasons_end, reasons_seen; /* NVML bits */
    bool throttled;  /* a reading had a bit of TB_GPU_THROTTLE_MASK */
    double last_ns;  /* tb_now_ns of the last reading */
} tb_gpu_clock;

/* Start the record of a case on the GPU with PCI bus id pci: zero *k,
 * take the first reading (or set the reason: NVML absent, device not
 * found...). */
void tb_gpu_clock_begin(tb_gpu_clock *k, const char *pci);

/* Take a reading when `force` or when TB_GPU_CLOCK_PERIOD_NS passed
 * since the last one; the latest reading is the record's end.  Does
 * nothing for a record that is not valid. */
void tb_gpu_clock_poll(tb_gpu_clock *k, bool force);

/* NVML's reason bits as words separated by ", " ("software power cap,
 * hardware thermal slowdown"); "none" for 0.  Returns buf. */
const char *tb_gpu_clock_reason_words(uint64_t bits, char *buf,
                                      size_t len);

/* One line for the run's output when k throttled: "the GPU throttled
 * during the case: SM clock 1755-1980 MHz; software power cap"; "" when
 * it did not.  Returns buf. */
const char *tb_gpu_clock_warning(const tb_gpu_clock *k, char *buf,
                                 size_t len);

/* The record's gpu_clock value: null when not requested (docs/FORMAT.md). */
cJSON *tb_gpu_clock_json(const tb_gpu_clock *k);

#endif
