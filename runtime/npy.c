/* NumPy .npy files (format versions 1.0, 2.0 and 3.0): every tjit dtype but
 * bfloat16 (numpy has none) in any byte order numpy writes ('<f4', '=f4',
 * 'f4', '>f4', '|b1', '?'), C or Fortran order. Every field of the
 * header is checked, and the header is refused where numpy would refuse it
 * or read it otherwise (a key twice, another key, a shape that is no tuple);
 * a malformed or truncated file gives an error. */
#include <ctype.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>

#include "internal.h"

#define WHO "tj_npy_load"

static const char *skip_space(const char *p, const char *end)
{
    while (p < end && (*p == ' ' || *p == '\t' || *p == '\n')) p++;
    return p;
}

/* Whether p starts a key of the header dict: the first non-space
 * character before it is the dict's '{' or a ',' after an entry (a key's
 * name in another entry's value, such as a shape tuple, is no key). */
static bool at_key(const char *h, const char *p)
{
    while (p > h && (p[-1] == ' ' || p[-1] == '\t' || p[-1] == '\n')) p--;
    return p > h && (p[-1] == '{' || p[-1] == ',');
}

/* The value text after 'key': in the header dict, or NULL. numpy reads the
 * header as a Python dict literal, where a repeated key keeps its last
 * value: a key given twice is refused (*twice set) rather than read
 * otherwise than numpy reads it. */
static const char *find_key(const char *h, const char *end, const char *key, bool *twice)
{
    size_t kl = strlen(key);
    const char *found = NULL;
    *twice = false;
    for (const char *p = h; p + kl + 2 < end; p++) {
        if ((*p == '\'' || *p == '"') && memcmp(p + 1, key, kl) == 0 && p[kl + 1] == *p && at_key(h, p)) {
            const char *q = skip_space(p + kl + 2, end);
            if (q >= end || *q != ':') continue;
            if (found) *twice = true;
            found = skip_space(q + 1, end);
        }
    }
    return found;
}

/* numpy refuses a header whose keys are not exactly descr, fortran_order
 * and shape (format.py: "Header does not contain the correct keys"). */
static tj_status check_keys(const char *h, const char *end)
{
    static const char *known[] = {"descr", "fortran_order", "shape"};
    for (const char *p = h; p < end; p++) {
        if ((*p != '\'' && *p != '"') || !at_key(h, p)) continue;
        const char *e = memchr(p + 1, *p, (size_t)(end - p - 1));
        if (!e) return TJ_OK; /* unterminated: the key lookups report it */
        size_t kl = (size_t)(e - p - 1);
        bool ok = false;
        for (int k = 0; k < 3; k++) ok |= strlen(known[k]) == kl && memcmp(known[k], p + 1, kl) == 0;
        if (!ok)
            return tj_error(TJ_ERR_PARSE, WHO ": header key '%.*s' is not one of 'descr', 'fortran_order' and 'shape'",
                            (int)(kl < 64 ? kl : 64), p + 1);
        p = e;
    }
    return TJ_OK;
}

/* The dtype of a 'descr' string as numpy.dtype() reads it: a byte order
 * ('<' little, '>' or '!' big, '=' or none native, '|' not applicable)
 * and a type code ('f4', 'f8', 'f2', 'i8', 'i4', 'i2', 'i1', 'u1', 'b1', or
 * '?' for bool). This runs
 * on little-endian CPUs only, so native is little-endian; a big-endian
 * file is byte-swapped on reading, as numpy.load gives its values. */
