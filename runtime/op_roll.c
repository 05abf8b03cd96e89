/* roll (self's elements shifted circularly along dims, or along the
 * flattened self when no dim is given), as ATen 1.13's roll_cpu and
 * roll_common. The result is a new contiguous tensor; its decomposition is
 * in decomps/roll.c, its derivative in autograd_formulas.c. */
#include <string.h>

#include "iter.h"
#include "kernels/copy.h"
#include "op_view.h"

#define ROLL "aten::roll"

/* ATen checks the shifts first, then (elements only) each dim in turn; an
 * empty self rolls to an empty clone whatever its dims. */
tj_status tj_meta_roll(const tj_value *args, tj_meta *outs)
{
    const tj_tensor *self = args[0].u.t;
    int ns = args[1].n, nd = args[2].n;
    if (ns == 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, ROLL ": `shifts` required");
    if (nd == 0 ? ns != 1 : ns != nd)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, ROLL ": shifts and dimensions must align. shifts: %d, dims: %d", ns,
                        nd);
    if (ns > TJ_MAX_DIMS) /* a bound of tjit's (the derivative's lists), not ATen's */
        return tj_error(TJ_ERR_INVALID_ARGUMENT, ROLL ": %d shifts, more than the maximum rank %d", ns, TJ_MAX_DIMS);
    if (self->numel > 0 && nd > 0 && self->ndim == 0)
        return tj_error(TJ_ERR_INDEX, ROLL ": dim %lld given for a 0-dim tensor (shape []): no dims to roll",
                        (long long)args[2].u.ints[0]);
    for (int i = 0; self->numel > 0 && i < nd; i++) {
        int d;
        if (tj_wrap_dim(ROLL, args[2].u.ints[i], self->ndim, &d) != TJ_OK) return tj_last_status();
    }
    tj_meta_like(outs, self);
    return TJ_OK;
}

/* shift mod n in [0, n) for n > 0, without overflow for any int64 shift. */
static int64_t wrap_shift(int64_t shift, int64_t n)
{
    int64_t r = shift % n;
    return r < 0 ? r + n : r;
}

/* Copies the elements [a, a + len) of the array at src (dtype dt, n >= 1
 * dims of shape, any strides) in row-major order to the contiguous dst:
 * each step copies the largest box that starts at a (the dims past j at
 * index 0, dim j advanced by as much as fits), so a range takes at most
 * 2n strided copies. */
static void copy_flat_range(char *dst, char *src, tj_dtype dt, int n, const int64_t *shape, const int64_t *strides,
                            int64_t a, int64_t len)
{
    int64_t es = (int64_t)tj_dtype_bytes(dt);
    while (len > 0) {
        int64_t idx[TJ_MAX_DIMS], rest = a, off = 0;
        for (int d = n - 1; d >= 0; d--) {
            idx[d] = rest % shape[d];
            rest /= shape[d];
            off += idx[d] * strides[d];
        }
        int j = n - 1;
        int64_t inner = 1;
        while (j > 0 && idx[j] == 0 && inner * shape[j] <= len) inner *= shape[j--];
        int64_t box[TJ_MAX_DIMS], box_strides[TJ_MAX_DIMS];
        memcpy(box, shape + j, sizeof(int64_t) * (size_t)(n - j));
        box[0] = shape[j] - idx[j] < len / inner ? shape[j] - idx[j] : len / inner;
        tj_contiguous_strides(n - j, box, box_strides);
        tj_k_strided to = {dst, dt, box_strides}, from = {src + off * es, dt, strides + j};
        tj_k_copy_strided(to, from, n - j, box, tj_threads_for(box[0] * inner));
        dst += box[0] * inner * es;
        a += box[0] * inner;
        len -= box[0] * inner;
    }
}

/* No dims: the flattened self rolled by r = shift mod numel, i.e. its last r
 * elements first, then the others (a contiguous self read as one dim). */
static void roll_flat(const tj_tensor *self, int64_t shift, tj_tensor *out)
{
    int64_t numel = self->numel, r = wrap_shift(shift, numel), one = 1;
    bool flat = tj_tensor_is_contiguous(self);
    int n = flat ? 1 : self->ndim;
    const int64_t *shape = flat ? &numel : self->shape, *strides = flat ? &one : self->strides;
    char *o = tj_tensor_ptr(out), *s = tj_tensor_ptr(self);
    copy_flat_range(o, s, self->dtype, n, shape, strides, numel - r, r);
    copy_flat_range(o + r * (int64_t)tj_dtype_bytes(self->dtype), s, self->dtype, n, shape, strides, 0, numel - r);
}

/* Along each rolled dim d with r = its total shift mod size: out[r:] comes
 * from self[:size - r] and out[:r] from self[size - r:]. Every combination
 * of those halves over the rolled dims is one box: one strided copy each. */
tj_status tj_kernel_roll(const tj_value *args, tj_tensor *const *outs)
{
    const tj_tensor *self = args[0].u.t;
    tj_tensor *out = outs[0];
    if (self->numel == 0) return TJ_OK;
    const int64_t *shifts = args[1].u.ints;
    if (args[2].n == 0) {
        roll_flat(self, shifts[0], out);
        return TJ_OK;
    }
    int n = self->ndim, rolled[TJ_MAX_DIMS], nr = 0;
    int64_t r[TJ_MAX_DIMS] = {0};
    for (int i = 0; i < args[2].n; i++) {
        int d;
        tj_wrap_dim(ROLL, args[2].u.ints[i], n, &d); /* checked by the shape function */
        r[d] = wrap_shift(r[d] + wrap_shift(shifts[i], self->shape[d]), self->shape[d]);
    }
    for (int d = 0; d < n; d++)
        if (r[d] != 0) rolled[nr++] = d;
    const int64_t es = (int64_t)tj_dtype_bytes(self->dtype);
    for (int box = 0; box < 1 << nr; box++) {
        int64_t shape[TJ_MAX_DIMS], src = 0, dst = 0, numel = 1;
        memcpy(shape, self->shape, sizeof(int64_t) * (size_t)n);
        for (int k = 0; k < nr; k++) {
            int d = rolled[k];
            bool wrapped = box >> k & 1; /* the part that wraps round to the front */
            shape[d] = wrapped ? r[d] : self->shape[d] - r[d];
            if (wrapped) src += (self->shape[d] - r[d]) * self->strides[d];
            else dst += r[d] * out->strides[d];
        }
        for (int d = 0; d < n; d++) numel *= shape[d];
        tj_k_strided to = {tj_tensor_ptr(out) + dst * es, out->dtype, out->strides};
        tj_k_strided from = {tj_tensor_ptr(self) + src * es, self->dtype, self->strides};
        tj_k_copy_strided(to, from, n, shape, tj_threads_for(numel));
    }
    return TJ_OK;
}
