/* Compiling generated C with the system compiler into a per-user cache of
 * shared objects, and loading them (native_build.h). */
#include "native_build.h"

#include <dirent.h>
#include <dlfcn.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <signal.h>
#include <spawn.h>
#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "runtime/internal.h"

extern char **environ;

static const char who[] = "tj_compile (native code)";

/* Vectorised whole (GCC 12 would fold a float32 rounding of float64
 * vectors read back as float64 away: the generated code keeps it,
 * fuse_native.c, rounding). */
static const char *const base_flags[] = {"-std=c11", "-O3", "-ffp-contract=off", "-fno-math-errno", "-fPIC",
                                         "-shared"};
#define N_BASE_FLAGS (sizeof base_flags / sizeof *base_flags)
#define MAX_FLAGS 16

static const char *compiler(void)
{
    const char *cc = getenv("TJ_CC");
    return cc && *cc ? cc : "cc";
}

/* Whether path is an executable regular file (after links); if so, its
 * resolved path, size and modification time into id. */
static bool identify(const char *path, char *id, size_t size)
{
    char real[PATH_MAX];
    struct stat st;
    if (access(path, X_OK) != 0 || !realpath(path, real) || stat(real, &st) != 0 || !S_ISREG(st.st_mode)) return false;
    snprintf(id, size, "%s %lld %lld.%09ld", real, (long long)st.st_size, (long long)st.st_mtim.tv_sec,
             st.st_mtim.tv_nsec);
    return true;
}

/* The compiler as the cache key knows it, into id: the identity of the
 * program that posix_spawnp would run, so that objects built by a compiler
 * since upgraded or switched (cc as an alternatives link) are built anew;
 * the bare name when no such program is found (the build then fails and
 * says so). */
static void compiler_identity(char *id, size_t size)
{
    const char *cc = compiler();
    if (strchr(cc, '/')) {
        if (identify(cc, id, size)) return;
    } else {
        /* PATH unset: posix_spawnp searches the system's default path,
         * which confstr gives (glibc: /bin:/usr/bin) */
        char fallback[256];
        const char *dirs = getenv("PATH");
        if (!dirs) {
            size_t need = confstr(_CS_PATH, fallback, sizeof fallback);
            dirs = need > 0 && need <= sizeof fallback ? fallback : "/bin:/usr/bin";
        }
        char path[4096];
        for (const char *d = dirs;; d++) {
            size_t len = strcspn(d, ":"); /* an empty entry: the current directory */
            int n = snprintf(path, sizeof path, "%.*s%s%s", (int)len, d, len ? "/" : "", cc);
            if (n > 0 && (size_t)n < sizeof path && identify(path, id, size)) return;
            d += len;
            if (!*d) break;
        }
    }
    snprintf(id, size, "%s", cc);
}

#define FNV_BASIS 0xcbf29ce484222325ull

/* FNV-1a, 64 bits, over n bytes. */
static uint64_t fnv_bytes(uint64_t h, const void *bytes, size_t n)
{
    for (const unsigned char *b = bytes; n--; b++) {
        h ^= *b;
        h *= 0x100000001b3ull;
    }
    return h;
}

/* fnv_bytes over a string with its terminating NUL: the source, the
 * compiler and the flags, so that no two lists hash alike by
 * concatenation. */
static uint64_t fnv(uint64_t h, const char *s) { return fnv_bytes(h, s, strlen(s) + 1); }

/* Makes every missing directory of `path` (mode 0700). */
static int make_dirs(char *path)
{
    for (char *p = path + 1; *p; p++) {
        if (*p != '/') continue;
        *p = '\0';
        int r = mkdir(path, 0700);
        *p = '/';
        if (r != 0 && errno != EEXIST) return -1;
    }
    return mkdir(path, 0700) != 0 && errno != EEXIST ? -1 : 0;
}

