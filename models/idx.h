/* IDX files (the MNIST / Fashion-MNIST format), gzip-compressed or not. */
#ifndef TJIT_MODELS_IDX_H
#define TJIT_MODELS_IDX_H

#include "tjit/tjit.h"

/** Reads an IDX file of unsigned bytes (type 0x08) through zlib (plain files
 * read too). Returns a new uint8 tensor stored as int64 [d0, d1, ...], or
 * NULL with TJ_ERR_IO (missing/unreadable, a directory: the system's
 * reason), TJ_ERR_PARSE (bad magic, type or rank, truncated data, trailing
 * bytes, a damaged gzip stream: zlib's reason), TJ_ERR_OVERFLOW (sizes). */
tj_tensor *idx_load_u8(const char *path);

#endif
