/* libFuzzer target: the safetensors reader (tj_safetensors_load_buffer).
 * A file that loads must give back each tensor by its name, with data inside
 * the file; one that does not must give an error with a message. */
#include <stdlib.h>
#include <string.h>

#include "fuzz_common.h"
#include "tjit/safetensors.h"

FUZZ_INITIALIZE_DEFAULT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tj_clear_error();
    tj_safetensors *f = tj_safetensors_load_buffer(data, size);
    if (!f) {
        fuzz_expect_error("tj_safetensors_load_buffer");
        return 0;
    }
    uint64_t total = 0;
    for (int i = 0; i < tj_safetensors_count(f); i++) {
        const char *name = tj_safetensors_name(f, i);
        tj_tensor *t = name ? tj_safetensors_get(f, name) : NULL;
        if (!t) abort();
        total += (uint64_t)tj_tensor_numel(t) * tj_dtype_size(tj_tensor_dtype(t));
        for (int64_t k = 0; k < tj_tensor_numel(t); k++) (void)tj_tensor_item_at(t, k);
    }
    if (total > size) abort(); /* tensors do not overlap, so their bytes fit in the file */
    if (tj_safetensors_get(f, "\x01 no such tensor") || tj_last_status() != TJ_ERR_NOT_FOUND) abort();
    tj_safetensors_free(f);
    return 0;
}