/* The cache directory, made if missing and checked private, into dir. */
static tj_status cache_dir(char *dir, size_t size)
{
    const char *env = getenv("TJ_CACHE_DIR"), *xdg = getenv("XDG_CACHE_HOME"), *home = getenv("HOME");
    int len;
    if (env && *env) len = snprintf(dir, size, "%s", env);
    else if (xdg && *xdg) len = snprintf(dir, size, "%s/tjit", xdg);
    else if (home && *home) len = snprintf(dir, size, "%s/.cache/tjit", home);
    else return tj_error(TJ_ERR_IO, "%s: no cache directory: set TJ_CACHE_DIR or HOME", who);
    if (len < 0 || (size_t)len >= size) return tj_error(TJ_ERR_IO, "%s: cache directory path too long", who);
    if (make_dirs(dir) != 0) return tj_error(TJ_ERR_IO, "%s: cannot make '%s': %s", who, dir, strerror(errno));
    struct stat st;
    if (stat(dir, &st) != 0) return tj_error(TJ_ERR_IO, "%s: cannot read '%s': %s", who, dir, strerror(errno));
    if (!S_ISDIR(st.st_mode) || st.st_uid != getuid() || (st.st_mode & 022))
        return tj_error(TJ_ERR_IO, "%s: cache directory '%s' is not a private directory of this user (mode %03o)", who,
                        dir, (unsigned)(st.st_mode & 0777));
    return TJ_OK;
}

static tj_status write_source(const char *path, const char *source)
{
    FILE *f = fopen(path, "w");
    if (!f) return tj_error(TJ_ERR_IO, "%s: cannot write '%s': %s", who, path, strerror(errno));
    /* the failing write's errno says why (a full disk): the stream's error
     * indicator alone would not */
    tj_status st = fputs(source, f) == EOF ? tj_error(TJ_ERR_IO, "%s: cannot write '%s': %s", who, path, strerror(errno))
                                           : tj_check_written(f, who, path);
    return fclose(f) != 0 && st == TJ_OK ? tj_error(TJ_ERR_IO, "%s: cannot write '%s'", who, path) : st;
}

/* The line of the compiler's output that says what failed, into line: its
 * first error ("k.c:55:18: error: ...": GCC's first line only names the
 * function, "In function 'tjg_0':"), else its first line. GCC's driver
 * sums up a failed link as "collect2: error: ld returned 1 exit status"
 * after the linker's own line, which says why ("ld: final link failed: No
 * space left on device"): that one is quoted. */
static void failure_line(const char *log, char *line, size_t size)
{
    line[0] = '\0';
    FILE *f = fopen(log, "r");
    if (!f) return;
    char buf[1024], prev[1024] = "";
    for (bool first = true; fgets(buf, sizeof buf, f); first = false) {
        bool error = strstr(buf, "error:") != NULL;
        const char *quoted = error && prev[0] && !strncmp(buf, "collect2:", 9) ? prev : buf;
        if (first || error) snprintf(line, size, "%.*s", (int)strcspn(quoted, "\n"), quoted);
        if (error) break;
        memcpy(prev, buf, sizeof prev);
    }
    fclose(f);
}

/* Seconds a build may take into *seconds: $TJ_CC_TIMEOUT, else 300 (a
 * compiler that hangs would hang tj_compile). A value that is not a whole
 * number of seconds from 1 to 86400 ("10x", "0", "-5") is an error rather
 * than a silent 300 or 10: the user meant some limit, and strtol's reading
 * of it is not that limit. */
static tj_status compile_seconds(int *seconds)
{
    const char *s = getenv("TJ_CC_TIMEOUT");
    long long v = 300;
    bool valid = !s || tj_parse_positive(s, 86400, &v);
    *seconds = (int)v;
    return valid ? TJ_OK
                 : tj_error(TJ_ERR_INVALID_ARGUMENT,
                            "%s: TJ_CC_TIMEOUT='%s' is not a whole number of seconds from 1 to 86400", who, s);
}

