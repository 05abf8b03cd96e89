/* einsum, an implicit composite as ATen 1.13 writes it (Linear.cpp): parse
 * the equation into labels, align every operand to one order of dims
 * (output labels first, then the contracted ones), then multiply the
 * operands pairwise, left to right or along `path`, each pair through
 * sumproduct_pair: a bmm over the labels both share and no later operand
 * needs, a mul when there are none. make_fx records the permute / view /
 * sum / mul / bmm calls, never einsum.
 *
 * Labels are the subscripts A-Z (0..25) and a-z (26..51) in that order, the
 * order of an implicit output. ATen takes a repeated label's diagonal with
 * diagonal() + movedim(), recorded as diagonal and permute. */
#include <string.h>

#include "internal.h"
#include "util.h"

#define OP "aten::einsum"
#define NUM_LETTERS 26
#define TOTAL_LABELS (2 * NUM_LETTERS)
#define ELLIPSIS TOTAL_LABELS

/* One operand's subscripts. Only the first TJ_MAX_DIMS + 1 are kept: an
 * operand with more fails the count check before they are read. */
typedef struct operand_labels {
    unsigned char label[TJ_MAX_DIMS + 1];
    int n;         /* entries, the ellipsis included */
    bool ellipsis;
} operand_labels;

static bool is_letter(unsigned char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z'); }
static int subscript_of(unsigned char c) { return c <= 'Z' ? c - 'A' : c - 'a' + NUM_LETTERS; }
static char label_of(int s) { return (char)(s < NUM_LETTERS ? 'A' + s : 'a' + s - NUM_LETTERS); }

static void push_label(operand_labels *ol, unsigned char s)
{
    if (ol->n < TJ_MAX_DIMS + 1) ol->label[ol->n] = s;
    ol->n++;
}

/* The left-hand side (lhs_len bytes of eq) into one label list per operand. */
static tj_status parse_inputs(const char *eq, size_t lhs_len, operand_labels *ops, int num_ops)
{
    int curr = 0;
    for (size_t i = 0; i < lhs_len; i++) {
        unsigned char c = (unsigned char)eq[i];
        if (c == ' ') continue;
        if (c == '.') {
            if (ops[curr].ellipsis)
                return tj_error(TJ_ERR_PARSE, OP ": found '.' for operand %d for which an ellipsis was already found",
                                curr);
            if (!(i + 2 < lhs_len && eq[i + 1] == '.' && eq[i + 2] == '.'))
                return tj_error(TJ_ERR_PARSE, OP ": found '.' for operand %d that is not part of any ellipsis", curr);
            i += 2;
            push_label(&ops[curr], ELLIPSIS);
            ops[curr].ellipsis = true;
        } else if (c == ',') {
            if (++curr >= num_ops)
                return tj_error(TJ_ERR_INVALID_ARGUMENT,
                                OP ": fewer operands were provided than specified in the equation");
        } else if (!is_letter(c)) {
            return tj_error(TJ_ERR_PARSE,
                            OP ": invalid subscript given at index %zu in the equation string, subscripts must be in "
                            "[a-zA-Z]", i);
        } else {
            push_label(&ops[curr], (unsigned char)subscript_of(c));
        }
    }
    if (curr != num_ops - 1)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, OP ": more operands were provided than specified in the equation");
    return TJ_OK;
}

/* What the equation says about the aligned dims: output dims [0, out_dims),
 * contracted dims [out_dims, all_dims); each label's dim (-1: unused) and
 * where the ellipsis dims start. */
typedef struct layout {
    int label_dim[TOTAL_LABELS];
    int64_t label_count[TOTAL_LABELS];
    int ell_dims, ell_index, out_dims, all_dims;
} layout;

