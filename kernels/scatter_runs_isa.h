/* The loop of tj_k_scatter_add_runs_f32 (see index_isa.h), written once
 * over simd_rows.h and compiled per ISA by scatter_runs_avx512.c (a run of
 * up to 16 targets is one masked vector) and scatter_runs_avx2.c (one or
 * two masked vectors of 8: the element-by-element loop it replaces took 63
 * M of the 235 M instructions of decomposed cnn's conv2 input gradient).
 * Masked loads and stores touch only the run's targets: the lanes past it
 * may belong to another thread's scatter row, or lie past the buffer. */
#include "index_isa.h"
#include "simd_rows.h"

/* Elements of src read ahead: the hardware prefetcher does not follow a
 * stream of masked loads, which then wait for memory each (3x slower on
 * the col2im of a decomposed convolution's input gradient). */
#define PREFETCH_AHEAD 1024

/* The loop for a constant nrows (inlined twice below: the source pointers
 * then stay in registers). */
static inline __attribute__((always_inline)) void add_runs(float *const *o, const float *const *src, int nrows,
                                                           const int64_t *runs, int64_t nruns)
{
    const float *s[TJ_K_SCATTER_ADD_ROWS_AT_ONCE];
    for (int q = 0; q < nrows; q++) s[q] = src[q];
    for (int64_t k = 0; k < nruns; k++) {
        int64_t e = runs[k];
        int len = (int)(e & 15) + 1;
        for (int q = 0; q < nrows; q++) {
            float *d = o[q] + (e >> 4);
            _mm_prefetch((const char *)(s[q] + PREFETCH_AHEAD), _MM_HINT_T0);
            int v = 0;
            for (; v + VF_N <= len; v += VF_N) vf_store(d + v, vf_add(vf_load(d + v), vf_load(s[q] + v)));
            if (v < len) {
                int n = len - v;
                vf_store_part(d + v, vf_add(vf_load_part(d + v, n, 0.0f), vf_load_part(s[q] + v, n, 0.0f)), n);
            }
            s[q] += len;
        }
    }
}

void TJ_ISA(tj_k_scatter_add_runs_f32)(float *const *o, const float *const *src, int nrows, const int64_t *runs,
                                       int64_t nruns)
{
    if (nrows == 2) add_runs(o, src, 2, runs, nruns);
    else add_runs(o, src, 1, runs, nruns);
}
