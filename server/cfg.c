/* The configuration table: every setting's name, variable, flag, default, bounds and secrecy. */
#include "cfg.h"

#include <errno.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "server/auth/auth.h"
#include "server/protocol/ratelimit.h"
#include "server/transport/http.h"

enum cfg_type { CFG_STR, CFG_LONG };

struct cfg_key {
	const char *flag; /* --flag=value */
	const char *env;
	enum cfg_type type;
	size_t offset;
	const char *def;
	long min, max;
	bool secret;
	const char *help;
	bool empty_is_value; /* NAME= (set, empty) is this setting's "none", not its default */
	bool reload;         /* read again and applied on SIGHUP (serve) */
};

#define CFG_S(flag, env, field, def, secret, help)                                                 \
	{                                                                                          \
		flag, env, CFG_STR, offsetof(struct cfg, field), def, 0, 0, secret, help, false,   \
			false                                                                      \
	}
/* A string that SIGHUP reloads (serve_reload in server/cli/serve.c applies it). */
#define CFG_SR(flag, env, field, def, secret, help)                                                \
	{                                                                                          \
		flag, env, CFG_STR, offsetof(struct cfg, field), def, 0, 0, secret, help, false,   \
			true                                                                       \
	}
/* A string whose empty value means none (BIKAROO_METRICS_LISTEN=: no metrics listener). */
#define CFG_SE(flag, env, field, def, help)                                                        \
	{                                                                                          \
		flag, env, CFG_STR, offsetof(struct cfg, field), def, 0, 0, false, help, true,     \
			false                                                                      \
	}
#define CFG_L(flag, env, field, def, min, max, help)                                               \
	{                                                                                          \
		flag, env, CFG_LONG, offsetof(struct cfg, field), def, min, max, false, help,      \
			false, false                                                               \
	}

/* Where the documents, prompts and migrations are found by default: an installed binary is built
 * with -DBIKAROO_DATADIR='"/usr/share/bikaroo-mcp/"' (Makefile: install, deb); a source-tree
 * build reads them relative to the working directory (make run, the tests). */
#ifndef BIKAROO_DATADIR
#define BIKAROO_DATADIR ""
#endif