/* Counts the labels and checks them against each operand's rank. */
static tj_status count_labels(const operand_labels *ops, tj_tensor *const *ts, int num_ops, layout *ly)
{
    for (int i = 0; i < num_ops; i++) {
        int ndims = tj_tensor_ndim(ts[i]), nlabels = ops[i].n - (ops[i].ellipsis ? 1 : 0);
        bool ok = ops[i].ellipsis ? nlabels <= ndims : nlabels == ndims;
        if (!ok)
            return tj_error(TJ_ERR_SHAPE,
                            OP ": the number of subscripts in the equation (%d) %s the number of dimensions (%d) for "
                            "operand %d%s", nlabels, ops[i].ellipsis ? "is more than" : "does not match", ndims, i,
                            ops[i].ellipsis ? "" : " and no ellipsis was given");
        if (ops[i].ellipsis && ndims - nlabels > ly->ell_dims) ly->ell_dims = ndims - nlabels;
        for (int k = 0; k < ops[i].n; k++)
            if (ops[i].label[k] != ELLIPSIS) ly->label_count[ops[i].label[k]]++;
    }
    return TJ_OK;
}

/* The output: explicit after "->", else the ellipsis then every label seen
 * once, in label order. Then the contracted dims: an ellipsis not in the
 * output, then the remaining labels. */
static tj_status place_dims(const char *eq, size_t lhs_len, bool explicit_out, layout *ly)
{
    int next = 0;
    bool ell_in_output = !explicit_out;
    for (int s = 0; s < TOTAL_LABELS; s++) ly->label_dim[s] = -1;
    if (!explicit_out) {
        next = ly->ell_dims;
        for (int s = 0; s < TOTAL_LABELS; s++)
            if (ly->label_count[s] == 1) ly->label_dim[s] = next++;
    }
    const char *rhs = eq + lhs_len + 2;
    size_t rhs_len = explicit_out ? strlen(rhs) : 0;
    for (size_t i = 0; i < rhs_len; i++) {
        unsigned char c = (unsigned char)rhs[i];
        if (c == ' ') continue;
        if (c == '.') {
            if (ell_in_output)
                return tj_error(TJ_ERR_PARSE, OP ": found '.' for output but an ellipsis (...) was already found");
            if (!(i + 2 < rhs_len && rhs[i + 1] == '.' && rhs[i + 2] == '.'))
                return tj_error(TJ_ERR_PARSE, OP ": found '.' for output that is not part of any ellipsis (...)");
            i += 2;
            ly->ell_index = next;
            next += ly->ell_dims;
            ell_in_output = true;
            continue;
        }
        if (!is_letter(c))
            return tj_error(TJ_ERR_PARSE,
                            OP ": invalid subscript given at index %zu in the equation string, subscripts must be in "
                            "[a-zA-Z]", lhs_len + 2 + i);
        int s = subscript_of(c);
        if (ly->label_dim[s] != -1)
            return tj_error(TJ_ERR_INVALID_ARGUMENT, OP ": output subscript %c appears more than once in the output",
                            c);
        if (ly->label_count[s] == 0)
            return tj_error(TJ_ERR_INVALID_ARGUMENT,
                            OP ": output subscript %c does not appear in the equation for any input operand", c);
        ly->label_dim[s] = next++;
    }
    ly->out_dims = next;
    if (!ell_in_output) {
        ly->ell_index = next;
        next += ly->ell_dims;
    }
    for (int s = 0; s < TOTAL_LABELS; s++)
        if (ly->label_count[s] > 0 && ly->label_dim[s] == -1) ly->label_dim[s] = next++;
    ly->all_dims = next;
    if (next > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_UNSUPPORTED,
                        OP ": the equation aligns the operands on %d dims (labels and ellipsis dims), more than the %d "
                        "a tensor can have", next, TJ_MAX_DIMS);
    return TJ_OK;
}

/* ATen's op.diagonal(0, d1, d2).movedim(-1, d1) for d1 < d2 of equal size:
 * the diagonal, a view, takes d1's place and d2 goes. movedim is implicit
 * and records its permute, the identity included. */
static tj_tensor *diagonal_at(tj_tensor *op, int d1, int d2)
{
    int nd = tj_tensor_ndim(op) - 1;
    int64_t perm[TJ_MAX_DIMS];
    for (int d = 0, j = 0; d < nd; d++) perm[d] = d == d1 ? nd - 1 : j++;
    return tj_permute(tj_diagonal(op, 0, d1, d2), perm, nd);
}

