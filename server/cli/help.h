/* bikaroo-mcp's usage: every command's (help), or one command's, asked as `help COMMAND`,
 * `COMMAND --help` or `-h`, and for the commands that take words `admin help [COMMAND]`,
 * `host-config help`: printed on stdout with exit status 0, whatever else the line says. */
#ifndef BIKAROO_CLI_HELP_H
#define BIKAROO_CLI_HELP_H

#include <stdbool.h>

/* bikaroo-mcp help: the subcommands, then the configuration table (stdout); 0. */
int cli_usage(void);
/* Whether argv (as main() got it) asks for help: no command, `help [COMMAND]`, --help or -h
 * anywhere, or `admin help`, `host-config help`. */
bool cli_asks_help(int argc, char **argv);
/* The usage argv asks for on stdout: every command's, or one command's (admin: one of its
 * commands' too); 0. An unknown command: said on stderr, 2. */
int cli_help(int argc, char **argv);

#endif
