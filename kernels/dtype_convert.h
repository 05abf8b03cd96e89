/* Elements of every dtype as float64 or int64 values and back: the storage
 * dtypes' half of tj_k_convert (copy.c) and of the runtime's element reads
 * and writes (tj_load_f64 and friends). Conversions as PyTorch does them on
 * x86 (tjit/core.h, tj_dtype). */
#ifndef TJIT_KERNELS_DTYPE_CONVERT_H
#define TJIT_KERNELS_DTYPE_CONVERT_H

#include <math.h>
#include <stdbool.h>
#include <stdint.h>
#include <string.h>

#include "tjit/core.h"

/** Bytes of one element of a valid dtype. */
static inline size_t tj_k_dtype_bytes(tj_dtype d)
{
    static const unsigned char bytes[TJ_NUM_DTYPES] = {
        [TJ_FLOAT32] = 4, [TJ_FLOAT64] = 8, [TJ_INT64] = 8, [TJ_BOOL] = 1, [TJ_INT32] = 4,
        [TJ_UINT8] = 1,   [TJ_INT8] = 1,    [TJ_INT16] = 2, [TJ_FLOAT16] = 2, [TJ_BFLOAT16] = 2};
    return bytes[d];
}

/** Whether a valid dtype holds integers (bool included). */
static inline bool tj_k_dtype_integral(tj_dtype d)
{
    return d != TJ_FLOAT32 && d != TJ_FLOAT64 && d != TJ_FLOAT16 && d != TJ_BFLOAT16;
}

/** IEEE binary16 bits -> float32 (exact). */
static inline float tj_k_f16_to_f32(uint16_t h)
{
    uint32_t sign = (uint32_t)(h & 0x8000u) << 16, em = h & 0x7fffu, x;
    if (em >= 0x7c00u) { /* inf, NaN (payload kept) */
        x = 0x7f800000u | (em & 0x3ffu) << 13;
    } else if (em >= 0x0400u) { /* normal: exponent rebiased from 15 to 127 */
        x = (em << 13) + 0x38000000u;
    } else { /* zero or subnormal: em * 2^-24, a normal float32 */
        float f = (float)em * 0x1p-24f;
        memcpy(&x, &f, sizeof x);
    }
    x |= sign;
    float r;
    memcpy(&r, &x, sizeof r);
    return r;
}

/** float32 -> IEEE binary16 bits, rounded to nearest even; +-inf beyond
 * 65504 (from 65520 on); NaN -> the quiet NaN 0x7e00 with x's sign (as c10's
 * fp16_ieee_from_fp32_value). Integer arithmetic except for subnormal
 * results, where one float addition does the rounding (its result is a
 * normal float, so flush-to-zero modes do not change it). */
static inline uint16_t tj_k_f32_to_f16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    uint16_t sign = (uint16_t)(x >> 16 & 0x8000u);
    uint32_t ax = x & 0x7fffffffu;
    if (ax > 0x7f800000u) return sign | 0x7e00u;
    if (ax >= 0x477ff000u) return sign | 0x7c00u; /* 65520 and beyond (inf too) */
    if (ax < 0x38800000u) {                        /* below 2^-14: a subnormal result */
        float a;
        memcpy(&a, &ax, sizeof a);
        a += 0.5f; /* 0.5's ulp is 2^-24, binary16's subnormal step */
        uint32_t r;
        memcpy(&r, &a, sizeof r);
        return sign | (uint16_t)(r - 0x3f000000u);
    }
    ax += 0xc8000fffu + (ax >> 13 & 1u); /* exponent 127 -> 15, plus half an ulp (ties to even) */
    return sign | (uint16_t)(ax >> 13);
}

/** bfloat16 bits -> float32 (exact). */
static inline float tj_k_bf16_to_f32(uint16_t h)
{
    uint32_t x = (uint32_t)h << 16;
    float r;
    memcpy(&r, &x, sizeof r);
    return r;
}

/** float32 -> bfloat16 bits, rounded to nearest even; NaN -> 0x7fc0 (as
 * c10's round_to_nearest_even). */
static inline uint16_t tj_k_f32_to_bf16(float f)
{
    uint32_t x;
    memcpy(&x, &f, sizeof x);
    if (isnan(f)) return 0x7fc0u;
    return (uint16_t)((x + 0x7fffu + (x >> 16 & 1u)) >> 16);
}