static tj_status descr_dtype(const char *descr, tj_dtype *dtype, bool *big_endian)
{
    const char *code = descr;
    *big_endian = false;
    if (*code == '<' || *code == '=' || *code == '|') code++;
    else if (*code == '>' || *code == '!') {
        *big_endian = true;
        code++;
    }
    static const struct {
        const char *code;
        tj_dtype dtype;
    } known[] = {{"f4", TJ_FLOAT32}, {"f8", TJ_FLOAT64}, {"i8", TJ_INT64}, {"b1", TJ_BOOL},
                 {"?", TJ_BOOL},     {"i4", TJ_INT32},   {"u1", TJ_UINT8}, {"i1", TJ_INT8},
                 {"i2", TJ_INT16},   {"f2", TJ_FLOAT16}};
    for (size_t i = 0; i < sizeof known / sizeof *known; i++)
        if (!strcmp(code, known[i].code)) {
            *dtype = known[i].dtype;
            return TJ_OK;
        }
    return tj_error(TJ_ERR_UNSUPPORTED,
                    WHO ": dtype '%s' is not supported (float32 'f4', float64 'f8', float16 'f2', int64 'i8', "
                        "int32 'i4', int16 'i2', int8 'i1', uint8 'u1', bool 'b1'; convert it in numpy first, e.g. "
                        "a.astype('<i8') for an integer array)",
                    descr);
}

static tj_status parse_header(const char *h, size_t len, int major, tj_dtype *dtype, bool *big_endian, bool *fortran,
                              int *ndim, int64_t *shape)
{
    const char *end = h + len;
    bool twice;
    if (check_keys(h, end) != TJ_OK) return TJ_ERR_PARSE;
    const char *d = find_key(h, end, "descr", &twice);
    if (twice) return tj_error(TJ_ERR_PARSE, WHO ": header key 'descr' given twice");
    if (!d || d + 5 > end || (*d != '\'' && *d != '"'))
        return tj_error(TJ_ERR_PARSE, WHO ": header has no 'descr' string");
    char q = *d;
    const char *de = memchr(d + 1, q, (size_t)(end - d - 1));
    if (!de) return tj_error(TJ_ERR_PARSE, WHO ": unterminated 'descr'");
    size_t dl = (size_t)(de - d - 1);
    char descr[16] = {0};
    if (dl >= sizeof descr) return tj_error(TJ_ERR_UNSUPPORTED, WHO ": unsupported descr");
    memcpy(descr, d + 1, dl);
    /* strcmp would stop at a NUL byte and read '<f4\0' as '<f4': numpy
     * understands no such dtype */
    if (memchr(descr, '\0', dl))
        return tj_error(TJ_ERR_UNSUPPORTED, WHO ": dtype 'descr' holds a NUL byte (byte %zu of %zu)",
                        (size_t)((const char *)memchr(descr, '\0', dl) - descr), dl);
    if (descr_dtype(descr, dtype, big_endian) != TJ_OK) return TJ_ERR_UNSUPPORTED;

    const char *f = find_key(h, end, "fortran_order", &twice);
    if (twice) return tj_error(TJ_ERR_PARSE, WHO ": header key 'fortran_order' given twice");
    if (!f) return tj_error(TJ_ERR_PARSE, WHO ": header has no 'fortran_order'");
    if (end - f >= 4 && !memcmp(f, "True", 4)) *fortran = true;
    else if (end - f >= 5 && !memcmp(f, "False", 5)) *fortran = false;
    else return tj_error(TJ_ERR_PARSE, WHO ": 'fortran_order' is not True or False");

    const char *s = find_key(h, end, "shape", &twice);
    if (twice) return tj_error(TJ_ERR_PARSE, WHO ": header key 'shape' given twice");
    if (!s || s >= end || *s != '(') return tj_error(TJ_ERR_PARSE, WHO ": header has no 'shape' tuple");
    s++;
    int n = 0;
    bool comma = false; /* after the last size: (2) is the number 2, (2,) a tuple */
    for (;;) {
        s = skip_space(s, end);
        if (s >= end) return tj_error(TJ_ERR_PARSE, WHO ": unterminated 'shape'");
        if (*s == ')') break;
        if (n > 0 && !comma) return tj_error(TJ_ERR_PARSE, WHO ": expected ',' or ')' after a size in 'shape'");
        if (!isdigit((unsigned char)*s)) return tj_error(TJ_ERR_PARSE, WHO ": bad character in 'shape'");
        if (n >= TJ_MAX_DIMS) return tj_error(TJ_ERR_UNSUPPORTED, WHO ": more than %d dims", TJ_MAX_DIMS);
        int64_t v = 0;
        while (s < end && isdigit((unsigned char)*s)) {
            if (__builtin_mul_overflow(v, 10, &v) || __builtin_add_overflow(v, *s - '0', &v))
                return tj_error(TJ_ERR_OVERFLOW, WHO ": a size in 'shape' overflows");
            s++;
        }
        /* numpy filters a Python 2 long's 'L' out of 1.0 and 2.0 headers
         * (format.py _filter_header), which old numpy wrote as (4L,) */
        if (major <= 2 && s < end && *s == 'L') s++;
        shape[n++] = v;
        s = skip_space(s, end);
        comma = s < end && *s == ',';
        if (comma) s++;
    }
    if (n == 1 && !comma) return tj_error(TJ_ERR_PARSE, WHO ": 'shape' (%" PRId64 ") is a number, not a tuple: (%" PRId64 ",)", shape[0], shape[0]);
    *ndim = n;
    return TJ_OK;
}