/* Size checks, diagonals of repeated labels, then the operand unsqueezed
 * and permuted to the aligned dims. dim_counts[d] counts the operands whose
 * aligned dim d has a size other than 1. */
typedef struct sizes {
    int64_t label[TOTAL_LABELS], ell[TJ_MAX_DIMS];
    int64_t dim_counts[TJ_MAX_DIMS];
} sizes;

static tj_tensor *align_operand(tj_tensor *operand, int i, const operand_labels *ol, const layout *ly, sizes *sz)
{
    tj_tensor *op = operand;
    int64_t permutation[TJ_MAX_DIMS];
    int dim = 0;
    for (int d = 0; d < ly->all_dims; d++) permutation[d] = -1;
    for (int k = 0; k < ol->n; k++) {
        int s = ol->label[k];
        if (s == ELLIPSIS) {
            int covered = tj_tensor_ndim(operand) - (ol->n - 1);
            for (int j = ly->ell_dims - covered; j < ly->ell_dims; j++) {
                int64_t size = tj_tensor_size(op, dim);
                if (size != 1) {
                    if (sz->ell[j] != 1 && sz->ell[j] != size) {
                        tj_error(TJ_ERR_SHAPE,
                                 OP ": dimension %d covered by ellipsis in operand %d has size %lld which does not "
                                 "broadcast with previously seen ellipsis with size %lld for the respective dimension",
                                 dim, i, (long long)size, (long long)sz->ell[j]);
                        return NULL;
                    }
                    sz->ell[j] = size;
                    sz->dim_counts[ly->ell_index + j]++;
                }
                permutation[ly->ell_index + j] = dim++;
            }
        } else if (permutation[ly->label_dim[s]] == -1) {
            int64_t size = tj_tensor_size(op, dim);
            if (size != 1) {
                if (sz->label[s] != 1 && sz->label[s] != size) {
                    tj_error(TJ_ERR_SHAPE,
                             OP ": subscript %c has size %lld for operand %d which does not broadcast with previously "
                             "seen size %lld", label_of(s), (long long)size, i, (long long)sz->label[s]);
                    return NULL;
                }
                sz->label[s] = size;
                sz->dim_counts[ly->label_dim[s]]++;
            }
            permutation[ly->label_dim[s]] = dim++;
        } else {
            int prev = (int)permutation[ly->label_dim[s]];
            int64_t size = tj_tensor_size(op, dim), prev_size = tj_tensor_size(op, prev);
            if (size != prev_size) {
                tj_error(TJ_ERR_SHAPE,
                         OP ": subscript %c is repeated for operand %d but the sizes don't match, %lld != %lld",
                         label_of(s), i, (long long)size, (long long)prev_size);
                return NULL;
            }
            if (!(op = diagonal_at(op, prev, dim))) return NULL;
        }
    }
    for (int d = 0; d < ly->all_dims && op; d++)
        if (permutation[d] == -1) {
            op = tj_unsqueeze(op, dim);
            permutation[d] = dim++;
        }
    return tj_permute(op, permutation, ly->all_dims);
}

/* ATen's sumproduct_pair with keepdim: (left * right).sum(sum_dims) through
 * one bmm. Dims are sorted into lro (in left, right and the output), lo,
 * ro and the summed ones; left becomes [lro, lo, sum], right [lro, sum, ro],
 * and the product is viewed and permuted back to the dims' order, the
 * summed ones of size 1. einsum passes only sum dims of a size other than 1
 * in both, equal by its label checks. */
