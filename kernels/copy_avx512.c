/* AVX-512 transposed float32 tiles for tj_k_copy_strided (see copy.h). */
#include "copy.h"
#include "transpose16_avx512.h"

void tj_k_transpose_tile_f32_avx512(float *d, int64_t drow, const float *s, int64_t scol, int64_t rows,
                                    int64_t cols)
{
    for (int64_t r0 = 0; r0 < rows; r0 += 16) {
        __mmask16 rm = tj_k_lanes16(rows - r0);
        int64_t nr = rows - r0 < 16 ? rows - r0 : 16;
        for (int64_t c0 = 0; c0 < cols; c0 += 16) {
            __mmask16 cm = tj_k_lanes16(cols - c0);
            __m512 v[16];
            for (int64_t j = 0; j < 16; j++) /* v[j]: column c0 + j of d, rows r0.. (contiguous in s) */
                v[j] = c0 + j < cols ? _mm512_maskz_loadu_ps(rm, s + r0 + (c0 + j) * scol) : _mm512_setzero_ps();
            tj_k_transpose16(v);
            for (int64_t i = 0; i < nr; i++) _mm512_mask_storeu_ps(d + (r0 + i) * drow + c0, cm, v[i]);
        }
    }
}