static const struct cfg_key cfg_keys[] = {
	CFG_S("listen", "BIKAROO_LISTEN", listen, "127.0.0.1", false,
	      "IPv4 or IPv6 address to bind the HTTP transport to (127.0.0.1, ::1, [::1])"),
	CFG_L("port", "BIKAROO_PORT", port, "8080", 0, 65535, "TCP port (0 picks a free one)"),
	CFG_S("database-url", "DATABASE_URL", database_url, "", true,
	      "libpq conninfo of the server's login role (non-owner, no BYPASSRLS)"),
	CFG_S("db-pooler", "BIKAROO_DB_POOLER", db_pooler, "none", false,
	      "none, or transaction: DATABASE_URL goes through a transaction-pooling PgBouncer "
	      "(unnamed statements only; needs BIKAROO_LISTEN_DATABASE_URL)"),
	CFG_S("listen-database-url", "BIKAROO_LISTEN_DATABASE_URL", listen_db_url, "", true,
	      "libpq conninfo of a direct connection (no transaction pooler) for the change "
	      "feed's LISTEN (default: DATABASE_URL)"),
	CFG_S("migrate-url", "BIKAROO_MIGRATE_URL", migrate_url, "", true,
	      "libpq conninfo of the owner role, used by `migrate` (default: DATABASE_URL)"),
	CFG_S("super-url", "BIKAROO_SUPER_URL", super_url, "", true,
	      "libpq conninfo of a superuser, used by `admin create-roles` only"),
	CFG_S("owner-password", "BIKAROO_OWNER_PASSWORD", owner_password, "", true,
	      "`admin create-roles`: the password it gives fleet_owner (empty: none set)"),
	CFG_S("app-password", "BIKAROO_APP_PASSWORD", app_password, "", true,
	      "`admin create-roles`: the password it gives fleet_app (empty: none set)"),
	CFG_S("migrations-dir", "BIKAROO_MIGRATIONS_DIR", migrations_dir,
	      BIKAROO_DATADIR "migrations", false, "directory of NNNN_name.sql migration files"),
	CFG_S("resources-dir", "BIKAROO_RESOURCES_DIR", resources_dir, BIKAROO_DATADIR "resources",
	      false, "directory of documents served as resources"),
	CFG_S("prompts-dir", "BIKAROO_PROMPTS_DIR", prompts_dir, BIKAROO_DATADIR "prompts", false,
	      "directory of prompt templates"),
	CFG_L("threads", "BIKAROO_THREADS", threads, "2", 1, 64,
	      "event loops, a thread each (one per core): each accepts and reads its own HTTP "
	      "connections and runs their calls, which wait for the database without holding it"),
	CFG_L("db-connections", "BIKAROO_DB_CONNECTIONS", db_connections, "2", 1, 32,
	      "database connections of each event loop (stdio: of its one loop): a loop's reads "
	      "go in batches of up to 64 calls, one transaction each, one batch in the database "
	      "at a time (a second on a free connection for a full batch, or once the first has "
	      "been out 5 ms); writes take any connection but the last free one"),
	CFG_L("max-body-bytes", "BIKAROO_MAX_BODY_BYTES", max_body, "1048576", 1024, 16777216,
	      "largest accepted request body (larger: 413)"),
	CFG_S("auth", "BIKAROO_AUTH", auth, "jwt", false,
	      "authorization: jwt (RFC 9068 tokens), introspection (RFC 7662) or local (no "
	      "authorization: a configured identity, loopback only)"),
	CFG_S("local-subject", "BIKAROO_LOCAL_SUBJECT", local_subject, "marie", false,
	      "auth=local: the subject the server acts as"),
	CFG_S("local-client", "BIKAROO_LOCAL_CLIENT", local_client, "customer-care-assistant",
	      false, "auth=local: the client application the server acts through"),
	CFG_S("local-scopes", "BIKAROO_LOCAL_SCOPES", local_scopes, "fleet:read fleet:report",
	      false, "auth=local: the scopes granted, space-separated"),
	CFG_L("local-allow-any-database", "BIKAROO_LOCAL_ALLOW_ANY_DATABASE", local_any_database,
	      "0", 0, 1,
	      "auth=local: 1 lets the configured identity act without a token on a database "
	      "not marked as a development one (fleet.settings environment), over HTTP and stdio "
	      "alike, said at every start; 0 refuses to start there"),
	CFG_S("allowed-hosts", "BIKAROO_ALLOWED_HOSTS", allowed_hosts, "", false,
	      "Host names accepted besides the loopback forms, comma-separated"),
	CFG_S("allowed-origins", "BIKAROO_ALLOWED_ORIGINS", allowed_origins, "", false,
	      "Origin host names accepted besides the loopback forms, comma-separated"),
	CFG_S("ready-file", "BIKAROO_READY_FILE", ready_file, "", false,
	      "when set, the bound port is written to this file once serving"),
	CFG_SR("log-level", "BIKAROO_LOG_LEVEL", log_level, "info", false,
	       "debug, info, warn or error"),
	CFG_SR("log-format", "BIKAROO_LOG_FORMAT", log_format, "text", false,
	       "text (readable lines) or json (one JSON object per line)"),
	CFG_SE("metrics-listen", "BIKAROO_METRICS_LISTEN", metrics_listen, "127.0.0.1:9464",
	       "ADDRESS:PORT of GET /metrics (Prometheus text format; [::1]:9464 for IPv6; empty: "
	       "no metrics listener)"),
	CFG_SR("state-secret", "BIKAROO_STATE_SECRET", state_secret, "", true,
	       "at least 32 characters shared by all instances: protects requestState and list "
	       "cursors (empty: a random key, valid on this process only)"),
	CFG_SR("state-secret-previous", "BIKAROO_STATE_SECRET_PREVIOUS", state_secret_previous, "",
	       true,
	       "secrets also accepted for requestState, one per line (at most 4): the previous one "
	       "during a rotation, or the next one before it becomes BIKAROO_STATE_SECRET"),
	CFG_S("resource-uri", "BIKAROO_RESOURCE_URI", resource_uri, "", false,
	      "this server's canonical URI (https://host/mcp): the audience tokens must name"),
	CFG_S("auth-issuer", "BIKAROO_AUTH_ISSUER", auth_issuer, "", false,
	      "the authorization server's issuer identifier (https URL)"),
	CFG_S("auth-algs", "BIKAROO_AUTH_ALGS", auth_algs, "RS256 ES256", false,
	      "JWT signing algorithms accepted (RS256, ES256)"),
	CFG_L("auth-clock-skew", "BIKAROO_AUTH_CLOCK_SKEW", auth_skew, "60", 0, 300,
	      "seconds of clock skew tolerated on exp, nbf and iat"),
	CFG_L("auth-max-lifetime", "BIKAROO_AUTH_MAX_LIFETIME", auth_max_lifetime, "3600", 0,
	      31622400,
	      "longest token lifetime accepted, in seconds: exp - iat (a JWT needs iat; exp - now "
	      "for an introspection answer without it); "
	      "0: any"),
	CFG_L("auth-timeout-ms", "BIKAROO_AUTH_TIMEOUT_MS", auth_timeout_ms, "3000", 100, 30000,
	      "timeout of each call to the authorization server"),
	CFG_L("auth-refresh-seconds", "BIKAROO_AUTH_REFRESH_SECONDS", auth_refresh_seconds, "30", 0,
	      3600, "least seconds between two key-set fetches (unknown kid, or issuer down)"),
	CFG_L("auth-cache-seconds", "BIKAROO_AUTH_CACHE_SECONDS", auth_cache_seconds, "30", 0, 600,
	      "validated tokens (JWT or introspection) are reused this long at most"),
	CFG_S("auth-client-id", "BIKAROO_AUTH_CLIENT_ID", auth_client_id, "", false,
	      "auth=introspection: the server's own client id at the issuer"),
	CFG_S("auth-client-secret", "BIKAROO_AUTH_CLIENT_SECRET", auth_client_secret, "", true,
	      "auth=introspection: that client's secret"),
	CFG_L("auth-insecure-loopback", "BIKAROO_AUTH_INSECURE_LOOPBACK", auth_insecure_loopback,
	      "0", 0, 1, "1 allows plain http to an issuer on 127.0.0.1 (tests, development)"),
	CFG_S("token", "BIKAROO_TOKEN", token, "", true,
	      "stdio: the access token whose principal the server acts as"),
	CFG_L("confirm-ttl", "BIKAROO_CONFIRM_TTL", confirm_ttl, "300", 1, 3600,
	      "seconds a server-side confirmation (input_required requestState) stays valid"),
	CFG_L("header-timeout-ms", "BIKAROO_HEADER_TIMEOUT_MS", header_timeout_ms, "10000", 100,
	      600000,
	      "a request's headers must be complete this long after it began (or after the "
	      "previous answer on a kept-alive connection), whatever the rate they arrive at"),
	CFG_L("body-timeout-ms", "BIKAROO_BODY_TIMEOUT_MS", body_timeout_ms, "30000", 100, 600000,
	      "a request's body must be complete this long after its headers"),
	CFG_L("max-pending-headers", "BIKAROO_MAX_PENDING_HEADERS", max_pending, "256", 0, 100000,
	      "connections still sending their headers at most (no token checked yet); past it the "
	      "oldest is told 503 + Retry-After and closed (0, or not below "
	      "BIKAROO_MAX_CONNECTIONS: a quarter of it)"),
	CFG_L("max-connections", "BIKAROO_MAX_CONNECTIONS", max_connections, "1024", 16, 100000,
	      "HTTP connections at once (the descriptor limit is raised to fit); past its share "
	      "an event loop answers a new connection 503 + Retry-After on its request line"),
	CFG_L("max-connections-per-ip", "BIKAROO_MAX_CONNECTIONS_PER_IP", max_per_ip, "512", 0,
	      100000,
	      "HTTP connections from one address at once, past it 429 + Retry-After (0: no limit; "
	      "behind a proxy every connection comes from the proxy)"),
	CFG_L("listen-per-subject", "BIKAROO_LISTEN_PER_SUBJECT", listen_per_subject, "32", 0, 256,
	      "subscriptions/listen streams one subject may hold of the server's 256 (HTTP; past "
	      "it 429, a full server 503; 0: no share)"),
	CFG_L("drain-ms", "BIKAROO_DRAIN_MS", drain_ms, "10000", 0, 600000,
	      "on SIGTERM/SIGINT: milliseconds at most to answer the requests already begun "
	      "(new ones get 503) before exiting"),
	CFG_L("db-retry-max-ms", "BIKAROO_DB_RETRY_MAX_MS", db_retry_max_ms, "5000", 100, 600000,
	      "database unreachable at start: the longest wait between two tries (the back-off "
	      "doubles from 250 ms up to it); meanwhile what needs it gets 503"),
	CFG_L("call-timeout-ms", "BIKAROO_CALL_TIMEOUT_MS", call_timeout_ms, "5000", 100, 600000,
	      "a call's deadline: no database statement is waited for past it (the server aborts "
	      "it too: statement_timeout; a write's a reserve before, for its audit row), and the "
	      "call is answered 503 + Retry-After"),
	CFG_L("calls-max", "BIKAROO_CALLS_MAX", calls_max, "64", 1, 100000,
	      "HTTP calls under way at once, shared equally among the event loops (a call "
	      "waiting for the database holds no thread); past its loop's share a call waits "
	      "for a slot only if, at the pace its loop finishes calls, it would start within "
	      "20 ms, 1 s on a connection kept alive (a share may always wait), else it is "
	      "answered 503 + Retry-After at once (nothing done, on its headers, its connection "
	      "kept); waiting calls go first "
	      "come, first served, newest first once the wait has stood for 100 ms, and any "
	      "that waited 1 s is answered 503. It bounds an admitted call's wait under "
	      "overload"),
	CFG_L("rate-reads", "BIKAROO_RATE_READS", rate_reads, "1200", 0, 1000000,
	      "reads of the business per minute and subject: read-only tools/call, resources/read "
	      "of an object, completion, each URI a listen honours (0: no limit); past it 429 + "
	      "Retry-After"),
	CFG_L("rate-read-burst", "BIKAROO_RATE_READ_BURST", rate_read_burst, "400", 1, 1000000,
	      "reads of the business a subject may make at once before the per-minute rate "
	      "applies"),
	CFG_L("rate-writes", "BIKAROO_RATE_WRITES", rate_writes, "300", 0, 1000000,
	      "state-changing tools/call per minute and subject (0: no limit)"),
	CFG_L("rate-write-burst", "BIKAROO_RATE_WRITE_BURST", rate_write_burst, "100", 1, 1000000,
	      "state-changing tools/call a subject may make at once"),
	CFG_L("rate-client-factor", "BIKAROO_RATE_CLIENT_FACTOR", rate_client_factor, "10", 1,
	      10000,
	      "a client application's budgets (all its subjects together) are this many times a "
	      "subject's"),
	CFG_S("notify-socket", "NOTIFY_SOCKET", notify_socket, "", false,
	      "set by systemd for a Type=notify unit: where READY=1, STOPPING=1 and WATCHDOG=1 "
	      "are sent (serve)"),
	CFG_L("watchdog-usec", "WATCHDOG_USEC", watchdog_usec, "0", 0, 3600000000L,
	      "set by systemd from WatchdogSec=: WATCHDOG=1 every half of it while the HTTP "
	      "event loops answer GET /healthz (0: no watchdog)"),
	CFG_S("rate-store", "BIKAROO_RATE_STORE", rate_store, "database", false,
	      "where the tools/call budgets live: database (shared by every instance on the same "
	      "database, leases of up to 16 calls; local budgets while it fails) or local (each "
	      "instance its own)"),
	CFG_L("keepalive-seconds", "BIKAROO_KEEPALIVE_SECONDS", keepalive_seconds, "15", 1, 300,
	      "seconds between keep-alives on subscriptions/listen streams (HTTP); streams whose "
	      "token expired end on the next one"),
	/* Traces: the OpenTelemetry SDK's own variables (its environment specification), read as
	 * every other setting (docs/operating.md, "Traces"). */
	CFG_S("otel-sdk-disabled", "OTEL_SDK_DISABLED", otel_disabled, "false", false,
	      "true turns traces off whatever else is set"),
	CFG_S("otel-service-name", "OTEL_SERVICE_NAME", otel_service_name, "bikaroo-mcp", false,
	      "service.name of the spans"),
	CFG_S("otel-resource-attributes", "OTEL_RESOURCE_ATTRIBUTES", otel_resource, "", false,
	      "more resource attributes of the spans: key=value,... (values percent-encoded)"),
	CFG_S("otel-traces-exporter", "OTEL_TRACES_EXPORTER", otel_exporter, "otlp", false,
	      "otlp, or none (no traces)"),
	CFG_S("otel-traces-sampler", "OTEL_TRACES_SAMPLER", otel_sampler, "parentbased_always_on",
	      false,
	      "parentbased_always_on, parentbased_always_off, parentbased_traceidratio, "
	      "always_on, always_off or traceidratio"),
	CFG_S("otel-traces-sampler-arg", "OTEL_TRACES_SAMPLER_ARG", otel_sampler_arg, "", false,
	      "the traceidratio samplers' share of new traces, 0 to 1 (empty: 1)"),
	CFG_S("otel-exporter-otlp-endpoint", "OTEL_EXPORTER_OTLP_ENDPOINT", otel_endpoint, "",
	      false,
	      "the collector's OTLP/HTTP base URL (spans go to its /v1/traces); empty with "
	      "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT empty: no traces"),
	CFG_S("otel-exporter-otlp-traces-endpoint", "OTEL_EXPORTER_OTLP_TRACES_ENDPOINT",
	      otel_traces_endpoint, "", false, "the collector's traces URL, used as it is"),
	CFG_S("otel-exporter-otlp-headers", "OTEL_EXPORTER_OTLP_HEADERS", otel_headers, "", true,
	      "headers of each export: key=value,... (values percent-encoded)"),
	CFG_S("otel-exporter-otlp-traces-headers", "OTEL_EXPORTER_OTLP_TRACES_HEADERS",
	      otel_traces_headers, "", true,
	      "headers of each traces export (empty: OTEL_EXPORTER_OTLP_HEADERS)"),
	CFG_L("otel-exporter-otlp-timeout", "OTEL_EXPORTER_OTLP_TIMEOUT", otel_timeout, "10000", 1,
	      600000, "milliseconds an export may take"),
	CFG_L("otel-exporter-otlp-traces-timeout", "OTEL_EXPORTER_OTLP_TRACES_TIMEOUT",
	      otel_traces_timeout, "0", 0, 600000,
	      "milliseconds a traces export may take (0: OTEL_EXPORTER_OTLP_TIMEOUT)"),
	CFG_S("otel-exporter-otlp-protocol", "OTEL_EXPORTER_OTLP_PROTOCOL", otel_protocol,
	      "http/protobuf", false, "http/protobuf (http/json is sent as http/protobuf)"),
	CFG_S("otel-exporter-otlp-traces-protocol", "OTEL_EXPORTER_OTLP_TRACES_PROTOCOL",
	      otel_traces_protocol, "", false,
	      "the traces export's (empty: OTEL_EXPORTER_OTLP_PROTOCOL)"),
	CFG_S("otel-exporter-otlp-compression", "OTEL_EXPORTER_OTLP_COMPRESSION", otel_compression,
	      "none", false, "none (gzip is sent uncompressed, with a warning)"),
	CFG_S("otel-exporter-otlp-traces-compression", "OTEL_EXPORTER_OTLP_TRACES_COMPRESSION",
	      otel_traces_compression, "", false,
	      "the traces export's (empty: OTEL_EXPORTER_OTLP_COMPRESSION)"),
	CFG_S("otel-exporter-otlp-certificate", "OTEL_EXPORTER_OTLP_CERTIFICATE", otel_ca, "",
	      false, "PEM file of the CAs the collector's https certificate is checked against"),
	CFG_S("otel-exporter-otlp-traces-certificate", "OTEL_EXPORTER_OTLP_TRACES_CERTIFICATE",
	      otel_traces_ca, "", false, "the traces export's (empty: the one above)"),
	CFG_S("otel-exporter-otlp-client-certificate", "OTEL_EXPORTER_OTLP_CLIENT_CERTIFICATE",
	      otel_client_cert, "", false, "PEM file of this client's certificate (mutual TLS)"),
	CFG_S("otel-exporter-otlp-traces-client-certificate",
	      "OTEL_EXPORTER_OTLP_TRACES_CLIENT_CERTIFICATE", otel_traces_client_cert, "", false,
	      "the traces export's (empty: the one above)"),
	CFG_S("otel-exporter-otlp-client-key", "OTEL_EXPORTER_OTLP_CLIENT_KEY", otel_client_key, "",
	      false, "PEM file of this client's private key (mutual TLS)"),
	CFG_S("otel-exporter-otlp-traces-client-key", "OTEL_EXPORTER_OTLP_TRACES_CLIENT_KEY",
	      otel_traces_client_key, "", false, "the traces export's (empty: the one above)"),
	CFG_L("otel-bsp-schedule-delay", "OTEL_BSP_SCHEDULE_DELAY", otel_bsp_delay, "5000", 1,
	      600000, "milliseconds at most a span waits for its batch to fill"),
	CFG_L("otel-bsp-export-timeout", "OTEL_BSP_EXPORT_TIMEOUT", otel_bsp_timeout, "30000", 1,
	      600000, "milliseconds an export may take at most, whatever the OTLP timeout"),
	CFG_L("otel-bsp-max-queue-size", "OTEL_BSP_MAX_QUEUE_SIZE", otel_bsp_queue, "2048", 64,
	      65536,
	      "spans waiting for export at most (rounded up to a power of two); past it new spans "
	      "are dropped and counted"),
	CFG_L("otel-bsp-max-export-batch-size", "OTEL_BSP_MAX_EXPORT_BATCH_SIZE", otel_bsp_batch,
	      "512", 1, 65536, "spans in one export at most"),
	CFG_L("trace-personal-data", "BIKAROO_TRACE_PERSONAL_DATA", trace_personal, "0", 0, 1,
	      "1 puts personal data into spans: the subject (enduser.id), the client's address, "
	      "URIs naming a bike or a case, database error messages; 0 leaves them out"),
	CFG_S("settings-file", "BIKAROO_SETTINGS_FILE", settings_file, "", false,
	      "a file of NAME=value lines (a systemd EnvironmentFile: # comments, optional quotes) "
	      "whose settings win over the environment's; serve reads it again on SIGHUP"),
};

