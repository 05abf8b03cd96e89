/* Generic (any x86-64) instantiation of the float loops: scalar code calling
 * SLEEF's scalar 1.0-ULP functions. The fallback when the CPU has no AVX2. */
#include <math.h>
#include <sleef.h>
#include <string.h>

#include "elementwise_isa.h"
#include "sleef_limits.h"
#include "gelu.h"
#include "gelu_tanh.h"
#include "tanh.h"

#define T float
#define GELU_LOOP tj_k_gelu_f32_generic
#define GELU_TANH_LOOP tj_k_gelu_tanh_f32_generic
#define GELU_TANH_BACKWARD_LOOP tj_k_gelu_tanh_backward_f32_generic
#define TANH_LOOP tj_k_tanh_f32_generic
#define V float
#define FNS fns_f32
#define SFX(name) name##_f32
#define SLEEF(fn) Sleef_##fn##f_u10
#define VFMOD(a, b) fmodf(a, b)
#define VSQRT(v) sqrtf(v)
#define VABS(v) fabsf(v)
#define VFLOOR(v) floorf(v)
#define VCEIL(v) ceilf(v)
#define VTRUNC(v) truncf(v)
#define VRINT(v) nearbyintf(v)
#include "elementwise_scalar_ops.h"
#include "elementwise_simd.h"

#define T double
#define V double
#define FNS fns_f64
#define SFX(name) name##_f64
#define SLEEF(fn) Sleef_##fn##_u10
#define VFMOD(a, b) fmod(a, b)
#define VSQRT(v) sqrt(v)
#define VABS(v) fabs(v)
#define VFLOOR(v) floor(v)
#define VCEIL(v) ceil(v)
#define VTRUNC(v) trunc(v)
#define VRINT(v) nearbyint(v)
#include "elementwise_scalar_ops.h"
#include "elementwise_simd.h"

const tj_k_math_isa tj_k_math_generic = {&fns_f32, &fns_f64};
