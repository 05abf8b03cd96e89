/* IDX reader: big-endian magic (0x0000 type rank), big-endian uint32 sizes,
 * then the data. Through zlib's gz* functions, which read plain files too. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <zlib.h>

#include "idx.h"

static bool read_exact(gzFile f, void *buf, size_t n)
{
    size_t done = 0;
    while (done < n) {
        unsigned chunk = n - done > (1u << 30) ? (1u << 30) : (unsigned)(n - done);
        int r = gzread(f, (char *)buf + done, chunk);
        if (r <= 0) return false;
        done += (size_t)r;
    }
    return true;
}

/* Reads n data bytes into a buffer that grows as they arrive, so that a
 * header declaring more than the file holds costs no more memory than the
 * file does. NULL with *oom false when the data ends early. */
static unsigned char *read_data(gzFile f, size_t n, bool *oom)
{
    size_t have = 0, cap = n < ((size_t)1 << 20) ? n : (size_t)1 << 20;
    unsigned char *buf = malloc(cap ? cap : 1);
    *oom = !buf;
    while (buf && have < n) {
        if (have == cap) {
            cap = cap * 2 < n ? cap * 2 : n;
            unsigned char *grown = realloc(buf, cap);
            if (!grown) {
                *oom = true;
                break;
            }
            buf = grown;
        }
        if (!read_exact(f, buf + have, cap - have)) break;
        have = cap;
    }
    if (have < n) {
        free(buf);
        return NULL;
    }
    return buf;
}

/* The error of a read that came short: the system's reason (a directory),
 * zlib's for a damaged stream, else the file or its gzip stream ended early
 * ("is truncated" then `where`). */
static void read_failed(gzFile f, const char *path, const char *where)
{
    int saved = errno, errnum;
    const char *msg = gzerror(f, &errnum);
    size_t len = strlen(path);
    if (!strncmp(msg, path, len) && !strncmp(msg + len, ": ", 2)) msg += len + 2; /* zlib's "PATH: reason" */
    if (errnum == Z_ERRNO) tj_error(TJ_ERR_IO, "idx: cannot read '%s': %s", path, strerror(saved));
    else if (errnum != Z_OK && errnum != Z_STREAM_END && errnum != Z_BUF_ERROR)
        tj_error(TJ_ERR_PARSE, "idx: '%s' is corrupt (gzip: %s)", path, msg);
    else tj_error(TJ_ERR_PARSE, "idx: '%s' is truncated%s", path, where);
}

tj_tensor *idx_load_u8(const char *path)
{
    gzFile f = gzopen(path, "rb");
    if (!f) {
        tj_error(TJ_ERR_IO, "idx: cannot open '%s': %s", path, strerror(errno ? errno : ENOENT));
        return NULL;
    }
    unsigned char magic[4];
    tj_tensor *t = NULL;
    unsigned char *raw = NULL;
    if (!read_exact(f, magic, 4)) {
        read_failed(f, path, " in its header");
        goto done;
    }
    if (magic[0] || magic[1] || magic[2] != 0x08 || magic[3] < 1 || magic[3] > 4) {
        tj_error(TJ_ERR_PARSE, "idx: '%s' is not an IDX file of unsigned bytes (bad magic)", path);
        goto done;
    }
    int ndim = magic[3];
    int64_t shape[4], numel = 1;
    for (int d = 0; d < ndim; d++) {
        unsigned char s[4];
        if (!read_exact(f, s, 4)) {
            read_failed(f, path, " in its header");
            goto done;
        }
        shape[d] = (int64_t)s[0] << 24 | s[1] << 16 | s[2] << 8 | s[3];
        if (__builtin_mul_overflow(numel, shape[d], &numel) || numel > ((int64_t)1 << 34)) {
            tj_error(TJ_ERR_OVERFLOW, "idx: '%s' declares too many elements", path);
            goto done;
        }
    }
    bool oom;
    if (!(raw = read_data(f, (size_t)numel, &oom))) {
        char where[64];
        snprintf(where, sizeof where, ": expected %lld data bytes", (long long)numel);
        if (oom) tj_error(TJ_ERR_OUT_OF_MEMORY, "idx: out of memory reading '%s'", path);
        else read_failed(f, path, where);
        goto done;
    }
    unsigned char extra;
    if (gzread(f, &extra, 1) > 0) {
        tj_error(TJ_ERR_PARSE, "idx: '%s' has bytes after its data", path);
        goto done;
    }
    int errnum;
    gzerror(f, &errnum);
    if (errnum != Z_OK && errnum != Z_STREAM_END) {
        read_failed(f, path, "");
        goto done;
    }
    t = tj_tensor_empty(TJ_INT64, ndim, shape);
    if (t) {
        int64_t *p = tj_tensor_data(t);
        for (int64_t i = 0; i < numel; i++) p[i] = raw[i];
    }
done:
    free(raw);
    gzclose(f);
    return t;
}