#define CFG_NKEYS (sizeof cfg_keys / sizeof cfg_keys[0])
_Static_assert(CFG_NKEYS <= CFG_MAX_KEYS, "raise CFG_MAX_KEYS (cfg.h) to the table's rows");

static enum cfg_status cfg_set(struct cfg *c, const struct cfg_key *k, const char *value,
			       const char *source)
{
	void *field = (char *)c + k->offset;
	if (k->type == CFG_STR) {
		char **s = field;
		free(*s);
		*s = mem_strdup(value);
		return CFG_OK;
	}
	char *end = NULL;
	errno = 0;
	long v = strtol(value, &end, 10);
	if (errno || end == value || *end != '\0' || v < k->min || v > k->max) {
		fprintf(stderr, "configuration: %s from %s must be an integer in [%ld, %ld]\n",
			k->env, source, k->min, k->max);
		return CFG_INVALID;
	}
	*(long *)field = v;
	return CFG_OK;
}

#define CFG_SECRET_FILE_MAX 65536

/* A secret setting's value from the file its NAME_FILE variable names (Docker and systemd
 * credentials): the whole file, less trailing CR/LF; set in c (from 'var'). */
static enum cfg_status cfg_set_from_file(struct cfg *c, const struct cfg_key *k, const char *var,
					 const char *path)
{
	enum cfg_status st = CFG_INVALID;
	char *buf = mem_alloc(CFG_SECRET_FILE_MAX + 1);
	FILE *f = fopen(path, "rb");
	if (!f) {
		fprintf(stderr, "configuration: %s: cannot read %s: %s\n", var, path,
			strerror(errno));
		goto out;
	}
	size_t n = fread(buf, 1, CFG_SECRET_FILE_MAX + 1, f);
	if (ferror(f) || n > CFG_SECRET_FILE_MAX) {
		fprintf(stderr, "configuration: %s: %s is unreadable or larger than %d bytes\n",
			var, path, CFG_SECRET_FILE_MAX);
		goto out;
	}
	while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == '\r'))
		n--;
	buf[n] = '\0';
	if (n == 0 || memchr(buf, '\0', n)) {
		fprintf(stderr, "configuration: %s: %s is empty or holds a NUL byte\n", var, path);
		goto out;
	}
	st = cfg_set(c, k, buf, var);
	if (st == CFG_OK) {
		free(c->from_file[k - cfg_keys]);
		c->from_file[k - cfg_keys] = mem_strdup(path);
	}
