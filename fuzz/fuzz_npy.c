/* libFuzzer target: the .npy reader (tj_npy_load_buffer). A file that loads
 * must describe a tensor whose data fits in it; one that does not must give
 * an error with a message. */
#include <stdlib.h>

#include "fuzz_common.h"

FUZZ_INITIALIZE_DEFAULT

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    tj_clear_error();
    tj_tensor *t = tj_npy_load_buffer(data, size);
    if (!t) {
        fuzz_expect_error("tj_npy_load_buffer");
        return 0;
    }
    if ((uint64_t)tj_tensor_numel(t) * tj_dtype_size(tj_tensor_dtype(t)) > size) abort();
    /* read every element: the loaded data must be initialised */
    double sum = 0;
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) sum += tj_tensor_item_at(t, i);
    if (tj_tensor_dtype(t) == TJ_BOOL && (sum < 0 || sum > (double)tj_tensor_numel(t))) abort();
    tj_tensor_release(t);
    return 0;
}
