/* bikaroo-mcp admin COMMAND ...: an operator's changes (domain/admin.h), each audited in
 * fleet.admin_log: the database roles, regions, stations and bikes from CSV (load.h),
 * principals, client applications. What the database refuses is said in the operator's words:
 * the argument or the file's line and column, and what is expected. */
#ifndef BIKAROO_CLI_ADMIN_H
#define BIKAROO_CLI_ADMIN_H

/* argv as main() got it (argv[1] is "admin"): 0; 1 when a load file or the database refused
 * (nothing changed) or the database failed, said why; 2 for a usage error (said). */
int cli_admin_main(int argc, char **argv);
/* bikaroo-mcp admin help [COMMAND] (or COMMAND --help): the usage of every command, or of cmd,
 * on stdout: 0; a command that does not exist: said on stderr with the usage, 2. */
int cli_admin_help(const char *cmd);

#endif