static double monotonic_s(void)
{
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return (double)ts.tv_sec + 1e-9 * (double)ts.tv_nsec;
}

/* Waits for child pid, leader of its own process group, up to `seconds`,
 * its status into *status: 1; 0 when it ran longer (the group killed: the
 * driver's cc1, as and ld too; pid reaped); -1 when waitpid fails
 * (errno). */
static int wait_for(pid_t pid, int seconds, int *status)
{
    const struct timespec tick = {0, 10 * 1000 * 1000};
    for (double end = monotonic_s() + seconds; monotonic_s() < end;) {
        pid_t r = waitpid(pid, status, WNOHANG);
        if (r == pid) return 1;
        if (r < 0 && errno != EINTR) return -1;
        nanosleep(&tick, NULL);
    }
    kill(-pid, SIGKILL);
    while (waitpid(pid, status, 0) < 0 && errno == EINTR) continue;
    return 0;
}

/* Runs the compiler on dir/k.c into dir/k.so, its output into dir/log. */
static tj_status run_compiler(const char *dir, const char *const *flags)
{
    int limit;
    tj_status st = compile_seconds(&limit);
    if (st != TJ_OK) return st;
    char src[4096], obj[4096], log[4096];
    snprintf(src, sizeof src, "%s/k.c", dir);
    snprintf(obj, sizeof obj, "%s/k.so", dir);
    snprintf(log, sizeof log, "%s/log", dir);
    const char *argv[N_BASE_FLAGS + MAX_FLAGS + 6];
    int n = 0;
    argv[n++] = compiler();
    for (size_t i = 0; i < N_BASE_FLAGS; i++) argv[n++] = base_flags[i];
    for (int i = 0; i < MAX_FLAGS && flags[i]; i++) argv[n++] = flags[i];
    argv[n++] = "-o";
    argv[n++] = obj;
    argv[n++] = src;
    argv[n++] = "-lm";
    argv[n] = NULL;
    posix_spawn_file_actions_t fa;
    posix_spawnattr_t attr;
    pid_t pid;
    int err = posix_spawn_file_actions_init(&fa);
    if (!err && (err = posix_spawnattr_init(&attr)) != 0) posix_spawn_file_actions_destroy(&fa);
    if (!err) {
        /* its own process group, so that a timeout stops the whole build */
        if (!(err = posix_spawnattr_setflags(&attr, POSIX_SPAWN_SETPGROUP)) &&
            !(err = posix_spawnattr_setpgroup(&attr, 0)) &&
            !(err = posix_spawn_file_actions_addopen(&fa, 1, log, O_WRONLY | O_CREAT | O_TRUNC, 0600)) &&
            !(err = posix_spawn_file_actions_adddup2(&fa, 1, 2)) &&
            !(err = posix_spawn_file_actions_addopen(&fa, 0, "/dev/null", O_RDONLY, 0)))
            err = posix_spawnp(&pid, argv[0], &fa, &attr, (char *const *)argv, environ);
        posix_spawn_file_actions_destroy(&fa);
        posix_spawnattr_destroy(&attr);
    }
    if (err != 0) return tj_error(TJ_ERR_UNSUPPORTED, "%s: cannot run the compiler '%s': %s", who, argv[0], strerror(err));
    int status, waited = wait_for(pid, limit, &status);
    if (waited < 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: waiting for '%s': %s", who, argv[0], strerror(errno));
    if (waited == 0)
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: the compiler '%s' took more than %d s (TJ_CC_TIMEOUT); stopped", who,
                        argv[0], limit);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0) return TJ_OK;
    char line[256];
    failure_line(log, line, sizeof line);
    if (WIFEXITED(status) && WEXITSTATUS(status) == 127 && !line[0])
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: cannot run the compiler '%s'", who, argv[0]);
    return tj_error(TJ_ERR_UNSUPPORTED, "%s: the compiler '%s' failed (%s %d)%s%s", who, argv[0],
                    WIFEXITED(status) ? "exit status" : "signal",
                    WIFEXITED(status) ? WEXITSTATUS(status) : WTERMSIG(status), line[0] ? ": " : "", line);
}

