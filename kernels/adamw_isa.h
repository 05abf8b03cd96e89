/* The float32 AdamW loop (adamw.h), written once over simd_rows.h and
 * compiled per ISA by adamw_avx512.c / adamw_avx2.c. Every operation is a
 * separate rounding, in the portable loop's order. */
#include "adamw.h"
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

/* Elements [i, i + part); c holds the scalars in tj_k_adamw_scalars order. */
static inline void adamw_vector(const tj_k_adamw_buffers *b, int64_t i, int part, const vf *c)
{
    vf g = load(b->grad, i, part);
    vf p = vf_mul(load(b->param, i, part), c[0]);
    vf m = vf_add(vf_mul(load(b->exp_avg, i, part), c[1]), vf_mul(c[2], g));
    vf v = vf_add(vf_mul(load(b->exp_avg_sq, i, part), c[3]), vf_mul(vf_mul(c[4], g), g));
    vf sq = v;
    if (b->max_sq) {
        sq = vf_max_nan(load(b->max_sq, i, part), v);
        store(b->max_sq_out, i, sq, part);
    }
    store(b->exp_avg_out, i, m, part);
    store(b->exp_avg_sq_out, i, v, part);
    vf denom = vf_add(vf_div(vf_sqrt(sq), c[5]), c[6]);
    store(b->param_out, i, vf_add(p, vf_div(vf_mul(c[7], m), denom)), part);
}

void TJ_ISA(tj_k_adamw_f32)(int64_t n, const tj_k_adamw_buffers *b, const tj_k_adamw_scalars *s)
{
    const vf c[8] = {vf_set1((float)s->decay),     vf_set1((float)s->beta1),           vf_set1((float)s->one_minus_beta1),
                     vf_set1((float)s->beta2),     vf_set1((float)s->one_minus_beta2), vf_set1((float)s->bc2_sqrt),
                     vf_set1((float)s->eps),       vf_set1((float)s->neg_step_size)};
    int64_t i = 0;
    for (; i + VF_N <= n; i += VF_N) adamw_vector(b, i, VF_N, c);
    if (i < n) adamw_vector(b, i, (int)(n - i), c);
}
