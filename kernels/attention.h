/* Fused scaled dot-product attention: out = softmax(q k^T * scale + mask) v
 * per batch item, computed in blocks of queries against blocks of keys with
 * an online softmax (running maximum and sum per query, as in
 * FlashAttention), so the [L, S] score matrix is never materialised: only a
 * [bq, bk] block of it per thread. float32 on a CPU with AVX-512 runs
 * attention_avx512.c (register-blocked block products, causal blocks and
 * keys skipped); otherwise the block products go to BLAS, sized so that
 * OpenBLAS runs them on the calling thread (gemm.h). The threads share the
 * (batch, query block) items.
 *
 * Masking: a bool mask keeps positions where it is true (or, with
 * mask_drops, masks them out); a float mask is added to the scores; causal
 * keeps keys j <= i for query i (top-left aligned). A query whose keys are
 * all masked (every score -inf) gets a row of zeros, where softmax would
 * give nan (or nan, with masked_rows_nan). nan scores make their row nan. */
#ifndef TJIT_KERNELS_ATTENTION_H
#define TJIT_KERNELS_ATTENTION_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "tjit/core.h"

/* Strided [rows, cols] matrices per batch item: item b starts at
 * p + off[b] (elements). */
typedef struct tj_k_attn_operand {
    const void *p;
    const int64_t *off;
    int64_t rs, cs;
} tj_k_attn_operand;

typedef struct tj_k_attention {
    tj_dtype dtype; /* float32 or float64: q, k, v, out (and a float mask) */
    int64_t batch, L, S, E, Ev;
    double scale;
    tj_k_attn_operand q, k, v; /* [L, E], [S, E], [S, Ev]; BLAS-readable layouts (tj_k_gemm_layout_ok) */
    tj_k_attn_operand mask;    /* [L, S] (strides may be 0); p NULL when none */
    bool mask_is_bool;
    /* a bool mask marks the positions masked out (masked_fill's mask),
     * not the ones kept */
    bool mask_drops;
    bool causal;
    /* a query whose keys are all masked gets nan, as softmax over a row of
     * -inf does, instead of zeros */
    bool masked_rows_nan;
    void *out; /* contiguous [batch, L, Ev] */
    int nthreads;
} tj_k_attention;

/** Scratch the kernel needs: elements of `dtype` per thread. */
size_t tj_k_attention_scratch(const tj_k_attention *a);
/** Threads the kernel will use (at most a->nthreads). */
int tj_k_attention_threads(const tj_k_attention *a);
/** Runs the attention; scratch holds tj_k_attention_threads() *
 * tj_k_attention_scratch() elements. */
void tj_k_attention_run(const tj_k_attention *a, void *scratch);

/* The float32 AVX-512 kernel (attention_avx512.c) that tj_k_attention_run
 * picks when the ISA in use (cpu_isa.h) is AVX-512: scratch floats per
 * thread, work items (the most threads it can use), and the run on
 * `nthreads` threads. */
size_t tj_k_attention_scratch_f32_avx512(const tj_k_attention *a);
int64_t tj_k_attention_items_f32_avx512(const tj_k_attention *a);
void tj_k_attention_run_f32_avx512(const tj_k_attention *a, int nthreads, float *scratch);

#endif
