/* Tensor objects: creation, reference counting, views, accessors. */
#include <inttypes.h>
#include <math.h>
#include <stddef.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

/* uids are handed out in blocks per thread: one locked add per 1024 tensors
 * instead of one per tensor (a locked instruction costs ~30 ns here). */
#define UID_BLOCK 1024
static _Atomic uint64_t next_uid_block = 1;
static _Thread_local uint64_t uid_next, uid_end;

static uint64_t new_uid(void)
{
    if (uid_next == uid_end) {
        uid_next = atomic_fetch_add_explicit(&next_uid_block, UID_BLOCK, memory_order_relaxed);
        uid_end = uid_next + UID_BLOCK;
    }
    return uid_next++;
}

void tj_contiguous_strides(int ndim, const int64_t *shape, int64_t *strides)
{
    int64_t s = 1;
    for (int d = ndim - 1; d >= 0; d--) {
        strides[d] = s;
        s *= shape[d] > 1 ? shape[d] : 1;
    }
}

char *tj_shape_str(int ndim, const int64_t *shape, char *buf, size_t n)
{
    size_t k = 0;
    if (n == 0 || !buf) return buf;
    if (!shape && ndim > 0) { /* not followed: a caller's NULL is described */
        snprintf(buf, n, "(null)");
        return buf;
    }
    k += (size_t)snprintf(buf + k, n - k, "[");
    for (int d = 0; d < ndim && k < n; d++)
        k += (size_t)snprintf(buf + k, n - k, d ? ", %" PRId64 : "%" PRId64, shape[d]);
    if (k < n) snprintf(buf + k, n - k, "]");
    return buf;
}

/* numel of a shape whose nonzero sizes multiply to at most `limit` */
static tj_status numel_within(int ndim, const int64_t *shape, uint64_t limit, int64_t *numel, const char *who)
{
    char b[128];
    if (ndim < 0 || ndim > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: rank %d is outside 0..%d", who, ndim, TJ_MAX_DIMS);
    /* the product of the nonzero sizes: numel, or for an empty shape the
     * span of its contiguous strides, which must not overflow either */
    int64_t n = 1;
    bool overflow = false, empty = false;
    for (int d = 0; d < ndim; d++) {
        if (shape[d] < 0)
            return tj_error(TJ_ERR_SHAPE, "%s: negative size %" PRId64 " in shape %s", who, shape[d],
                            tj_shape_str(ndim, shape, b, sizeof b));
        if (shape[d] == 0) empty = true;
        else if (__builtin_mul_overflow(n, shape[d], &n)) overflow = true;
    }
    if (overflow || (uint64_t)n > limit)
        return tj_error(TJ_ERR_OVERFLOW, "%s: element count of shape %s overflows", who,
                        tj_shape_str(ndim, shape, b, sizeof b));
    *numel = empty ? 0 : n;
    return TJ_OK;
}

/* the byte count of any dtype fits int64 too */
tj_status tj_checked_numel(int ndim, const int64_t *shape, int64_t *numel, const char *who)
{
    return numel_within(ndim, shape, (uint64_t)INT64_MAX / 8, numel, who);
}

tj_status tj_checked_view_numel(int ndim, const int64_t *shape, int64_t *numel, const char *who)
{
    return numel_within(ndim, shape, (uint64_t)INT64_MAX, numel, who);
}

/* A new tensor header with one reference, a fresh uid and everything else
 * zero, in the memory at t. Field by field: the arrays' memsets become a few
 * vector stores, while a copy of a blank struct costs a load per store and
 * a memset of the whole struct compiles to rep stos, slow to start. */
static tj_tensor *tensor_init(tj_tensor *t)
{
    _Static_assert(sizeof(tj_tensor) == 192, "tensor_init sets every field of tj_tensor: update it with the struct");
    atomic_init(&t->refcount, 1);
    t->dtype = TJ_FLOAT32;
    t->ndim = 0;
    t->fake = false;
    t->detached = false;
    t->view_kind = TJ_VIEW_NONE;
    t->borrowed = false;
    t->numel = 0;
    t->offset = 0;
    memset(t->shape, 0, sizeof t->shape);
    memset(t->strides, 0, sizeof t->strides);
    t->storage = NULL;
    t->uid = new_uid();
    t->autograd = NULL;
    t->view_base = NULL;
    return t;
}

static tj_tensor *tensor_alloc_struct(void)
{
    tj_tensor *t = tj_alloc_object(sizeof *t);
    if (!t) {
        tj_oom("tensor", sizeof *t);
        return NULL;
    }
    return tensor_init(t);
}

/* A small result takes one cached block instead of three (tensor header,
 * storage header, data): the storage is marked in_block and its data starts
 * at BLOCK_DATA (64-byte aligned). The block goes back when the storage's
 * last reference does, never before its host tensor's (the host holds one
 * reference): a view of the host keeps the whole block alive. All blocks
 * have one size (TJ_SMALL_BLOCK), so their size class is a constant. */
typedef struct small_block {
    tj_tensor t;
    tj_storage s;
} small_block;
#define BLOCK_DATA ((sizeof(small_block) + 63) / 64 * 64)
#define SMALL_DATA (TJ_SMALL_BLOCK - BLOCK_DATA)
_Static_assert(SMALL_DATA >= 256, "a small block holds 256 bytes of data");

/* numel of a shape without zero, negative or overflowing sizes (the common
 * case, no message needed); false sends the caller to tj_checked_numel. */
static bool plain_numel(int ndim, const int64_t *shape, int64_t *numel)
{
    if ((unsigned)ndim > TJ_MAX_DIMS) return false;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++)
        if (shape[d] <= 0 || __builtin_mul_overflow(n, shape[d], &n)) return false;
    *numel = n;
    return (uint64_t)n <= (uint64_t)INT64_MAX / 8;
}

