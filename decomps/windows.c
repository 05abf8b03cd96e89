/* Sliding windows (see windows.h). */
#include "windows.h"

tj_tensor *tj_dc_pad(tj_tensor *x, int n, const int64_t *lo, const int64_t *hi, double fill)
{
    for (int i = 0; i < n && x; i++) {
        int d = 2 + i;
        int64_t size = tj_tensor_shape(x)[d];
        if (lo[i] < 0 || hi[i] < 0) {
            int64_t start = lo[i] < 0 ? -lo[i] : 0, end = hi[i] < 0 ? size + hi[i] : size;
            x = tj_slice(x, d, true, start, true, end, 1);
            size = tj_tensor_shape(x)[d];
        }
        int64_t before = lo[i] > 0 ? lo[i] : 0, after = hi[i] > 0 ? hi[i] : 0;
        if (!x || (before == 0 && after == 0)) continue;
        int64_t shape[TJ_MAX_DIMS];
        int nd = tj_tensor_ndim(x);
        for (int k = 0; k < nd; k++) shape[k] = tj_tensor_shape(x)[k];
        shape[d] = size + before + after;
        tj_tensor *buf = tj_full(shape, nd, tj_v_float(fill), (int)tj_tensor_dtype(x));
        x = tj_slice_scatter(buf, x, d, true, before, true, before + size, 1);
    }
    return x;
}

tj_tensor *tj_dc_windows(tj_tensor *x, int n, const int64_t *k, const int64_t *stride, const int64_t *dilation,
                         const int64_t *out)
{
    for (int i = 0; i < n && x; i++) {
        int d = 2 + i;
        x = tj_unfold(x, d, dilation[i] * (k[i] - 1) + 1, stride[i]);
        if (dilation[i] > 1) x = tj_slice(x, -1, true, 0, false, 0, dilation[i]);
        if (x && tj_tensor_shape(x)[d] != out[i]) x = tj_slice(x, d, true, 0, true, out[i], 1);
    }
    return x;
}
