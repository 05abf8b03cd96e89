/* safetensors files (the format Hugging Face uses): an 8-byte little-endian
 * header length, a JSON header mapping tensor names to
 * {"dtype", "shape", "data_offsets": [begin, end]} (plus an optional
 * "__metadata__" object of strings), then the raw little-endian data. */
#ifndef TJIT_SAFETENSORS_H
#define TJIT_SAFETENSORS_H

#include "tensor.h"

#ifdef __cplusplus
extern "C" {
#endif

/** Writes `n` named tensors (any strides; any dtype: F32, F64, I64, BOOL,
 * I32, U8, I8, I16, F16, BF16) to
 * `path`, replacing it only once the whole file is written (a temporary file
 * is renamed; a device or FIFO is written in place, a symbolic link's
 * target replaced). Errors: TJ_ERR_INVALID_ARGUMENT (NULL, fake tensor, duplicate
 * or empty name), TJ_ERR_IO (naming the path and the reason: the file is then
 * as it was), TJ_ERR_OUT_OF_MEMORY. */
tj_status tj_safetensors_save(const char *path, const char *const *names, tj_tensor *const *tensors, int n);
/** tj_safetensors_save with a "__metadata__" object of `n_meta` text pairs
 * keys[i]: values[i] (the format's free-form string map, as
 * safetensors.torch.save_file's `metadata` argument), written before the
 * tensors; n_meta 0 writes none. Errors: those of tj_safetensors_save, and
 * TJ_ERR_INVALID_ARGUMENT for a NULL, non-UTF-8 or duplicate key or value
 * (naming its index and key) or a tensor named "__metadata__". */
tj_status tj_safetensors_save_metadata(const char *path, const char *const *names, tj_tensor *const *tensors, int n,
                                       const char *const *keys, const char *const *values, int n_meta);

/** A loaded file: tensors in header order with their names. */
typedef struct tj_safetensors tj_safetensors;

/** Reads and validates a whole file as the format's reference reader
 * (huggingface/safetensors) does: header JSON without duplicate keys,
 * "__metadata__" (if any) an object of strings, dtypes, shapes, offsets
 * consistent with the shapes, and the tensors covering the data exactly
 * (sorted by offset, each begins where the one before ends: no overlap, no
 * unused bytes between them or after the last). Errors: TJ_ERR_IO,
 * TJ_ERR_PARSE (malformed: the message names the file and the tensor,
 * field, key or byte range), TJ_ERR_UNSUPPORTED (another dtype),
 * TJ_ERR_OUT_OF_MEMORY. */
tj_safetensors *tj_safetensors_load(const char *path);
/** Same, from a buffer of n bytes (messages name no file). */
tj_safetensors *tj_safetensors_load_buffer(const void *buf, size_t n);
int tj_safetensors_count(const tj_safetensors *f);
const char *tj_safetensors_name(const tj_safetensors *f, int i);
/** The tensor named `name` (borrowed: valid until tj_safetensors_free; retain
 * it to keep it), or NULL with TJ_ERR_NOT_FOUND or TJ_ERR_INVALID_ARGUMENT
 * (NULL file or name). */
tj_tensor *tj_safetensors_get(const tj_safetensors *f, const char *name);
/** The "__metadata__" value of `key` (borrowed: valid until
 * tj_safetensors_free), or NULL with TJ_ERR_NOT_FOUND (no such entry, or no
 * metadata) or TJ_ERR_INVALID_ARGUMENT (NULL file or key). */
const char *tj_safetensors_metadata(const tj_safetensors *f, const char *key);
void tj_safetensors_free(tj_safetensors *f);

#ifdef __cplusplus
}
#endif
#endif