out:
	if (f)
		fclose(f);
	free(buf);
	return st;
}

/* The row of the setting whose variable is name[0..n) (NULL: none); *file set when the name is
 * a secret's NAME_FILE. */
static const struct cfg_key *cfg_key_named(const char *name, size_t n, bool *file)
{
	*file = false;
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		size_t e = strlen(cfg_keys[i].env);
		if (n == e && strncmp(name, cfg_keys[i].env, n) == 0)
			return &cfg_keys[i];
		if (cfg_keys[i].secret && n == e + 5 && strncmp(name, cfg_keys[i].env, e) == 0 &&
		    strncmp(name + e, "_FILE", 5) == 0) {
			*file = true;
			return &cfg_keys[i];
		}
	}
	return NULL;
}

/* A value of the settings file, in place: surrounding blanks gone, then one pair of quotes
 * (inside double quotes, a backslash takes the next character as it is). */
static char *cfg_unquote(char *v)
{
	v += strspn(v, " \t");
	size_t n = strlen(v);
	while (n > 0 && (v[n - 1] == ' ' || v[n - 1] == '\t'))
		v[--n] = '\0';
	if (n < 2 || (v[0] != '"' && v[0] != '\'') || v[n - 1] != v[0])
		return v;
	char q = v[0], *o = v;
	for (char *p = v + 1; p < v + n - 1; p++) {
		if (q == '"' && *p == '\\' && p + 1 < v + n - 1)
			p++;
		*o++ = *p;
	}
	*o = '\0';
	return v;
}

