/* What the subcommands share (cli.h): usage, config-help, checks of settings. */
#include "cli.h"

#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"
#include "domain/rights.h"
#include "server/cfg.h"

int cli_config_help(int argc, char **argv)
{
	const char *format = "text";
	for (int a = 2; a < argc; a++) {
		if (strncmp(argv[a], "--format=", 9) == 0) {
			format = argv[a] + 9;
		} else {
			fprintf(stderr,
				"config-help: unknown argument %s (--format=text|man|markdown)\n",
				argv[a]);
			return 2;
		}
	}
	return cfg_print_table(format) == CFG_OK ? 0 : 2;
}

int cli_check_dir(const char *setting, const char *dir)
{
	DIR *d = opendir(dir);
	if (d) {
		closedir(d);
		return 0;
	}
	int e = errno;
	char cwd[PATH_MAX];
	if (dir[0] != '/' && getcwd(cwd, sizeof cwd))
		log_error(
			"%s=%s: cannot open this directory: %s (a relative path is looked up from "
			"the working directory %s: start the server from the project's directory "
			"or "
			"set %s to an absolute path)",
			setting, dir, strerror(e), cwd, setting);
	else
		log_error("%s=%s: cannot open this directory: %s", setting, dir, strerror(e));
	return -1;
}

/* DATABASE_URL unset would make libpq try its default socket with the user's name: say so,
 * with an example of the role that setting is for. */
int cli_check_database_url(const char *url, const char *setting)
{
	if (*url)
		return 0;
	const char *example = "postgresql://fleet_app@db.example/bikaroo, the server's login role";
	if (strncmp(setting, "BIKAROO_SUPER_URL", 17) == 0)
		example = "postgresql://postgres@db.example/postgres, a superuser";
	else if (strncmp(setting, "BIKAROO_MIGRATE_URL", 19) == 0)
		example = "postgresql://fleet_owner@db.example/bikaroo, the owner role";
	log_error("%s is not set: give the libpq connection string of the database (for example "
		  "%s); `make run` starts a local one",
		  setting, example);
	return -1;
}

bool cli_is_loopback(const char *addr)
{
	return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0 ||
	       strcmp(addr, "[::1]") == 0;
}

/* The end of a conninfo value at v: a single-quoted one (backslash escapes) up to its closing
 * quote, else up to a space or, in a URL's query, an '&'. */
static const char *cli_value_end(const char *v)
{
	if (*v != '\'')
		return v + strcspn(v, " \t&");
	for (v++; *v && *v != '\''; v++)
		if (*v == '\\' && v[1])
			v++;
	return *v ? v + 1 : v;
}

/* When p (inside url) starts a password keyword (password=..., spaces allowed around '=', or
 * password=... in a URL's query), where its value starts; else NULL. */
static const char *cli_password_value(const char *url, const char *p)
{
	if (strncmp(p, "password", 8) != 0 || (p != url && !strchr(" \t&?", p[-1])))
		return NULL;
	const char *v = p + 8 + strspn(p + 8, " \t");
	return *v == '=' ? v + 1 + strspn(v + 1, " \t") : NULL;
}

void cli_hide_password(const char *url, char *out, size_t cap)
{
	size_t o = 0;
	/* postgresql://user:SECRET@host: up to the last @ before the query, in case the secret
	 * holds an @ that was not percent-encoded. */
	const char *scheme = strstr(url, "://"), *at = NULL;
	for (const char *p = scheme ? scheme + 3 : NULL; p && *p && *p != '?'; p++)
		if (*p == '@')
			at = p;
	size_t user = scheme ? strcspn(scheme + 3, ":/@?") : 0;
	const char *colon = scheme && scheme[3 + user] == ':' ? scheme + 3 + user : NULL;
	bool userinfo = at && colon && colon < at;
	for (const char *p = url; *p && o + 4 < cap;) {
		if (userinfo && p == colon + 1) {
			o += (size_t)snprintf(out + o, cap - o, "***");
			p = at;
			continue;
		}
		const char *v = cli_password_value(url, p);
		if (v) {
			o += (size_t)snprintf(out + o, cap - o, "password=***");
			p = cli_value_end(v);
			continue;
		}
		out[o++] = *p++;
	}
	out[o < cap ? o : cap - 1] = '\0';
}

bool cli_has_password(const char *url)
{
	size_t cap = strlen(url) + 16;
	char *shown = mem_alloc(cap);
	cli_hide_password(url, shown, cap);
	bool has = strcmp(shown, url) != 0;
	free(shown);
	return has;
}

int cli_db_configure(const struct cfg *cfg)
{
	bool pooled = strcmp(cfg->db_pooler, "transaction") == 0;
	if (!pooled && strcmp(cfg->db_pooler, "none") != 0) {
		log_error("BIKAROO_DB_POOLER must be none or transaction, not %s", cfg->db_pooler);
		return -1;
	}
	if (pooled && !*cfg->listen_db_url) {
		log_error(
			"BIKAROO_DB_POOLER=transaction needs BIKAROO_LISTEN_DATABASE_URL, a direct "
			"connection for the change feed: LISTEN does not survive transaction "
			"pooling");
		return -1;
	}
	struct db_settings s = {.conninfo = cfg->database_url,
				.listen_conninfo = cfg->listen_db_url,
				.transaction_pooler = pooled,
				.statement_timeout_ms = cfg->call_timeout_ms,
				.connections = cfg->db_connections};
	db_configure(&s);
	return 0;
}

struct identity_env cli_identity_env(const struct cfg *cfg)
{
	return (struct identity_env){.token = cfg->token,
				     .local_subject = cfg->local_subject,
				     .local_client = cfg->local_client,
				     .local_scopes = cfg->local_scopes,
				     .development_db = rights_development_db,
				     .any_database = cfg->local_any_database != 0};
}
