/* Integration-test harness: starts the real server binary against the real PostgreSQL that
 * scripts/test.sh prepared, and talks to it over HTTP with libcurl and to the database with libpq.
 */
#ifndef BIKAROO_HARNESS_H
#define BIKAROO_HARNESS_H

#include <jansson.h>
#include <stdbool.h>
#include <sys/types.h>

struct it_server {
	pid_t pid;
	unsigned port;
	char ready_file[256];
	char log_file[256];
};

/* Starts `bikaroo-mcp serve` with the harness environment plus extra "NAME=value" entries
 * (NULL-terminated, may be NULL). Returns 0 when it serves, -1 when it exited or timed out. */
int it_server_start(struct it_server *s, const char *const *extra_env);
/* SIGTERM, wait; returns the exit status (0 = clean; valgrind errors give 99). */
int it_server_stop(struct it_server *s);
/* The port of s's metrics listener (BIKAROO_METRICS_LISTEN=127.0.0.1:0), read from its log;
 * 0 when it has none. */
unsigned it_metrics_port(const struct it_server *s);
/* Runs the binary with a subcommand and extra env; returns its exit status. */
int it_run(const char *subcommand, const char *const *extra_env);

struct it_response {
	long status;
	char *body;    /* new, NUL-terminated */
	char *headers; /* new, all response header lines */
	json_t *json;  /* parsed body or NULL */
};

/* POSTs body to http://127.0.0.1:port/mcp with headers (NULL-terminated "Name: value" list). */
void it_http(unsigned port, const char *method, const char *path, const char *const *headers,
	     const char *body, size_t body_len, struct it_response *r);
/* A 2026-07-28 request: method, Mcp-Name value (or NULL), params JSON text without _meta
 * (e.g. "\"name\":\"get_bike_status\",\"arguments\":{...}" or ""). */
void it_mcp(unsigned port, const char *method, const char *name, const char *params,
	    struct it_response *r);
void it_response_free(struct it_response *r);

/* Runs sql on the database as the superuser (assertions and setup); returns the first
 * column of the first row as new memory ("" when no row), or NULL on error. */
char *it_sql(const char *sql);
/* Two principals of the rights-change tests' own (for it_sql): rights-probe (FR-PAR), the
 * caller, and rights-bystander (FR-LYO), someone else. */
/* Ends every server's change-feed connection from the database side (as a restart would);
 * for it_sql, answers how many it ended. */
#define IT_CUT_FEED                                                                                \
	"SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity WHERE query LIKE "          \
	"'LISTEN bikaroo%'"
#define IT_RIGHTS_TEARDOWN                                                                         \
	"DELETE FROM fleet.principals WHERE subject IN ('rights-probe', 'rights-bystander')"
#define IT_RIGHTS_SETUP                                                                            \
	IT_RIGHTS_TEARDOWN ";"                                                                     \
			   "INSERT INTO fleet.principals (subject, display_name, role) VALUES "    \
			   "('rights-probe', 'Rights probe', 'customer_care'), "                   \
			   "('rights-bystander', 'Rights bystander', 'customer_care');"            \
			   "INSERT INTO fleet.principal_regions (subject, region) VALUES "         \
			   "('rights-probe', 'FR-PAR'), ('rights-bystander', 'FR-LYO')"
/* The same on another database URL. */
char *it_sql_url(const char *url, const char *sql);
/* The same as the server's login role (fleet_app), for row-level-security checks. */
char *it_sql_as_app(const char *sql);
/* Runs first, then second, as two statements (two transactions) on one fleet_app connection;
 * returns the first value of second's result. */
char *it_sql_as_app_then(const char *first, const char *second);

/* Environment of the harness (set by scripts/test.sh). */
const char *it_env(const char *name);

#endif
