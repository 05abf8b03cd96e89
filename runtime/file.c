/* Reading a whole file into memory, for the tensor file formats; reading a
 * text file, bounded and without NUL bytes; writing
 * one through a temporary file; printing into a string, for the
 * *_to_string functions; the one message of a failed read or write. */
#include <errno.h>
#include <limits.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "internal.h"

/* "who: cannot read 'path': why", or "who: read failed: why" without a path;
 * `note` ends the message ("" for none). */
static tj_status io_error(const char *who, const char *verb, const char *path, const char *why, const char *note)
{
    if (path) return tj_error(TJ_ERR_IO, "%s: cannot %s '%s': %s%s", who, verb, path, why, note);
    return tj_error(TJ_ERR_IO, "%s: %s failed: %s%s", who, verb, why, note);
}

tj_status tj_read_exact(FILE *f, void *buf, size_t n, const char *who, const char *path)
{
    errno = 0;
    size_t got = fread(buf, 1, n, f);
    if (got == n) return TJ_OK;
    char why[96];
    if (ferror(f)) snprintf(why, sizeof why, "%s", strerror(errno ? errno : EIO));
    else snprintf(why, sizeof why, "unexpected end of file after %zu of %zu bytes", got, n);
    return io_error(who, "read", path, why, "");
}

tj_status tj_check_written(FILE *f, const char *who, const char *path)
{
    /* A buffered stream meets a full disk at the flush, whose errno is its
     * reason; a write that failed before the flush left only the stream's
     * error indicator (errno may have changed since). */
    errno = 0;
    int flushed = fflush(f);
    if (flushed == 0 && !ferror(f)) return TJ_OK;
    const char *why = flushed != 0 ? strerror(errno ? errno : EIO) : "an earlier write to the stream failed";
    return io_error(who, "write", path, why, "");
}

void *tj_read_file(const char *path, const char *who, size_t *size)
{
    *size = 0;
    if (!path) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL path", who);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        tj_error(TJ_ERR_IO, "%s: cannot open '%s': %s", who, path, strerror(errno));
        return NULL;
    }
    char *buf = NULL;
    struct stat st;
    /* a directory opens, and seeks to a bogus end (LONG_MAX on ext4) */
    if (fstat(fileno(f), &st) != 0 || !S_ISREG(st.st_mode)) {
        tj_error(TJ_ERR_IO, "%s: '%s' is not a regular file", who, path);
    } else if (!(buf = tj_alloc((size_t)st.st_size + 1))) {
        tj_oom(who, (size_t)st.st_size + 1);
    } else if (tj_read_exact(f, buf, (size_t)st.st_size, who, path) != TJ_OK) {
        tj_free(buf, (size_t)st.st_size + 1);
        buf = NULL;
    } else {
        buf[st.st_size] = 0; /* text formats may read it as a string */
        *size = (size_t)st.st_size;
    }
    fclose(f);
    return buf;
}

void tj_free_file(void *buf, size_t size) { tj_free(buf, size + 1); }

/* "256 MiB" for a whole number of MiB, else "N bytes". */
static void limit_str(size_t max_bytes, char *out, size_t n)
{
    if (max_bytes && max_bytes % ((size_t)1 << 20) == 0) snprintf(out, n, "%zu MiB", max_bytes >> 20);
    else snprintf(out, n, "%zu bytes", max_bytes);
}

/* The error for a NUL byte at buf[off]: its line and column (from 1), as
 * tj_graph_parse names a place, and the byte offset (from 0). */
static void nul_error(const char *who, const char *path, const char *buf, size_t off)
{
    int line = 1;
    size_t line_start = 0;
    for (size_t i = 0; i < off; i++)
        if (buf[i] == '\n') line++, line_start = i + 1;
    tj_error(TJ_ERR_PARSE, "%s: '%s': line %d, column %zu: a NUL byte (byte offset %zu) in text", who, path, line,
             off - line_start + 1, off);
}

char *tj_read_text_file(const char *path, const char *who, size_t max_bytes, size_t *size)
{
    *size = 0;
    if (!path) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL path", who);
        return NULL;
    }
    FILE *f = fopen(path, "rb");
    if (!f) {
        tj_error(TJ_ERR_IO, "%s: cannot read '%s': %s", who, path, strerror(errno));
        return NULL;
    }
    char limit[32];
    limit_str(max_bytes, limit, sizeof limit);
    /* A regular file too large is refused before reading it; any other
     * kind (a pipe, /dev/zero) reports no size to trust: the bytes read are
     * counted instead, up to one past the limit. */
    struct stat st;
    bool too_large = fstat(fileno(f), &st) == 0 && S_ISREG(st.st_mode) && (uintmax_t)st.st_size > max_bytes;
    char *buf = NULL;
    size_t len = 0, cap = 0; /* cap bytes of text, plus the terminating NUL */
    bool failed = too_large;
    while (!failed) {
        if (len == cap) {
            size_t want = cap ? cap * 2 : 65536;
            if (want > max_bytes + 1) want = max_bytes + 1;
            char *grown = tj_alloc(want + 1);
            if (!grown) {
                tj_oom(who, want + 1);
                failed = true;
                break;
            }
            if (buf) memcpy(grown, buf, len);
            tj_free(buf, cap + 1);
            buf = grown, cap = want;
        }
        errno = 0;
        size_t asked = cap - len, got = fread(buf + len, 1, asked, f);
        const char *nul = memchr(buf + len, 0, got);
        len += got;
        if (nul) nul_error(who, path, buf, (size_t)(nul - buf)), failed = true;
        else if (len > max_bytes) too_large = failed = true;
        else if (got < asked && ferror(f)) /* a directory opens, then fails to read: EISDIR */
            io_error(who, "read", path, strerror(errno ? errno : EIO), ""), failed = true;
        else if (got < asked) break;
    }
    fclose(f);
    if (too_large) tj_error(TJ_ERR_IO, "%s: cannot read '%s': larger than %s, the most a text file may hold", who, path, limit);
    char *text = failed ? NULL : tj_alloc(len + 1); /* exactly len + 1, as tj_free_file frees it */
    if (!failed && !text) tj_oom(who, len + 1);
    if (text) {
        memcpy(text, buf, len);
        text[len] = '\0';
        *size = len;
    }
    tj_free(buf, cap + 1);
    return text;
}

