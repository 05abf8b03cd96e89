/* The float32 SGD loop (sgd.h), written once over simd_rows.h and compiled
 * per ISA by sgd_avx512.c / sgd_avx2.c. Every operation is a separate
 * rounding, in the portable loop's order. */
#include "sgd.h"
#include "simd_rows.h"

/* The first `part` lanes at p (a partial vector loads 0s, whose results
 * are not stored); part is a constant at each inlined call. */
static inline vf load(const void *p, int64_t i, int part)
{
    return part == VF_N ? vf_load((const float *)p + i) : vf_load_part((const float *)p + i, part, 0.0f);
}
static inline void store(void *p, int64_t i, vf v, int part)
{
    if (part == VF_N) vf_store((float *)p + i, v);
    else vf_store_part((float *)p + i, v, part);
}

/* Elements [i, i + part); c holds neg_lr, momentum, one_minus_dampening,
 * weight_decay. */
static inline void sgd_vector(const tj_k_sgd_buffers *b, const tj_k_sgd_scalars *s, int64_t i, int part, const vf *c)
{
    vf p = load(b->param, i, part), d = load(b->grad, i, part);
    if (s->maximize) d = vf_neg(d);
    if (s->weight_decay != 0) d = vf_add(d, vf_mul(c[3], p));
    vf m = vf_add(vf_mul(load(b->buf, i, part), c[1]), vf_mul(c[2], d));
    store(b->buf_out, i, m, part);
    if (s->nesterov) m = vf_add(d, vf_mul(c[1], m));
    store(b->param_out, i, vf_add(p, vf_mul(c[0], m)), part);
}

void TJ_ISA(tj_k_sgd_f32)(int64_t n, const tj_k_sgd_buffers *b, const tj_k_sgd_scalars *s)
{
    const vf c[4] = {vf_set1((float)s->neg_lr), vf_set1((float)s->momentum), vf_set1((float)s->one_minus_dampening),
                     vf_set1((float)s->weight_decay)};
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) sgd_vector(b, s, i, VF_N, c);
    if (i < n) sgd_vector(b, s, i, (int)(n - i), c);
}
