/* AVX2 moves for tj_k_convert (see copy.h): float32 <-> float64. */
#include <immintrin.h>

#include "copy.h"

/* vcvtps2pd / vcvtpd2ps give the scalar conversions' bits element by
 * element (NaN quieted with its payload kept, rounding under the current
 * mode); the tail converts one element at a time with those. */
void tj_k_f32_to_f64_avx2(double *d, const float *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm256_storeu_pd(d + i, _mm256_cvtps_pd(_mm_loadu_ps(s + i)));
        _mm256_storeu_pd(d + i + 4, _mm256_cvtps_pd(_mm_loadu_ps(s + i + 4)));
    }
    for (; i < n; i++) d[i] = (double)s[i];
}

void tj_k_f64_to_f32_avx2(float *d, const double *s, int64_t n)
{
    int64_t i = 0;
    for (; i + 8 <= n; i += 8) {
        _mm_storeu_ps(d + i, _mm256_cvtpd_ps(_mm256_loadu_pd(s + i)));
        _mm_storeu_ps(d + i + 4, _mm256_cvtpd_ps(_mm256_loadu_pd(s + i + 4)));
    }
    for (; i < n; i++) d[i] = (float)s[i];
}