/* A tensor with its storage in one block (see small_block); NULL on failure. */
static tj_tensor *small_tensor_new(void)
{
    small_block *b = tj_alloc_small_block();
    if (!b) {
        tj_oom("tensor", TJ_SMALL_BLOCK);
        return NULL;
    }
    tj_tensor *t = tensor_init(&b->t);
    atomic_init(&b->s.refcount, 1);
    atomic_init(&b->s.version, 0);
    atomic_init(&b->s.n_detached, 0);
    b->s.in_block = true;
    b->s.sealed = false;
    b->s.external = false;
    b->s.owner = NULL;
    b->s.data = (char *)b + BLOCK_DATA;
    b->s.nbytes = SMALL_DATA;
    t->storage = &b->s;
    return t;
}

/* A fake tensor: a storage header without data, which its views share and
 * count as a real storage's (autograd tells views from other references
 * this way: an in-place call recorded on a fake tensor is allowed or refused
 * as on a real one) and whose version in-place calls bump. */
static tj_tensor *fake_tensor_new(void)
{
    tj_tensor *t = small_tensor_new();
    if (!t) return NULL;
    t->storage->data = NULL;
    t->storage->nbytes = 0;
    return t;
}

/* A tensor header with separately allocated storage; NULL on failure. */
static tj_tensor *large_tensor_new(size_t nbytes)
{
    size_t got = 0;
    tj_tensor *t = tensor_alloc_struct();
    if (!t) return NULL;
    tj_storage *s = tj_alloc_object(sizeof *s);
    void *data = s ? tj_alloc_storage_bytes(nbytes, &got) : NULL;
    if (!data) {
        tj_free_object(s, sizeof *s);
        tj_free_object(t, sizeof *t);
        tj_oom("tensor storage", nbytes);
        return NULL;
    }
    atomic_init(&s->refcount, 1);
    atomic_init(&s->version, 0);
    atomic_init(&s->n_detached, 0);
    s->in_block = false;
    s->sealed = false;
    s->external = false;
    s->owner = NULL;
    s->data = data;
    s->nbytes = got;
    t->storage = s;
    return t;
}

tj_tensor *tj_tensor_new_meta(const tj_meta *m, bool fake)
{
    int64_t numel;
    if ((unsigned)m->dtype >= TJ_NUM_DTYPES) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tensor: invalid dtype %d", (int)m->dtype);
        return NULL;
    }
    if (!plain_numel(m->ndim, m->shape, &numel) && tj_checked_numel(m->ndim, m->shape, &numel, "tensor") != TJ_OK)
        return NULL;
    size_t nbytes = (size_t)numel * tj_dtype_bytes(m->dtype);
    tj_tensor *t = fake ? fake_tensor_new() : nbytes <= SMALL_DATA ? small_tensor_new() : large_tensor_new(nbytes);
    if (!t) return NULL;
    t->dtype = m->dtype;
    t->ndim = m->ndim;
    t->numel = numel;
    t->fake = fake;
    int64_t stride = 1;
    for (int d = m->ndim - 1; d >= 0; d--) { /* tj_contiguous_strides, inline */
        t->shape[d] = m->shape[d];
        t->strides[d] = stride;
        stride *= m->shape[d] > 1 ? m->shape[d] : 1;
    }
    return t;
}