/* Whether the file at path is the user's and no one else may write it: a
 * cached object that another user could have changed is built anew. */
static bool private_file(const char *path)
{
    struct stat st;
    return stat(path, &st) == 0 && S_ISREG(st.st_mode) && st.st_uid == getuid() && !(st.st_mode & 022);
}

/* Removes the build directory: its files (ours and any the compiler left)
 * and the directory. */
static void remove_build_dir(const char *dir)
{
    DIR *d = opendir(dir);
    char path[4096];
    for (struct dirent *e; d && (e = readdir(d));) {
        if (!strcmp(e->d_name, ".") || !strcmp(e->d_name, "..")) continue;
        snprintf(path, sizeof path, "%s/%s", dir, e->d_name);
        unlink(path);
    }
    if (d) closedir(d);
    rmdir(dir);
}

/* Whether the file at path holds exactly `text`: a cached object is used
 * only next to the source it was built from (the 64-bit name could
 * collide). */
static bool same_text(const char *path, const char *text)
{
    FILE *f = fopen(path, "r");
    if (!f) return false;
    size_t n = strlen(text), got = 0;
    char buf[4096];
    bool same = true;
    for (size_t r; same && (r = fread(buf, 1, sizeof buf, f)) > 0; got += r)
        same = got + r <= n && !memcmp(buf, text + got, r);
    fclose(f);
    return same && got == n;
}

/* A built object ends with a seal: the 8 bytes of seal_magic, then the
 * FNV-1a hash of every byte before them, least significant byte first (the
 * loader reads an ELF object's headers, never its end). A cached object is
 * loaded only whole and unchanged: one cut short (a copy out of room, a
 * crash before its blocks reached the disk) still loaded, and the process
 * died of SIGBUS in dlopen or in its code, its pages past the file's end. */
static const char seal_magic[8] = {'t', 'j', 'i', 't', 's', 'e', 'a', 'l'};
#define SEAL_BYTES 16

static void seal_of(uint64_t h, unsigned char *seal)
{
    memcpy(seal, seal_magic, sizeof seal_magic);
    for (int i = 0; i < 8; i++) seal[8 + i] = (unsigned char)(h >> (8 * i));
}

/* The hash of the first n bytes of f into *h; false when it has fewer or
 * a read fails. */
static bool hash_prefix(FILE *f, uint64_t n, uint64_t *h)
{
    unsigned char buf[8192];
    *h = FNV_BASIS;
    while (n > 0) {
        size_t want = n < sizeof buf ? (size_t)n : sizeof buf, got = fread(buf, 1, want, f);
        if (got != want) return false;
        *h = fnv_bytes(*h, buf, got);
        n -= got;
    }
    return true;
}

/* Appends the seal to the object the compiler wrote at path. */
static tj_status seal_object(const char *path)
{
    FILE *f = fopen(path, "r+b");
    struct stat st;
    uint64_t h;
    unsigned char seal[SEAL_BYTES];
    bool ok = f && fstat(fileno(f), &st) == 0 && hash_prefix(f, (uint64_t)st.st_size, &h);
    if (ok) seal_of(h, seal);
    ok = ok && fseek(f, 0, SEEK_END) == 0 && fwrite(seal, 1, sizeof seal, f) == sizeof seal;
    int err = errno;
    if (f && fclose(f) != 0 && ok) {
        ok = false;
        err = errno;
    }
    return ok ? TJ_OK : tj_error(TJ_ERR_IO, "%s: cannot seal '%s': %s", who, path, strerror(err ? err : EIO));
}