/* Reverses the byte order of each of `numel` elements of `es` bytes. */
static void swap_bytes(char *p, size_t es, int64_t numel)
{
    for (int64_t i = 0; i < numel; i++, p += es)
        for (size_t a = 0, z = es - 1; a < z; a++, z--) {
            char c = p[a];
            p[a] = p[z];
            p[z] = c;
        }
}

/* Reverses the axis order of a Fortran-order buffer into C order. */
static void fortran_to_c(const char *src, char *dst, int ndim, const int64_t *shape, size_t es, int64_t numel)
{
    int64_t fstride[TJ_MAX_DIMS];
    int64_t s = 1;
    for (int d = 0; d < ndim; d++) {
        fstride[d] = s;
        s *= shape[d];
    }
    int64_t idx[TJ_MAX_DIMS] = {0};
    for (int64_t i = 0; i < numel; i++) {
        int64_t off = 0;
        for (int d = 0; d < ndim; d++) off += idx[d] * fstride[d];
        memcpy(dst + i * (int64_t)es, src + off * (int64_t)es, es);
        for (int d = ndim - 1; d >= 0; d--) {
            if (++idx[d] < shape[d]) break;
            idx[d] = 0;
        }
    }
}

tj_tensor *tj_npy_load_buffer(const void *buf, size_t n)
{
    const unsigned char *b = buf;
    if (!b) {
        tj_error(TJ_ERR_INVALID_ARGUMENT, WHO ": NULL buffer");
        return NULL;
    }
    if (n < 10 || memcmp(b, "\x93NUMPY", 6) != 0) {
        tj_error(TJ_ERR_PARSE, WHO ": not a .npy file (bad magic)");
        return NULL;
    }
    int major = b[6];
    size_t hlen, hstart;
    if (major == 1) {
        hlen = (size_t)b[8] | (size_t)b[9] << 8;
        hstart = 10;
    } else if (major == 2 || major == 3) {
        if (n < 12) {
            tj_error(TJ_ERR_PARSE, WHO ": truncated header");
            return NULL;
        }
        hlen = (size_t)b[8] | (size_t)b[9] << 8 | (size_t)b[10] << 16 | (size_t)b[11] << 24;
        hstart = 12;
    } else {
        tj_error(TJ_ERR_UNSUPPORTED, WHO ": format version %d.%d is not supported", major, b[7]);
        return NULL;
    }
    if (hlen > n - hstart) {
        tj_error(TJ_ERR_PARSE, WHO ": header length %zu runs past the end of the file (%zu bytes)", hlen, n);
        return NULL;
    }
    tj_dtype dtype = TJ_FLOAT32;
    bool fortran = false;
    int ndim = 0;
    int64_t shape[TJ_MAX_DIMS];
    bool big_endian = false;
    if (parse_header((const char *)b + hstart, hlen, major, &dtype, &big_endian, &fortran, &ndim, shape) != TJ_OK)
        return NULL;
    int64_t numel;
    if (tj_checked_numel(ndim, shape, &numel, WHO) != TJ_OK) return NULL;
    size_t es = tj_dtype_size(dtype);
    size_t avail = n - hstart - hlen;
    if ((uint64_t)numel > avail / es) {
        char sb[128];
        tj_error(TJ_ERR_PARSE, WHO ": data for shape %s needs %" PRId64 " bytes, file has %zu",
                 tj_shape_str(ndim, shape, sb, sizeof sb), numel * (int64_t)es, avail);
        return NULL;
    }
    const char *data = (const char *)b + hstart + hlen;
    tj_tensor *t = tj_tensor_empty(dtype, ndim, shape);
    if (!t) return NULL;
    char *dst = tj_tensor_ptr(t);
    if (fortran && ndim > 1) fortran_to_c(data, dst, ndim, shape, es, numel);
    else if (numel) memcpy(dst, data, (size_t)numel * es);
    if (big_endian && es > 1) swap_bytes(dst, es, numel);
    if (dtype == TJ_BOOL)
        for (int64_t i = 0; i < numel; i++) dst[i] = dst[i] != 0;
    return t;
}

