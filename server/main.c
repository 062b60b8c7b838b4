/* bikaroo-mcp: the Bikaroo fleet MCP server, and its composition root: configuration, the
 * authorization module, the database, the server description (the catalogue), the transport.
 * Subcommands: serve (HTTP), stdio, migrate, config-help, help; --version. */
#include <dirent.h>
#include <errno.h>
#include <limits.h>
#include <stdlib.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <time.h>
#include <string.h>
#include <unistd.h>

#include "common/b64.h"
#include "common/csv.h"
#include "common/keyring.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/service.h"
#include "common/version.h"
#include "domain/admin.h"
#include "domain/budgets.h"
#include "domain/pg/db.h"
#include "domain/pg/migrate.h"
#include "domain/rights.h"
#include "server/auth/auth.h"
#include "server/auth/identity.h"
#include "server/capabilities/catalog.h"
#include "server/capabilities/change_feed.h"
#include "server/cfg.h"
#include "domain/changes.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/ratelimit.h"
#include "server/transport/http.h"
#include "server/transport/stdio.h"

static volatile sig_atomic_t main_stop;
/* The database answered that this server must not serve (set by main_db_wait_run). */
static atomic_bool main_refused;

static void main_on_signal(int sig)
{
	(void)sig;
	main_stop = 1;
}

/* The revision: set by the Makefile, from git when there is one. */
#ifndef BIKAROO_REVISION
#define BIKAROO_REVISION "unknown"
#endif

static int main_usage(void)
{
	printf("usage: bikaroo-mcp "
	       "serve|stdio|migrate|admin|config-help|host-config|help|--version "
	       "[--flag=value "
	       "...]"
	       "\n\n"
	       "  serve        serve MCP over Streamable HTTP at http://LISTEN:PORT/mcp\n"
	       "               (GET /healthz, /readyz; GET /metrics on BIKAROO_METRICS_LISTEN)\n"
	       "  stdio        serve MCP over stdin/stdout (for IDEs that launch the server)\n"
	       "  migrate      apply the SQL migrations (as the owner role)\n"
	       "  config-help  print the configuration table: --format=text|man|markdown\n"
	       "  admin COMMAND ...\n"
	       "               an operator's changes: the database roles, regions, stations and\n"
	       "               bikes from CSV, principals, client applications (bikaroo-mcp admin\n"
	       "               lists them)\n"
	       "  host-config HOST [--link]\n"
	       "               print the configuration file of an MCP host (vscode, vscode-http,\n"
	       "               cursor, cursor-http, claude-desktop) that launches this binary "
	       "with\n"
	       "               this DATABASE_URL and identity, or reaches this server; --link:\n"
	       "               its install link (VS Code, Cursor)\n"
	       "  --version    print the version and source revision\n\n"
	       "Configuration (environment variable or flag):\n");
	cfg_print_help();
	return 0;
}

static int main_config_help(int argc, char **argv)
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

/* A directory setting that cannot be opened, said with the setting, the reason and where a
 * relative path was looked up; 0 when it opens. */
static int main_check_dir(const char *setting, const char *dir)
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

/* DATABASE_URL unset would make libpq try its default socket with the user's name: say so. */
static int main_check_database_url(const char *url, const char *setting)
{
	if (*url)
		return 0;
	log_error("%s is not set: give the libpq connection string of the database (for example "
		  "postgresql://fleet_app@db.example/bikaroo); `make run` starts a local one",
		  setting);
	return -1;
}

/* ---- host-config: what an MCP host needs to launch or reach this server --------------------- */

/* The hosts host-config writes for: their file's shape (VS Code's `servers` with a type, or the
 * `mcpServers` of Cursor and Claude Desktop), and whether they launch the server (stdio) or
 * reach the running one (http). */
static const struct main_host {
	const char *name, *file, *note;
	bool vscode, http;
} main_hosts[] = {
	{"vscode", ".vscode/mcp.json (or the user mcp.json)", "VS Code, stdio", true, false},
	{"vscode-http", ".vscode/mcp.json", "VS Code, Streamable HTTP", true, true},
	{"cursor", ".cursor/mcp.json", "Cursor, stdio", false, false},
	{"cursor-http", ".cursor/mcp.json", "Cursor, Streamable HTTP", false, true},
	{"claude-desktop", "claude_desktop_config.json", "Claude Desktop, stdio", false, false},
};

#define MAIN_NHOSTS (sizeof main_hosts / sizeof main_hosts[0])
#define MAIN_HOST_SERVER "bikaroo-fleet" /* the server's name in every host file */

/* A directory setting for the env of a launched server: absolute (a host starts it from a
 * folder of its own); NULL when the binary finds it by itself (an installed binary's default).
 * New string. */
static char *main_host_dir(const char *dir)
{
	if (dir[0] == '/')
		return NULL; /* absolute: the installed default, or set so by the caller */
	char *abs = realpath(dir, NULL);
	if (abs)
		return abs;
	/* Not below the working directory: a source tree's build/NAME finds it at ../dir. */
	char *self = realpath("/proc/self/exe", NULL);
	char *slash = self ? strrchr(self, '/') : NULL;
	if (slash) {
		*slash = '\0';
		char *guess = mem_printf("%s/../%s", self, dir);
		abs = realpath(guess, NULL);
		free(guess);
	}
	free(self);
	return abs ? abs : mem_strdup(dir);
}