/* Whether the object at path ends with the seal of the bytes before it. */
static bool sealed(const char *path)
{
    FILE *f = fopen(path, "rb");
    if (!f) return false;
    struct stat st;
    uint64_t h;
    unsigned char seal[SEAL_BYTES], want[SEAL_BYTES];
    bool ok = fstat(fileno(f), &st) == 0 && st.st_size > SEAL_BYTES &&
              hash_prefix(f, (uint64_t)st.st_size - SEAL_BYTES, &h) && fread(seal, 1, sizeof seal, f) == sizeof seal;
    fclose(f);
    if (!ok) return false;
    seal_of(h, want);
    return !memcmp(seal, want, sizeof seal);
}

/* Builds the object at `obj` (and its source at `kept`) in a fresh
 * directory inside the cache, renamed into place at the end: readers never
 * see half an object, and builds racing for one name both succeed. */
static tj_status build(const char *dir, const char *source, const char *const *flags, const char *obj,
                       const char *kept)
{
    char tmp[4096], path[4096];
    snprintf(tmp, sizeof tmp, "%s/build-XXXXXX", dir);
    if (!mkdtemp(tmp)) return tj_error(TJ_ERR_IO, "%s: cannot make a directory in '%s': %s", who, dir, strerror(errno));
    snprintf(path, sizeof path, "%s/k.c", tmp);
    tj_status st = write_source(path, source);
    if (st == TJ_OK) st = run_compiler(tmp, flags);
    if (st == TJ_OK) snprintf(path, sizeof path, "%s/k.so", tmp);
    if (st == TJ_OK) st = seal_object(path);
    if (st == TJ_OK) { /* whatever the umask: only the user may change code the user runs */
        if (chmod(path, 0700) != 0)
            st = tj_error(TJ_ERR_IO, "%s: cannot restrict '%s' to its owner: %s", who, path, strerror(errno));
    }
    if (st == TJ_OK) {
        if (rename(path, obj) != 0)
            st = tj_error(TJ_ERR_IO, "%s: cannot rename '%s' to '%s': %s", who, path, obj, strerror(errno));
    }
    if (st == TJ_OK) {
        snprintf(path, sizeof path, "%s/k.c", tmp);
        rename(path, kept); /* if lost, the next compile builds again */
    }
    remove_build_dir(tmp);
    return st;
}

tj_status tj_native_load(const char *source, const char *const *flags, void **handle)
{
    *handle = NULL;
    char dir[3072], obj[4096], kept[4096];
    tj_status st = cache_dir(dir, sizeof dir);
    if (st != TJ_OK) return st;
    char cc_id[PATH_MAX + 64];
    compiler_identity(cc_id, sizeof cc_id);
    uint64_t h = fnv(fnv(FNV_BASIS, source), cc_id);
    for (size_t i = 0; i < N_BASE_FLAGS; i++) h = fnv(h, base_flags[i]);
    for (int i = 0; i < MAX_FLAGS && flags[i]; i++) h = fnv(h, flags[i]);
    snprintf(obj, sizeof obj, "%s/fused-%016llx.so", dir, (unsigned long long)h);
    snprintf(kept, sizeof kept, "%s/fused-%016llx.c", dir, (unsigned long long)h);
    if (private_file(obj) && same_text(kept, source) && sealed(obj) && (*handle = dlopen(obj, RTLD_NOW | RTLD_LOCAL)))
        return TJ_OK;
    st = build(dir, source, flags, obj, kept);
    if (st != TJ_OK) return st;
    if (!(*handle = dlopen(obj, RTLD_NOW | RTLD_LOCAL))) {
        const char *why = dlerror();
        return tj_error(TJ_ERR_UNSUPPORTED, "%s: cannot load '%s': %s", who, obj, why ? why : "?");
    }
    return TJ_OK;
}

void *tj_native_symbol(void *handle, const char *name) { return handle ? dlsym(handle, name) : NULL; }

void tj_native_unload(void *handle)
{
    if (handle) dlclose(handle);
}
