/* DLPack import and export (include/tjit/dlpack.h). An imported tensor's
 * storage belongs to a dl_import: the storage owner mechanism of
 * runtime/internal.h (as a plan context's arena) runs the producer's deleter
 * when the last tjit reference to the memory goes. An export holds a
 * detached alias of the tensor, which keeps the storage alive. */
#include <dlpack/dlpack.h>
#include <stddef.h>

#include "autograd_internal.h"
#include "internal.h"
#include "tjit/dlpack.h"

/* DLPack 0.8's bool code; Debian's header (0.6) predates it. */
enum { TJ_DL_BOOL = 6 };

typedef struct dl_import {
    tj_storage_owner owner;
    tj_storage storage;
    /** Set once the tensor exists: a failed import leaves m to its caller. */
    DLManagedTensor *managed;
} dl_import;

static void import_free(tj_storage_owner *o)
{
    dl_import *im = (dl_import *)((char *)o - offsetof(dl_import, owner));
    if (im->managed && im->managed->deleter) im->managed->deleter(im->managed);
    tj_free_object(im, sizeof *im);
}

/* DLPack's type of each dtype (one lane). */
static const DLDataType dl_types[TJ_NUM_DTYPES] = {
    [TJ_FLOAT32] = {kDLFloat, 32, 1}, [TJ_FLOAT64] = {kDLFloat, 64, 1}, [TJ_INT64] = {kDLInt, 64, 1},
    [TJ_BOOL] = {TJ_DL_BOOL, 8, 1},   [TJ_INT32] = {kDLInt, 32, 1},     [TJ_UINT8] = {kDLUInt, 8, 1},
    [TJ_INT8] = {kDLInt, 8, 1},       [TJ_INT16] = {kDLInt, 16, 1},     [TJ_FLOAT16] = {kDLFloat, 16, 1},
    [TJ_BFLOAT16] = {kDLBfloat, 16, 1}};

static bool dtype_from_dl(DLDataType t, tj_dtype *out)
{
    for (int i = 0; i < TJ_NUM_DTYPES; i++)
        if (t.code == dl_types[i].code && t.bits == dl_types[i].bits) {
            *out = (tj_dtype)i;
            return true;
        }
    return false;
}

tj_tensor *tj_tensor_from_dlpack(DLManagedTensor *m)
{
    static const char *who = "tj_tensor_from_dlpack";
    if (!m) return tj_error_null("%s: NULL managed tensor", who), NULL;
    const DLTensor *d = &m->dl_tensor;
    tj_dtype dtype;
    if (d->device.device_type != kDLCPU)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: device type %d is not the CPU (kDLCPU = 1)", who,
                        (int)d->device.device_type), NULL;
    if (!dtype_from_dl(d->dtype, &dtype) || d->dtype.lanes != 1)
        return tj_error(TJ_ERR_UNSUPPORTED,
                        "%s: dtype code %u, %u bits, %u lanes: tjit has float32, float64, float16, bfloat16, "
                        "int64, int32, int16, int8, uint8 and bool (one lane)",
                        who, d->dtype.code, d->dtype.bits, d->dtype.lanes), NULL;
    if (d->ndim < 0 || d->ndim > TJ_MAX_DIMS)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: rank %d is outside 0..%d", who, d->ndim, TJ_MAX_DIMS), NULL;
    if (d->ndim && !d->shape) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL shape for rank %d", who, d->ndim), NULL;
    int64_t strides[TJ_MAX_DIMS];
    if (d->strides) {
        for (int k = 0; k < d->ndim; k++) strides[k] = d->strides[k];
    } else {
        tj_contiguous_strides(d->ndim, d->shape, strides);
    }
    char *data = d->data ? (char *)d->data + d->byte_offset : NULL;
    size_t extent;
    if (tj_check_lent_memory(who, dtype, d->ndim, d->shape, strides, &data, &extent) != TJ_OK) return NULL;

    dl_import *im = tj_alloc_object(sizeof *im);
    if (!im) return tj_oom(who, sizeof *im), NULL;
    *im = (dl_import){.owner.free = import_free,
                      .storage = {.external = true, .data = data, .nbytes = extent, .owner = &im->owner}};
    atomic_init(&im->owner.refcount, 1); /* the storage's */
    atomic_init(&im->storage.refcount, 1);
    atomic_init(&im->storage.version, 0);
    atomic_init(&im->storage.n_detached, 0);
    tj_tensor *t = tj_tensor_on_storage(&im->storage, dtype, d->ndim, d->shape, strides);
    if (!t) return NULL; /* im went with the storage, m->deleter not run */
    im->managed = m;
    return t;
}

typedef struct dl_export {
    DLManagedTensor m;
    int64_t shape[TJ_MAX_DIMS], strides[TJ_MAX_DIMS];
} dl_export;

static void export_delete(DLManagedTensor *m)
{
    tj_tensor_release(m->manager_ctx);
    tj_free_object(m, sizeof(dl_export));
}

DLManagedTensor *tj_tensor_to_dlpack(tj_tensor *t)
{
    if (!t) return tj_error_null("tj_tensor_to_dlpack: NULL tensor"), NULL;
    if (t->fake) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_tensor_to_dlpack: a fake tensor has no memory"), NULL;
    dl_export *e = tj_alloc_object(sizeof *e);
    tj_tensor *alias = e ? tj_tensor_new_view(t, t->ndim, t->shape, t->strides, t->offset) : NULL;
    if (!alias) {
        tj_free_object(e, sizeof *e);
        return tj_oom("tj_tensor_to_dlpack", sizeof *e), NULL;
    }
    tj_tensor_mark_detached(alias);
    for (int k = 0; k < t->ndim; k++) {
        e->shape[k] = t->shape[k];
        e->strides[k] = t->strides[k];
    }
    e->m = (DLManagedTensor){
        .dl_tensor = {.data = (char *)t->storage->data + t->offset * (int64_t)tj_dtype_size(t->dtype),
                      .device = {kDLCPU, 0},
                      .ndim = t->ndim,
                      .dtype = dl_types[t->dtype],
                      .shape = e->shape,
                      .strides = e->strides},
        .manager_ctx = alias,
        .deleter = export_delete};
    return &e->m;
}