#define CFG_SETTINGS_FILE_MAX (1L << 20)

/* The settings of file path (BIKAROO_SETTINGS_FILE), over those of the environment: NAME=value
 * lines, blank lines and # or ; comments; a secret's NAME_FILE reads that file. A name that
 * is no setting is left to the environment, unless it starts with BIKAROO_ (a typo). */
static enum cfg_status cfg_read_file(struct cfg *c, const char *path)
{
	enum cfg_status st = CFG_INVALID;
	unsigned char given[CFG_NKEYS] = {0}; /* 1: NAME, 2: NAME_FILE, by this file */
	char *text = mem_alloc(CFG_SETTINGS_FILE_MAX + 1), where[300];
	FILE *f = fopen(path, "rb");
	size_t n = f ? fread(text, 1, CFG_SETTINGS_FILE_MAX + 1, f) : 0;
	if (!f || ferror(f) || n > CFG_SETTINGS_FILE_MAX || memchr(text, '\0', n)) {
		fprintf(stderr, "configuration: BIKAROO_SETTINGS_FILE=%s: %s\n", path,
			!f ? strerror(errno) : "unreadable, larger than 1 MiB or not text");
		goto out;
	}
	text[n] = '\0';
	unsigned long line = 0;
	for (char *l = text, *next; l; l = next) {
		next = strchr(l, '\n');
		if (next)
			*next++ = '\0';
		line++;
		l[strcspn(l, "\r")] = '\0';
		l += strspn(l, " \t");
		if (!*l || *l == '#' || *l == ';')
			continue;
		snprintf(where, sizeof where, "%s:%lu", path, line);
		char *eq = strchr(l, '=');
		size_t nlen = eq ? strcspn(l, " \t=") : 0;
		if (!eq || nlen == 0 || l + nlen + strspn(l + nlen, " \t") != eq) {
			fprintf(stderr, "configuration: %s: not NAME=value\n", where);
			goto out;
		}
		bool file;
		const struct cfg_key *k = cfg_key_named(l, nlen, &file);
		if (!k && strncmp(l, "BIKAROO_", 8) == 0) {
			fprintf(stderr,
				"configuration: %s: %.*s is no setting (bikaroo-mcp help "
				"lists them)\n",
				where, (int)nlen, l);
			goto out;
		}
		char *v = cfg_unquote(eq + 1);
		if (!k || (!*v && !k->empty_is_value))
			continue; /* not ours, or empty: as in the environment */
		size_t i = (size_t)(k - cfg_keys);
		if (given[i] && given[i] != (file ? 2 : 1)) {
			fprintf(stderr, "configuration: %s: set %s or %s_FILE, not both\n", where,
				k->env, k->env);
			goto out;
		}
		given[i] = file ? 2 : 1;
		if (file ? cfg_set_from_file(c, k, where, v) : cfg_set(c, k, v, where))
			goto out;
		if (!file) {
			free(c->from_file[i]);
			c->from_file[i] = NULL;
		}
	}
	st = CFG_OK;
out:
	if (f)
		fclose(f);
	free(text);
	return st;
}

