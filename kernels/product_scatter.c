/* A product computed a block of columns at a time and scattered as it goes
 * (see product_scatter.h). */
#include "product_scatter.h"

#include "cpu_isa.h"
#include "index_isa.h"
#include "parallel.h"

void tj_k_scatter_add_runs_f32(float *o, const float *src, const int64_t *runs, int64_t nruns)
{
    switch (tj_k_isa_active()) {
    case TJ_K_ISA_AVX512: tj_k_scatter_add_runs_f32_avx512(&o, &src, 1, runs, nruns); return;
    case TJ_K_ISA_AVX2: tj_k_scatter_add_runs_f32_avx2(&o, &src, 1, runs, nruns); return;
    default: break;
    }
    for (int64_t r = 0; r < nruns; r++) {
        float *d = o + (runs[r] >> 4);
        int64_t len = (runs[r] & 15) + 1;
        for (int64_t i = 0; i < len; i++) d[i] = d[i] + src[i];
        src += len;
    }
}

/* Scatter rows a thread computes at once: its block of the product within
 * TJ_K_PRODUCT_SCATTER_BLOCK_BYTES, one row at least. */
static int64_t rows_at_once(const tj_k_scatter_pattern *pat)
{
    int64_t r = TJ_K_PRODUCT_SCATTER_BLOCK_BYTES / ((int64_t)sizeof(float) * pat->lines * pat->width);
    return r < 1 ? 1 : r < pat->rows ? r : pat->rows;
}

static int threads_for(const tj_k_scatter_pattern *pat, int nthreads)
{
    return nthreads < pat->rows ? nthreads : (int)pat->rows;
}

size_t tj_k_product_scatter_scratch_bytes(const tj_k_scatter_pattern *pat, int64_t batch, int64_t m, int64_t n,
                                          bool blocked, int nthreads)
{
    if (!blocked) return (size_t)(batch * m * n) * sizeof(float);
    int nt = threads_for(pat, nthreads);
    return (size_t)(nt < 1 ? 1 : nt) * (size_t)(rows_at_once(pat) * pat->lines * pat->width) * sizeof(float);
}

bool tj_k_product_scatter_blocked(int64_t m, int64_t n, int64_t k, tj_k_mat a, tj_k_mat b)
{
    return tj_k_gemm_on_own_kernel(TJ_FLOAT32, m, n, k, a, b);
}

/* Adds line `line` of block `blk` (its entries at src) into scatter row r. */
static void scatter_line(const tj_k_scatter_pattern *pat, float *out, int64_t r, int64_t line, int64_t blk,
                         const float *src)
{
    int64_t seg = line * pat->blocks + blk;
    tj_k_scatter_add_runs_f32(out + pat->row_base[r], src, pat->runs + pat->at[seg], pat->at[seg + 1] - pat->at[seg]);
}

typedef struct blocked_args {
    const tj_k_scatter_pattern *pat;
    int64_t m, n, k, a_bs, b_bs, per_item; /* per_item: scatter rows per batch item */
    tj_k_mat a, b;
    float *out, *scratch;
    size_t slice; /* floats of scratch per thread */
    int gemm_threads;
} blocked_args;

/* Scatter rows [r0, r1): a few at a time (within one batch item), block by
 * block of columns in the pattern's order, each block's product into the
 * thread's slice and scattered from there. */
static void blocked_rows(void *ctx, int t, int64_t r0, int64_t r1)
{
    const blocked_args *g = ctx;
    const tj_k_scatter_pattern *pat = g->pat;
    float *buf = g->scratch + (size_t)t * g->slice;
    int64_t step = rows_at_once(pat), lines = pat->lines;
    for (int64_t r = r0; r < r1;) {
        int64_t item = r / g->per_item, end = (item + 1) * g->per_item;
        if (end > r1) end = r1;
        if (end > r + step) end = r + step;
        int64_t row0 = (r - item * g->per_item) * lines, nrows = (end - r) * lines;
        const float *a = (const float *)g->a.p + item * g->a_bs + row0 * g->a.rs;
        const float *b = (const float *)g->b.p + item * g->b_bs;
        for (int64_t i = 0; i < pat->blocks; i++) {
            int64_t blk = pat->descending ? pat->blocks - 1 - i : i, j0 = blk * pat->width;
            int64_t cols = g->n - j0 < pat->width ? g->n - j0 : pat->width;
            tj_k_gemm_f32(nrows, cols, g->k, 1.0f, a, g->a.rs, g->a.cs, b + j0 * g->b.cs, g->b.rs, g->b.cs, 0.0f, buf,
                          cols, g->gemm_threads, NULL);
            for (int64_t x = 0; x < nrows; x++) scatter_line(pat, g->out, r + x / lines, x % lines, blk, buf + x * cols);
        }
        r = end;
    }
}

void tj_k_product_scatter_add(const tj_k_scatter_pattern *pat, int64_t batch, int64_t m, int64_t n, int64_t k,
                              tj_k_mat a, int64_t a_bs, tj_k_mat b, int64_t b_bs, float *out, float *scratch,
                              bool blocked, int nthreads)
{
    if (batch <= 0 || m <= 0 || n <= 0) return;
    if (blocked) {
        int nt = threads_for(pat, nthreads);
        blocked_args g = {pat, m, n, k, a_bs, b_bs, m / pat->lines, a, b, out, scratch,
                          (size_t)(rows_at_once(pat) * pat->lines * pat->width), nt <= 1 ? nthreads : 1};
        tj_k_parallel(nt, pat->rows, blocked_rows, &g);
        return;
    }
    /* the unfused bmm's call, then every entry in order */
    tj_k_gemm(TJ_FLOAT32, batch, m, n, k, 1.0, a, a_bs, b, b_bs, 0.0, scratch, m * n, n, nthreads, NULL);
    int64_t per_item = m / pat->lines;
    for (int64_t r = 0; r < pat->rows; r++)
        for (int64_t line = 0; line < pat->lines; line++) {
            const float *row = scratch + (r / per_item * m + (r % per_item) * pat->lines + line) * n;
            for (int64_t blk = 0; blk < pat->blocks; blk++) scatter_line(pat, out, r, line, blk, row + blk * pat->width);
        }
}
