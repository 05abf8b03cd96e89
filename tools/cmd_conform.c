/* tjit conform PATH... */
#include <getopt.h>
#include <stdio.h>

#include "commands.h"
#include "conform.h"

static void usage(FILE *f)
{
    fprintf(f, "usage: tjit conform [--verbose] PATH...\n\n"
               "Runs every conformance case folder found under the PATHs (a case folder, a\n"
               "folder of them such as ../shared/conformance/cases, or a folder whose cases/\n"
               "holds them) and compares each output with the expected one. Prints a line per\n"
               "failing case, then 'N passed, N failed[, N skipped]' (skipped: operators not\n"
               "implemented). A PATH without any case is a failure. Exit status 0 only when\n"
               "nothing failed.\n\n"
               "  -v, --verbose   also list skipped cases\n");
}

int cmd_conform(int argc, char **argv)
{
    static const struct option opts[] = {{"verbose", no_argument, 0, 'v'}, {"help", no_argument, 0, 'h'}, {0, 0, 0, 0}};
    bool verbose = false;
    int c;
    optind = 1;
    while ((c = getopt_long(argc, argv, "vh", opts, NULL)) != -1) {
        if (c == 'v') verbose = true;
        else return cmd_usage_exit(usage, c);
    }
    if (optind >= argc) {
        fprintf(stderr, "tjit conform: missing a PATH\n\n");
        usage(stderr);
        return 2;
    }
    tj_conform_summary s = tj_conform_run_paths((const char *const *)argv + optind, argc - optind, stdout, verbose);
    return s.failed ? 1 : 0;
}