/* The server entry of host h (new reference): the launch (this very binary, the database and
 * identity of this configuration) or the URL of the server this configuration serves. */
static json_t *main_host_entry(const struct main_host *h, const struct cfg *cfg)
{
	json_t *e = json_object();
	if (h->http) {
		bool v6 = strchr(cfg->listen, ':') && cfg->listen[0] != '[';
		char *url = *cfg->resource_uri ? mem_strdup(cfg->resource_uri)
					       : mem_printf("http://%s%s%s:%ld/mcp", v6 ? "[" : "",
							    cfg->listen, v6 ? "]" : "", cfg->port);
		if (h->vscode)
			json_object_set_new(e, "type", json_string("http"));
		json_object_set_new(e, "url", json_string(url));
		free(url);
		return e;
	}
	char *self = realpath("/proc/self/exe", NULL);
	if (h->vscode)
		json_object_set_new(e, "type", json_string("stdio"));
	json_object_set_new(e, "command", json_string(self ? self : "bikaroo-mcp"));
	free(self);
	json_object_set_new(e, "args", json_pack("[s]", "stdio"));
	json_t *env = json_object();
	json_object_set_new(env, "DATABASE_URL", json_string(cfg->database_url));
	json_object_set_new(env, "BIKAROO_AUTH", json_string(cfg->auth));
	if (strcmp(cfg->auth, "local") == 0) {
		json_object_set_new(env, "BIKAROO_LOCAL_SUBJECT", json_string(cfg->local_subject));
		json_object_set_new(env, "BIKAROO_LOCAL_CLIENT", json_string(cfg->local_client));
		json_object_set_new(env, "BIKAROO_LOCAL_SCOPES", json_string(cfg->local_scopes));
	} else {
		json_object_set_new(env, "BIKAROO_AUTH_ISSUER", json_string(cfg->auth_issuer));
		json_object_set_new(env, "BIKAROO_RESOURCE_URI", json_string(cfg->resource_uri));
		json_object_set_new(env, "BIKAROO_TOKEN", json_string("<an access token>"));
	}
	const char *const dirs[][2] = {{"BIKAROO_RESOURCES_DIR", cfg->resources_dir},
				       {"BIKAROO_PROMPTS_DIR", cfg->prompts_dir}};
	for (size_t i = 0; i < 2; i++) {
		char *d = main_host_dir(dirs[i][1]);
		if (d)
			json_object_set_new(env, dirs[i][0], json_string(d));
		free(d);
	}
	json_object_set_new(e, "env", env);
	return e;
}

/* Percent-encodes s for a URL's query (RFC 3986 unreserved characters kept). New string. */
static char *main_url_encode(const char *s)
{
	size_t n = strlen(s);
	char *out = mem_alloc(3 * n + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			*o++ = (char)*p;
		else
			o += snprintf(o, 4, "%%%02X", *p);
	}
	*o = '\0';
	return out;
}

/* The install link of entry e (borrowed) for h: VS Code's vscode:mcp/install?{JSON with the
 * name}, Cursor's cursor://anysphere.cursor-deeplink/mcp/install?name=..&config={base64 JSON}.
 * New string, or NULL for a host without install links. */
static char *main_host_link(const struct main_host *h, const json_t *e)
{
	char *link = NULL;
	if (h->vscode) {
		json_t *named = json_pack("{s:s}", "name", MAIN_HOST_SERVER);
		json_object_update(named, (json_t *)e);
		char *text = json_dumps(named, JSON_COMPACT | JSON_PRESERVE_ORDER);
		char *q = main_url_encode(text);
		link = mem_printf("vscode:mcp/install?%s", q);
		free(q);
		free(text);
		json_decref(named);
	} else if (strncmp(h->name, "cursor", 6) == 0) {
		char *text = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
		char *b64 = b64_encode((const unsigned char *)text, strlen(text), false);
		char *q = main_url_encode(b64);
		link = mem_printf(
			"cursor://anysphere.cursor-deeplink/mcp/install?name=%s&config=%s",
			MAIN_HOST_SERVER, q);
		free(q);
		free(b64);
		free(text);
	}
	return link;
}

/* bikaroo-mcp host-config HOST [--link] [--flag=value...]: prints HOST's configuration file (or
 * its install link) for this binary and this configuration's database and identity. */
