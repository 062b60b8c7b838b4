/* bikaroo-mcp admin (admin.h): the commands, their usage, the operator's words for a refusal. */
#include "admin.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "domain/admin.h"
#include "server/cfg.h"
#include "server/cli/cli.h"
#include "server/cli/load.h"

/* The commands: the words each takes after its name (min to max), as the usage shows them. */
static const struct cli_admin_cmd {
	const char *name, *args, *help;
	int min, max;
} cli_admin_cmds[] = {
	{"create-roles", "[DATABASE]",
	 "as a superuser (BIKAROO_SUPER_URL): the roles fleet_owner and fleet_app\n"
	 "(BIKAROO_OWNER_PASSWORD, BIKAROO_APP_PASSWORD) and the database (default bikaroo)",
	 0, 1},
	{"load", "regions|stations|bikes FILE.csv",
	 "rows by header, all or nothing: code,name | station_id,region,name |\n"
	 "bike_id,region,station_id,status,battery_pct,last_seen_at",
	 2, 2},
	{"region", "CODE NAME", "CODE like FR-PAR", 2, 2},
	{"principal", "SUBJECT ROLE REGION[,REGION...] DISPLAY-NAME [human|machine]",
	 "ROLE: viewer, customer_care, fleet_operator or technician; a human (the default) or a "
	 "machine",
	 4, 5},
	{"client", "CLIENT-ID NAME RIGHTS", "RIGHTS: read, read,report or read,report,confirm", 3,
	 3},
	{"deactivate-principal", "SUBJECT", NULL, 1, 1},
	{"deactivate-client", "CLIENT-ID", NULL, 1, 1},
};

#define CLI_ADMIN_NCMDS (sizeof cli_admin_cmds / sizeof cli_admin_cmds[0])

/* The arguments of commands whose values the database judges, in the operator's words: by the
 * table and column PostgreSQL names in its refusal. */
static const struct {
	const char *table, *column, *arg, *expected;
} cli_admin_args[] = {
	{"regions", "code", "CODE", "two capital letters, a hyphen, three (FR-PAR)"},
	{"principals", "subject", "SUBJECT", "1 to 255 characters"},
	{"principals", "role", "ROLE", "viewer, customer_care, fleet_operator or technician"},
	{"client_apps", "client_id", "CLIENT-ID", "1 to 255 characters"},
};

/* The usage of command c (NULL: of every command) on out. */
static void cli_admin_print(FILE *out, const struct cli_admin_cmd *c)
{
	if (c)
		fprintf(out, "usage: bikaroo-mcp admin %s %s\n", c->name, c->args);
	else
		fprintf(out, "usage: bikaroo-mcp admin COMMAND ... (as the owner role: "
			     "BIKAROO_MIGRATE_URL; each change but create-roles audited in "
			     "fleet.admin_log)\n");
	for (size_t i = 0; i < CLI_ADMIN_NCMDS; i++) {
		const struct cli_admin_cmd *k = &cli_admin_cmds[i];
		if (c && c != k)
			continue;
		if (!c)
			fprintf(out, "  %s %s\n", k->name, k->args);
		for (const char *h = k->help; h && *h;) {
			size_t n = strcspn(h, "\n");
			fprintf(out, "      %.*s\n", (int)n, h);
			h += n + (h[n] == '\n');
		}
	}
}

/* The command named name, or NULL. */
static const struct cli_admin_cmd *cli_admin_find(const char *name)
{
	for (size_t i = 0; name && i < CLI_ADMIN_NCMDS; i++)
		if (strcmp(cli_admin_cmds[i].name, name) == 0)
			return &cli_admin_cmds[i];
	return NULL;
}

static int cli_admin_usage(void)
{
	cli_admin_print(stderr, NULL);
	return 2;
}

int cli_admin_help(const char *cmd)
{
	const struct cli_admin_cmd *c = cli_admin_find(cmd);
	if (cmd && !c) {
		fprintf(stderr, "admin: no command %s\n", cmd);
		return cli_admin_usage();
	}
	cli_admin_print(stdout, c);
	return 0;
}

