/* Strided copies with dtype conversion (see copy.h). */
#include <emmintrin.h>
#include <string.h>

#include "copy.h"
#include "cpu_isa.h"
#include "dtype_convert.h"
#include "parallel.h"

#define MAXD TJ_MAX_DIMS
#define BLOCK 256 /* elements converted per step of a strided run */
#define TILE 32   /* side of the tiles a transposed copy moves */
#define TILE_LINE 64                 /* bytes of a cache line */
#define TILE_SOURCE (512 * 1024)     /* source bytes beyond which window copies are tiled */
#define TILE_BLOCK (64 * 1024)       /* source bytes per block of a tiled copy */
#define STAGE_BYTES 4096             /* buffer of runs on their way to streaming stores */
#define STREAM_BYTES (8 << 20)       /* destinations from which short runs are streamed */

static size_t elem_size(tj_dtype d) { return tj_k_dtype_bytes(d); }

/* Conversions with a storage dtype on either side: through a block of int64
 * values between integral dtypes, of float64 values otherwise (exact for
 * every dtype but int64 beyond 2^53). */
static void convert_any(void *dst, tj_dtype dd, const void *src, tj_dtype sd, int64_t n)
{
    enum { STEP = 256 };
    size_t des = elem_size(dd), ses = elem_size(sd);
    bool integral = tj_k_dtype_integral(dd) && tj_k_dtype_integral(sd);
    for (int64_t b = 0; b < n; b += STEP) {
        int64_t m = n - b < STEP ? n - b : STEP;
        const char *s = (const char *)src + b * (int64_t)ses;
        char *d = (char *)dst + b * (int64_t)des;
        if (integral) {
            int64_t v[STEP];
            for (int64_t i = 0; i < m; i++) v[i] = tj_k_load_i64(s + i * (int64_t)ses, sd);
            for (int64_t i = 0; i < m; i++) tj_k_store_i64(d + i * (int64_t)des, dd, v[i]);
        } else {
            double v[STEP];
            for (int64_t i = 0; i < m; i++) v[i] = tj_k_load_f64(s + i * (int64_t)ses, sd);
            for (int64_t i = 0; i < m; i++) tj_k_store_f64(d + i * (int64_t)des, dd, v[i]);
        }
    }
}