static int main_host_config(int argc, char **argv)
{
	const char *name = argc > 2 ? argv[2] : "";
	bool link = false;
	for (int a = 3; a < argc; a++)
		link |= strcmp(argv[a], "--link") == 0;
	const struct main_host *h = NULL;
	for (size_t i = 0; i < MAIN_NHOSTS; i++)
		if (strcmp(main_hosts[i].name, name) == 0)
			h = &main_hosts[i];
	if (!h) {
		fprintf(stderr, "usage: bikaroo-mcp host-config HOST [--link] [--flag=value ...]; "
				"HOST is one of:\n");
		for (size_t i = 0; i < MAIN_NHOSTS; i++)
			fprintf(stderr, "  %-15s %s: %s\n", main_hosts[i].name, main_hosts[i].note,
				main_hosts[i].file);
		return 2;
	}
	/* The settings as serve and stdio read them; --link is ours, not a setting. */
	char **rest = mem_calloc((size_t)argc, sizeof *rest);
	int n = 0;
	for (int a = 2; a < argc; a++)
		if (strcmp(argv[a], "--link") != 0)
			rest[n++] = argv[a];
	struct cfg cfg;
	enum cfg_status cs = cfg_load(&cfg, n, rest);
	free(rest);
	if (cs != CFG_OK)
		return 2;
	int rc = 0;
	if (!h->http && !*cfg.database_url) {
		fprintf(stderr,
			"host-config %s: DATABASE_URL is not set: give the database the "
			"host's server is to use (make run prints its own)\n",
			h->name);
		rc = 2;
		goto out;
	}
	json_t *entry = main_host_entry(h, &cfg);
	if (link) {
		char *l = main_host_link(h, entry);
		if (l)
			printf("%s\n", l);
		else {
			fprintf(stderr,
				"host-config: %s has no install link (vscode, vscode-http, "
				"cursor and cursor-http have)\n",
				h->name);
			rc = 2;
		}
		free(l);
		json_decref(entry);
		goto out;
	}
	json_t *file = json_pack("{s:{s:o}}", h->vscode ? "servers" : "mcpServers",
				 MAIN_HOST_SERVER, entry);
	char *text = json_dumps(file, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", text);
	free(text);
	json_decref(file);
out:
	cfg_free(&cfg);
	return rc;
}

/* ---- admin: an operator's changes (domain/admin.h), each audited in fleet.admin_log ---------- */

#define MAIN_CSV_MAX (64L << 20) /* a load file of at most 64 MiB */

/* The records of CSV file path as a JSON array of objects named by its header line (new text:
 * caller frees), or NULL (said on stderr, with the line). */
static char *main_csv_rows(const char *path)
{
	char *text = NULL, *json = NULL;
	json_t *rows = json_array();
	struct csv_record head = {0}, rec = {0};
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "admin load: cannot read %s: %s\n", path, strerror(errno));
		goto out;
	}
	text = mem_alloc(MAIN_CSV_MAX + 1);
	size_t n = fread(text, 1, MAIN_CSV_MAX + 1, f);
	fclose(f);
	if (n > MAIN_CSV_MAX) {
		fprintf(stderr, "admin load: %s is larger than %ld bytes\n", path, MAIN_CSV_MAX);
		goto out;
	}
	const char *p = text, *end = text + n;
	unsigned long line = 0;
	if (csv_next(&p, end, &head, &line) != CSV_OK) {
		fprintf(stderr, "admin load: %s: no header line, or not CSV at line %lu\n", path,
			line);
		goto out;
	}
	enum csv_status cs;
	while ((cs = csv_next(&p, end, &rec, &line)) == CSV_OK) {
		if (rec.nfields != head.nfields) {
			fprintf(stderr, "admin load: %s:%lu: %zu fields, the header names %zu\n",
				path, line, rec.nfields, head.nfields);
			csv_record_free(&rec);
			goto out;
		}
		json_t *o = json_object();
		for (size_t i = 0; i < rec.nfields; i++)
			json_object_set_new(o, head.fields[i], json_string(rec.fields[i]));
		json_array_append_new(rows, o);
		csv_record_free(&rec);
	}
	if (cs == CSV_INVALID) {
		fprintf(stderr,
			"admin load: %s:%lu: not CSV (a quote out of place, or over %d "
			"fields)\n",
			path, line, CSV_MAX_FIELDS);
		goto out;
	}
	json = json_dumps(rows, JSON_COMPACT);
out:
	csv_record_free(&head);
	json_decref(rows);
	free(text);
	return json;
}

static int main_admin_usage(void)
{
	fprintf(stderr,
		"usage: bikaroo-mcp admin COMMAND ... (as the owner role, BIKAROO_MIGRATE_URL; "
		"each "
		"change audited in fleet.admin_log)\n"
		"  create-roles [DATABASE]        as a superuser (BIKAROO_SUPER_URL): the roles "
		"fleet_owner and fleet_app\n"
		"                                 (BIKAROO_OWNER_PASSWORD, BIKAROO_APP_PASSWORD) "
		"and "
		"the database (bikaroo)\n"
		"  load regions|stations|bikes FILE.csv\n"
		"                                 rows by header: code,name | "
		"station_id,region,name |\n"
		"                                 "
		"bike_id,region,station_id,status,battery_pct,last_seen_at\n"
		"  region CODE NAME\n"
		"  principal SUBJECT ROLE REGION[,REGION...] DISPLAY-NAME [human|machine]\n"
		"                                 ROLE: viewer, customer_care or fleet_operator\n"
		"  client CLIENT-ID NAME RIGHTS   RIGHTS: read, read,report or "
		"read,report,confirm\n"
		"  deactivate-principal SUBJECT\n"
		"  deactivate-client CLIENT-ID\n");
	return 2;
}