/* The column a refusal names: PostgreSQL's own, else the one its constraint is named after
 * (TABLE_COLUMN_check, _fkey, _key: PostgreSQL's default names). Into out (cap bytes). */
static void cli_admin_column(const struct admin_failure *f, char *out, size_t cap)
{
	static const char *const suffixes[] = {"_check", "_fkey", "_pkey", "_key"};
	snprintf(out, cap, "%s", f->column);
	size_t t = strlen(f->table);
	if (*out || !*f->table || strncmp(f->constraint, f->table, t) != 0 ||
	    f->constraint[t] != '_')
		return;
	snprintf(out, cap, "%s", f->constraint + t + 1);
	for (size_t i = 0; i < sizeof suffixes / sizeof suffixes[0]; i++) {
		size_t n = strlen(out), s = strlen(suffixes[i]);
		if (n > s && strcmp(out + n - s, suffixes[i]) == 0) {
			out[n - s] = '\0';
			return;
		}
	}
}

/* The file's column that a refused load names (NULL when none): by name, else by the type of
 * value a data error was about (a time, a number). */
static const struct load_column *cli_admin_load_column(const char *kind,
						       const struct admin_failure *f)
{
	char name[64];
	cli_admin_column(f, name, sizeof name);
	const struct load_column *c = *name ? load_column(kind, name) : NULL;
	if (c)
		return c;
	if (strcmp(f->sqlstate, "22007") == 0 || strcmp(f->sqlstate, "22008") == 0)
		return load_column_of_type(kind, LOAD_TIME);
	if (strcmp(f->sqlstate, "22P02") == 0 || strcmp(f->sqlstate, "22003") == 0)
		return load_column_of_type(kind, LOAD_INT);
	return NULL;
}

/* Says why the database refused a load of kind from path (its rows and their lines). */
static void cli_admin_load_refused(const struct admin_session *s, const char *path,
				   const char *kind, const json_t *rows, const unsigned long *lines)
{
	const struct admin_failure *f = admin_failure(s);
	size_t n = json_array_size(rows);
	const struct load_column *c = cli_admin_load_column(kind, f);
	if (f->row < 1 || (size_t)f->row > n || !c) {
		fprintf(stderr, "admin load: %s: refused: %s; nothing was loaded\n", path,
			admin_why(s));
		return;
	}
	const char *v = json_string_value(
		json_object_get(json_array_get(rows, (size_t)f->row - 1), c->name));
	char shown[120];
	load_show(v ? v : "", shown, sizeof shown);
	fprintf(stderr,
		"admin load: %s:%lu: column %s: the database refuses \"%s\": it must be %s; "
		"nothing was loaded\n",
		path, lines[f->row - 1], c->name, shown, c->expected);
}

/* The records of CSV file path for kind (*rows, *lines: load_rows), or -1 (said). */
static int cli_admin_read(const char *path, const char *kind, json_t **rows, unsigned long **lines)
{
	char *text = mem_alloc(LOAD_MAX_BYTES + 1);
	int rc = -1;
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "admin load: cannot read %s: %s\n", path, strerror(errno));
		goto out;
	}
	size_t n = fread(text, 1, LOAD_MAX_BYTES + 1, f);
	bool bad = ferror(f);
	fclose(f);
	if (bad || n > LOAD_MAX_BYTES) {
		fprintf(stderr, "admin load: %s: %s\n", path,
			bad ? "read error" : "larger than 64 MiB: split it");
		goto out;
	}
	struct load_error e;
	if (load_rows(kind, text, n, rows, lines, &e) != 0) {
		char where[80] = "", column[80] = "";
		if (e.line)
			snprintf(where, sizeof where, ":%lu", e.line);
		if (*e.column)
			snprintf(column, sizeof column, "column %s: ", e.column);
		fprintf(stderr, "admin load: %s%s: %s%s; nothing was loaded\n", path, where, column,
			e.what);
		goto out;
	}
	rc = 0;