/* The value of flag --name=VALUE in argv (the last one), or NULL. */
static const char *cfg_flag(int argc, char **argv, const char *name)
{
	const char *v = NULL;
	size_t n = strlen(name);
	for (int a = 1; a < argc; a++)
		if (strncmp(argv[a], "--", 2) == 0 && strncmp(argv[a] + 2, name, n) == 0 &&
		    argv[a][2 + n] == '=')
			v = argv[a] + 3 + n;
	return v;
}

static enum cfg_status cfg_read(struct cfg *c, int argc, char **argv)
{
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		if (cfg_set(c, k, k->def, "default") != CFG_OK)
			return CFG_INVALID;
		const char *env = getenv(k->env);
		if (env && (*env || k->empty_is_value) && cfg_set(c, k, env, k->env) != CFG_OK)
			return CFG_INVALID;
		if (!k->secret)
			continue;
		/* A secret may come from a file instead: NAME_FILE (never both). */
		char var[64];
		snprintf(var, sizeof var, "%s_FILE", k->env);
		const char *file = getenv(var);
		if (file && *file && env && *env) {
			fprintf(stderr, "configuration: set %s or %s, not both\n", k->env, var);
			return CFG_INVALID;
		}
		if (file && *file && cfg_set_from_file(c, k, var, file) != CFG_OK)
			return CFG_INVALID;
	}
	const char *settings = cfg_flag(argc, argv, "settings-file");
	if (!settings)
		settings = c->settings_file;
	if (*settings && cfg_read_file(c, settings) != CFG_OK)
		return CFG_INVALID;
	for (int a = 1; a < argc; a++) {
		const char *arg = argv[a];
		if (strncmp(arg, "--", 2) != 0)
			continue;
		const char *eq = strchr(arg, '=');
		size_t n = eq ? (size_t)(eq - arg - 2) : strlen(arg) - 2;
		size_t i;
		for (i = 0; i < CFG_NKEYS; i++)
			if (strlen(cfg_keys[i].flag) == n &&
			    strncmp(arg + 2, cfg_keys[i].flag, n) == 0)
				break;
		if (i == CFG_NKEYS || !eq) {
			fprintf(stderr, "configuration: unknown or valueless flag %s\n", arg);
			return CFG_INVALID;
		}
		if (cfg_set(c, &cfg_keys[i], eq + 1, "command line") != CFG_OK)
			return CFG_INVALID;
		free(c->from_file[i]); /* the flag wins over a NAME_FILE */
		c->from_file[i] = NULL;
	}
	if (strcmp(c->auth, "local") != 0 && strcmp(c->auth, "jwt") != 0 &&
	    strcmp(c->auth, "introspection") != 0) {
		fprintf(stderr,
			"configuration: BIKAROO_AUTH must be jwt, introspection or local\n");
		return CFG_INVALID;
	}
	enum log_level lvl;
	if (log_parse_level(c->log_level, &lvl) != 0) {
		fprintf(stderr,
			"configuration: BIKAROO_LOG_LEVEL must be debug, info, warn or error\n");
		return CFG_INVALID;
	}
	log_set_level(lvl);
	if (strcmp(c->log_format, "text") != 0 && strcmp(c->log_format, "json") != 0) {
		fprintf(stderr, "configuration: BIKAROO_LOG_FORMAT must be text or json\n");
		return CFG_INVALID;
	}
	log_set_json(strcmp(c->log_format, "json") == 0);
	return CFG_OK;
}

