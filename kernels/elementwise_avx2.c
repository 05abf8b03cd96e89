/* AVX2 + FMA instantiation of the float loops (built with -mavx2 -mfma;
 * SLEEF declares its AVX2 functions only in such a translation unit). */
#include <immintrin.h>
#include <math.h>
#include <sleef.h>
#include <string.h>

#include "elementwise_isa.h"
#include "sleef_limits.h"
#include "gelu.h"
#include "gelu_tanh.h"
#include "tanh.h"

#define T float
#define GELU_LOOP tj_k_gelu_f32_avx2
#define GELU_TANH_LOOP tj_k_gelu_tanh_f32_avx2
#define GELU_TANH_BACKWARD_LOOP tj_k_gelu_tanh_backward_f32_avx2
#define TANH_LOOP tj_k_tanh_f32_avx2
#define V __m256
#define W 8
#define FNS fns_f32
#define SFX(name) name##_f32
#define SLEEF(fn) Sleef_##fn##f8_u10avx2
#define VFNMADD(a, b, c) _mm256_fnmadd_ps(a, b, c)
#define VMASK_BITS(m) _mm256_movemask_ps(m)
#define LOADU(p) _mm256_loadu_ps(p)
#define STOREU(p, v) _mm256_storeu_ps(p, v)
#define SPLAT(x) _mm256_set1_ps(x)
#define VSQRT(v) _mm256_sqrt_ps(v)
#define VABS(v) _mm256_andnot_ps(_mm256_set1_ps(-0.0f), v)
#define VMAX(a, b) _mm256_max_ps(a, b)
#define VMIN(a, b) _mm256_min_ps(a, b)
#define VISNAN(a) _mm256_cmp_ps(a, a, _CMP_UNORD_Q)
#define VMASK __m256
#define VCMP_EQ(a, b) _mm256_cmp_ps(a, b, _CMP_EQ_OQ)
#define VCMP_GT(a, b) _mm256_cmp_ps(a, b, _CMP_GT_OQ)
#define VCMP_GE(a, b) _mm256_cmp_ps(a, b, _CMP_GE_OQ)
#define VMASK_AND(a, b) _mm256_and_ps(a, b)
#define VMASK_XOR(a, b) _mm256_xor_ps(a, b)
#define VBLEND(m, a, b) _mm256_blendv_ps(b, a, m)
#define VFLOOR(v) _mm256_round_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define VCEIL(v) _mm256_round_ps(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define VTRUNC(v) _mm256_round_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define VRINT(v) _mm256_round_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#include "elementwise_simd.h"

#define T double
#define V __m256d
#define W 4
#define FNS fns_f64
#define SFX(name) name##_f64
#define SLEEF(fn) Sleef_##fn##d4_u10avx2
#define VFNMADD(a, b, c) _mm256_fnmadd_pd(a, b, c)
#define VMASK_BITS(m) _mm256_movemask_pd(m)
#define LOADU(p) _mm256_loadu_pd(p)
#define STOREU(p, v) _mm256_storeu_pd(p, v)
#define SPLAT(x) _mm256_set1_pd(x)
#define VSQRT(v) _mm256_sqrt_pd(v)
#define VABS(v) _mm256_andnot_pd(_mm256_set1_pd(-0.0), v)
#define VMAX(a, b) _mm256_max_pd(a, b)
#define VMIN(a, b) _mm256_min_pd(a, b)
#define VISNAN(a) _mm256_cmp_pd(a, a, _CMP_UNORD_Q)
#define VMASK __m256d
#define VCMP_EQ(a, b) _mm256_cmp_pd(a, b, _CMP_EQ_OQ)
#define VCMP_GT(a, b) _mm256_cmp_pd(a, b, _CMP_GT_OQ)
#define VCMP_GE(a, b) _mm256_cmp_pd(a, b, _CMP_GE_OQ)
#define VMASK_AND(a, b) _mm256_and_pd(a, b)
#define VMASK_XOR(a, b) _mm256_xor_pd(a, b)
#define VBLEND(m, a, b) _mm256_blendv_pd(b, a, m)
#define VFLOOR(v) _mm256_round_pd(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define VCEIL(v) _mm256_round_pd(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define VTRUNC(v) _mm256_round_pd(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define VRINT(v) _mm256_round_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#include "elementwise_simd.h"

const tj_k_math_isa tj_k_math_avx2 = {&fns_f32, &fns_f64};
