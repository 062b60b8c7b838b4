/* Configuration, declared once in a table (name, environment variable, flag, type, default,
 * bounds, secret) and validated at start-up. No getenv() anywhere else. */
#ifndef BIKAROO_CFG_H
#define BIKAROO_CFG_H

#include <stdbool.h>
#include <stddef.h>

/* Rows of the configuration table at most (cfg.c checks it at build time). */
#define CFG_MAX_KEYS 96

struct cfg {
	char *settings_file;     /* BIKAROO_SETTINGS_FILE: NAME=value lines, read again on SIGHUP */
	char *listen;            /* BIKAROO_LISTEN */
	long port;               /* BIKAROO_PORT (0 = any free port) */
	char *database_url;      /* DATABASE_URL: the server's login role (not the owner) */
	char *migrate_url;       /* BIKAROO_MIGRATE_URL: the owner role, for `migrate` */
	char *db_pooler;         /* BIKAROO_DB_POOLER: "none" or "transaction" */
	char *listen_db_url;     /* BIKAROO_LISTEN_DATABASE_URL: direct connection for LISTEN */
	char *migrations_dir;    /* BIKAROO_MIGRATIONS_DIR */
	char *resources_dir;     /* BIKAROO_RESOURCES_DIR */
	char *prompts_dir;       /* BIKAROO_PROMPTS_DIR */
	long threads;            /* BIKAROO_THREADS */
	long db_connections;     /* BIKAROO_DB_CONNECTIONS: each event loop's */
	long max_body;           /* BIKAROO_MAX_BODY_BYTES */
	char *auth;              /* BIKAROO_AUTH: "jwt" (default), "introspection" or "local" */
	char *local_subject;     /* BIKAROO_LOCAL_SUBJECT */
	char *local_client;      /* BIKAROO_LOCAL_CLIENT */
	char *local_scopes;      /* BIKAROO_LOCAL_SCOPES */
	long local_any_database; /* BIKAROO_LOCAL_ALLOW_ANY_DATABASE: local mode off development */
	char *allowed_hosts;     /* BIKAROO_ALLOWED_HOSTS: extra Host names, comma-separated */
	char *allowed_origins;   /* BIKAROO_ALLOWED_ORIGINS: extra Origin hosts, comma-separated */
	char *ready_file;        /* BIKAROO_READY_FILE: the bound port is written there */
	char *log_level;         /* BIKAROO_LOG_LEVEL */
	char *log_format;        /* BIKAROO_LOG_FORMAT: text or json */
	char *metrics_listen;    /* BIKAROO_METRICS_LISTEN: ADDRESS:PORT of /metrics, "" for none */
	char *state_secret;      /* BIKAROO_STATE_SECRET: HMAC key material for requestState */
	char *state_secret_previous; /* BIKAROO_STATE_SECRET_PREVIOUS: also accepted, one per line
				      */
	char *super_url;             /* BIKAROO_SUPER_URL: a superuser, for `admin create-roles` */
	char *owner_password; /* BIKAROO_OWNER_PASSWORD: fleet_owner's, set by create-roles */
	char *app_password;   /* BIKAROO_APP_PASSWORD: fleet_app's, set by create-roles */
	/* Authorization (server/auth/auth.c). */
	char *resource_uri;          /* BIKAROO_RESOURCE_URI: canonical URI, the tokens' audience */
	char *auth_issuer;           /* BIKAROO_AUTH_ISSUER */
	char *auth_algs;             /* BIKAROO_AUTH_ALGS */
	long auth_skew;              /* BIKAROO_AUTH_CLOCK_SKEW (seconds) */
	long auth_max_lifetime;      /* BIKAROO_AUTH_MAX_LIFETIME (seconds) */
	long auth_timeout_ms;        /* BIKAROO_AUTH_TIMEOUT_MS */
	long auth_refresh_seconds;   /* BIKAROO_AUTH_REFRESH_SECONDS: key refresh cool-down */
	long auth_cache_seconds;     /* BIKAROO_AUTH_CACHE_SECONDS: validated-token cache */
	char *auth_client_id;        /* BIKAROO_AUTH_CLIENT_ID: introspection client */
	char *auth_client_secret;    /* BIKAROO_AUTH_CLIENT_SECRET */
	long auth_insecure_loopback; /* BIKAROO_AUTH_INSECURE_LOOPBACK: http to a loopback issuer */
	char *token;                 /* BIKAROO_TOKEN: stdio's bearer token */
	long confirm_ttl; /* BIKAROO_CONFIRM_TTL: seconds a confirmation request stays valid */
	long keepalive_seconds; /* BIKAROO_KEEPALIVE_SECONDS: listen-stream keep-alive (HTTP) */
	/* Slow clients and connections (server/transport/guard.h, http.c). */
	long header_timeout_ms;  /* BIKAROO_HEADER_TIMEOUT_MS */
	long body_timeout_ms;    /* BIKAROO_BODY_TIMEOUT_MS */
	long max_pending;        /* BIKAROO_MAX_PENDING_HEADERS */
	long max_connections;    /* BIKAROO_MAX_CONNECTIONS */
	long max_per_ip;         /* BIKAROO_MAX_CONNECTIONS_PER_IP */
	long drain_ms;           /* BIKAROO_DRAIN_MS: graceful stop */
	long listen_per_subject; /* BIKAROO_LISTEN_PER_SUBJECT */
	long db_retry_max_ms;    /* BIKAROO_DB_RETRY_MAX_MS: database down at start */
	/* Bounded waits and admission (common/task.h, server/transport/http_route.c). */
	long call_timeout_ms; /* BIKAROO_CALL_TIMEOUT_MS */
	long calls_max;       /* BIKAROO_CALLS_MAX */
	/* Volume limits on tools/call (server/protocol/ratelimit.h). */
	long rate_reads, rate_read_burst;   /* BIKAROO_RATE_READS, BIKAROO_RATE_READ_BURST */
	long rate_writes, rate_write_burst; /* BIKAROO_RATE_WRITES, BIKAROO_RATE_WRITE_BURST */
	long rate_client_factor;            /* BIKAROO_RATE_CLIENT_FACTOR */
	char *rate_store;                   /* BIKAROO_RATE_STORE: database or local */
	/* Traces (common/trace.h): OpenTelemetry's variables, and what may go into spans. */
	char *otel_disabled, *otel_service_name, *otel_resource, *otel_exporter;
	char *otel_sampler, *otel_sampler_arg;
	char *otel_endpoint, *otel_traces_endpoint, *otel_headers, *otel_traces_headers;
	long otel_timeout, otel_traces_timeout;
	char *otel_protocol, *otel_traces_protocol, *otel_compression, *otel_traces_compression;
	char *otel_ca, *otel_traces_ca, *otel_client_cert, *otel_traces_client_cert;
	char *otel_client_key, *otel_traces_client_key;
	long otel_bsp_delay, otel_bsp_timeout, otel_bsp_queue, otel_bsp_batch;
	long trace_personal; /* BIKAROO_TRACE_PERSONAL_DATA */
	/* systemd (common/service.h). */
	char *notify_socket; /* NOTIFY_SOCKET: "" when not run by systemd as Type=notify */
	long watchdog_usec;  /* WATCHDOG_USEC: 0 without WatchdogSec= */
	/* The file each secret setting came from (its NAME_FILE variable), by the setting's row
	 * in the table: cfg_file_of(). */
	char *from_file[CFG_MAX_KEYS];
};