void cfg_log(const struct cfg *c)
{
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		const void *field = (const char *)c + k->offset;
		if (k->type == CFG_LONG)
			log_debug("config %s=%ld", k->env, *(const long *)field);
		else if (k->secret)
			log_debug("config %s=%s", k->env,
				  **(char *const *)field ? "(set, hidden)" : "");
		else
			log_debug("config %s=%s", k->env, *(char *const *)field);
	}
}

bool cfg_row_at(size_t i, struct cfg_row *out)
{
	if (i >= CFG_NKEYS)
		return false;
	const struct cfg_key *k = &cfg_keys[i];
	*out = (struct cfg_row){k->env, k->flag, k->def, k->help, k->secret, k->reload};
	return true;
}

enum cfg_status cfg_load(struct cfg *c, int argc, char **argv)
{
	memset(c, 0, sizeof *c);
	enum cfg_status st = cfg_read(c, argc, argv);
	if (st != CFG_OK)
		cfg_free(c);
	return st;
}

void cfg_free(struct cfg *c)
{
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		if (cfg_keys[i].type == CFG_STR)
			free(*(char **)((char *)c + cfg_keys[i].offset));
		free(c->from_file[i]);
	}
	memset(c, 0, sizeof *c);
}

void cfg_each_change(const struct cfg *a, const struct cfg *b,
		     void (*each)(const char *env, bool reloadable, void *ctx), void *ctx)
{
	for (size_t i = 0; i < CFG_NKEYS; i++) {
		const struct cfg_key *k = &cfg_keys[i];
		const void *x = (const char *)a + k->offset, *y = (const char *)b + k->offset;
		bool same = k->type == CFG_LONG ? *(const long *)x == *(const long *)y
						: strcmp(*(char *const *)x, *(char *const *)y) == 0;
		if (!same)
			each(k->env, k->reload, ctx);
	}
}