/* A new header's dtype, shape, strides and numel (geometry checked by the caller). */
static void set_geometry(tj_tensor *t, tj_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides)
{
    t->dtype = dtype;
    t->ndim = ndim;
    int64_t n = 1;
    for (int d = 0; d < ndim; d++) {
        t->shape[d] = shape[d];
        t->strides[d] = strides[d];
        n *= shape[d];
    }
    t->numel = n;
}

tj_tensor *tj_tensor_new_view(tj_tensor *base, int ndim, const int64_t *shape,
                              const int64_t *strides, int64_t offset)
{
    tj_tensor *t = tensor_alloc_struct();
    if (!t) return NULL;
    set_geometry(t, base->dtype, ndim, shape, strides);
    t->fake = base->fake;
    t->offset = offset;
    t->storage = base->storage;
    if (t->storage) atomic_fetch_add_explicit(&t->storage->refcount, 1, memory_order_relaxed);
    return t;
}

/* Hands a new tensor to the innermost scope; NULL (nothing leaked) when the
 * scope cannot take it. */
static tj_tensor *adopted(tj_tensor *t)
{
    if (t && tj_scope_adopt(t) != TJ_OK) {
        tj_tensor_release(t);
        return NULL;
    }
    return t;
}

tj_tensor *tj_tensor_on_storage(tj_storage *s, tj_dtype dtype, int ndim, const int64_t *shape, const int64_t *strides)
{
    tj_tensor *t = tensor_alloc_struct();
    if (!t) {
        tj_storage_release(s);
        return NULL;
    }
    set_geometry(t, dtype, ndim, shape, strides);
    t->storage = s;
    return adopted(t);
}

/* tj_tensor_empty / tj_tensor_fake: a new real or fake tensor, its arguments
 * checked with messages naming `who`. */
static tj_tensor *tensor_new_checked(const char *who, tj_dtype dtype, int ndim, const int64_t *shape, bool fake)
{
    tj_meta m = {.dtype = dtype, .ndim = ndim, .alias = -1};
    int64_t numel;
    if ((unsigned)dtype >= TJ_NUM_DTYPES)
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: invalid dtype %d", who, (int)dtype);
    else if (ndim < 0 || ndim > TJ_MAX_DIMS)
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: rank %d is outside 0..%d", who, ndim, TJ_MAX_DIMS);
    else if (ndim > 0 && !shape)
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: shape is NULL for rank %d", who, ndim);
    else if (tj_checked_numel(ndim, shape, &numel, who) == TJ_OK) {
        if (ndim) memcpy(m.shape, shape, sizeof(int64_t) * (size_t)ndim); /* shape may be NULL at rank 0 */
        tj_tensor *t = tj_tensor_new_meta(&m, fake);
        if (t) return adopted(t);
        /* out of memory: the allocator's message says how much, add who asked */
        char why[512];
        snprintf(why, sizeof why, "%s", tj_last_error());
        tj_error(tj_last_status(), "%s: %s", who, why);
    }
    return NULL;
}

tj_tensor *tj_tensor_empty(tj_dtype dtype, int ndim, const int64_t *shape)
{
    return tensor_new_checked("tj_tensor_empty", dtype, ndim, shape, false);
}

tj_tensor *tj_tensor_fake(tj_dtype dtype, int ndim, const int64_t *shape)
{
    return tensor_new_checked("tj_tensor_fake", dtype, ndim, shape, true);
}

tj_tensor *tj_tensor_from_data(tj_dtype dtype, int ndim, const int64_t *shape, const void *data)
{
    tj_tensor *t = tj_tensor_empty(dtype, ndim, shape);
    if (!t) return NULL;
    size_t nbytes = (size_t)t->numel * tj_dtype_size(dtype);
    if (nbytes && !data) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_from_data: NULL data for %zu bytes", nbytes);
        tj_scope_drop(t); /* the innermost scope may own it: a plain release would free it twice */
        return NULL;
    }
    if (nbytes) memcpy(t->storage->data, data, nbytes);
    return t;
}