out:
	free(text);
	return rc;
}

/* Says why the database refused a command's argument, in words when it names one. */
static void cli_admin_refused(const struct admin_session *s, const char *cmd)
{
	const struct admin_failure *f = admin_failure(s);
	char column[64];
	cli_admin_column(f, column, sizeof column);
	for (size_t i = 0; i < sizeof cli_admin_args / sizeof cli_admin_args[0]; i++)
		if (strcmp(cli_admin_args[i].table, f->table) == 0 &&
		    strcmp(cli_admin_args[i].column, column) == 0) {
			fprintf(stderr, "admin %s: %s must be %s\n", cmd, cli_admin_args[i].arg,
				cli_admin_args[i].expected);
			return;
		}
	fprintf(stderr, "admin %s: %s\n", cmd, admin_why(s));
}

/* admin load KIND FILE on s. */
static enum fleet_status cli_admin_load(struct admin_session *s, const char *kind, const char *path,
					json_t *rows, const unsigned long *lines)
{
	char *json = json_dumps(rows, JSON_COMPACT);
	long count = 0;
	enum fleet_status st = admin_load(s, kind, json, &count);
	free(json);
	if (st == FLEET_OK)
		printf("admin: %ld %s loaded from %s\n", count, kind, path);
	else if (st == FLEET_INVALID)
		cli_admin_load_refused(s, path, kind, rows, lines);
	else
		fprintf(stderr, "admin load: %s\n", admin_why(s));
	return st;
}

/* create-roles [DATABASE] as the superuser of url: the roles and the database, then, in the
 * database itself, schema public locked. */
static enum fleet_status cli_admin_roles(struct admin_session **s, const char *url, const char *db,
					 const struct cfg *cfg)
{
	enum fleet_status st = admin_create_roles(*s, db, cfg->owner_password, cfg->app_password);
	if (st != FLEET_OK)
		return st;
	admin_close(*s);
	*s = NULL;
	/* A URL names its database in its path: add it as a query parameter, else a keyword. */
	char *there = strstr(url, "://")
			      ? mem_printf("%s%sdbname=%s", url, strchr(url, '?') ? "&" : "?", db)
			      : mem_printf("%s%sdbname=%s", url, *url ? " " : "", db);
	st = admin_open(there, s);
	free(there);
	if (st == FLEET_OK)
		st = admin_lock_public(*s);
	if (st == FLEET_OK)
		printf("admin: roles fleet_owner (owner) and fleet_app (the server's login: no "
		       "superuser, no BYPASSRLS) and database %s ready; next: bikaroo-mcp migrate "
		       "as "
		       "fleet_owner\n",
		       db);
	return st;
}

/* One command of w (the words after `admin`) on s, once its words are checked. */
static enum fleet_status cli_admin_run(struct admin_session *s, char **w, int n)
{
	const char *cmd = w[0];
	enum fleet_status st = FLEET_INVALID;
	if (strcmp(cmd, "region") == 0) {
		st = admin_region(s, w[1], w[2]);
		if (st == FLEET_OK)
			printf("admin: region %s (%s)\n", w[1], w[2]);
	} else if (strcmp(cmd, "principal") == 0) {
		bool machine = n == 6 && strcmp(w[5], "machine") == 0;
		st = admin_principal(s, w[1], w[4], w[2], !machine, w[3]);
		if (st == FLEET_OK)
			printf("admin: principal %s, %s in %s (%s)\n", w[1], w[2], w[3],
			       machine ? "machine" : "human");
	} else if (strcmp(cmd, "client") == 0) {
		st = admin_client(s, w[1], w[2], true, strstr(w[3], "report") != NULL,
				  strstr(w[3], "confirm") != NULL);
		if (st == FLEET_OK)
			printf("admin: client %s may %s\n", w[1], w[3]);
	} else {
		bool principal = strcmp(cmd, "deactivate-principal") == 0, found = false;
		const char *what = principal ? "principal" : "client";
		st = admin_deactivate(s, principal ? "subject" : "client", w[1], &found);
		if (st == FLEET_OK && !found) {
			fprintf(stderr, "admin: no %s %s\n", what, w[1]);
			return FLEET_NOT_FOUND;
		}
		if (st == FLEET_OK)
			printf("admin: %s %s deactivated\n", what, w[1]);
	}
	if (st != FLEET_OK)
		cli_admin_refused(s, cmd);
	return st;
}

