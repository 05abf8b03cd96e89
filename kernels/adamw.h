/* AdamW's update of one parameter in one pass (aten::_fused_adamw_step):
 * the arithmetic of PyTorch 1.13's single-tensor AdamW, operator for
 * operator and rounded the same way, over contiguous buffers.
 *
 * Per element, in the buffers' dtype, with every constant below converted
 * to it (no fused multiply-add):
 *     p  = param * decay
 *     m  = exp_avg * beta1 + one_minus_beta1 * grad
 *     v  = exp_avg_sq * beta2 + one_minus_beta2 * grad * grad
 *     s  = max_sq ? maximum(max_sq, v) : v        (nan propagates)
 *     param_out = p + neg_step_size * m / (sqrt(s) / bc2_sqrt + eps)
 * (products and quotients left to right). float32 goes to AVX-512 or AVX2
 * when the ISA in use (cpu_isa.h) is one of them. */
#ifndef TJIT_KERNELS_ADAMW_H
#define TJIT_KERNELS_ADAMW_H

#include <stdint.h>

#include "tjit/core.h"

/** The scalars of one step, in double; tj_k_adamw_scalars_init fills them. */
typedef struct tj_k_adamw_scalars {
    double decay;                            /* 1 - lr * weight_decay */
    double beta1, one_minus_beta1, beta2, one_minus_beta2;
    double bc2_sqrt;                         /* sqrt(1 - beta2^step) */
    double eps;
    double neg_step_size;                    /* -lr / (1 - beta1^step) */
} tj_k_adamw_scalars;

/** The scalars for step count `step` (already incremented), as PyTorch's
 * adamw.py computes them in Python floats. */
void tj_k_adamw_scalars_init(tj_k_adamw_scalars *s, double lr, double beta1, double beta2, double weight_decay,
                             double eps, double step);

/** The buffers of one update: n elements each, contiguous, of one dtype.
 * Outputs may be the inputs themselves (element i is read before it is
 * written). max_sq and max_sq_out are both NULL without amsgrad. */
typedef struct tj_k_adamw_buffers {
    const void *param, *grad, *exp_avg, *exp_avg_sq, *max_sq;
    void *param_out, *exp_avg_out, *exp_avg_sq_out, *max_sq_out;
} tj_k_adamw_buffers;

/** The update over n elements; dtype float32 or float64. */
void tj_k_adamw(tj_dtype dtype, int64_t n, const tj_k_adamw_buffers *b, const tj_k_adamw_scalars *s);

/* Per-ISA float32 loops (adamw_isa.h), selected by adamw.c. */
void tj_k_adamw_f32_avx512(int64_t n, const tj_k_adamw_buffers *b, const tj_k_adamw_scalars *s);
void tj_k_adamw_f32_avx2(int64_t n, const tj_k_adamw_buffers *b, const tj_k_adamw_scalars *s);

#endif
