/* What the subcommands of bikaroo-mcp share (server/main.c dispatches them): config-help, and
 * the checks of settings that every command reading them makes the same way (the usage text:
 * help.h). */
#ifndef BIKAROO_CLI_H
#define BIKAROO_CLI_H

#include <stdbool.h>
#include <stddef.h>

#include "server/auth/identity.h"

struct cfg;

/* bikaroo-mcp config-help [--format=text|man|markdown]: 0, or 2 (said on stderr). */
int cli_config_help(int argc, char **argv);
/* Prints the configuration table (cfg.c) as text, man (roff .TP paragraphs for a man page's
 * ENVIRONMENT section) or markdown (a table, docs/configuration.md): 0, or 2 (said on stderr)
 * for another format. */
int cli_print_table(const char *format) __attribute__((warn_unused_result));

/* 0 when url (the value of setting) is set; else -1, logged with what to set. */
int cli_check_database_url(const char *url, const char *setting);
/* 0 when directory dir (the value of setting) opens; else -1, logged with the reason and, for a
 * relative path, the working directory it was looked up from. */
int cli_check_dir(const char *setting, const char *dir);
/* Whether addr is a loopback address (127.0.0.0/8, ::1). */
bool cli_is_loopback(const char *addr);

/* The database settings of cfg given to the database layer; -1 (logged) when they do not fit
 * together. */
int cli_db_configure(const struct cfg *cfg) __attribute__((warn_unused_result));
/* Where a local or stdio identity comes from (identity.h), from cfg (strings borrowed). */
struct identity_env cli_identity_env(const struct cfg *cfg);

/* Starts traces (common/trace.h) with the OTEL_* settings of cfg: export when an endpoint is
 * set and OTEL_SDK_DISABLED is not true. 0, or -1 (logged, naming the setting) when they
 * cannot work. */
int cli_trace_start(const struct cfg *cfg) __attribute__((warn_unused_result));

/* Whether the libpq conninfo url carries a password (postgresql://user:SECRET@... or
 * password=SECRET, keyword or query form). */
bool cli_has_password(const char *url);
/* url with any password replaced by *** into out (cap bytes, always terminated): what a log
 * line or a banner may show. */
void cli_hide_password(const char *url, char *out, size_t cap);

#endif