/* One admin command of w (the words after `admin`, settings flags left out): its status, with
 * *said true when the failure was already told (a load file that cannot be read). */
static enum fleet_status main_admin_run(struct admin_session *s, char **w, int n, bool *said)
{
	const char *cmd = w[0];
	enum fleet_status st = FLEET_INVALID;
	*said = false;
	if (strcmp(cmd, "load") == 0 && n == 3) {
		char *rows = main_csv_rows(w[2]);
		long count = 0;
		if (!rows) {
			*said = true;
			return FLEET_INVALID;
		}
		st = admin_load(s, w[1], rows, &count);
		free(rows);
		if (st == FLEET_OK)
			printf("admin: %ld %s loaded from %s\n", count, w[1], w[2]);
	} else if (strcmp(cmd, "region") == 0 && n == 3) {
		st = admin_region(s, w[1], w[2]);
		if (st == FLEET_OK)
			printf("admin: region %s (%s)\n", w[1], w[2]);
	} else if (strcmp(cmd, "principal") == 0 && (n == 5 || n == 6)) {
		bool machine = n == 6 && strcmp(w[5], "machine") == 0;
		if (n == 6 && !machine && strcmp(w[5], "human") != 0)
			return FLEET_INVALID;
		st = admin_principal(s, w[1], w[4], w[2], !machine, w[3]);
		if (st == FLEET_OK)
			printf("admin: principal %s, %s in %s (%s)\n", w[1], w[2], w[3],
			       machine ? "machine" : "human");
	} else if (strcmp(cmd, "client") == 0 && n == 4) {
		bool report = strstr(w[3], "report") != NULL;
		bool confirm = strstr(w[3], "confirm") != NULL;
		if (strcmp(w[3], "read") != 0 && strcmp(w[3], "read,report") != 0 &&
		    strcmp(w[3], "read,report,confirm") != 0)
			return FLEET_INVALID;
		st = admin_client(s, w[1], w[2], true, report, confirm);
		if (st == FLEET_OK)
			printf("admin: client %s may %s\n", w[1], w[3]);
	} else if ((strcmp(cmd, "deactivate-principal") == 0 ||
		    strcmp(cmd, "deactivate-client") == 0) &&
		   n == 2) {
		bool principal = cmd[11] == 'p', found = false;
		st = admin_deactivate(s, principal ? "subject" : "client", w[1], &found);
		if (st == FLEET_OK && !found) {
			fprintf(stderr, "admin: no %s %s\n", principal ? "principal" : "client",
				w[1]);
			return FLEET_NOT_FOUND;
		}
		if (st == FLEET_OK)
			printf("admin: %s %s deactivated\n", principal ? "principal" : "client",
			       w[1]);
	}
	return st;
}

/* bikaroo-mcp admin COMMAND ...: 0, 1 when the database refused or failed (said why), 2 for a
 * usage error. */
static int main_admin(int argc, char **argv)
{
	char **words = mem_calloc((size_t)argc, sizeof *words);
	int n = 0;
	for (int a = 2; a < argc; a++)
		if (strncmp(argv[a], "--", 2) != 0)
			words[n++] = argv[a];
	struct cfg cfg;
	struct admin_session *s = NULL;
	int rc = 2;
	if (cfg_load(&cfg, argc - 1, argv + 1) != CFG_OK) {
		free(words);
		return 2;
	}
	if (n == 0 || (strcmp(words[0], "create-roles") == 0 && n > 2)) {
		rc = main_admin_usage();
		goto out;
	}
	bool roles = strcmp(words[0], "create-roles") == 0;
	const char *url = roles              ? cfg.super_url
			  : *cfg.migrate_url ? cfg.migrate_url
					     : cfg.database_url;
	if (main_check_database_url(url, roles ? "BIKAROO_SUPER_URL" : "BIKAROO_MIGRATE_URL") !=
	    0) {
		rc = 1;
		goto out;
	}
	enum fleet_status st = admin_open(url, &s);
	if (st == FLEET_OK && roles) {
		const char *db = n == 2 ? words[1] : "bikaroo";
		st = admin_create_roles(s, db, cfg.owner_password, cfg.app_password);
		if (st == FLEET_OK) { /* then, in the database itself: public is not for everyone */
			admin_close(s);
			s = NULL;
			char *there =
				mem_printf("%s%sdbname=%s", url, strchr(url, '=') ? " " : "", db);
			/* A URL names its database in its path: connect by keywords instead. */
			if (strstr(url, "://")) {
				free(there);
				there = mem_printf("%s%sdbname=%s", url,
						   strchr(url, '?') ? "&" : "?", db);
			}
			st = admin_open(there, &s);
			free(there);
			if (st == FLEET_OK)
				st = admin_lock_public(s);
		}
		if (st == FLEET_OK)
			printf("admin: roles fleet_owner (owner) and fleet_app (the server's "
			       "login: no "
			       "superuser, no BYPASSRLS) and database %s ready; next: bikaroo-mcp "
			       "migrate as fleet_owner\n",
			       db);
	} else if (st == FLEET_OK) {
		bool said;
		st = main_admin_run(s, words, n, &said);
		if (said) {
			rc = 1;
			goto out;
		}
		if (st == FLEET_INVALID && !*admin_why(s)) {
			rc = main_admin_usage();
			goto out;
		}
	}
	rc = st == FLEET_OK ? 0 : 1;
	if (st != FLEET_OK && st != FLEET_NOT_FOUND)
		fprintf(stderr, "admin %s: %s\n", words[0], s ? admin_why(s) : "failed");
out:
	admin_close(s);
	cfg_free(&cfg);
	free(words);
	return rc;
}

