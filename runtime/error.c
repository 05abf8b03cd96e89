/* Thread-local last error and the dtype helpers. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "internal.h"

static _Thread_local tj_status last_status;
static _Thread_local char last_message[1024];
/* Nothing has read the last error since it was recorded (or marked unread):
 * a NULL tensor argument is then taken for a result of that failure. */
static _Thread_local bool last_unread;

const char *tj_last_error(void)
{
    last_unread = false;
    return last_message;
}

tj_status tj_last_status(void)
{
    last_unread = false;
    return last_status;
}

void tj_clear_error(void)
{
    last_status = TJ_OK;
    last_message[0] = 0;
    last_unread = false;
}

tj_status tj_unread_error(void) { return last_unread ? last_status : TJ_OK; }

void tj_error_mark_unread(tj_status status)
{
    if (status == last_status) last_unread = true;
}

static tj_status set_error(tj_status status, const char *fmt, va_list ap)
{
    last_status = status;
    last_unread = true;
    if (fmt) vsnprintf(last_message, sizeof last_message, fmt, ap);
    else last_message[0] = 0;
    return status;
}

tj_status tj_error(tj_status status, const char *fmt, ...)
{
    va_list ap;
    va_start(ap, fmt);
    set_error(status, fmt, ap);
    va_end(ap);
    return status;
}

const char *tj_error_root(void)
{
    static const char link[] = "; earlier error: ";
    const char *root = tj_last_error(), *tail;
    while ((tail = strstr(root, link))) root = tail + strlen(link);
    return root;
}

tj_status tj_error_led_by(const char *name, tj_status st)
{
    char cause[768];
    snprintf(cause, sizeof cause, "%s", tj_error_root());
    size_t n = strlen(name);
    bool named = strncmp(cause, name, n) == 0 && cause[n] == ':'; /* the decomposition's own check */
    return named ? tj_error(st, "%s", cause) : tj_error(st, "%s: %s", name, cause);
}

tj_status tj_error_renamed(const char *op, const char *inner, tj_status st)
{
    size_t n = strlen(inner);
    const char *e = tj_last_error();
    if (st == TJ_OK || strncmp(e, inner, n) != 0 || e[n] != ':') return st;
    char msg[768];
    snprintf(msg, sizeof msg, "%s", e + n + 1);
    return tj_error(st, "%s:%s", op, msg);
}

tj_status tj_error_if_unrecorded(tj_status st, const char *who, const char *what)
{
    if (st == TJ_OK || last_status == st) return st;
    return tj_error(st, "%s: %s returned %s (%d) without recording an error (tj_error)", who, what,
                    tj_status_name(st), (int)st);
}

tj_status tj_error_null(const char *fmt, ...)
{
    char what[512];
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(what, sizeof what, fmt, ap);
    va_end(ap);
    tj_status earlier = tj_unread_error();
    if (earlier == TJ_OK) return tj_error(TJ_ERR_INVALID_ARGUMENT, "%s", what);
    char cause[512];
    snprintf(cause, sizeof cause, "%s", tj_error_root()); /* copied: the message is rewritten below */
    return tj_error(earlier, "%s; earlier error: %s", what, cause);
}

const char *tj_status_name(tj_status s)
{
    switch (s) {
    case TJ_OK: return "ok";
    case TJ_ERR_INVALID_ARGUMENT: return "invalid argument";
    case TJ_ERR_SHAPE: return "shape error";
    case TJ_ERR_DTYPE: return "dtype error";
    case TJ_ERR_INDEX: return "index error";
    case TJ_ERR_OUT_OF_MEMORY: return "out of memory";
    case TJ_ERR_IO: return "I/O error";
    case TJ_ERR_PARSE: return "parse error";
    case TJ_ERR_UNSUPPORTED: return "unsupported";
    case TJ_ERR_NOT_FOUND: return "not found";
    case TJ_ERR_CYCLE: return "decomposition cycle";
    case TJ_ERR_OVERFLOW: return "overflow";
    case TJ_ERR_MODIFIED: return "modified in place";
    }
    return "unknown status";
}

size_t tj_dtype_size(tj_dtype d) { return (unsigned)d < TJ_NUM_DTYPES ? tj_k_dtype_bytes(d) : 0; }

static const char *const dtype_names[TJ_NUM_DTYPES] = {
    [TJ_FLOAT32] = "float32", [TJ_FLOAT64] = "float64", [TJ_INT64] = "int64", [TJ_BOOL] = "bool",
    [TJ_INT32] = "int32",     [TJ_UINT8] = "uint8",     [TJ_INT8] = "int8",   [TJ_INT16] = "int16",
    [TJ_FLOAT16] = "float16", [TJ_BFLOAT16] = "bfloat16"};

const char *tj_dtype_name(tj_dtype d) { return (unsigned)d < TJ_NUM_DTYPES ? dtype_names[d] : "?"; }

/* torch.fx's abbreviations (graph.py's dtype_abbrs) */
static const char *const dtype_short_names[TJ_NUM_DTYPES] = {
    [TJ_FLOAT32] = "f32", [TJ_FLOAT64] = "f64", [TJ_INT64] = "i64", [TJ_BOOL] = "b8",    [TJ_INT32] = "i32",
    [TJ_UINT8] = "u8",    [TJ_INT8] = "i8",     [TJ_INT16] = "i16", [TJ_FLOAT16] = "f16", [TJ_BFLOAT16] = "bf16"};

const char *tj_dtype_short_name(tj_dtype d) { return (unsigned)d < TJ_NUM_DTYPES ? dtype_short_names[d] : "?"; }

int tj_dtype_parse_short_name(const char *s, tj_dtype *out)
{
    size_t best = 0;
    for (int i = 0; i < TJ_NUM_DTYPES; i++) {
        size_t n = strlen(dtype_short_names[i]);
        if (n > best && strncmp(s, dtype_short_names[i], n) == 0) {
            best = n;
            *out = (tj_dtype)i;
        }
    }
    return (int)best;
}

tj_status tj_dtype_from_name(const char *name, tj_dtype *out)
{
    if (!out) return tj_error(TJ_ERR_INVALID_ARGUMENT, "tj_dtype_from_name: NULL out");
    for (int i = 0; name && i < TJ_NUM_DTYPES; i++)
        if (strcmp(name, dtype_names[i]) == 0) {
            *out = (tj_dtype)i;
            return TJ_OK;
        }
    return tj_error(TJ_ERR_PARSE, "tj_dtype_from_name: unknown dtype '%s'", name ? name : "(null)");
}