/* write(f, ctx), then the close; TJ_ERR_IO with *err the errno of the
 * failure (0 when it left none). */
static tj_status write_and_close(FILE *f, tj_status (*write)(FILE *f, void *ctx), void *ctx, int *err)
{
    errno = 0;
    tj_status st = write(f, ctx);
    *err = errno;
    if (fclose(f) != 0 && st == TJ_OK) st = TJ_ERR_IO, *err = errno;
    return st;
}

/* The file a chain of symbolic links starting at `path` names, into out,
 * when that file does not exist yet (a dangling link: writing through it
 * creates the file, as a shell's redirection does); false otherwise. A
 * relative target is taken against its link's folder. */
static bool dangling_target(const char *path, char *out, size_t size)
{
    char cur[PATH_MAX], next[PATH_MAX];
    struct stat sb;
    if (snprintf(cur, sizeof cur, "%s", path) >= (int)sizeof cur) return false;
    for (int hops = 0; hops < 40; hops++) { /* Linux's limit on links followed */
        if (lstat(cur, &sb) != 0) {
            if (errno != ENOENT || hops == 0) return false;
            return snprintf(out, size, "%s", cur) < (int)size;
        }
        if (!S_ISLNK(sb.st_mode)) return false;
        ssize_t len = readlink(cur, next, sizeof next - 1);
        if (len < 0) return false;
        next[len] = '\0';
        const char *slash = strrchr(cur, '/');
        int dir = next[0] == '/' || !slash ? 0 : (int)(slash - cur) + 1;
        if (snprintf(cur + dir, sizeof cur - (size_t)dir, "%s", next) >= (int)(sizeof cur - (size_t)dir)) return false;
    }
    return false;
}

tj_status tj_write_file_replacing(const char *path, const char *who, tj_status (*write)(FILE *f, void *ctx),
                                  void *ctx)
{
    static atomic_uint serial; /* two writers of one path in this process use two temporaries */
    if (!path) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: NULL path", who);
    /* Renaming over a path replaces whatever was there: a device or a FIFO
     * (/dev/stdout, /dev/null) would become a regular file (as root, even
     * /dev/null), so those are written in place; a symbolic link is
     * followed, the file it names replaced (or made, for a dangling link)
     * and the link kept. */
    struct stat sb;
    int err;
    if (stat(path, &sb) == 0 && !S_ISREG(sb.st_mode)) {
        FILE *f = fopen(path, "wb");
        if (!f) return tj_error(TJ_ERR_IO, "%s: cannot open '%s': %s", who, path, strerror(errno));
        tj_status st = write_and_close(f, write, ctx, &err);
        return st == TJ_ERR_IO ? io_error(who, "write", path, strerror(err ? err : EIO), "") : st;
    }
    char target[PATH_MAX];
    if (lstat(path, &sb) == 0 && S_ISLNK(sb.st_mode) &&
        (realpath(path, target) || dangling_target(path, target, sizeof target)))
        path = target;
    char tmp[4096];
    int n = snprintf(tmp, sizeof tmp, "%s.tmp%ld-%u", path, (long)getpid(), atomic_fetch_add(&serial, 1));
    if (n < 0 || (size_t)n >= sizeof tmp)
        return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s: path of %zu bytes is too long", who, strlen(path));
    FILE *f = fopen(tmp, "wbx");
    if (!f) return tj_error(TJ_ERR_IO, "%s: cannot create '%s' (to write '%s'): %s", who, tmp, path, strerror(errno));
    tj_status st = write_and_close(f, write, ctx, &err);
    if (st == TJ_OK && rename(tmp, path) != 0) {
        err = errno;
        remove(tmp);
        return tj_error(TJ_ERR_IO, "%s: cannot rename '%s' to '%s': %s", who, tmp, path, strerror(err));
    }
    if (st == TJ_OK) return TJ_OK;
    remove(tmp);
    if (st != TJ_ERR_IO) return st;
    return io_error(who, "write", path, strerror(err ? err : EIO), " (left as it was)");
}

char *tj_print_to_string(tj_status (*print)(const void *obj, FILE *f), const void *obj, const char *who,
                         bool strip_newline)
{
    char *buf = NULL;
    size_t len = 0;
    FILE *f = open_memstream(&buf, &len);
    if (!f) {
        tj_oom(who, 0);
        return NULL;
    }
    tj_status st = print(obj, f);
    bool failed = fclose(f) != 0;
    if (st != TJ_OK || failed || !buf) {
        free(buf);
        if (st == TJ_OK) tj_oom(who, 0);
        return NULL;
    }
    if (strip_newline && len > 0 && buf[len - 1] == '\n') buf[len - 1] = '\0';
    return buf;
}
