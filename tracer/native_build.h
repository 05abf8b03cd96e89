/* Machine code for generated C source (tracer/fuse_native.c), built as
 * Inductor builds its C++ kernels: the system C compiler compiles the
 * source into a shared object kept in a per-user cache, named by a hash of
 * the source, the compiler program (its resolved path, size and
 * modification time: an upgraded compiler builds anew) and its flags, and
 * loaded with dlopen; a later plan with the same source loads the cached
 * object without compiling.
 *
 * Compiler: $TJ_CC (one program name or path, no arguments), else cc,
 * stopped after $TJ_CC_TIMEOUT seconds (default 300; a malformed value is
 * an error).
 * Cache: $TJ_CACHE_DIR, else $XDG_CACHE_HOME/tjit, else $HOME/.cache/tjit,
 * created with mode 0700; a cache directory that is not the user's own or
 * that others may write is refused (a planted object would run as the
 * user); objects are made writable by the user alone, whatever the umask,
 * and a cached one that others may write is built anew. The cache keeps
 * each object's source next to it (fused-<hash>.c), to read, and loads an
 * object only next to the very source it is asked for, and only whole: each
 * object ends with a hash of its bytes, and one cut short or changed since
 * (which could crash the process in dlopen) is built anew. Internal to
 * tracer/. */
#ifndef TJIT_TRACER_NATIVE_BUILD_H
#define TJIT_TRACER_NATIVE_BUILD_H

#include "tjit/core.h"

/** Compiles (or finds in the cache) `source`, a C11 translation unit, with
 * the compiler flags `flags` (NULL-terminated; the instruction set) added
 * to tjit's own (-std=c11 -O3 -ffp-contract=off -fno-math-errno -fPIC
 * -shared), and loads it: *handle for tj_native_symbol and
 * tj_native_unload. Errors (nothing left loaded, the temporary build
 * directory removed): TJ_ERR_IO when the cache directory cannot be made,
 * is not private, or a file in it cannot be written or renamed;
 * TJ_ERR_UNSUPPORTED when the compiler cannot be run, fails (the message
 * quotes the first line it printed) or runs past the time limit, or the
 * object does not load. */
tj_status tj_native_load(const char *source, const char *const *flags, void **handle);

/** The address of function `name` in a loaded object, or NULL. */
void *tj_native_symbol(void *handle, const char *name);

/** Releases a handle of tj_native_load (NULL: nothing). */
void tj_native_unload(void *handle);

#endif