void tj_k_convert(void *dst, tj_dtype dd, const void *src, tj_dtype sd, int64_t n)
{
    if (dd == sd) {
        memcpy(dst, src, (size_t)n * elem_size(dd));
        return;
    }
#define LOOP(DT, ST, EXPR)                                                      \
    do {                                                                        \
        DT *d_ = dst;                                                           \
        const ST *s_ = src;                                                     \
        for (int64_t i = 0; i < n; i++) {                                       \
            ST x = s_[i];                                                       \
            d_[i] = (EXPR);                                                     \
        }                                                                       \
    } while (0)
#define PAIR(D, S) ((int)(D) * TJ_NUM_DTYPES + (int)(S))
    switch (PAIR(dd, sd)) {
    case PAIR(TJ_FLOAT32, TJ_FLOAT64):
        if (tj_k_isa_active() == TJ_K_ISA_AVX512) tj_k_f64_to_f32_avx512(dst, src, n);
        else if (tj_k_isa_active() == TJ_K_ISA_AVX2) tj_k_f64_to_f32_avx2(dst, src, n);
        else LOOP(float, double, (float)x);
        break;
    case PAIR(TJ_FLOAT32, TJ_INT64): LOOP(float, int64_t, (float)x); break;
    case PAIR(TJ_FLOAT32, TJ_BOOL): LOOP(float, uint8_t, x != 0); break;
    case PAIR(TJ_FLOAT64, TJ_FLOAT32):
        if (tj_k_isa_active() == TJ_K_ISA_AVX512) tj_k_f32_to_f64_avx512(dst, src, n);
        else if (tj_k_isa_active() == TJ_K_ISA_AVX2) tj_k_f32_to_f64_avx2(dst, src, n);
        else LOOP(double, float, (double)x);
        break;
    case PAIR(TJ_FLOAT64, TJ_INT64): LOOP(double, int64_t, (double)x); break;
    case PAIR(TJ_FLOAT64, TJ_BOOL): LOOP(double, uint8_t, x != 0); break;
    case PAIR(TJ_INT64, TJ_FLOAT32):
        if (tj_k_isa_active() == TJ_K_ISA_AVX512) tj_k_f32_to_i64_avx512(dst, src, n);
        else LOOP(int64_t, float, tj_k_float_to_i64(x));
        break;
    case PAIR(TJ_INT64, TJ_FLOAT64):
        if (tj_k_isa_active() == TJ_K_ISA_AVX512) tj_k_f64_to_i64_avx512(dst, src, n);
        else LOOP(int64_t, double, tj_k_float_to_i64(x));
        break;
    case PAIR(TJ_INT64, TJ_BOOL): LOOP(int64_t, uint8_t, x != 0); break;
    case PAIR(TJ_BOOL, TJ_FLOAT32): LOOP(uint8_t, float, x != 0); break;
    case PAIR(TJ_BOOL, TJ_FLOAT64): LOOP(uint8_t, double, x != 0); break;
    case PAIR(TJ_BOOL, TJ_INT64): LOOP(uint8_t, int64_t, x != 0); break;
#define HALF(AVX512, AVX2, DT, ST, SCALAR)                                      \
    if (tj_k_isa_active() == TJ_K_ISA_AVX512) AVX512(dst, src, n);              \
    else if (tj_k_isa_active() == TJ_K_ISA_AVX2) AVX2(dst, src, n);             \
    else LOOP(DT, ST, SCALAR(x));                                               \
    break;
    case PAIR(TJ_FLOAT32, TJ_FLOAT16): HALF(tj_k_f16_to_f32_avx512, tj_k_f16_to_f32_avx2, float, uint16_t, tj_k_f16_to_f32)
    case PAIR(TJ_FLOAT16, TJ_FLOAT32): HALF(tj_k_f32_to_f16_avx512, tj_k_f32_to_f16_avx2, uint16_t, float, tj_k_f32_to_f16)
    case PAIR(TJ_FLOAT32, TJ_BFLOAT16): HALF(tj_k_bf16_to_f32_avx512, tj_k_bf16_to_f32_avx2, float, uint16_t, tj_k_bf16_to_f32)
    case PAIR(TJ_BFLOAT16, TJ_FLOAT32): HALF(tj_k_f32_to_bf16_avx512, tj_k_f32_to_bf16_avx2, uint16_t, float, tj_k_f32_to_bf16)
#undef HALF
    case PAIR(TJ_FLOAT32, TJ_UINT8): LOOP(float, uint8_t, (float)x); break;
    case PAIR(TJ_FLOAT32, TJ_INT32): LOOP(float, int32_t, (float)x); break;
    case PAIR(TJ_INT64, TJ_INT32): LOOP(int64_t, int32_t, x); break;
    default: convert_any(dst, dd, src, sd, n); break;
    }
#undef PAIR
#undef LOOP
}

/* A run of n elements from s (stride ss) to d (stride ds), strides in
 * elements; each variant below is chosen once per copy. */
typedef void (*run_fn)(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, tj_dtype dd, tj_dtype sd);

/* Same dtype: typed loops the compiler vectorises (a gather when only the
 * destination is contiguous, the common case of im2col and windows). */
#define MOVE_FNS(T, SUF)                                                                                \
    static void move_gather_##SUF(char *d, int64_t ds, const char *s, int64_t ss, int64_t n,            \
                                  tj_dtype dd, tj_dtype sd)                                            \
    {                                                                                                  \
        (void)ds, (void)dd, (void)sd;                                                                  \
        T *d_ = (T *)d;                                                                                \
        const T *s_ = (const T *)s;                                                                    \
        for (int64_t i = 0; i < n; i++) d_[i] = s_[i * ss];                                            \
    }                                                                                                  \
    static void move_strided_##SUF(char *d, int64_t ds, const char *s, int64_t ss, int64_t n,           \
                                   tj_dtype dd, tj_dtype sd)                                           \
    {                                                                                                  \
        (void)dd, (void)sd;                                                                            \
        T *d_ = (T *)d;                                                                                \
        const T *s_ = (const T *)s;                                                                    \
        for (int64_t i = 0; i < n; i++) d_[i * ds] = s_[i * ss];                                       \
    }
