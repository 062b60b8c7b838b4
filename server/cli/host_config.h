/* bikaroo-mcp host-config HOST [--link]: the configuration file (or install link) of an MCP
 * host that launches this binary over stdio with this configuration's database and identity, or
 * reaches the server this configuration serves over Streamable HTTP. No secret is ever printed:
 * a secret setting that came from a file is passed on as that file (NAME_FILE). */
#ifndef BIKAROO_HOST_CONFIG_H
#define BIKAROO_HOST_CONFIG_H

#include <stdio.h>

/* The hosts HOST may name, one a line with its file, on out. */
void host_config_hosts_help(FILE *out);
/* argv as main() got it (argv[1] is "host-config"); 0, or 2 (said on stderr). */
int host_config_main(int argc, char **argv);

#endif