/** float -> int64 as x86's cvttsd2si does it (and so PyTorch on x86): values
 * outside int64's range and NaN give INT64_MIN. Defined behaviour, unlike a
 * plain C cast. */
static inline int64_t tj_k_float_to_i64(double x)
{
    return x >= -9223372036854775808.0 && x < 9223372036854775808.0 ? (int64_t)x : INT64_MIN;
}

/** float -> int32 as x86's cvttss2si / cvttsd2si: NaN and values outside
 * int32's range give INT32_MIN. */
static inline int32_t tj_k_float_to_i32(double x)
{
    return x > -2147483649.0 && x < 2147483648.0 ? (int32_t)x : INT32_MIN;
}

/** Element at p of dtype d as a float64 (int64 beyond 2^53 rounds). */
static inline double tj_k_load_f64(const void *p, tj_dtype d)
{
    switch (d) {
    case TJ_FLOAT32: return *(const float *)p;
    case TJ_FLOAT64: return *(const double *)p;
    case TJ_INT64: return (double)*(const int64_t *)p;
    case TJ_BOOL: return *(const uint8_t *)p ? 1.0 : 0.0;
    case TJ_INT32: return *(const int32_t *)p;
    case TJ_UINT8: return *(const uint8_t *)p;
    case TJ_INT8: return *(const int8_t *)p;
    case TJ_INT16: return *(const int16_t *)p;
    case TJ_FLOAT16: return tj_k_f16_to_f32(*(const uint16_t *)p);
    case TJ_BFLOAT16: return tj_k_bf16_to_f32(*(const uint16_t *)p);
    }
    return NAN;
}

/** Element at p of an integral dtype d as an int64 (bool: 0 or 1). */
static inline int64_t tj_k_load_i64(const void *p, tj_dtype d)
{
    switch (d) {
    case TJ_INT64: return *(const int64_t *)p;
    case TJ_BOOL: return *(const uint8_t *)p ? 1 : 0;
    case TJ_INT32: return *(const int32_t *)p;
    case TJ_UINT8: return *(const uint8_t *)p;
    case TJ_INT8: return *(const int8_t *)p;
    case TJ_INT16: return *(const int16_t *)p;
    default: return tj_k_float_to_i64(tj_k_load_f64(p, d));
    }
}

/** Stores the integer v at p in dtype d: narrower integers keep its low
 * bits (wrap), bool is v != 0, floats round to nearest. */
static inline void tj_k_store_i64(void *p, tj_dtype d, int64_t v)
{
    switch (d) {
    case TJ_INT64: *(int64_t *)p = v; break;
    case TJ_BOOL: *(uint8_t *)p = v != 0; break;
    case TJ_INT32: *(uint32_t *)p = (uint32_t)v; break;
    case TJ_UINT8:
    case TJ_INT8: *(uint8_t *)p = (uint8_t)v; break;
    case TJ_INT16: *(uint16_t *)p = (uint16_t)v; break;
    case TJ_FLOAT32: *(float *)p = (float)v; break;
    case TJ_FLOAT64: *(double *)p = (double)v; break;
    case TJ_FLOAT16: *(uint16_t *)p = tj_k_f32_to_f16((float)v); break;
    case TJ_BFLOAT16: *(uint16_t *)p = tj_k_f32_to_bf16((float)v); break;
    }
}

/** Stores the float v at p in dtype d: float16 / bfloat16 through float32;
 * int64 and uint8 by tj_k_float_to_i64 (c10 casts to uint8 through int64),
 * int32 / int16 / int8 by tj_k_float_to_i32, the narrower ones then
 * wrapping; bool is v != 0 (NaN true). */
static inline void tj_k_store_f64(void *p, tj_dtype d, double v)
{
    switch (d) {
    case TJ_FLOAT32: *(float *)p = (float)v; break;
    case TJ_FLOAT64: *(double *)p = v; break;
    case TJ_FLOAT16: *(uint16_t *)p = tj_k_f32_to_f16((float)v); break;
    case TJ_BFLOAT16: *(uint16_t *)p = tj_k_f32_to_bf16((float)v); break;
    case TJ_BOOL: *(uint8_t *)p = v != 0; break;
    case TJ_INT64: *(int64_t *)p = tj_k_float_to_i64(v); break;
    case TJ_UINT8: *(uint8_t *)p = (uint8_t)tj_k_float_to_i64(v); break;
    default: tj_k_store_i64(p, d, tj_k_float_to_i32(v)); break;
    }
}

#endif