MOVE_FNS(uint8_t, 1)
MOVE_FNS(uint16_t, 2)
MOVE_FNS(uint32_t, 4)
MOVE_FNS(uint64_t, 8)
#undef MOVE_FNS

static void move_memcpy(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, tj_dtype dd, tj_dtype sd)
{
    (void)ds, (void)ss, (void)sd;
    memcpy(d, s, (size_t)n * elem_size(dd));
}

/* Moves n elements of es bytes between strided runs, no conversion. */
static void move_elems(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, size_t es)
{
    if (ds == 1 && ss == 1) memcpy(d, s, (size_t)n * es);
    else if (es == 1) move_strided_1(d, ds, s, ss, n, TJ_BOOL, TJ_BOOL);
    else if (es == 2) move_strided_2(d, ds, s, ss, n, TJ_FLOAT16, TJ_FLOAT16);
    else if (es == 4) move_strided_4(d, ds, s, ss, n, TJ_FLOAT32, TJ_FLOAT32);
    else move_strided_8(d, ds, s, ss, n, TJ_FLOAT64, TJ_FLOAT64);
}

/* Copies a run of n elements from a strided source to a strided destination,
 * converting dtypes through small contiguous buffers when needed. */
static void convert_run(char *d, int64_t ds, const char *s, int64_t ss, int64_t n, tj_dtype dd, tj_dtype sd)
{
    size_t des = elem_size(dd), ses = elem_size(sd);
    if (ds == 1 && ss == 1) {
        tj_k_convert(d, dd, s, sd, n);
        return;
    }
    _Alignas(64) char gathered[BLOCK * 8], converted[BLOCK * 8];
    for (int64_t i = 0; i < n; i += BLOCK) {
        int64_t m = n - i < BLOCK ? n - i : BLOCK;
        const char *sp = s + i * ss * (int64_t)ses;
        char *dp = d + i * ds * (int64_t)des;
        if (ss != 1) {
            move_elems(gathered, 1, sp, ss, m, ses);
            sp = gathered;
        }
        if (ds == 1) {
            tj_k_convert(dp, dd, sp, sd, m);
        } else {
            tj_k_convert(converted, dd, sp, sd, m);
            move_elems(dp, ds, converted, 1, m, des);
        }
    }
}

/* float32 <-> float64 into a contiguous destination (the layouts the
 * convolution decompositions convert through): typed loops, no per-run
 * dispatch. */
#define CONVERT_FNS(DT, ST, SUF)                                                                        \
    static void convert_gather_##SUF(char *d, int64_t ds, const char *s, int64_t ss, int64_t n,         \
                                     tj_dtype dd, tj_dtype sd)                                         \
    {                                                                                                  \
        (void)ds, (void)dd, (void)sd;                                                                  \
        DT *d_ = (DT *)d;                                                                              \
        const ST *s_ = (const ST *)s;                                                                  \
        if (ss == 1)                                                                                   \
            for (int64_t i = 0; i < n; i++) d_[i] = (DT)s_[i];                                         \
        else                                                                                           \
            for (int64_t i = 0; i < n; i++) d_[i] = (DT)s_[i * ss];                                    \
    }
CONVERT_FNS(double, float, f64_f32)
CONVERT_FNS(float, double, f32_f64)
#undef CONVERT_FNS

/* The run function for runs with strides ds, ss. */
static run_fn pick_run(tj_dtype dd, tj_dtype sd, int64_t ds, int64_t ss)
{
    if (dd == TJ_FLOAT64 && sd == TJ_FLOAT32 && ds == 1) return convert_gather_f64_f32;
    if (dd == TJ_FLOAT32 && sd == TJ_FLOAT64 && ds == 1) return convert_gather_f32_f64;
    if (dd != sd) return convert_run;
    size_t es = elem_size(dd);
    if (ds == 1 && ss == 1) return move_memcpy; /* short runs go through pick_runs in copy_rows */
    if (ds == 1) return es == 1 ? move_gather_1 : es == 2 ? move_gather_2 : es == 4 ? move_gather_4 : move_gather_8;
    return es == 1 ? move_strided_1 : es == 2 ? move_strided_2 : es == 4 ? move_strided_4 : move_strided_8;
}

/* Copy geometry after dropping size-1 dims and merging dims that are
 * contiguous in both operands. */
