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
#include "common/trace.h"
#include "common/version.h"
#include "domain/pg/db.h"
#include "domain/rights.h"
#include "server/cfg.h"

/* Writes s for roff: a leading dot or quote escaped, backslashes and hyphens as roff wants. */
static void cli_roff(const char *s)
{
	if (*s == '.' || *s == '\'')
		fputs("\\&", stdout);
	for (; *s; s++) {
		if (*s == '\\')
			fputs("\\e", stdout);
		else if (*s == '-')
			fputs("\\-", stdout);
		else
			putchar(*s);
	}
}

/* Writes s for a Markdown table cell: pipes escaped. */
static void cli_markdown(const char *s)
{
	for (; *s; s++) {
		if (*s == '|')
			fputs("\\|", stdout);
		else
			putchar(*s);
	}
}

int cli_print_table(const char *format)
{
	if (strcmp(format, "text") != 0 && strcmp(format, "man") != 0 &&
	    strcmp(format, "markdown") != 0) {
		fprintf(stderr, "configuration: --format must be text, man or markdown\n");
		return 2;
	}
	if (strcmp(format, "text") == 0)
		printf("%-24s %-26s %-26s %s\n", "variable", "flag", "default", "meaning");
	else if (strcmp(format, "markdown") == 0)
		printf("| variable | flag | default | meaning |\n|---|---|---|---|\n");
	struct cfg_row row, *k = &row;
	for (size_t i = 0; cfg_row_at(i, &row); i++) {
		const char *def = *k->def ? k->def : "(empty)";
		char marks[32];
		snprintf(marks, sizeof marks, "%s%s", k->secret ? " [secret]" : "",
			 k->reload ? " [reloadable]" : "");
		const char *secret = marks;
		if (strcmp(format, "man") == 0) {
			/* A .TP paragraph per setting, for the ENVIRONMENT section of a man page.
			 */
			printf(".TP\n.B ");
			cli_roff(k->env);
			printf("\n(flag \\fB\\-\\-");
			cli_roff(k->flag);
			printf("=\\fP; default \\fI");
			cli_roff(def);
			printf("\\fP)\n");
			cli_roff(k->help);
			cli_roff(secret);
			printf("\n");
		} else if (strcmp(format, "markdown") == 0) {
			printf("| `%s` | `--%s=` | `%s` | ", k->env, k->flag, def);
			cli_markdown(k->help);
			printf("%s |\n", secret);
		} else {
			char flag[64];
			snprintf(flag, sizeof flag, "--%s=", k->flag);
			printf("%-24s %-26s %-26s %s%s\n", k->env, flag, def, k->help, secret);
		}
	}
	return 0;
}

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
	return cli_print_table(format);
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

/* The traces setting's own value when it is set, else the general one (the OpenTelemetry
 * exporter's rule: OTEL_EXPORTER_OTLP_TRACES_X over OTEL_EXPORTER_OTLP_X). */
static const char *cli_otel(const char *traces, const char *general)
{
	return traces && *traces ? traces : general;
}

int cli_trace_start(const struct cfg *cfg)
{
	struct trace_settings set = {.personal_data = cfg->trace_personal != 0};
	const char *why = NULL;
	if (trace_parse_sampler(cfg->otel_sampler, cfg->otel_sampler_arg, &set, &why) != TRACE_OK) {
		log_error("configuration: %s", why);
		return -1;
	}
	const char *exporter = cfg->otel_exporter;
	if (*exporter && strcmp(exporter, "otlp") != 0 && strcmp(exporter, "none") != 0) {
		log_error("configuration: OTEL_TRACES_EXPORTER must be otlp or none");
		return -1;
	}
	const char *protocol = cli_otel(cfg->otel_traces_protocol, cfg->otel_protocol);
	if (strcmp(protocol, "http/protobuf") != 0 && strcmp(protocol, "http/json") != 0) {
		log_error(
			"configuration: OTEL_EXPORTER_OTLP_(TRACES_)PROTOCOL=%s is not served: "
			"this server sends OTLP/HTTP (http/protobuf) only, to the collector's port "
			"for HTTP (4318 by default)",
			protocol);
		return -1;
	}
	char *url = NULL;
	if (*cfg->otel_traces_endpoint)
		url = mem_strdup(cfg->otel_traces_endpoint);
	else if (*cfg->otel_endpoint) /* the base URL: signals go to its /v1/SIGNAL */
		url = mem_printf("%s%sv1/traces", cfg->otel_endpoint,
				 cfg->otel_endpoint[strlen(cfg->otel_endpoint) - 1] == '/' ? ""
											   : "/");
	bool off = strcasecmp(cfg->otel_disabled, "true") == 0 || strcmp(exporter, "none") == 0;
	if (url && !off) {
		if (strcmp(protocol, "http/json") == 0)
			log_warn("traces: http/json asked, http/protobuf sent (the same endpoint "
				 "takes both)");
		if (strcmp(cli_otel(cfg->otel_traces_compression, cfg->otel_compression), "gzip") ==
		    0)
			log_warn("traces: gzip compression asked, spans sent uncompressed");
		long timeout =
			cfg->otel_traces_timeout ? cfg->otel_traces_timeout : cfg->otel_timeout;
		set.export = (struct otlp_settings){
			.endpoint = url,
			.headers = cli_otel(cfg->otel_traces_headers, cfg->otel_headers),
			.certificate = cli_otel(cfg->otel_traces_ca, cfg->otel_ca),
			.client_key = cli_otel(cfg->otel_traces_client_key, cfg->otel_client_key),
			.client_certificate =
				cli_otel(cfg->otel_traces_client_cert, cfg->otel_client_cert),
			.timeout_ms =
				timeout < cfg->otel_bsp_timeout ? timeout : cfg->otel_bsp_timeout,
			.service_name = cfg->otel_service_name,
			.resource_attributes = cfg->otel_resource,
			.version = BIKAROO_VERSION,
			.queue_size = cfg->otel_bsp_queue,
			.batch_size = cfg->otel_bsp_batch,
			.schedule_delay_ms = cfg->otel_bsp_delay,
		};
	}
	int rc = trace_start(&set) == TRACE_OK ? 0 : -1;
	free(url);
	return rc;
}
