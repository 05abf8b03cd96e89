/* The one-lane (W = 1) vector operations elementwise_simd.h expects, the
 * same plain C for float and double. No include guard on purpose:
 * elementwise_simd.h undefines them at its end, so elementwise_generic.c
 * includes this again before each instantiation. */
#define W 1
#define LOADU(p) (*(p))
#define STOREU(p, v) (*(p) = (v))
#define SPLAT(x) (x)
#define VMAX(a, b) ((a) > (b) ? (a) : (b))
#define VMIN(a, b) ((a) < (b) ? (a) : (b))
#define VISNAN(a) ((a) != (a))
#define VMASK int
#define VCMP_EQ(a, b) ((a) == (b))
#define VCMP_GT(a, b) ((a) > (b))
#define VCMP_GE(a, b) ((a) >= (b))
#define VMASK_AND(a, b) ((a) & (b))
#define VMASK_XOR(a, b) ((a) ^ (b))
#define VBLEND(m, a, b) ((m) ? (a) : (b))
