/* DLPack: tensors shared with other frameworks (PyTorch, NumPy, JAX, ...)
 * without a copy, through DLPack's DLManagedTensor (dmlc/dlpack, the
 * exchange torch.utils.dlpack and numpy.from_dlpack use). Include
 * <dlpack/dlpack.h> (Debian's libdlpack-dev) to read or fill the struct;
 * tjit's headers name it only. */
#ifndef TJIT_DLPACK_H
#define TJIT_DLPACK_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

struct DLManagedTensor;

/** A tensor over the memory that `m` describes, shared, not copied (as
 * torch.utils.dlpack.from_dlpack): m's shape, strides (NULL: row-major),
 * data + byte_offset; writes through either side show on the other. Takes
 * ownership of `m` when it returns a tensor: m->deleter (when not NULL) runs
 * once, when the last tjit tensor or view of that memory goes, on whichever
 * thread drops it. Owned as tj_tensor_empty's result (the innermost open
 * scope, or the caller). Accepted: CPU memory (kDLCPU), one lane, float32,
 * float64, int64 and bool (kDLBool, code 6, 8 bits, as DLPack 0.8 defines it;
 * PyTorch 1.13 and NumPy 1.24 cannot export bool: pass a uint8 view relabelled),
 * rank 0..TJ_MAX_DIMS, strides in elements (non-negative where the size
 * is above 1), data aligned to the element size. Each import gets a storage
 * of its own; tjit finds overlap between imports of one memory by address
 * (tj_tensor_shares_storage). The memory must stay writable and alive as
 * long as m (the producer's contract); writes made outside tjit do not bump
 * tj_tensor_version. Importing one m twice is the caller's error (its
 * deleter would run twice). NULL on failure, `m` left untouched and still
 * the caller's (its deleter not run): TJ_ERR_INVALID_ARGUMENT (NULL m, NULL
 * shape or data for a non-empty tensor, data not aligned to the element
 * size), TJ_ERR_UNSUPPORTED (another device, a dtype tjit has not, several
 * lanes, a negative stride of a dim of several indices, rank above
 * TJ_MAX_DIMS), TJ_ERR_SHAPE (a negative size), TJ_ERR_OVERFLOW (an element
 * count or byte extent past int64), TJ_ERR_OUT_OF_MEMORY. */
tj_tensor *tj_tensor_from_dlpack(struct DLManagedTensor *m);

/** `t` as a DLManagedTensor sharing its memory (as torch.utils.dlpack.to_dlpack):
 * kDLCPU, t's dtype (bool as kDLBool, 8 bits: consumers built on DLPack
 * before 0.8 refuse it), shape and strides in elements, data at t's first
 * element (byte_offset 0). The managed tensor holds its own reference on
 * the memory: t may be released first. For a plan context's output
 * (tj_plan_context_output) that memory is the context's arena: its next run
 * overwrites what the managed tensor shows (clone t to keep it). The consumer
 * calls m->deleter once (or hands it on, as DLPack says). Writes through it
 * do not bump tj_tensor_version. NULL on failure: TJ_ERR_INVALID_ARGUMENT
 * (NULL or fake t), TJ_ERR_OUT_OF_MEMORY. */
struct DLManagedTensor *tj_tensor_to_dlpack(tj_tensor *t);

#ifdef __cplusplus
}
#endif

#endif
