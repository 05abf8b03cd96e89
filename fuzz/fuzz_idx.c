/* libFuzzer target: the IDX reader (models/idx.h), which reads files through
 * zlib (plain or gzip): each input is written to a file in /dev/shm first. */
#include <stdio.h>
#include <stdlib.h>
#include <unistd.h>

#include "fuzz_common.h"
#include "models/idx.h"

static char path[64];

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
    (void)argc;
    (void)argv;
    fuzz_setup();
    snprintf(path, sizeof path, "/dev/shm/tjit_fuzz_idx_%d", (int)getpid());
    return 0;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
    fuzz_write_file(path, data, size);
    tj_clear_error();
    tj_tensor *t = idx_load_u8(path);
    unlink(path);
    if (!t) {
        fuzz_expect_error("idx_load_u8");
        return 0;
    }
    for (int64_t i = 0; i < tj_tensor_numel(t); i++) {
        double v = tj_tensor_item_at(t, i);
        if (v < 0 || v > 255) abort();
    }
    tj_tensor_release(t);
    return 0;
}