const char *cfg_file_of(const struct cfg *c, const char *env)
{
	for (size_t i = 0; i < CFG_NKEYS; i++)
		if (strcmp(cfg_keys[i].env, env) == 0)
			return c->from_file[i];
	return NULL;
}

struct auth_settings cfg_auth_settings(const struct cfg *c)
{
	return (struct auth_settings){
		.mode = c->auth,
		.issuer = c->auth_issuer,
		.resource_uri = c->resource_uri,
		.algs = c->auth_algs,
		.client_id = c->auth_client_id,
		.client_secret = c->auth_client_secret,
		.skew = c->auth_skew,
		.max_lifetime = c->auth_max_lifetime,
		.timeout_ms = c->auth_timeout_ms,
		.refresh_seconds = c->auth_refresh_seconds,
		.cache_seconds = c->auth_cache_seconds,
		.insecure_loopback = c->auth_insecure_loopback != 0,
	};
}

struct http_settings cfg_http_settings(const struct cfg *c)
{
	return (struct http_settings){
		.listen = c->listen,
		.port = c->port,
		.threads = c->threads,
		.max_body = (size_t)c->max_body,
		.allowed_hosts = c->allowed_hosts,
		.allowed_origins = c->allowed_origins,
		.ready_file = c->ready_file,
		.keepalive_s = c->keepalive_seconds,
		.header_timeout_ms = c->header_timeout_ms,
		.metrics_listen = c->metrics_listen,
		.body_timeout_ms = c->body_timeout_ms,
		.max_pending = c->max_pending,
		.max_connections = c->max_connections,
		.max_per_ip = c->max_per_ip,
		.listen_per_subject = c->listen_per_subject,
		.call_timeout_ms = c->call_timeout_ms,
		.calls_max = c->calls_max,
	};
}

struct ratelimit_settings cfg_ratelimit_settings(const struct cfg *c)
{
	return (struct ratelimit_settings){
		.read_per_minute = c->rate_reads,
		.read_burst = c->rate_read_burst,
		.write_per_minute = c->rate_writes,
		.write_burst = c->rate_write_burst,
		.client_factor = c->rate_client_factor,
	};
}