typedef struct geometry {
    int nd;
    int64_t shape[MAXD];
    int64_t ds[MAXD], ss[MAXD];
} geometry;

static void coalesce(geometry *g, int ndim, const int64_t *shape, const int64_t *ds, const int64_t *ss)
{
    int nd = 0;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] == 1) continue;
        if (nd > 0 && g->ds[nd - 1] == ds[d] * shape[d] && g->ss[nd - 1] == ss[d] * shape[d]) {
            g->shape[nd - 1] *= shape[d];
            g->ds[nd - 1] = ds[d];
            g->ss[nd - 1] = ss[d];
            continue;
        }
        g->shape[nd] = shape[d];
        g->ds[nd] = ds[d];
        g->ss[nd] = ss[d];
        nd++;
    }
    if (nd == 0) { /* a single element */
        g->shape[0] = 1;
        g->ds[0] = g->ss[0] = 1;
        nd = 1;
    }
    g->nd = nd;
}

/* Element offsets (dst, src) of the flat index `flat` over dims [0, nd). */
static void offsets_of(const geometry *g, int nd, int64_t flat, int64_t *idx, int64_t *doff, int64_t *soff)
{
    *doff = *soff = 0;
    for (int d = nd - 1; d >= 0; d--) {
        idx[d] = flat % g->shape[d];
        flat /= g->shape[d];
        *doff += idx[d] * g->ds[d];
        *soff += idx[d] * g->ss[d];
    }
}

/* Moves of W bytes (memcpy of a constant size: one load and one store)
 * over each run, the last one ending at the run's end: nbytes >= W. */
#define RUNS_OF(W)                                                                                      \
    for (int64_t j = 0; j < count; j++) {                                                              \
        char *d_ = d + j * dstep;                                                                      \
        const char *s_ = s + j * sstep;                                                                \
        for (int64_t i = 0; i + W < nbytes; i += W) memcpy(d_ + i, s_ + i, W);                         \
        memcpy(d_ + nbytes - W, s_ + nbytes - W, W);                                                   \
    }

void tj_k_copy_runs_generic(char *d, int64_t dstep, const char *s, int64_t sstep, int64_t count, int64_t nbytes)
{
    if (nbytes >= 16) RUNS_OF(16)
    else if (nbytes >= 8) RUNS_OF(8)
    else if (nbytes >= 4) RUNS_OF(4)
    else if (nbytes > 0) RUNS_OF(1)
}
#undef RUNS_OF

void tj_k_gather_runs32_generic(uint32_t *d, int64_t dstep, const uint32_t *s, int64_t sstep, int64_t count,
                                int64_t len, int64_t ss)
{
    for (int64_t j = 0; j < count; j++)
        for (int64_t i = 0; i < len; i++) d[j * dstep + i] = s[j * sstep + i * ss];
}

typedef void (*runs_fn)(char *d, int64_t dstep, const char *s, int64_t sstep, int64_t count, int64_t nbytes);

/* The whole-block mover for runs of `len` elements with strides ds, ss, or
 * NULL when runs go one by one through pick_run: short contiguous runs of
 * one dtype (im2col's rows), where a call and an element loop per run
 * cost more than the move. */
static runs_fn pick_runs(tj_dtype dd, tj_dtype sd, int64_t ds, int64_t ss, int64_t len)
{
    if (dd != sd || ds != 1 || ss != 1 || len * (int64_t)elem_size(dd) >= 256) return NULL;
    return tj_k_isa_active() == TJ_K_ISA_AVX512 ? tj_k_copy_runs_avx512 : tj_k_copy_runs_generic;
}

typedef void (*gather_fn)(uint32_t *d, int64_t dstep, const uint32_t *s, int64_t sstep, int64_t count, int64_t len,
                          int64_t ss);

/* The whole-block mover for runs of 4-byte elements of one dtype gathered
 * with a small stride ss into a contiguous destination (pooling's
 * windows), or NULL. */
static gather_fn pick_gather(tj_dtype dd, tj_dtype sd, int64_t ds, int64_t ss)
{
    if (dd != sd || elem_size(dd) != 4 || ds != 1 || ss < 2 || ss > TJ_K_GATHER_MAX_STRIDE) return NULL;
    return tj_k_isa_active() == TJ_K_ISA_AVX512 ? tj_k_gather_runs32_avx512 : tj_k_gather_runs32_generic;
}

