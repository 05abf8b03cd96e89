/* What the subcommands share. */
#include "commands.h"

#include <stdbool.h>

int cmd_usage_exit(void (*usage)(FILE *f), int c)
{
    bool help = c == 'h';
    usage(help ? stdout : stderr);
    return help ? 0 : 2;
}