static int main_migrate(const struct cfg *cfg)
{
	const char *url = *cfg->migrate_url ? cfg->migrate_url : cfg->database_url;
	if (main_check_database_url(url, "BIKAROO_MIGRATE_URL (or DATABASE_URL)") != 0 ||
	    main_check_dir("BIKAROO_MIGRATIONS_DIR", cfg->migrations_dir) != 0)
		return 1;
	struct migrate_count applied;
	enum fleet_status st = migrate_run(url, cfg->migrations_dir, &applied);
	if (st != FLEET_OK) {
		log_error("migrate failed (%s)", fleet_status_name(st));
		return 1;
	}
	log_info("migrate: %d migration(s) applied (numbered files), %d function file(s) applied "
		 "(new or changed), schema up to date",
		 applied.numbered, applied.functions);
	return 0;
}

static bool main_is_loopback(const char *addr)
{
	return strncmp(addr, "127.", 4) == 0 || strcmp(addr, "::1") == 0 ||
	       strcmp(addr, "[::1]") == 0;
}

/* The database part of readiness, one check at a time: /readyz is public, and probes that come
 * while a check runs share its answer instead of each running a query (a flood of probes costs
 * the database one query at a time, never one per probe). */
static enum fleet_status main_ready_db(int *version)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static pthread_cond_t done = PTHREAD_COND_INITIALIZER;
	static bool running;
	static unsigned long round;
	static enum fleet_status last_st;
	static int last_version;
	pthread_mutex_lock(&lock);
	if (running) {
		for (unsigned long r = round; running && round == r;)
			pthread_cond_wait(&done, &lock);
		enum fleet_status st = last_st;
		*version = last_version;
		pthread_mutex_unlock(&lock);
		return st;
	}
	running = true;
	pthread_mutex_unlock(&lock);
	int v = 0;
	enum fleet_status st = db_held() ? FLEET_UNAVAILABLE : migrate_schema_version(&v);
	pthread_mutex_lock(&lock);
	last_st = st;
	last_version = v;
	round++;
	running = false;
	pthread_cond_broadcast(&done);
	pthread_mutex_unlock(&lock);
	*version = v;
	return st;
}

/* GET /readyz (http.h): the database answers as the login role with the schema this binary
 * needs, and in jwt mode the issuer's keys are loaded. */
static void main_ready(json_t *missing)
{
	int version = 0;
	/* While statements time out, say so without one more query that would wait too. */
	enum fleet_status st = db_stalled() ? FLEET_UNAVAILABLE : main_ready_db(&version);
	if (db_stalled())
		json_array_append_new(missing,
				      json_string("database: statements time out (no answer within "
						  "BIKAROO_CALL_TIMEOUT_MS); calls get 503"));
	else if (st == FLEET_UNAVAILABLE && db_held())
		json_array_append_new(
			missing, json_string("database: unavailable since the start, retrying "
					     "(DATABASE_URL); nothing that needs it is served"));
	else if (st == FLEET_UNAVAILABLE)
		json_array_append_new(missing,
				      json_string("database: cannot connect (DATABASE_URL)"));
	else if (st != FLEET_OK)
		json_array_append_new(missing,
				      json_sprintf("database schema: not migrated or older than "
						   "version 9, this binary needs %d (run "
						   "bikaroo-mcp migrate)",
						   MIGRATE_SCHEMA_VERSION));
	else if (version < MIGRATE_SCHEMA_VERSION)
		json_array_append_new(
			missing,
			json_sprintf("database schema: at version %d, this binary needs %d "
				     "(run bikaroo-mcp migrate)",
				     version, MIGRATE_SCHEMA_VERSION));
	const char *auth = auth_ready();
	if (auth)
		json_array_append_new(missing, json_string(auth));
	const char *db[] = {"database"}, *keys[] = {"issuer_keys"};
	metrics_set(&metrics_ready, db, st == FLEET_OK && version >= MIGRATE_SCHEMA_VERSION);
	metrics_set(&metrics_ready, keys, auth == NULL);
}

/* Whether everything main_ready() checks is ready (service.h's readiness loop). The loop's
 * thread keeps no database connection between two checks: a server holds one per worker. */
static bool main_ready_now(void)
{
	json_t *missing = json_array();
	main_ready(missing);
	bool ready = json_array_size(missing) == 0;
	json_decref(missing);
	db_release();
	return ready;
}

