/* SGD's momentum update of one parameter in one pass (aten::_fused_sgd_step):
 * the arithmetic of PyTorch 1.13's single-tensor SGD once the momentum
 * buffer exists, operator for operator and rounded the same way, over
 * contiguous buffers.
 *
 * Per element, in the buffers' dtype, with every constant below converted
 * to it (as add / mul convert a Scalar; no fused multiply-add, as
 * tj_k_add_loop computes a + alpha * b with two roundings):
 *     d  = maximize ? -grad : grad
 *     d  = d + weight_decay * param               (only when weight_decay != 0)
 *     buf_out   = buf * momentum + one_minus_dampening * d
 *     d  = nesterov ? d + momentum * buf_out : buf_out
 *     param_out = param + neg_lr * d
 * float32 goes to AVX-512 or AVX2 when the ISA in use (cpu_isa.h: the
 * CPU's, capped by TJ_ISA and tj_k_isa_force) is one of them. */
#ifndef TJIT_KERNELS_SGD_H
#define TJIT_KERNELS_SGD_H

#include <stdbool.h>
#include <stdint.h>

#include "tjit/core.h"

/** The scalars of one step, in double; tj_k_sgd_scalars_init fills them. */
typedef struct tj_k_sgd_scalars {
    double neg_lr;              /* -lr */
    double momentum;
    double one_minus_dampening; /* 1 - dampening */
    double weight_decay;        /* 0: no weight-decay term at all (not 0 * param) */
    bool nesterov, maximize;
} tj_k_sgd_scalars;

/** The scalars as PyTorch's sgd.py computes them in Python floats. */
void tj_k_sgd_scalars_init(tj_k_sgd_scalars *s, double lr, double momentum, double dampening, double weight_decay,
                           bool nesterov, bool maximize);

/** The buffers of one update: n elements each, contiguous, of one dtype.
 * Outputs may be the inputs themselves (element i is read before it is
 * written). */
typedef struct tj_k_sgd_buffers {
    const void *param, *grad, *buf;
    void *param_out, *buf_out;
} tj_k_sgd_buffers;

/** The update over n elements; dtype float32 or float64. */
void tj_k_sgd(tj_dtype dtype, int64_t n, const tj_k_sgd_buffers *b, const tj_k_sgd_scalars *s);

/* Per-ISA float32 loops (sgd_isa.h), selected by sgd.c. */
void tj_k_sgd_f32_avx512(int64_t n, const tj_k_sgd_buffers *b, const tj_k_sgd_scalars *s);
void tj_k_sgd_f32_avx2(int64_t n, const tj_k_sgd_buffers *b, const tj_k_sgd_scalars *s);

#endif