/* n bytes from s to d, whole cache lines of d with streaming stores
 * (they bypass the cache: no read of the line before it is written), the
 * partial lines at either end with plain ones. */
static void stream_bytes(char *d, const char *s, int64_t n)
{
    int64_t head = (int64_t)(-(uintptr_t)d & (TILE_LINE - 1)), i;
    if (head > n) head = n;
    memcpy(d, s, (size_t)head);
    for (i = head; i + TILE_LINE <= n; i += TILE_LINE)
        for (int k = 0; k < TILE_LINE; k += 16)
            _mm_stream_si128((__m128i *)(void *)(d + i + k), _mm_loadu_si128((const __m128i *)(const void *)(s + i + k)));
    memcpy(d + i, s + i, (size_t)(n - i));
}

/* runs() of count runs of nbytes that are adjacent in the destination, put
 * together in a small buffer first and streamed out from it. */
static void stream_runs(runs_fn runs, char *d, const char *s, int64_t sstep, int64_t count, int64_t nbytes)
{
    _Alignas(64) char stage[STAGE_BYTES];
    int64_t per = STAGE_BYTES / nbytes;
    for (int64_t j = 0; j < count; j += per) {
        int64_t k = count - j < per ? count - j : per;
        runs(stage, nbytes, s + j * sstep, sstep, k, nbytes);
        stream_bytes(d + j * nbytes, stage, k * nbytes);
    }
}

/* Copies rows [r0, r1) of the geometry, a row being a run along its last
 * dim (rows are numbered row-major over the other dims). The dim before the
 * last is walked in a tight loop (one call of a runs_fn where there is one). */
static void copy_rows(const geometry *g, tj_k_strided dst, tj_k_strided src, int64_t r0, int64_t r1, bool stream)
{
    int nd = g->nd, last = nd - 1;
    int64_t len = g->shape[last], dsl = g->ds[last], ssl = g->ss[last];
    int64_t des = (int64_t)elem_size(dst.dtype), ses = (int64_t)elem_size(src.dtype);
    run_fn run = pick_run(dst.dtype, src.dtype, dsl, ssl);
    runs_fn runs = pick_runs(dst.dtype, src.dtype, dsl, ssl, len);
    gather_fn gather = pick_gather(dst.dtype, src.dtype, dsl, ssl);
    /* rows are walked in blocks along dim `mid` (the one before the last) */
    int mid = last - 1;
    int64_t nmid = mid >= 0 ? g->shape[mid] : 1, dsm = mid >= 0 ? g->ds[mid] * des : 0,
            ssm = mid >= 0 ? g->ss[mid] * ses : 0;
    int64_t idx[MAXD], doff, soff;
    offsets_of(g, last, r0, idx, &doff, &soff);
    int64_t i = mid >= 0 ? idx[mid] : 0;
    /* d, s: the start of the current block (index 0 along `mid`) */
    char *d = (char *)dst.data + doff * des - i * dsm;
    const char *s = (const char *)src.data + soff * ses - i * ssm;
    for (int64_t r = r0; r < r1;) {
        int64_t stop = nmid - i < r1 - r ? nmid : i + (r1 - r);
        if (runs && stream && dsm == len * des) stream_runs(runs, d + i * dsm, s + i * ssm, ssm, stop - i, len * des);
        else if (runs) runs(d + i * dsm, dsm, s + i * ssm, ssm, stop - i, len * des);
        else if (gather)
            gather((uint32_t *)(void *)(d + i * dsm), dsm / 4, (const uint32_t *)(const void *)(s + i * ssm), ssm / 4,
                   stop - i, len, ssl);
        else
            for (int64_t j = i; j < stop; j++) run(d + j * dsm, dsl, s + j * ssm, ssl, len, dst.dtype, src.dtype);
        r += stop - i;
        if (r >= r1) break;
        /* next block: carry into the dims before `mid` */
        i = 0;
        for (int k = mid - 1; k >= 0; k--) {
            d += g->ds[k] * des, s += g->ss[k] * ses;
            if (++idx[k] < g->shape[k]) break;
            d -= g->ds[k] * g->shape[k] * des, s -= g->ss[k] * g->shape[k] * ses;
            idx[k] = 0;
        }
    }
    if (stream) _mm_sfence(); /* the streamed lines reach memory before the loop's end is signalled */
}

