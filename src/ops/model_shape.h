/* The geometry of the training workloads' models (models.h): layer
 * sizes, the shape rule of a model's input, and the FLOPs of a forward
 * pass.  A leaf of src/ops: the op table's workload rows use it, and so
 * does models.c, with no circle between the table and the models. */
#ifndef TB_OPS_MODEL_SHAPE_H
#define TB_OPS_MODEL_SHAPE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tensor.h"

/* MLP K-MLP_H1-MLP_H2-N_CLASSES; CNN conv 1->CNN_C1, conv
 * CNN_C1->CNN_C2 (3x3 each), linear -> N_CLASSES. */
#define MLP_H1 256
#define MLP_H2 128
#define N_CLASSES 10
#define CNN_C1 16
#define CNN_C2 32

/* The transformer block's MLP: d_model -> TFM_MLP_MULT * d_model ->
 * d_model. */
#define TFM_MLP_MULT 4

typedef enum { TB_MODEL_MLP, TB_MODEL_CNN, TB_MODEL_TFM } tb_model_kind;

/* The CNN's sizes from its input x [B, 1, H, W]: conv1's output h1 x
 * w1, conv2's h2 x w2 (after a 2x2 pool), the flattened features. */
void tb_model_cnn_dims(const tb_shape *x, int64_t *h1, int64_t *w1,
                       int64_t *h2, int64_t *w2, int64_t *flat);
/* Shape rule of a model's input: 0, or TB_ESHAPE with the reason.
 * heads: the transformer's attention heads (the other models ignore
 * it); its x is [batch, seq, d_model] with d_model a multiple of heads
 * (TB_EPARAM otherwise). */
int tb_model_check_shape(tb_model_kind kind, const tb_shape *x, int heads,
                         char *err, size_t len);
/* FLOPs of one forward pass (multiply-adds count 2; the transformer's
 * attention: the unmasked (query, key) pairs only). */
double tb_model_forward_flops(tb_model_kind kind, const tb_shape *x);

/* A workload op's model (mlp_*, cnn_*, tfm_*; any other op: MLP),
 * whether it is a training step, and its heads in p (the parameter's
 * default when p has none; 0 for an op without heads). */
struct tb_op;
struct tb_params;
tb_model_kind tb_model_of_op(const struct tb_op *op);
bool tb_model_op_trains(const struct tb_op *op);
int tb_model_op_heads(const struct tb_op *op, const struct tb_params *p);

#endif
