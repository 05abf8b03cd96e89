/* AVX-512 instantiation of the float loops (built with -mavx512f ...;
 * SLEEF declares its AVX-512 functions only in such a translation unit). */
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
#define GELU_LOOP tj_k_gelu_f32_avx512
#define GELU_TANH_LOOP tj_k_gelu_tanh_f32_avx512
#define GELU_TANH_BACKWARD_LOOP tj_k_gelu_tanh_backward_f32_avx512
#define TANH_LOOP tj_k_tanh_f32_avx512
#define V __m512
#define W 16
#define FNS fns_f32
#define SFX(name) name##_f32
#define SLEEF(fn) Sleef_##fn##f16_u10avx512f
#define VFNMADD(a, b, c) _mm512_fnmadd_ps(a, b, c)
#define VMASK_BITS(m) ((int)(m))
#define LOADU(p) _mm512_loadu_ps(p)
#define STOREU(p, v) _mm512_storeu_ps(p, v)
#define SPLAT(x) _mm512_set1_ps(x)
#define VSQRT(v) _mm512_sqrt_ps(v)
#define VABS(v) _mm512_abs_ps(v)
#define VMAX(a, b) _mm512_max_ps(a, b)
#define VMIN(a, b) _mm512_min_ps(a, b)
#define VISNAN(a) _mm512_cmp_ps_mask(a, a, _CMP_UNORD_Q)
#define VMASK __mmask16
#define VCMP_EQ(a, b) _mm512_cmp_ps_mask(a, b, _CMP_EQ_OQ)
#define VCMP_GT(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GT_OQ)
#define VCMP_GE(a, b) _mm512_cmp_ps_mask(a, b, _CMP_GE_OQ)
#define VMASK_AND(a, b) ((__mmask16)((a) & (b)))
#define VMASK_XOR(a, b) ((__mmask16)((a) ^ (b)))
#define VBLEND(m, a, b) _mm512_mask_blend_ps(m, b, a)
#define VFLOOR(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define VCEIL(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define VTRUNC(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define VRINT(v) _mm512_roundscale_ps(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#include "elementwise_simd.h"

#define T double
#define V __m512d
#define W 8
#define FNS fns_f64
#define SFX(name) name##_f64
#define SLEEF(fn) Sleef_##fn##d8_u10avx512f
#define VFNMADD(a, b, c) _mm512_fnmadd_pd(a, b, c)
#define VMASK_BITS(m) ((int)(m))
#define LOADU(p) _mm512_loadu_pd(p)
#define STOREU(p, v) _mm512_storeu_pd(p, v)
#define SPLAT(x) _mm512_set1_pd(x)
#define VSQRT(v) _mm512_sqrt_pd(v)
#define VABS(v) _mm512_abs_pd(v)
#define VMAX(a, b) _mm512_max_pd(a, b)
#define VMIN(a, b) _mm512_min_pd(a, b)
#define VISNAN(a) _mm512_cmp_pd_mask(a, a, _CMP_UNORD_Q)
#define VMASK __mmask8
#define VCMP_EQ(a, b) _mm512_cmp_pd_mask(a, b, _CMP_EQ_OQ)
#define VCMP_GT(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GT_OQ)
#define VCMP_GE(a, b) _mm512_cmp_pd_mask(a, b, _CMP_GE_OQ)
#define VMASK_AND(a, b) ((__mmask8)((a) & (b)))
#define VMASK_XOR(a, b) ((__mmask8)((a) ^ (b)))
#define VBLEND(m, a, b) _mm512_mask_blend_pd(m, b, a)
#define VFLOOR(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_NEG_INF | _MM_FROUND_NO_EXC)
#define VCEIL(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_POS_INF | _MM_FROUND_NO_EXC)
#define VTRUNC(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_ZERO | _MM_FROUND_NO_EXC)
#define VRINT(v) _mm512_roundscale_pd(v, _MM_FROUND_TO_NEAREST_INT | _MM_FROUND_NO_EXC)
#include "elementwise_simd.h"

const tj_k_math_isa tj_k_math_avx512 = {&fns_f32, &fns_f64};