static tj_tensor *sumproduct_pair(tj_tensor *left, tj_tensor *right, const bool *is_sum, int nsum)
{
    if (nsum == 0) return tj_mul(left, right);
    int nd = tj_tensor_ndim(left), nlro = 0, nlo = 0, nro = 0, ns = 0;
    int64_t lro[TJ_MAX_DIMS], lo[TJ_MAX_DIMS], ro[TJ_MAX_DIMS], sum[TJ_MAX_DIMS];
    int64_t lro_size = 1, lo_size = 1, ro_size = 1, sum_size = 1;
    for (int i = 0; i < nd; i++) {
        int64_t l = tj_tensor_size(left, i), r = tj_tensor_size(right, i);
        if (is_sum[i]) {
            sum[ns++] = i;
            sum_size *= l;
        } else if (l != 1 && r != 1) {
            lro[nlro++] = i;
            lro_size *= l;
        } else if (l != 1) {
            lo[nlo++] = i;
            lo_size *= l;
        } else {
            ro[nro++] = i;
            ro_size *= r;
        }
    }
    int64_t out_size[TJ_MAX_DIMS], lperm[TJ_MAX_DIMS], rperm[TJ_MAX_DIMS], operm[TJ_MAX_DIMS];
    int k = 0, lk = 0, rk = 0;
    for (int i = 0; i < nlro; i++) {
        out_size[k] = tj_tensor_size(left, (int)lro[i]);
        operm[lro[i]] = k++;
        lperm[lk++] = rperm[rk++] = lro[i];
    }
    for (int i = 0; i < nlo; i++) {
        out_size[k] = tj_tensor_size(left, (int)lo[i]);
        operm[lo[i]] = k++;
        lperm[lk++] = lo[i];
    }
    for (int i = 0; i < ns; i++) {
        out_size[k] = 1;
        operm[sum[i]] = k++;
        lperm[lk++] = rperm[rk++] = sum[i];
    }
    for (int i = 0; i < nro; i++) {
        out_size[k] = tj_tensor_size(right, (int)ro[i]);
        operm[ro[i]] = k++;
        lperm[lk++] = rperm[rk++] = ro[i];
    }
    for (int i = 0; i < nlo; i++) rperm[rk++] = lo[i];
    tj_tensor *l3 = tj_reshape(tj_permute(left, lperm, nd), (const int64_t[]){lro_size, lo_size, sum_size}, 3);
    tj_tensor *r3 = tj_reshape(tj_permute(right, rperm, nd), (const int64_t[]){lro_size, sum_size, ro_size}, 3);
    return tj_permute(tj_view(tj_bmm(l3, r3), out_size, nd), operm, nd);
}

/* Sums t over the listed dims, keeping them as size 1 (t when none). */
static tj_tensor *sum_kept(tj_tensor *t, const int64_t *dims, int n)
{
    return n ? tj_sum_dim(t, dims, n, true, TJ_DTYPE_NONE) : t;
}

/* Multiplies a and b (ATen's ops[i] and ops[j], i < j), first summing in
 * each the dims only it still has and no other operand does, and in the
 * product the dims both have and no other operand does. */
static tj_tensor *contract_pair(tj_tensor *a, tj_tensor *b, const layout *ly, sizes *sz)
{
    bool is_sum[TJ_MAX_DIMS] = {false};
    int64_t a_sum[TJ_MAX_DIMS], b_sum[TJ_MAX_DIMS];
    int nsum = 0, na = 0, nb = 0;
    for (int d = ly->out_dims; d < ly->all_dims; d++) {
        bool in_a = tj_tensor_size(a, d) != 1, in_b = tj_tensor_size(b, d) != 1;
        if (in_a && in_b) {
            if (--sz->dim_counts[d] == 1) {
                is_sum[d] = true;
                nsum++;
                sz->dim_counts[d] = 0;
            }
        } else if (sz->dim_counts[d] == 1 && (in_a || in_b)) {
            if (in_a) a_sum[na++] = d;
            else b_sum[nb++] = d;
            sz->dim_counts[d] = 0;
        }
    }
    return sumproduct_pair(sum_kept(a, a_sum, na), sum_kept(b, b_sum, nb), is_sum, nsum);
}

/* Contracts ops[0..n) into ops[0]: the first two into the front, left to
 * right, or path's pairs into the back. */