/* The command words w[0..n) checked before anything is opened: the command exists, its number
 * of words, the words the database does not judge. 0, or 2 (said). */
static int cli_admin_check(char **w, int n)
{
	const struct cli_admin_cmd *c = cli_admin_find(n > 0 ? w[0] : NULL);
	if (!c) {
		if (n > 0)
			fprintf(stderr, "admin: no command %s\n", w[0]);
		return cli_admin_usage();
	}
	if (n - 1 < c->min || n - 1 > c->max) {
		fprintf(stderr,
			"admin %s: %d word(s) after it, where it takes %s\nusage: "
			"bikaroo-mcp admin %s %s\n",
			c->name, n - 1, c->args, c->name, c->args);
		return 2;
	}
	if (strcmp(c->name, "principal") == 0 && n == 6 && strcmp(w[5], "human") != 0 &&
	    strcmp(w[5], "machine") != 0) {
		fprintf(stderr, "admin principal: the last word is human or machine, not %s\n",
			w[5]);
		return 2;
	}
	if (strcmp(c->name, "client") == 0 && strcmp(w[3], "read") != 0 &&
	    strcmp(w[3], "read,report") != 0 && strcmp(w[3], "read,report,confirm") != 0) {
		fprintf(stderr,
			"admin client: RIGHTS must be read, read,report or "
			"read,report,confirm, not %s\n",
			w[3]);
		return 2;
	}
	return 0;
}

int cli_admin_main(int argc, char **argv)
{
	char **w = mem_calloc((size_t)argc, sizeof *w);
	int n = 0;
	for (int a = 2; a < argc; a++)
		if (strncmp(argv[a], "--", 2) != 0)
			w[n++] = argv[a];
	struct cfg cfg;
	struct admin_session *s = NULL;
	json_t *rows = NULL;
	unsigned long *lines = NULL;
	int rc = 2;
	if (cfg_load(&cfg, argc - 1, argv + 1) != CFG_OK) {
		free(w);
		return 2;
	}
	if ((rc = cli_admin_check(w, n)) != 0)
		goto out;
	rc = 1;
	bool load = strcmp(w[0], "load") == 0;
	if (load && cli_admin_read(w[2], w[1], &rows, &lines) != 0)
		goto out;
	bool roles = strcmp(w[0], "create-roles") == 0;
	const char *url = roles              ? cfg.super_url
			  : *cfg.migrate_url ? cfg.migrate_url
					     : cfg.database_url;
	if (cli_check_database_url(url, roles ? "BIKAROO_SUPER_URL" : "BIKAROO_MIGRATE_URL") != 0)
		goto out;
	enum fleet_status st = admin_open(url, &s);
	if (st != FLEET_OK)
		fprintf(stderr, "admin %s: %s\n", w[0], admin_why(s));
	else if (roles &&
		 (st = cli_admin_roles(&s, url, n == 2 ? w[1] : "bikaroo", &cfg)) != FLEET_OK)
		fprintf(stderr, "admin %s: %s\n", w[0], s ? admin_why(s) : "failed");
	else if (load)
		st = cli_admin_load(s, w[1], w[2], rows, lines);
	else if (!roles)
		st = cli_admin_run(s, w, n);
	rc = st == FLEET_OK ? 0 : 1;
out:
	admin_close(s);
	json_decref(rows);
	free(lines);
	cfg_free(&cfg);
	free(w);
	return rc;
}