enum cfg_status { CFG_OK = 0, CFG_INVALID };

struct auth_settings;
struct http_settings;
struct ratelimit_settings;

/* The settings each layer is handed, from c (strings borrowed from c). */
struct auth_settings cfg_auth_settings(const struct cfg *c);
struct http_settings cfg_http_settings(const struct cfg *c);
struct ratelimit_settings cfg_ratelimit_settings(const struct cfg *c);

/* Fills c from defaults, then the environment, then argv flags of the form --name=value
 * (argv[0] is not read). On failure, writes the reason to stderr and leaves nothing to free
 * (c is zeroed); on success the caller frees c with cfg_free. */
enum cfg_status cfg_load(struct cfg *c, int argc, char **argv) __attribute__((warn_unused_result));
/* Logs every key at debug level, secrets masked. */
void cfg_log(const struct cfg *c);
/* One row of the configuration table, as config-help prints it (server/cli/cli.c). */
struct cfg_row {
	const char *env, *flag, *def, *help;
	bool secret, reload;
};
/* The i-th row into *out; false past the last. */
bool cfg_row_at(size_t i, struct cfg_row *out);
void cfg_free(struct cfg *c);
/* Calls each(env, reloadable, ctx) for every setting whose value differs between a and b
 * (env: its variable's name; reloadable: marked [reloadable], applied again on SIGHUP). */
void cfg_each_change(const struct cfg *a, const struct cfg *b,
		     void (*each)(const char *env, bool reloadable, void *ctx), void *ctx);
/* The file that secret setting env (its variable's name) was read from (NAME_FILE), or NULL
 * when it was set otherwise or not at all. Borrowed from c. */
const char *cfg_file_of(const struct cfg *c, const char *env);

#endif
