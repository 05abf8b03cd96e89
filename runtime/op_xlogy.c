/* xlogy (F.kl_div records it): ATen's cpu kernel, self * log(other) with
 * 0 where self == 0 and nan where other is nan. */
#include <math.h>

#include "iter.h"
#include "op_elementwise.h"
#include "op_elementwise_util.h"

/* result_type(self, other); an int64 / bool one becomes float32 */

tj_status tj_meta_xlogy_Tensor(const tj_value *args, tj_meta *outs)
{
    tj_dtype dt = tj_ew_result_type(args, 2);
    const tj_tensor *ts[2] = {args[0].u.t, args[1].u.t};
    return tj_ew_meta_broadcast("aten::xlogy.Tensor", ts, 2, tj_dtype_is_float(dt) ? dt : TJ_FLOAT32, outs);
}

#define XLOGY_LOOP(T, LOG)                                                      \
    static void xlogy_##T(int64_t n, void *out, const void *const *in, const void *ctx) \
    {                                                                           \
        (void)ctx;                                                              \
        const T *x = in[0], *y = in[1];                                         \
        T *o = out;                                                             \
        for (int64_t i = 0; i < n; i++)                                         \
            o[i] = isnan(y[i]) ? (T)NAN : x[i] == 0 ? (T)0 : x[i] * LOG(y[i]);  \
    }
XLOGY_LOOP(float, logf)
XLOGY_LOOP(double, log)

tj_status tj_kernel_xlogy_Tensor(const tj_value *args, tj_tensor *const *outs)
{
    tj_dtype dt = outs[0]->dtype;
    tj_tensor *in[2] = {args[0].u.t, args[1].u.t};
    tj_elementwise(outs[0], in, 2, dt, dt == TJ_FLOAT32 ? xlogy_float : xlogy_double, NULL);
    return TJ_OK;
}