/* A source whose every stride is 0 (one value broadcast) into a
 * contiguous destination: a fill. */
static bool is_fill(const geometry *g)
{
    return g->nd == 1 && g->ss[0] == 0 && g->ds[0] == 1;
}

/* What a fill's parallel loop shares: the value's bytes, converted once. */
typedef struct fill_args {
    char *dst;
    size_t es;
    bool zero;
    _Alignas(8) char value[8];
} fill_args;

/* Elements [begin, end) of a fill. */
static void fill_part(void *ctx, int t, int64_t begin, int64_t end)
{
    const fill_args *a = ctx;
    size_t es = a->es;
    int64_t n = end - begin;
    (void)t;
    if (a->zero) {
        memset(a->dst + begin * (int64_t)es, 0, (size_t)n * es);
        return;
    }
#define FILL(T)                                                                 \
    do {                                                                        \
        T v_, *d_ = (T *)(void *)a->dst + begin;                                \
        memcpy(&v_, a->value, sizeof v_);                                       \
        for (int64_t i = 0; i < n; i++) d_[i] = v_;                             \
    } while (0)
    if (es == 1) FILL(uint8_t);
    else if (es == 2) FILL(uint16_t);
    else if (es == 4) FILL(uint32_t);
    else FILL(uint64_t);
#undef FILL
}

/* The fill on up to nthreads threads, each a contiguous block: the zero
 * fill of the self that a decomposed scatter_add (max pooling's and
 * col2im's gradient) copies first took 130 us of cnn's 2-thread step on
 * one thread. */
static void fill(tj_k_strided dst, tj_k_strided src, int64_t n, int nthreads)
{
    fill_args a = {.dst = dst.data, .es = elem_size(dst.dtype), .zero = true};
    tj_k_convert(a.value, dst.dtype, src.data, src.dtype, 1);
    for (size_t b = 0; b < a.es; b++) a.zero = a.zero && a.value[b] == 0;
    tj_k_parallel(n < 4096 ? 1 : nthreads, n, fill_part, &a);
}

/* A source read along dim nd-2 (stride 1) into a destination written along
 * dim nd-1 (stride 1): a transpose, done in TILE x TILE blocks so that both
 * sides stay in cache. */
static bool is_transpose(const geometry *g)
{
    int nd = g->nd;
    return nd >= 2 && g->ss[nd - 2] == 1 && g->ds[nd - 1] == 1 && g->ss[nd - 1] != 1 && g->shape[nd - 2] >= TILE / 2 &&
           g->shape[nd - 1] >= TILE / 2;
}

static void copy_tile(char *d, int64_t drow, const char *s, int64_t scol, int64_t rows, int64_t cols, size_t es)
{
#define TILE_LOOP(T)                                                            \
    do {                                                                        \
        for (int64_t r = 0; r < rows; r++) {                                    \
            T *d_ = (T *)d + r * drow;                                          \
            const T *s_ = (const T *)s + r;                                     \
            for (int64_t c = 0; c < cols; c++) d_[c] = s_[c * scol];            \
        }                                                                       \
    } while (0)
    if (es == 4 && tj_k_isa_active() == TJ_K_ISA_AVX512) /* 16 x 16 in registers: 4-7x the element loop */
        tj_k_transpose_tile_f32_avx512((float *)(void *)d, drow, (const float *)(const void *)s, scol, rows, cols);
    else if (es == 1) TILE_LOOP(uint8_t);
    else if (es == 2) TILE_LOOP(uint16_t);
    else if (es == 4) TILE_LOOP(uint32_t);
    else TILE_LOOP(uint64_t);
#undef TILE_LOOP
}

/* What the parallel loops of the copies share. */
typedef struct copy_args {
    const geometry *g;
    tj_k_strided dst, src;
    int64_t rt, ct; /* transpose: tiles along rows and columns */
    run_fn run;     /* one long run */
    bool stream;    /* destination far larger than the caches: streaming stores */
} copy_args;

/* Tiles [begin, end) of a transposed copy (numbered row-major over the
 * outer dims, the tile rows and the tile columns). */