tj_tensor *tj_npy_load(const char *path)
{
    size_t size;
    char *buf = tj_read_file(path, WHO, &size);
    if (!buf) return NULL;
    tj_tensor *t = tj_npy_load_buffer(buf, size);
    if (!t) {
        char msg[1024];
        snprintf(msg, sizeof msg, "%s", tj_last_error());
        tj_error(tj_last_status(), "%s (file '%s')", msg, path);
    }
    tj_free_file(buf, size);
    return t;
}

/* The .npy 1.0 file of tensor t, its header dictionary given (padded here). */
typedef struct npy_file {
    const char *header;
    int hl;
    const tj_tensor *t;
} npy_file;

static tj_status write_npy(FILE *f, void *ctx)
{
    const npy_file *nf = ctx;
    const tj_tensor *t = nf->t;
    int total = 10 + nf->hl + 1;
    int pad = (64 - total % 64) % 64;
    size_t nbytes = (size_t)t->numel * tj_dtype_size(t->dtype);
    char *data = tj_alloc(nbytes);
    if (!data) return tj_oom("tj_npy_save", nbytes);
    tj_tensor_copy_to(t, data);
    unsigned hlen = (unsigned)(nf->hl + pad + 1);
    unsigned char pre[10] = {0x93, 'N', 'U', 'M', 'P', 'Y', 1, 0, (unsigned char)(hlen & 0xff), (unsigned char)(hlen >> 8)};
    bool ok = fwrite(pre, 1, 10, f) == 10 && fwrite(nf->header, 1, (size_t)nf->hl, f) == (size_t)nf->hl;
    for (int i = 0; ok && i < pad; i++) ok = fputc(' ', f) != EOF;
    ok = ok && fputc('\n', f) != EOF && fwrite(data, 1, nbytes, f) == nbytes;
    tj_free(data, nbytes);
    return ok ? TJ_OK : TJ_ERR_IO;
}

tj_status tj_npy_save(const char *path, const tj_tensor *t)
{
    if (!path) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_npy_save: NULL path");
    if (!t) return tj_error_null("tj_npy_save: NULL tensor");
    if (t->fake) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_npy_save: a fake tensor has no data");
    /* numpy has no bfloat16 */
    static const char *const descr[TJ_NUM_DTYPES] = {
        [TJ_FLOAT32] = "<f4", [TJ_FLOAT64] = "<f8", [TJ_INT64] = "<i8", [TJ_BOOL] = "|b1", [TJ_INT32] = "<i4",
        [TJ_UINT8] = "|u1",   [TJ_INT8] = "|i1",    [TJ_INT16] = "<i2", [TJ_FLOAT16] = "<f2"};
    if (!descr[t->dtype])
        return tj_error(TJ_ERR_DTYPE, "tj_npy_save: numpy has no %s dtype (convert to float32 first)",
                        tj_dtype_name(t->dtype));
    char header[256], sb[200] = "";
    size_t k = 0;
    for (int d = 0; d < t->ndim; d++)
        k += (size_t)snprintf(sb + k, sizeof sb - k, "%" PRId64 "%s", t->shape[d], t->ndim == 1 ? "," : d + 1 < t->ndim ? ", " : "");
    int hl = snprintf(header, sizeof header, "{'descr': '%s', 'fortran_order': False, 'shape': (%s), }", descr[t->dtype], sb);
    npy_file nf = {.header = header, .hl = hl, .t = t};
    return tj_write_file_replacing(path, "tj_npy_save", write_npy, &nf);
}