tj_tensor *tj_tensor_scalar_f32(float v) { return tj_tensor_from_data(TJ_FLOAT32, 0, NULL, &v); }
tj_tensor *tj_tensor_scalar_f64(double v) { return tj_tensor_from_data(TJ_FLOAT64, 0, NULL, &v); }
tj_tensor *tj_tensor_scalar_i64(int64_t v) { return tj_tensor_from_data(TJ_INT64, 0, NULL, &v); }

tj_tensor *tj_tensor_retain(tj_tensor *t)
{
    if (t) atomic_fetch_add_explicit(&t->refcount, 1, memory_order_relaxed);
    return t;
}

void tj_autograd_meta_free(struct tj_autograd_meta *m) __attribute__((weak));

/* Drops one reference; true when it was the last. The holder of the only
 * reference needs no locked instruction: nobody else can retain it. */
static bool drop_ref(atomic_int *refcount)
{
    if (atomic_load_explicit(refcount, memory_order_acquire) == 1) return true;
    return atomic_fetch_sub_explicit(refcount, 1, memory_order_acq_rel) == 1;
}

/* Frees a storage whose last reference went. */
static void storage_free(tj_storage *s)
{
    if (s->owner) {
        tj_storage_owner_release(s->owner);
        return;
    }
    if (s->in_block) {
        tj_free_small_block((char *)s - offsetof(small_block, s));
        return;
    }
    tj_free_storage_bytes(s->data, s->nbytes);
    tj_free_object(s, sizeof *s);
}

/* A second release of a tensor whose last reference went: its refcount reads
 * 0 (set below; the allocator's free-list link lies past it, alloc.c) as long
 * as nothing has reused the memory. Freeing it again would hand one block out
 * twice, or free the storage under a view that keeps it (a small tensor's
 * header stays in its block): refused instead. */
static __attribute__((cold, noinline)) void released_twice(const tj_tensor *t, int refcount)
{
    tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_release: tensor %p has no reference left (refcount %d): released "
             "more times than created and retained (a tensor a scope owns released by hand?); left alone",
             (const void *)t, refcount);
}

void tj_tensor_release(tj_tensor *t)
{
    if (!t) return;
    int r = atomic_load_explicit(&t->refcount, memory_order_acquire);
    if (r != 1) { /* shared, or already released: the only-reference case needs no check */
        if (r <= 0) {
            released_twice(t, r);
            return;
        }
        if (atomic_fetch_sub_explicit(&t->refcount, 1, memory_order_acq_rel) != 1) return;
    }
    atomic_store_explicit(&t->refcount, 0, memory_order_relaxed); /* marks it released (see released_twice) */
    if (t->autograd && tj_autograd_meta_free) tj_autograd_meta_free(t->autograd);
    tj_storage *s = t->storage;
    if (t->detached && s) atomic_fetch_sub_explicit(&s->n_detached, 1, memory_order_relaxed);
    /* the host of an in-block storage goes with the block */
    bool hosted = s && s->in_block && (char *)s == (char *)t + offsetof(small_block, s);
    tj_tensor *base = t->view_base;
    if (!hosted) tj_free_object(t, sizeof *t);
    /* a view's base (a root: no deeper chain) before the storage, whose
     * block may hold the base's header */
    if (base) tj_tensor_release(base);
    tj_storage_release(s);
}

void tj_storage_release(tj_storage *s)
{
    if (s && drop_ref(&s->refcount)) storage_free(s);
}

tj_dtype tj_tensor_dtype(const tj_tensor *t) { return t ? t->dtype : TJ_FLOAT32; }
int tj_tensor_ndim(const tj_tensor *t) { return t ? t->ndim : 0; }
const int64_t *tj_tensor_shape(const tj_tensor *t) { return t ? t->shape : NULL; }
const int64_t *tj_tensor_strides(const tj_tensor *t) { return t ? t->strides : NULL; }
int64_t tj_tensor_numel(const tj_tensor *t) { return t ? t->numel : 0; }
int64_t tj_tensor_storage_offset(const tj_tensor *t) { return t ? t->offset : 0; }
bool tj_tensor_is_fake(const tj_tensor *t) { return t && t->fake; }
/* The first public accessor that asked a fake tensor for its values on this
 * thread (make_fx in fake mode refuses such a trace). */
static _Thread_local const char *fake_data_read;

static void note_fake_read(const tj_tensor *t, const char *who)
{
    if (t && t->fake && !fake_data_read) fake_data_read = who;
}

const char *tj_fake_data_read_swap(const char *who)
{
    const char *was = fake_data_read;
    fake_data_read = who;
    return was;
}

