/* The decompositions torch._decomp (1.13) has for the special functions
 * (op_special.def): logit and sinc as torch._refs write them, and
 * logit_backward as torch._decomp.decompositions does, each in the
 * result dtype (integer inputs computed in float32). The other special
 * functions are primitives, as their prims are in torch. */
#include "util.h"

/* clamp(self, eps, 1 - eps) (eps None: -1, which clamps to [-1, 2] and
 * changes no value whose logit is a number), then log(self / (1 - self)) */
static tj_status logit(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(logit, args, m);
    double eps = args[1].kind == TJ_V_NONE ? -1.0 : args[1].u.f;
    tj_tensor *x = tj_clamp(tj_dc_to(args[0].u.t, m[0].dtype), tj_v_float(eps), tj_v_float(1 - eps));
    return tj_dc_done(tj_log(tj_div(x, tj_rsub_scalar(x, tj_v_int(1), tj_v_int(1)))), outs);
}

/* without eps where(0 <= self <= 1, grad_output / (self (1 - self)),
 * nan); with eps where(self < lo or self > hi, 0, ...), so that a nan self
 * gives nan as ATen's kernel does (torch._decomp's where(lo <= self <= hi,
 * ..., 0) gives 0 there) */
static tj_status logit_backward(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(logit_backward, args, m);
    tj_dtype dt = m[0].dtype;
    tj_tensor *g = tj_dc_to(args[0].u.t, dt), *x = tj_dc_to(args[1].u.t, dt);
    bool has_eps = args[2].kind != TJ_V_NONE;
    double lo = has_eps ? args[2].u.f : 0.0, hi = has_eps ? 1.0 - lo : 1.0;
    tj_tensor *d = tj_div(g, tj_mul(x, tj_rsub_scalar(x, tj_v_float(1.0), tj_v_int(1))));
    if (has_eps) {
        tj_tensor *outside = tj_logical_or(tj_lt_scalar(x, tj_v_float(lo)), tj_gt_scalar(x, tj_v_float(hi)));
        return tj_dc_done(tj_where_scalar_self(outside, tj_v_float(0.0), d), outs);
    }
    tj_tensor *inside = tj_logical_and(tj_ge_scalar(x, tj_v_float(lo)), tj_le_scalar(x, tj_v_float(hi)));
    return tj_dc_done(tj_where(inside, d, tj_dc_number(NAN, dt)), outs);
}

/* a = pi x; where(a == 0, 1, sin(a) / a) */
static tj_status sinc(const tj_value *args, tj_value *outs)
{
    TJ_DC_CHECK(sinc, args, m);
    tj_tensor *a = tj_mul_scalar(tj_dc_to(args[0].u.t, m[0].dtype), tj_v_float(M_PI));
    return tj_dc_done(tj_where_scalar_self(tj_eq_scalar(a, tj_v_int(0)), tj_v_int(1), tj_div(tj_sin(a), a)), outs);
}

void tj_register_special_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(logit), logit, "logit");
    tj_op_set_decomposition(TJ_OPS(logit_backward), logit_backward, "logit_backward");
    tj_op_set_decomposition(TJ_OPS(sinc), sinc, "sinc");
}
