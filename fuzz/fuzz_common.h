/* Shared set-up of the libFuzzer targets (see fuzz/README.md): one thread,
 * no storage cache (so that AddressSanitizer sees every freed block), and an
 * allocator hook that refuses to hold more than FUZZ_MAX_LIVE bytes, so that
 * an input declaring a huge tensor exercises the out-of-memory path instead
 * of exhausting the machine. */
#ifndef TJIT_FUZZ_COMMON_H
#define TJIT_FUZZ_COMMON_H

#include <stddef.h>
#include <stdint.h>

#include "tjit/tjit.h"

#define FUZZ_MAX_LIVE ((size_t)256 << 20)

/** Call once from LLVMFuzzerInitialize. */
void fuzz_setup(void);

/** Defines LLVMFuzzerInitialize for a target that needs no set-up beyond
 *  fuzz_setup (the build may rename the entry point: see meson.build). */
#define FUZZ_INITIALIZE_DEFAULT                       \
    int LLVMFuzzerInitialize(int *argc, char ***argv) \
    {                                                 \
        (void)argc;                                   \
        (void)argv;                                   \
        fuzz_setup();                                 \
        return 0;                                     \
    }

/** Aborts (a finding) unless a failed call left an error status and a
 * message naming something; `who` is the call, for the report. */
void fuzz_expect_error(const char *who);

/** Writes n bytes to path; aborts when it cannot (an environment problem,
 * not a finding). */
void fuzz_write_file(const char *path, const void *data, size_t n);

#endif
