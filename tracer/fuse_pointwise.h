/* The program a fused elementwise step runs (tracer/fuse_pointwise.c), as
 * the native-code pass (tracer/fuse_native.c) reads and extends it. Plan
 * memory, read only at run time. Internal to tracer/. */
#ifndef TJIT_TRACER_FUSE_POINTWISE_H
#define TJIT_TRACER_FUSE_POINTWISE_H

#include "plan_internal.h"
#include "runtime/op_pointwise.h"
#include "runtime/op_row_reduce.h"

typedef enum { SRC_ARG, SRC_BUF, SRC_ROWS } src_kind;

#define PW_MAX_MEMBERS 64
#define PW_MAX_BUFS 32 /* member results and repeated one-element operands, per thread (a decomposed graph
                          has one of those per literal: tanh-gelu's backward reads ten) */

/* Where a loop input comes from: SRC_ARG, the step's tensor argument
 * `index` (read in place or gathered, decided per run); SRC_BUF, buffer
 * `index` (a splat or an earlier member's result); SRC_ROWS, buffer `index`
 * holding one value per row (a row member's result), repeated along the
 * rows. */
typedef struct pw_src {
    src_kind kind;
    int index;
} pw_src;

/* One call of the step: its loop (or row reduction), where each operand
 * comes from and where its result goes, in member order. */
typedef struct pw_member {
    tj_pointwise pw;
    bool reduces;        /* a row reduction (red) of its one operand, instead of pw's loop */
    tj_row_reduce red;
    bool rows_in;        /* pw computes on one value per row: operands and result indexed by row */
    bool rows_out;       /* its result holds one value per row (rows_in, or a reduction) */
    pw_src in[TJ_ITER_MAX_INPUTS];
    size_t in_es[TJ_ITER_MAX_INPUTS];
    int row_k;    /* -1, or the one input that is SRC_ROWS (or a row_values splat, the other operand no
                     splat) in an add, mul or div over the group's shape: */
    int splat_k;  /* -1, or the one input that is a splat in an add, mul or div: */
    tj_k_rows_args row_arith; /* the loop on the row values in place (tj_k_rows_loop), no spread; with
                                 splat_k, on one row of the chunk reading the splat's first element */
    int buf;      /* buffer receiving the result, -1: written straight into out[out] */
    int out;      /* index among the step's results, -1: not written out */
    tj_dtype dtype; /* of its result */
    size_t es;    /* bytes of a result element */
} pw_member;

/* A buffer filled from outside the group: a splat (one element of tensor
 * `arg`, or `value`, converted to `loop` and repeated, once per thread) or,
 * with `gather`, each chunk of tensor `arg` that is neither contiguous nor
 * of the group's shape (a broadcast or strided view), gathered once per
 * chunk for all its readers. */
typedef struct pw_splat {
    int arg;            /* external tensor, or -1 for `value` */
    bool gather;
    bool row_vector;    /* gathered, in a step walking rows: one row's values ([D], [1, D]) repeated down the rows,
                           the same for every chunk (each starts a row): gathered once per thread */
    bool native_only;   /* read only by native segments, in place (REF_ARG cols): not gathered when they run */
    bool row_values;    /* gathered, in a step walking rows: one value per row ([N, 1] statistics), read only
                           as members' row_k: read in place by tj_k_rows_loop, not gathered, where contiguous */
    tj_dtype loop;      /* the dtype its readers' loops take it in */
    tj_k_scalar value;  /* arg -1: already in `loop` */
} pw_splat;

/* A pointer a native segment takes: buffer `index`, the step's argument
 * `index` read in place at the chunk's start, or the step's result `index`
 * at the chunk's start (es: bytes per element; rows: one value per row, at
 * the chunk's first row; cols: an argument holding one row's values, read
 * by each element's place in its row, at the argument's start); or member
 * `index`'s loop (REF_LOOP) or its context (REF_CTX), for a member the
 * segment calls. */
typedef enum { REF_BUF, REF_ARG, REF_OUT, REF_LOOP, REF_CTX } ref_kind;

typedef struct pw_ref {
    ref_kind kind;
    int index;
    size_t es;
    bool rows, cols;
} pw_ref;

/* fn(n, p): n elements of every pointer p[k] (refs[k]'s chunk). */
typedef void (*pw_native_fn)(int64_t n, void *const *p);

#define PW_MAX_REFS 64

/* Members [first, first + n) as one function (tracer/fuse_native.c): the
 * same stores to buffers and results as their loops and row reductions,
 * same bits. fn NULL:
 * not built, or (at run time) an argument not in place: the loops run. */
typedef struct pw_segment {
    int first, n;
    int n_calls; /* the plan's calls its members stand for (a merged member two) */
    int n_refs;
    pw_ref refs[PW_MAX_REFS];
    pw_native_fn fn;
} pw_segment;

/* A fused step: the shape it walks a chunk at a time, its members, the
 * buffers they share (splats first), and the native segments among them. */
typedef struct pw_program {
    int ndim;
    int64_t shape[TJ_MAX_DIMS];
    int64_t numel;
    int64_t chunk;     /* elements per chunk, a multiple of 64 (of row_len with rows) */
    int64_t row_len;   /* with row reductions: elements per row (the last dim), chunks of whole rows; else 0 */
    size_t buf_bytes;  /* bytes per buffer: chunk elements of the widest dtype */
    int n_members, n_args, n_splats, n_bufs, n_outs;
    int n_gather;      /* gather buffers after the n_bufs: the most inputs a member takes */
    pw_member *members;
    pw_splat *splats; /* buffers [0, n_splats): splats and gathered tensors */
    int n_segments;
    pw_segment *segments; /* in member order */
} pw_program;

/** The kernel of a fused step: args[0] is its pw_program. */
tj_status tj_kernel_fused_pointwise(const tj_value *args, tj_tensor *const *outs);

#endif
