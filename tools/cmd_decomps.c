/* tjit decomps [--table core] [OP...] | --verify [--cases DIR]... [-v] [OP...] */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "commands.h"
#include "decomp_verify.h"
#include "tjit/tjit.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit decomps [--table core] [OP...]\n"
               "       tjit decomps --verify [--cases DIR]... [-v] [OP...]\n\n"
               "Prints a decomposition table, one operator per line with what it maps to, like\n"
               "printing torch._decomp.get_decompositions([...]). With OPs (\"aten::gelu\" takes\n"
               "every overload, \"aten::add.Tensor\" just one) prints get_decompositions(OPs) and\n"
               "lists the operators that have no registered decomposition (an unknown name is a\n"
               "usage error); with --table core (the default without OPs) prints the table that\n"
               "lowers everything to primitives.\n\n"
               "--verify runs each decomposition (of OPs, or every one with a kernel) against its\n"
               "kernel on the conformance cases and their random variants, compares both with a\n"
               "float64 reference, and prints each operator's worst errors; -v lists every\n"
               "violation. The cases are those under ../shared/conformance/cases\n"
               "($TJ_SHARED_DIR/conformance/cases when set) plus those under each --cases DIR\n"
               "(repeatable; --cases tests/conformance/cases adds the cases of the operators the\n"
               "shared set lacks). Overloads without both a decomposition and a kernel are\n"
               "listed as having nothing to verify. Exit status 1 when any decomposition fails,\n"
               "a case folder cannot be read, or a named OP has no overload to verify.\n");
}

/* Most --cases folders. */
#define MAX_CASE_DIRS 64

/* dirs[0] is left for the shared case folder, which verify fills in. */
static int verify(const char **dirs, int n_dirs, bool verbose, char **names, int n)
{
    char shared_cases[4096];
    const char *shared = getenv("TJ_SHARED_DIR");
    snprintf(shared_cases, sizeof shared_cases, "%s/conformance/cases", shared ? shared : "../shared");
    dirs[0] = shared_cases;
    /* Only composites have both a decomposition and a kernel to hold it
     * against: the other overloads a name selects are listed, not run (a
     * primitive would be compared with itself), and a name that selects
     * nothing to verify fails the command. */
    const tj_op *ops[512], *selected[512];
    int n_ops = 0, empty_names = 0;
    for (int i = 0; i < n; i++) {
        int k = cmd_op_select(names[i], selected, 512);
        if (!k) {
            fprintf(stderr, "tjit decomps: unknown operator '%s'\n", names[i]);
            return 2;
        }
        int kept = 0;
        for (int j = 0; j < k && j < 512; j++) {
            tj_op_kind kind = tj_op_kind_of(selected[j]);
            if (kind == TJ_OP_COMPOSITE && n_ops < 512) {
                ops[n_ops++] = selected[j];
                kept++;
            } else if (kind != TJ_OP_COMPOSITE) {
                printf("%-40s nothing to verify: %s\n", tj_op_name(selected[j]),
                       kind == TJ_OP_PRIMITIVE ? "a primitive, no decomposition"
                                               : "no kernel to compare the decomposition with");
            }
        }
        if (!kept) {
            fprintf(stderr, "tjit decomps: '%s' has no decomposition to verify\n", names[i]);
            empty_names++;
        }
    }
    static tj_verify_row rows[1024];
    int count = n_ops || !n ? tj_decomp_verify(dirs, n_dirs, n ? ops : NULL, n_ops, rows, 1024, verbose ? stdout : NULL)
                            : 0;
    if (count < 0) {
        fprintf(stderr, "tjit decomps: %s\n", tj_last_error());
        if (access(shared_cases, R_OK | X_OK))
            fprintf(stderr, "tjit decomps: the shared cases are read from '%s': run from the checkout, whose ../shared "
                            "holds them, or set TJ_SHARED_DIR\n", shared_cases);
        return 1;
    }
    if (count) tj_verify_report(rows, count, stdout);
    for (int i = 0; i < count; i++)
        if (rows[i].violations) return 1;
    return empty_names ? 1 : 0;
}

int cmd_decomps(int argc, char **argv)
{
    static const struct option opts[] = {{"table", required_argument, 0, 't'}, {"verify", no_argument, 0, 'V'},
                                         {"cases", required_argument, 0, 'c'}, {"help", no_argument, 0, 'h'},
                                         {0, 0, 0, 0}};
    const char *table = NULL, *dirs[1 + MAX_CASE_DIRS];
    int n_dirs = 1; /* the shared folder first */
    bool do_verify = false, verbose = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "t:c:vh", opts, NULL)) != -1) {
        if (c == 't' && strcmp(optarg, "core")) return cmd_bad_value("decomps", opts, c, optarg, "core", usage);
        else if (c == 't') table = optarg;
        else if (c == 'V') do_verify = true;
        else if (c == 'c' && n_dirs > MAX_CASE_DIRS) {
            char most[40];
            snprintf(most, sizeof most, "at most %d --cases folders", MAX_CASE_DIRS);
            return cmd_bad_value("decomps", opts, c, optarg, most, usage);
        } else if (c == 'c') dirs[n_dirs++] = optarg;
        else if (c == 'v') verbose = true;
        else return cmd_usage_exit(usage, c);
    }
    if (do_verify && !table) return verify(dirs, n_dirs, verbose, argv + optind, argc - optind);
    const char *conflict = do_verify             ? "--verify takes no --table"
                           : table && optind < argc ? "--table core prints the whole table and takes no OPs"
                           : n_dirs > 1 || verbose  ? "--cases and -v go with --verify"
                                                    : NULL;
    if (conflict) {
        fprintf(stderr, "tjit decomps: %s\n\n", conflict);
        usage(stderr);
        return 2;
    }
    const char *const *ops = (const char *const *)argv + optind;
    int n = argc - optind;
    for (int i = 0; i < n; i++)
        if (!cmd_op_select(ops[i], NULL, 0)) {
            fprintf(stderr, "tjit decomps: unknown operator '%s'\n", ops[i]);
            return 2;
        }
    tj_decomp_table *t = n ? tj_get_decompositions(ops, n) : tj_core_decompositions();
    if (!t) {
        fprintf(stderr, "tjit decomps: %s\n", tj_last_error());
        return 1;
    }
    tj_status st = tj_decomp_table_print(t, stdout);
    tj_decomp_table_free(t);
    if (st != TJ_OK) {
        fprintf(stderr, "tjit decomps: %s\n", tj_last_error());
        return 1;
    }
    if (n && tj_decompositions_missing(ops, n, NULL) > 0) {
        printf("\nno registered decomposition:\n");
        tj_decompositions_missing(ops, n, stdout);
    }
    return 0;
}