static tj_status contract_all(tj_tensor **ops, int n, const tj_value *path, const layout *ly, sizes *sz)
{
    for (int step = 0; n > 1; step++) {
        int64_t i = 0, j = 1;
        if (path->kind == TJ_V_INTS) {
            i = path->u.ints[2 * step];
            j = path->u.ints[2 * step + 1];
            if (j < i) {
                int64_t t = i;
                i = j;
                j = t;
            }
            if (i == j)
                return tj_error(TJ_ERR_INVALID_ARGUMENT,
                                OP ": invalid contraction (%lld, %lld) cannot contract an operand with itself",
                                (long long)i, (long long)j);
            if (i < 0 || j >= n)
                return tj_error(TJ_ERR_INDEX, OP ": invalid contraction (%lld, %lld) operand index is out of bounds",
                                (long long)i, (long long)j);
        }
        tj_tensor *a = ops[i], *b = ops[j];
        memmove(ops + j, ops + j + 1, sizeof *ops * (size_t)(n - j - 1));
        memmove(ops + i, ops + i + 1, sizeof *ops * (size_t)(n - i - 2));
        n -= 2;
        tj_tensor *r = contract_pair(a, b, ly, sz);
        if (!r) return tj_last_status();
        if (path->kind == TJ_V_INTS) {
            ops[n] = r;
        } else {
            memmove(ops + 1, ops, sizeof *ops * (size_t)n);
            ops[0] = r;
        }
        n++;
    }
    return TJ_OK;
}

/* The contracted dims out of the result: already summed to size 1 by the
 * contractions (dropped by a view), or summed here for one operand. */
static tj_tensor *drop_contracted(tj_tensor *r, int num_ops, const layout *ly)
{
    int nc = ly->all_dims - ly->out_dims;
    if (nc == 0) return r;
    int64_t dims[TJ_MAX_DIMS];
    for (int k = 0; k < nc; k++) dims[k] = ly->out_dims + k;
    if (num_ops == 1) return tj_sum_dim(r, dims, nc, false, TJ_DTYPE_NONE);
    return tj_view(r, tj_tensor_shape(r), ly->out_dims);
}

static tj_status einsum(const tj_value *args, tj_value *outs)
{
    const char *eq = args[0].u.s;
    tj_tensor *const *ts = args[1].u.ts;
    int num_ops = args[1].n;
    const tj_value *path = &args[2];
    if (num_ops == 0) return tj_error(TJ_ERR_INVALID_ARGUMENT, OP ": must provide at least one operand");
    int64_t path_size = num_ops == 1 ? 1 : 2 * ((int64_t)num_ops - 1);
    if (path->kind == TJ_V_INTS && path->n != path_size)
        return tj_error(TJ_ERR_INVALID_ARGUMENT,
                        OP ": expected contraction path given in path parameter to have size %lld but got %d",
                        (long long)path_size, path->n);
    const char *arrow = strstr(eq, "->");
    size_t lhs_len = arrow ? (size_t)(arrow - eq) : strlen(eq);
    size_t nbytes = (sizeof(operand_labels) + sizeof(tj_tensor *)) * (size_t)num_ops;
    void *block = tj_alloc(nbytes);
    if (!block) return tj_oom(OP " operands", nbytes);
    memset(block, 0, nbytes);
    tj_tensor **ops = block;
    operand_labels *labels = (operand_labels *)(ops + num_ops);
    layout ly = {.ell_dims = 0};
    sizes sz;
    tj_status st = parse_inputs(eq, lhs_len, labels, num_ops);
    if (st == TJ_OK) st = count_labels(labels, ts, num_ops, &ly);
    if (st == TJ_OK) st = place_dims(eq, lhs_len, arrow != NULL, &ly);
    if (st == TJ_OK) {
        for (int s = 0; s < TOTAL_LABELS; s++) sz.label[s] = 1;
        for (int d = 0; d < TJ_MAX_DIMS; d++) sz.ell[d] = 1, sz.dim_counts[d] = 0;
        for (int i = 0; i < num_ops && st == TJ_OK; i++)
            if (!(ops[i] = align_operand(ts[i], i, &labels[i], &ly, &sz))) st = tj_last_status();
    }
    if (st == TJ_OK) st = contract_all(ops, num_ops, path, &ly, &sz);
    if (st == TJ_OK) st = tj_dc_done(drop_contracted(ops[0], num_ops, &ly), outs);
    tj_free(block, nbytes);
    return st;
}

void tj_register_einsum_decompositions(void)
{
    tj_op_set_decomposition(TJ_OPS(einsum), einsum, "einsum");
}