/* The address the watchdog probes the server at: the listen address, loopback for "any". */
static const char *main_probe_host(const char *listen, char *buf, size_t cap)
{
	if (strcmp(listen, "0.0.0.0") == 0)
		return "127.0.0.1";
	if (strcmp(listen, "::") == 0 || strcmp(listen, "[::]") == 0)
		return "::1";
	snprintf(buf, cap, "%s", listen + (listen[0] == '['));
	buf[strcspn(buf, "]")] = '\0';
	return buf;
}

/* The principal of a stdio session (identity.h), the database judging whether a local
 * identity may be used. 0, or -1 (logged). */
static int main_stdio_identity(const struct cfg *cfg, struct fleet_actor *out)
{
	if (strcmp(cfg->auth, "local") != 0 && !*cfg->token) {
		log_error(
			"stdio: no identity to act as. For a development database set "
			"BIKAROO_AUTH=local (with BIKAROO_LOCAL_SUBJECT and BIKAROO_LOCAL_CLIENT); "
			"otherwise set BIKAROO_TOKEN to an access token (with BIKAROO_AUTH_ISSUER "
			"and BIKAROO_RESOURCE_URI)");
		return -1;
	}
	struct auth_settings set = cfg_auth_settings(cfg);
	if (auth_init(&set) != AUTH_OK)
		return -1;
	struct identity_env env = {.token = cfg->token,
				   .local_subject = cfg->local_subject,
				   .local_client = cfg->local_client,
				   .local_scopes = cfg->local_scopes,
				   .development_db = rights_development_db};
	const char *why = NULL;
	if (identity_from_environment(&env, out, &why) == IDENTITY_OK)
		return 0;
	log_error("stdio: no usable identity: %s", why ? why : "refused");
	return -1;
}

/* The volume limits' budget store (ratelimit.h): buckets shared in the database. */
static int main_budget_take(void *ctx, struct fleet_budget_lease *l, size_t n)
{
	(void)ctx;
	return budgets_take(l, n) == FLEET_OK ? 0 : -1;
}

static const struct ratelimit_store main_budget_store = {main_budget_take, NULL};

/* What the transports serve: Bikaroo's server description (immutable once built), the settings
 * its handlers read, the volume limits, and the service loading them made. */
struct main_product {
	struct mcp_server desc;
	struct mcp_app app;
	struct ratelimit *limits;
	struct mcp_service *svc;
};

/* Bikaroo's server description, loaded (documents, templates, schemas), with the requestState
 * key; 0, or -1 (logged, naming the setting). */
static int main_server_open(const struct cfg *cfg, struct main_product *p)
{
	*p = (struct main_product){.app = {.confirm_ttl_s = cfg->confirm_ttl}};
	if (catalog_describe(&p->desc, &p->app) != 0)
		return -1;
	struct ratelimit_settings rset = cfg_ratelimit_settings(cfg);
	if (strcmp(cfg->rate_store, "database") == 0) {
		rset.store = &main_budget_store;
	} else if (strcmp(cfg->rate_store, "local") != 0) {
		log_error("BIKAROO_RATE_STORE must be database or local, not %s", cfg->rate_store);
		return -1;
	}
	p->limits = ratelimit_new(&rset);
	if (main_check_dir("BIKAROO_RESOURCES_DIR", cfg->resources_dir) != 0 ||
	    main_check_dir("BIKAROO_PROMPTS_DIR", cfg->prompts_dir) != 0)
		return -1;
	enum keyring_status ks = keyring_init(cfg->state_secret, cfg->state_secret_previous);
	if (ks != KEYRING_OK) {
		log_error("%s", keyring_status_text(ks));
		return -1;
	}
	struct mcp_service_config sc = {.resources_dir = cfg->resources_dir,
					.prompts_dir = cfg->prompts_dir,
					.limits = p->limits};
	p->svc = mcp_service_new(&p->desc, &sc);
	if (!p->svc) {
		log_error(
			"cannot load the documents and prompt templates (BIKAROO_RESOURCES_DIR=%s, "
			"BIKAROO_PROMPTS_DIR=%s)",
			cfg->resources_dir, cfg->prompts_dir);
		return -1;
	}
	return 0;
}

static void main_server_close(struct main_product *p)
{
	changes_stop();
	mcp_service_free(p->svc);
	p->svc = NULL;
	ratelimit_free(p->limits);
	p->limits = NULL;
	mcp_server_release(&p->desc);
}

/* The database settings from the configuration; -1 (logged) when they do not fit together. */
static int main_db_configure(const struct cfg *cfg)
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
				.executor_connections = cfg->db_connections};
	db_configure(&s);
	return 0;
}

/* stdio: the same description and database checks as serve, the identity from the environment. */
static int main_stdio(const struct cfg *cfg)
{
	struct fleet_actor actor;
	struct main_product product = {0};
	int rc = 1;
	if (main_check_database_url(cfg->database_url, "DATABASE_URL") != 0 ||
	    main_db_configure(cfg) != 0)
		goto out;
	const char *why = NULL;
	enum fleet_status st = db_check_login_role(&why);
	if (st != FLEET_OK) {
		log_error("refusing to serve: %s", why ? why : fleet_status_name(st));
		goto out;
	}
	if (main_stdio_identity(cfg, &actor) != 0)
		goto out;
	if (main_server_open(cfg, &product) != 0)
		goto close;
	log_info("serving MCP over stdio acting as subject %s via client %s", actor.subject,
		 actor.client_id);
	rc = stdio_serve(product.svc, &actor, (size_t)cfg->max_body);
close:
	main_server_close(&product);
out:
	db_shutdown();
	auth_cleanup();
	return rc;
}

