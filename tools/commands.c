/* What the subcommands share. */
#include "commands.h"

#include <ctype.h>
#include <errno.h>
#include <libgen.h>
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

int cmd_usage_exit(void (*usage)(FILE *f), int c)
{
    bool help = c == 'h';
    usage(help ? stdout : stderr);
    return help ? 0 : 2;
}

int cmd_bad_value(const char *cmd, const struct option *opts, int c, const char *value, const char *expected,
                  void (*usage)(FILE *f))
{
    const char *name = "?";
    for (int i = 0; opts[i].name; i++)
        if (opts[i].val == c) name = opts[i].name;
    fprintf(stderr, "tjit %s: bad value '%s' for --%s (%s)\n\n", cmd, value, name, expected);
    usage(stderr);
    return 2;
}

bool cmd_operands(const char *cmd, int argc, char **argv, int want, const char *what)
{
    int have = argc - optind;
    if (have == want) return true;
    if (have < want) fprintf(stderr, "tjit %s: missing %s\n\n", cmd, what);
    else fprintf(stderr, "tjit %s: unexpected argument '%s'\n\n", cmd, argv[optind + want]);
    return false;
}

bool cmd_parse_int(const char *s, long lo, long hi, int *out)
{
    char *end;
    if (!isdigit((unsigned char)s[*s == '-'])) return false; /* strtol would skip a space or a plus */
    errno = 0;
    long v = strtol(s, &end, 10);
    if (*end || errno || v < lo || v > hi || v < INT_MIN || v > INT_MAX) return false;
    *out = (int)v;
    return true;
}

int cmd_flush_denormal(const char *cmd)
{
    if (tj_set_flush_denormal(true)) return 0;
    fprintf(stderr, "tjit %s: this CPU cannot flush denormals to zero (no DAZ)\n", cmd);
    return 1;
}

int cmd_check_output_path(const char *cmd, const char *path)
{
    struct stat sb;
    if (!*path) return fprintf(stderr, "tjit %s: cannot write '': an empty path\n", cmd), 1;
    if (stat(path, &sb) == 0 && S_ISDIR(sb.st_mode))
        return fprintf(stderr, "tjit %s: cannot write '%s': %s\n", cmd, path, strerror(EISDIR)), 1;
    char *copy = strdup(path);
    if (!copy) return fprintf(stderr, "tjit %s: out of memory\n", cmd), 1;
    const char *dir = dirname(copy);
    int rc = access(dir, W_OK | X_OK) == 0 ? 0 : 1;
    if (rc) fprintf(stderr, "tjit %s: cannot write '%s': %s: %s\n", cmd, path, dir, strerror(errno));
    free(copy);
    return rc;
}

int cmd_op_select(const char *name, const tj_op **out, int max)
{
    /* An overload of `name` is an operator whose full name is `name` +
     * ".overload" (tj_op_find parses every spelling: aten::add, add,
     * aten.add); a name that has an overload already matches none this way. */
    char full[512];
    int n = 0;
    for (int i = 0; i < tj_op_count(); i++) {
        const tj_op *op = tj_op_at(i);
        const char *ov = tj_op_overload(op);
        int len = snprintf(full, sizeof full, "%s.%s", name, *ov ? ov : "default");
        if (len > 0 && (size_t)len < sizeof full && tj_op_find(full) == op) {
            if (n < max) out[n] = op;
            n++;
        }
    }
    const tj_op *op = n ? NULL : tj_op_find(name);
    if (op && max > 0) out[0] = op;
    tj_clear_error();
    return op ? 1 : n;
}
