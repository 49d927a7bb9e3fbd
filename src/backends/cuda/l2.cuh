/* l2.cu: the `l2` axis (warm or cold L2 per sample) and the instance's
 * PCI bus id.  CUDA C++ only. */
#ifndef TB_BACKENDS_CUDA_L2_CUH
#define TB_BACKENDS_CUDA_L2_CUH

#include "cuda_internal.cuh"

/* Set c up for l2=value ("warm", "cold"; NULL: warm): for cold, the
 * flush buffer (2 x the device's L2).  0, or TB_EPARAM / TB_ENOMEM /
 * TB_EUNAVAILABLE with a message in err. */
int cu_l2_setup(cu_ctx *c, const char *value, char *err, size_t len);
/* Free what cu_l2_setup allocated; c may be NULL. */
void cu_l2_release(cu_ctx *c);
/* The sample_prep slot: with l2=cold overwrite the flush buffer on the
 * stream and wait, returning 1; with warm 0. */
int cu_sample_prep(void *ctx);
/* The device_pci slot (cudaDeviceGetPCIBusId). */
int cu_device_pci(void *ctx, char *buf, size_t len);

#endif