/* url with any password hidden, for a log line: postgresql://user:SECRET@host... and
 * password=SECRET (keyword or query form) become ***. */
static void main_hide_password(const char *url, char *out, size_t cap)
{
	size_t o = 0;
	const char *scheme = strstr(url, "://");
	const char *at = scheme ? strchr(scheme + 3, '@') : NULL;
	const char *slash = scheme ? strchr(scheme + 3, '/') : NULL;
	const char *colon = scheme ? strchr(scheme + 3, ':') : NULL;
	bool userinfo = at && (!slash || at < slash) && colon && colon < at;
	for (const char *p = url; *p && o + 4 < cap;) {
		if (userinfo && p == colon + 1) {
			o += (size_t)snprintf(out + o, cap - o, "***");
			p = at;
			continue;
		}
		if (strncmp(p, "password=", 9) == 0 && (p == url || strchr(" &?", p[-1]))) {
			o += (size_t)snprintf(out + o, cap - o, "password=***");
			p += 9 + strcspn(p + 9, " &");
			continue;
		}
		out[o++] = *p++;
	}
	out[o < cap ? o : cap - 1] = '\0';
}

/* The database was unreachable at start: the server serves what needs no database and answers
 * 503 for the rest (db_hold_until_checked) while this thread checks the login role again, with
 * a back-off doubling from 250 ms up to max_ms; a refusal stops the server (exit 1). */
struct main_db_wait {
	long max_ms;
	atomic_bool stop;
	pthread_t thread;
};

