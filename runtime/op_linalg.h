/* linalg operators: shape functions and kernels bound in op_linalg.def. */
#ifndef TJIT_RUNTIME_OP_LINALG_H
#define TJIT_RUNTIME_OP_LINALG_H

#include "internal.h"

/* aten::mm: [m, k] x [k, n] -> [m, n]; float32, float64 or int64, one dtype. */
TJ_OP_DECLARE(mm)
/* aten::bmm: [b, m, k] x [b, k, n] -> [b, m, n]. */
TJ_OP_DECLARE(bmm)
/* aten::addmm: beta * self + alpha * (mat1 @ mat2), self broadcast to [m, n];
 * beta = 0 ignores self (nan included). */
TJ_OP_DECLARE(addmm)
/* aten::baddbmm: beta * self + alpha * bmm(batch1, batch2), self broadcast to [b, n, m] */
TJ_OP_DECLARE(baddbmm)
/* mv, dot, addmv, addr: one-column GEMMs */
TJ_OP_DECLARE(mv)
TJ_OP_DECLARE(dot)
TJ_OP_DECLARE(addmv)
TJ_OP_DECLARE(addr)

/** The elementwise operators tj_compile fuses into a preceding addmm, mm
 * or bmm of one batch item (tracer/fuse.c) when they are the only reader
 * of its result. */
typedef enum tj_addmm_epilogue {
    TJ_ADDMM_RELU, /**< aten::relu */
    TJ_ADDMM_GELU, /**< aten::gelu, either approximation */
    TJ_ADDMM_ADD,  /**< aten::add.Tensor with alpha 1 and an operand of the result's shape, or
                        one row of its last dim broadcast over it (a bias) */
} tj_addmm_epilogue;

/** Kernel of a plan step that computes aten::addmm and then an elementwise
 * operator on its result, run on each part of the product as the GEMM
 * finishes it (float32 on our AVX-512 kernel; after the product otherwise),
 * with the operator's own arithmetic: results equal the two kernels run one
 * after the other, bit for bit. args[0..5): addmm's (an mm's or a bmm's
 * as addmm's with self None, beta 0 and alpha 1: mat1 and mat2 [m, k] and
 * [k, n], or [1, m, k] and [1, k, n]); args[5]: the tj_addmm_epilogue;
 * args[6]: the position among the operator's arguments of the product's
 * result; args[7..): the operator's arguments, None at that position.
 * outs[0]: the operator's result, contiguous, with the product's result as
 * its elements in order (views of [.., n] may stand between the two). An
 * add operand that is not contiguous at run time is added after the
 * product by the add kernel. */
tj_status tj_kernel_addmm_epilogue(const tj_value *args, tj_tensor *const *outs);

/** Kernel of a plan step that computes aten::bmm with batch2 read from a
 * strided float32 view instead of its contiguous copy (tracer/fuse_gather.c):
 * args[0]: batch1 [b, m, k]; args[1]: the view; args[2], args[3]: the view's
 * dims [0, args[2]) multiply to b, [args[2], args[3]) to k and the rest to
 * n. outs[0]: [b, m, n], contiguous. Where our GEMM kernel would multiply
 * the copy and the view reads stride-1 windows (its n dims rows of
 * consecutive positions: a decomposed convolution's columns over its padded
 * input), the implicit convolution's tiles read B where it lies
 * (tj_k_window_product, kernels/conv_implicit.h). Else, where our GEMM
 * kernel would multiply the copy and the sum is 64 steps or longer, it reads the view through
 * offset tables instead (tj_k_gemm_f32_offsets: its packed blocks made
 * straight from the view), each thread a group of columns of each batch
 * item, or, for narrow items that share batch1 (batch stride 0: a
 * convolution's weight over its images), ranges of all the items' columns
 * multiplied side by side into scratch and copied to their items. Otherwise chunks of columns (along the view's dim args[3]) are
 * copied in turn into scratch that stays in L2 and multiplied from there
 * (threads taking whole chunks on our kernel), or each batch item whole
 * (BLAS, whose sums depend on the columns around). Either way the same
 * bits as aten::_to_copy then aten::bmm. Errors: TJ_ERR_OUT_OF_MEMORY (the
 * offset tables, the scratch). */
tj_status tj_kernel_bmm_gathered(const tj_value *args, tj_tensor *const *outs);

/** Kernel of a plan step that computes tj_kernel_bmm_gathered's product, then
 * aten::add.Tensor of a bias (alpha 1) and optionally relu as the core table
 * writes it, aten::maximum(0, x) (tracer/fuse_gather.c: a decomposed
 * convolution's bias and activation). args[0..4): tj_kernel_bmm_gathered's;
 * args[4]: the bias, float32, broadcast to outs[0]'s shape as the add
 * broadcasts it, with one value per row of the product (its [b, m, n]
 * elements in order): its dims of size above 1 among those outs[0]'s dims of
 * m; args[5]: int, nonzero for the maximum. outs[0]: the last operator's
 * result, contiguous, b * m * n elements. Each element is the product's sum,
 * then + bias, then the maximum, each rounded as their kernels round it: the
 * same bits as the three steps. On the implicit convolution's route the
 * epilogue runs while the sums are still in the thread's cache (the bias in
 * the by-positions tiles' transposition, or per band of channels of the
 * wide grid; tj_k_window_product); on the other routes over the whole
 * result after the product.
 * Errors: tj_kernel_bmm_gathered's, TJ_ERR_OUT_OF_MEMORY (the bias's rows). */