static void copy_tiles(void *ctx, int t, int64_t begin, int64_t end)
{
    const copy_args *a = ctx;
    const geometry *g = a->g;
    tj_k_strided dst = a->dst, src = a->src;
    int nd = g->nd;
    int64_t rows = g->shape[nd - 2], cols = g->shape[nd - 1], rt = a->rt, ct = a->ct;
    size_t des = elem_size(dst.dtype), ses = elem_size(src.dtype);
    (void)t;
    for (int64_t it = begin; it < end; it++) {
        int64_t o = it / (rt * ct), r0 = (it / ct) % rt * TILE, c0 = it % ct * TILE;
        int64_t idx[MAXD], doff, soff;
        offsets_of(g, nd - 2, o, idx, &doff, &soff);
        doff += r0 * g->ds[nd - 2] + c0;
        soff += r0 + c0 * g->ss[nd - 1];
        int64_t nr = rows - r0 < TILE ? rows - r0 : TILE, nc = cols - c0 < TILE ? cols - c0 : TILE;
        char *d = (char *)dst.data + doff * (int64_t)des;
        const char *s = (const char *)src.data + soff * (int64_t)ses;
        if (dst.dtype == src.dtype) {
            copy_tile(d, g->ds[nd - 2], s, g->ss[nd - 1], nr, nc, des);
        } else { /* transpose into a buffer, then convert row by row */
            _Alignas(64) char tile[TILE * TILE * 8];
            copy_tile(tile, TILE, s, g->ss[nd - 1], nr, nc, ses);
            for (int64_t r = 0; r < nr; r++)
                tj_k_convert(d + r * g->ds[nd - 2] * (int64_t)des, dst.dtype, tile + r * TILE * (int64_t)ses, src.dtype, nc);
        }
    }
}

/* Elements [begin, end) of a one-dim geometry. */
static void copy_run_part(void *ctx, int t, int64_t begin, int64_t end)
{
    const copy_args *a = ctx;
    const geometry *g = a->g;
    int64_t des = (int64_t)elem_size(a->dst.dtype), ses = (int64_t)elem_size(a->src.dtype);
    (void)t;
    if (begin < end)
        a->run((char *)a->dst.data + begin * g->ds[0] * des, g->ds[0],
               (const char *)a->src.data + begin * g->ss[0] * ses, g->ss[0], end - begin, a->dst.dtype, a->src.dtype);
}

static void copy_rows_part(void *ctx, int t, int64_t begin, int64_t end)
{
    const copy_args *a = ctx;
    (void)t;
    if (begin < end) copy_rows(a->g, a->dst, a->src, begin, end, a->stream);
}

/* The rows of a geometry of numel elements, split between threads. */
static void copy_all_rows(const geometry *g, tj_k_strided dst, tj_k_strided src, int64_t numel, int nthreads)
{
    copy_args a = {.g = g, .dst = dst, .src = src, .stream = numel * (int64_t)elem_size(dst.dtype) >= STREAM_BYTES};
    int64_t rows = numel / g->shape[g->nd - 1];
    tj_k_parallel(rows < nthreads ? 1 : nthreads, rows, copy_rows_part, &a);
}

static int64_t abs64(int64_t x) { return x < 0 ? -x : x; }

/* Source bytes read per index of dim b by dims after it: their rows'
 * cache lines, at most the step of dim b. */
static int64_t source_bytes_per_index(const geometry *g, int b, int64_t es)
{
    int last = g->nd - 1;
    int64_t rows = 1;
    for (int k = b + 1; k < last; k++) rows *= g->shape[k];
    int64_t row = ((g->shape[last] - 1) * abs64(g->ss[last]) + 1) * es;
    int64_t bytes = rows * ((row + TILE_LINE - 1) / TILE_LINE * TILE_LINE), step = abs64(g->ss[b]) * es;
    return bytes < step ? bytes : step;
}

/* The dim to tile, or -1: the outermost dim b (not the last) whose every
 * outer dim stays within one index of b in the source (window taps that
 * read the same lines again, as pooling's windows do) while dims b.. read
 * more than TILE_SOURCE bytes: walking them in the plain order would read
 * the source once per outer index from beyond L2. */