static void *main_db_wait_run(void *arg)
{
	struct main_db_wait *w = arg;
	static struct log_limit limit;
	time_t since = time(NULL);
	long delay = 250;
	for (unsigned attempt = 1;; attempt++) {
		for (long slept = 0; slept < delay && !atomic_load(&w->stop); slept += 50) {
			struct timespec ts = {0, 50 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		if (atomic_load(&w->stop))
			return NULL;
		const char *why = NULL;
		enum fleet_status st = db_check_login_role(&why);
		if (st == FLEET_OK) {
			log_info("database: reachable, login role checked: serving everything");
			return NULL;
		}
		if (st != FLEET_UNAVAILABLE) {
			log_error("refusing to serve: %s", why ? why : fleet_status_name(st));
			atomic_store(&main_refused, true);
			kill(getpid(), SIGTERM);
			return NULL;
		}
		delay = delay * 2 > w->max_ms ? w->max_ms : delay * 2;
		unsigned long skipped;
		if (log_due(&limit, 60, &skipped) && attempt > 1)
			log_warn("database: still unavailable after %u tries in %lds "
				 "(DATABASE_URL); "
				 "trying every %ld ms, said once a minute",
				 attempt, (long)(time(NULL) - since), delay);
	}
}

static int main_serve(const struct cfg *cfg)
{
	struct fleet_actor actor;
	struct auth_settings aset = cfg_auth_settings(cfg);
	if (auth_init(&aset) != AUTH_OK)
		return 1;
	bool local = auth_mode() == AUTH_MODE_LOCAL;
	if (local && !main_is_loopback(cfg->listen)) {
		log_error("BIKAROO_AUTH=local acts as one configured identity: it only binds to "
			  "loopback addresses, not %s",
			  cfg->listen);
		return 1;
	}
	if (local &&
	    identity_local(cfg->local_subject, cfg->local_client, cfg->local_scopes, &actor) != 0)
		return 1;
	if (main_check_database_url(cfg->database_url, "DATABASE_URL") != 0 ||
	    main_db_configure(cfg) != 0) {
		auth_cleanup();
		return 1;
	}
	const char *why = NULL;
	enum fleet_status st = db_check_login_role(&why);
	bool db_down = st == FLEET_UNAVAILABLE;
	if (st != FLEET_OK && !db_down) {
		log_error("refusing to serve: %s", why ? why : fleet_status_name(st));
		db_shutdown();
		return 1;
	}
	if (db_down) {
		char shown[512];
		main_hide_password(cfg->database_url, shown, sizeof shown);
		log_error(
			"database: cannot connect with DATABASE_URL=%s (the reason is above). "
			"Check "
			"that PostgreSQL runs at that host and port (or socket folder), that the "
			"role and the database exist, the password, and that pg_hba.conf admits "
			"this role from here. Until it answers the server serves what needs no "
			"database and answers 503 for the rest, trying again every %ld ms at most "
			"(BIKAROO_DB_RETRY_MAX_MS); this is said again at most once a minute",
			shown, cfg->db_retry_max_ms);
		db_hold_until_checked();
	}
	struct main_product product;
	if (main_server_open(cfg, &product) != 0) {
		main_server_close(&product);
		db_shutdown();
		return 1;
	}
	/* The key ids, so that an operator sees each step of a rotation reach every instance. */
	char accepted[(KEYRING_ID_HEX + 1) * KEYRING_MAX_PREVIOUS + 1] = "";
	for (size_t i = 1; keyring_at(i); i++)
		snprintf(accepted + strlen(accepted), sizeof accepted - strlen(accepted), "%s%s",
			 i > 1 ? " " : "", keyring_at(i)->id);
	log_info("requestState: sealed with key %s%s%s", keyring_current()->id,
		 *accepted ? ", also accepted: " : "", accepted);
	if (!*cfg->state_secret)
		log_warn("BIKAROO_STATE_SECRET is not set: requestState tokens are valid on this "
			 "process only (set one shared secret for several instances)");
	/* Block the stop signals before the HTTP threads exist: they inherit the mask, so a
	 * signal can only be taken here, by sigsuspend(), never lost in a worker. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	struct http_server *srv = NULL;
	unsigned port = 0;
	struct http_settings hset = cfg_http_settings(cfg);
	hset.ready = main_ready;
	if (http_start(&hset, product.svc, local ? &actor : NULL, &srv, &port) != HTTP_OK) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		main_server_close(&product);
		db_shutdown();
		auth_cleanup();
		return 1;
	}
	/* An IPv6 address is written in brackets in a URL. */
	bool v6 = strchr(cfg->listen, ':') && cfg->listen[0] != '[';
	char host[80];
	snprintf(host, sizeof host, "%s%s%s", v6 ? "[" : "", cfg->listen, v6 ? "]" : "");
	if (db_down)
		log_warn("serving at http://%s:%u/mcp without its database for now: 503 for "
			 "what needs it",
			 host, port);
	if (local)
		log_info("serving MCP at http://%s:%u/mcp acting as subject %s via client %s "
			 "(BIKAROO_AUTH=local: no authorization)",
			 host, port, actor.subject, actor.client_id);
	else
		log_info("serving MCP at http://%s:%u/mcp for resource %s: bearer tokens from %s "
			 "required (%s)",
			 host, port, cfg->resource_uri, cfg->auth_issuer, cfg->auth);
	struct main_db_wait wait = {.max_ms = cfg->db_retry_max_ms};
	if (db_down)
		mem_thread(&wait.thread, main_db_wait_run, &wait, "database wait");
	/* systemd: READY=1 once the database and the keys are, the watchdog fed by the workers. */
	char probe[64];
	struct service_settings sset = {.notify_socket = cfg->notify_socket,
					.watchdog_usec = cfg->watchdog_usec,
					.probe_host =
						main_probe_host(cfg->listen, probe, sizeof probe),
					.probe_port = port,
					.ready = main_ready_now};
	metrics_set(&metrics_drain_limit, NULL, cfg->drain_ms / 1000);
	struct service *svc = service_start(&sset);
	while (!main_stop)
		sigsuspend(&old); /* no window between the test and the wait */
	service_stopping(svc);
	metrics_set(&metrics_drain_started, NULL, (long)time(NULL));
	if (db_down) {
		atomic_store(&wait.stop, true);
		pthread_join(wait.thread, NULL);
	}
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	log_info("stopping: draining (at most %ld ms)", cfg->drain_ms);
	long took = http_drain(srv, cfg->drain_ms);
	log_info("drained in %ld ms", took);
	service_stop(svc);
	http_stop(srv);
	main_server_close(&product);
	db_shutdown();
	auth_cleanup();
	return atomic_load(&main_refused) ? 1 : 0;
}

int main(int argc, char **argv)
{
	mem_install_jansson();
	const char *cmd = argc > 1 ? argv[1] : "help";
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return main_usage();
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("bikaroo-mcp %s (revision %s)\n", BIKAROO_VERSION, BIKAROO_REVISION);
		return 0;
	}
	if (strcmp(cmd, "config-help") == 0)
		return main_config_help(argc, argv);
	if (strcmp(cmd, "host-config") == 0)
		return main_host_config(argc, argv);
	if (strcmp(cmd, "admin") == 0)
		return main_admin(argc, argv);
	metrics_set_build(BIKAROO_VERSION, BIKAROO_REVISION);
	struct cfg cfg;
	if (cfg_load(&cfg, argc - 1, argv + 1) != CFG_OK)
		return 2;
	struct sigaction sa = {.sa_handler = main_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc;
	if (strcmp(cmd, "migrate") == 0) {
		rc = main_migrate(&cfg);
	} else if (strcmp(cmd, "serve") == 0) {
		cfg_log(&cfg);
		rc = main_serve(&cfg);
	} else if (strcmp(cmd, "stdio") == 0) {
		cfg_log(&cfg); /* stderr only: stdout carries nothing but JSON-RPC */
		rc = main_stdio(&cfg);
	} else {
		fprintf(stderr, "unknown command %s (try: bikaroo-mcp help)\n", cmd);
		rc = 2;
	}
	cfg_free(&cfg);
	return rc;
}