static _Thread_local tj_tensor_reader tensor_reader;
static _Thread_local void *tensor_reader_ctx;

void tj_tensor_reader_swap(tj_tensor_reader *fn, void **ctx)
{
    tj_tensor_reader was = tensor_reader;
    void *was_ctx = tensor_reader_ctx;
    tensor_reader = *fn;
    tensor_reader_ctx = *ctx;
    *fn = was;
    *ctx = was_ctx;
}

void tj_note_geometry_read(const tj_tensor *t, const char *who)
{
    if (tensor_reader && t) tensor_reader(tensor_reader_ctx, t, TJ_READ_GEOMETRY, who);
}

tj_status tj_check_read_past_dispatch(tj_tensor *const *ts, int n, const char *who)
{
    tj_status st = TJ_OK;
    for (int i = 0; tensor_reader && ts && i < n && st == TJ_OK; i++)
        if (ts[i]) st = tensor_reader(tensor_reader_ctx, ts[i], TJ_READ_PAST_DISPATCH, who);
    return st;
}

void *tj_tensor_data(const tj_tensor *t)
{
    note_fake_read(t, "tj_tensor_data");
    return t ? tj_tensor_ptr(t) : NULL;
}

bool tj_tensor_shares_storage(const tj_tensor *a, const tj_tensor *b)
{
    return a && b && tj_storages_overlap(a->storage, b->storage);
}

uint32_t tj_tensor_version(const tj_tensor *t)
{
    return t && t->storage ? atomic_load_explicit(&t->storage->version, memory_order_relaxed) : 0;
}

int64_t tj_tensor_size(const tj_tensor *t, int dim)
{
    if (!t) return -1;
    if (dim < 0) dim += t->ndim;
    return dim >= 0 && dim < t->ndim ? t->shape[dim] : -1;
}

bool tj_tensor_is_contiguous(const tj_tensor *t)
{
    if (!t) return false;
    if (t->numel == 0) return true; /* as PyTorch: an empty tensor is contiguous */
    int64_t s = 1;
    for (int d = t->ndim - 1; d >= 0; d--) {
        if (t->shape[d] != 1 && t->strides[d] != s) return false;
        s *= t->shape[d];
    }
    return true;
}

double tj_load_f64(const void *p, tj_dtype d) { return tj_k_load_f64(p, d); }

int64_t tj_load_i64(const void *p, tj_dtype d) { return tj_k_load_i64(p, d); }

void tj_store_f64(void *p, tj_dtype d, double v) { tj_k_store_f64(p, d, v); }

/* Storage address of the element at a row-major flat index. */
static const char *element_at(const tj_tensor *t, int64_t flat)
{
    int64_t off = 0;
    for (int d = t->ndim - 1; d >= 0; d--) {
        int64_t i = flat % t->shape[d];
        flat /= t->shape[d];
        off += i * t->strides[d];
    }
    return tj_tensor_ptr(t) + off * (int64_t)tj_dtype_size(t->dtype);
}

double tj_tensor_item_at(const tj_tensor *t, int64_t flat)
{
    note_fake_read(t, "tj_tensor_item_at");
    if (!t || t->fake || flat < 0 || flat >= t->numel) return NAN;
    return tj_load_f64(element_at(t, flat), t->dtype);
}

tj_status tj_tensor_copy_to(const tj_tensor *t, void *dst)
{
    if (!t) return tj_error_null("tj_tensor_copy_to: NULL tensor");
    if (!dst) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_copy_to: NULL destination");
    note_fake_read(t, "tj_tensor_copy_to");
    if (t->fake) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_copy_to: fake tensor has no data");
    size_t es = tj_dtype_size(t->dtype);
    if (tj_tensor_is_contiguous(t)) {
        memcpy(dst, tj_tensor_ptr(t), (size_t)t->numel * es);
        return TJ_OK;
    }
    for (int64_t i = 0; i < t->numel; i++) memcpy((char *)dst + i * (int64_t)es, element_at(t, i), es);
    return TJ_OK;
}

int tj_tensor_describe(const tj_tensor *t, char *buf, size_t n)
{
    char shape[160];
    if (!t) return snprintf(buf, n, "None");
    return snprintf(buf, n, "%s%s%s", t->fake ? "~" : "", tj_dtype_short_name(t->dtype),
                    tj_shape_str(t->ndim, t->shape, shape, sizeof shape));
}