static int tile_dim(const geometry *g, int64_t es)
{
    int64_t reps = g->shape[0];
    for (int b = 1; b + 1 < g->nd; reps *= g->shape[b], b++) {
        bool within = true;
        for (int k = 0; k < b; k++) within = within && abs64(g->ss[k]) * (g->shape[k] - 1) < abs64(g->ss[b]);
        if (within && reps > 1 && source_bytes_per_index(g, b, es) * g->shape[b] > TILE_SOURCE) return b;
    }
    return -1;
}

/* The geometry of indices [at, at + n) of dim b of g, their first element
 * `*first` (in elements) from g's, blocks of `block` indices as a new
 * outermost dim when block > 0 (n a multiple of it). */
static geometry tile_part(const geometry *g, int b, int64_t at, int64_t n, int64_t block, int64_t *dfirst,
                          int64_t *sfirst)
{
    geometry t = *g;
    *dfirst = at * g->ds[b];
    *sfirst = at * g->ss[b];
    t.shape[b] = block > 0 ? block : n;
    if (block > 0) {
        memmove(t.shape + 1, t.shape, sizeof(int64_t) * (size_t)g->nd);
        memmove(t.ds + 1, t.ds, sizeof(int64_t) * (size_t)g->nd);
        memmove(t.ss + 1, t.ss, sizeof(int64_t) * (size_t)g->nd);
        t.shape[0] = n / block;
        t.ds[0] = block * g->ds[b];
        t.ss[0] = block * g->ss[b];
        t.nd = g->nd + 1;
    }
    return t;
}

static tj_k_strided moved(tj_k_strided a, int64_t elems)
{
    a.data = (char *)a.data + elems * (int64_t)elem_size(a.dtype);
    return a;
}

/* Copies g with dim b walked in blocks of source lines that fit in cache
 * (outermost), each block's outer dims inside it, then the leftover
 * indices of b: the same moves in another order. */
static void copy_tiled(const geometry *g, int b, tj_k_strided dst, tj_k_strided src, int nthreads)
{
    int64_t es = (int64_t)elem_size(src.dtype), per = source_bytes_per_index(g, b, es);
    int64_t block = TILE_BLOCK / per > 1 ? TILE_BLOCK / per : 1, n = g->shape[b] / block * block;
    int64_t numel = 1, df, sf;
    for (int k = 0; k < g->nd; k++) numel *= g->shape[k];
    geometry t = tile_part(g, b, 0, n, block, &df, &sf);
    copy_all_rows(&t, dst, src, numel / g->shape[b] * n, nthreads);
    if (n < g->shape[b]) {
        t = tile_part(g, b, n, g->shape[b] - n, 0, &df, &sf);
        copy_all_rows(&t, moved(dst, df), moved(src, sf), numel / g->shape[b] * (g->shape[b] - n), nthreads);
    }
}

void tj_k_copy_strided(tj_k_strided dst, tj_k_strided src, int ndim, const int64_t *shape, int nthreads)
{
    int64_t numel = 1;
    for (int d = 0; d < ndim; d++) numel *= shape[d];
    if (numel == 0) return;
    geometry g;
    coalesce(&g, ndim, shape, dst.strides, src.strides);
    if (nthreads < 1) nthreads = 1;
    if (is_fill(&g)) {
        fill(dst, src, numel, nthreads);
        return;
    }
    copy_args a = {.g = &g, .dst = dst, .src = src};
    int nd = g.nd;
    if (is_transpose(&g)) {
        a.rt = (g.shape[nd - 2] + TILE - 1) / TILE;
        a.ct = (g.shape[nd - 1] + TILE - 1) / TILE;
        tj_k_parallel(nthreads, numel / (g.shape[nd - 2] * g.shape[nd - 1]) * a.rt * a.ct, copy_tiles, &a);
        return;
    }
    if (nd == 1 && nthreads > 1 && numel >= 4096) { /* one long run: split it */
        a.run = pick_run(dst.dtype, src.dtype, g.ds[0], g.ss[0]);
        tj_k_parallel(nthreads, numel, copy_run_part, &a);
        return;
    }
    int b = nd < MAXD ? tile_dim(&g, (int64_t)elem_size(src.dtype)) : -1;
    if (b >= 0) copy_tiled(&g, b, dst, src, nthreads);
    else copy_all_rows(&g, dst, src, numel, nthreads);
}