tj_status tj_kernel_bmm_gathered_epilogue(const tj_value *args, tj_tensor *const *outs);

/** tj_kernel_bmm_gathered(_epilogue) whose view is over a zero-padded buffer
 * that is never made (tracer/fuse_gather.c: a decomposed convolution's
 * zeros + slice_scatter read only by its columns): args[0], args[2],
 * args[3] as there; args[1]: the unpadded input x, float32 [N, C, H, W] or
 * [N, C, L]; args[4]: the bias as tj_kernel_bmm_gathered_epilogue's, or
 * None; args[5]: int, nonzero for the relu; args[6]: ints, the view's
 * geometry over the padded buffer [ndim, shape.., strides.., offset];
 * args[7]: ints {Hp, Wp, top, left}: the padded buffer is [N, C, Hp, Wp]
 * (contiguous; [N, C, 1, Lp] for [N, C, L], top 0) holding x at (top,
 * left), zeros elsewhere. outs[1]: room for that buffer, contiguous (the
 * plan's arena), or NULL where the compiler foresaw the window route
 * (tj_bmm_gathered_on_window_route). On the window route each item's
 * frames are padded into its thread's scratch (tj_k_window_pad), the
 * borders once per thread and call; on the others the buffer is made in
 * outs[1] (NULL: for the step, when A came with other strides than
 * compiled or the kernels' ISA changed). The same bits as the steps it
 * replaces. Errors: tj_kernel_bmm_gathered_epilogue's, TJ_ERR_OUT_OF_MEMORY
 * (the buffer made for the step). */
tj_status tj_kernel_bmm_gathered_padded(const tj_value *args, tj_tensor *const *outs);

/** Whether tj_kernel_bmm_gathered(_epilogue, _padded) computes on the
 * window products (no buffer of the padded input needed) for A of shape
 * shape_a and strides strides_a (ndim_a 3: [b, m, k]) and a view over the
 * padded buffer of shape shape_s, strides strides_s (its dims from s2 on
 * the output positions), at the kernels' current ISA. */
bool tj_bmm_gathered_on_window_route(int ndim_a, const int64_t *shape_a, const int64_t *strides_a, int ndim_s,
                                     const int64_t *shape_s, const int64_t *strides_s, int s2);

/** tj_kernel_bmm_gathered for a batch2 that is the transpose of the copy
 * (tracer/fuse_gather.c): args as there, but the view's dims [args[2],
 * args[3]) multiply to n and the rest to k (the copy is [b, n, k], batch2
 * its transpose [b, k, n]: a weight gradient's g @ columns^T). Where our
 * GEMM kernel would multiply the copy, it reads the view through offset
 * tables (the k dims give B's rows: a long sum takes the kernel's long-sum
 * path with the view as its A); on the other routes the whole view is
 * copied into scratch first. Either way the same bits as aten::_to_copy
 * then aten::bmm. Errors: TJ_ERR_OUT_OF_MEMORY (the tables, the scratch). */
tj_status tj_kernel_bmm_gathered_t(const tj_value *args, tj_tensor *const *outs);

/** Layout of the int64 table a product-scatter step carries (see
 * tj_kernel_product_scatter_add; kernels/product_scatter.h): a header of
 * TJ_PS_HEADER entries, then row_base [rows], at [lines * blocks + 1] and
 * the runs. */
enum {
    TJ_PS_LINES,
    TJ_PS_WIDTH,
    TJ_PS_BLOCKS,
    TJ_PS_DESCENDING,
    TJ_PS_ROWS,
    TJ_PS_HEADER,
};

/** Kernel of a plan step that computes aten::bmm (or aten::mm) and the
 * aten::scatter_add reading its result through views as src
 * (tracer/fuse_scatter.c), the product a block of its columns at a time
 * into scratch that stays in L2, each block scattered right after
 * (kernels/product_scatter.h). args[0], args[1]: the product's operands
 * (float32 [b, m, k] and [b, k, n], or [m, k] and [k, n]); args[2]: the
 * scatter's self (its result's shape); args[3]: the table (TJ_PS_*) the
 * compiler made from the constant index, with the order of additions it
 * checked. outs[0]: the scatter's result, contiguous. Same bits as the two
 * kernels one after the other. Errors: TJ_ERR_OUT_OF_MEMORY (the scratch,
 * an operand's copy). */
tj_status tj_kernel_product_scatter_add(const tj_value *args, tj_tensor *const *outs);

#endif
