/* Integration-test harness: starts the real server binary against the real PostgreSQL that
 * scripts/test.sh prepared, and talks to it over HTTP with libcurl and to the database with libpq.
 */
#ifndef BIKAROO_HARNESS_H
#define BIKAROO_HARNESS_H

#include <jansson.h>
#include <pthread.h>
#include <stdbool.h>
#include <sys/types.h>

struct it_server {
	pid_t pid;
	unsigned port;
	char ready_file[256];
	char log_file[256];
	/* The test makes the database refuse batches of reads on purpose (a read that raises, an
	 * audit row that cannot be written): their fallback, each call alone, is expected. Else a
	 * fallback fails it_server_stop: every read prepares and runs in its batch. */
	bool reads_may_fall_back;
};

/* Starts `bikaroo-mcp serve` with the harness environment plus extra "NAME=value" entries
 * (NULL-terminated, may be NULL). Returns 0 when it serves, -1 when it exited or timed out. */
int it_server_start(struct it_server *s, const char *const *extra_env);
/* SIGTERM, wait; returns the exit status (0 = clean; valgrind errors give 99; a clean exit whose
 * log shows a batch of reads run again call by call, unless reads_may_fall_back, gives 97). */
int it_server_stop(struct it_server *s);
/* The port of s's metrics listener (BIKAROO_METRICS_LISTEN=127.0.0.1:0), read from its log;
 * 0 when it has none. */
unsigned it_metrics_port(const struct it_server *s);
/* The value of one series of s's /metrics, e.g. "bikaroo_rate_limit_rejections_total{reason=
 * \"write\"}"; -1 when absent (fails the test when s has no metrics listener). */
long it_metric(const struct it_server *s, const char *series);
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
/* The same with the client capabilities caps (JSON object text, e.g. "{\"elicitation\":{}}"). */
void it_mcp_caps(unsigned port, const char *method, const char *name, const char *params,
		 const char *caps, struct it_response *r);
void it_response_free(struct it_response *r);

/* ---- tools/call as a host makes it: one audit row per call, the user's confirmation ---- */

/* A 2026-07-28 tools/call of tool on port: args a JSON object's text, caps the client
 * capabilities (NULL: none), extra more params members (NULL, or e.g. "\"requestState\":...").
 * Fails the test unless the answer is a result and the call left exactly one audit row (by its
 * JSON-RPC id, one of its own). Returns the result, borrowed from r. */
json_t *it_tool(unsigned port, const char *tool, const char *args, const char *caps,
		const char *extra, struct it_response *r);
/* The user's confirmation on the server's side: the call asks (input_required, a form
 * elicitation "confirm" and a requestState), then is retried with the user's answer: accept
 * (the box ticked) or decline. Each call leaves its one audit row (it_tool). Returns the
 * retry's result, borrowed from r. */
json_t *it_tool_confirmed(unsigned port, const char *tool, const char *args, bool accept,
			  struct it_response *r);
/* Its two halves, for what happens between the question and the answer. it_tool_ask: the call
 * asks (asserted); returns its requestState (new) and, when question is not NULL, sets *question
 * to the form's message (new). it_tool_answer: the call retried with state and the user's
 * answer; returns the result, borrowed from r (an answer may be asked again: input_required). */
char *it_tool_ask(unsigned port, const char *tool, const char *args, char **question);
json_t *it_tool_answer(unsigned port, const char *tool, const char *args, const char *state,
		       bool accept, struct it_response *r);
/* The first value of sql (it_sql) as a number; fails the test on an SQL error. */
long it_count(const char *sql);

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
void it_sleep_ms(long ms);

/* The test authorization server (tests/auth/as.mjs, npm oidc-provider) on a free loopback port,
 * issuing tokens for IT_AS_RESOURCE. */
#define IT_AS_RESOURCE "https://mcp.bikaroo.test/mcp"
struct it_as {
	pid_t pid;
	unsigned port;
	char issuer[64];
};
/* Starts it; format is jwt or opaque. Fails the test (Check) when it does not start. */
void it_as_start(struct it_as *as, const char *format);
void it_as_stop(struct it_as *as);
/* An access token of sub through client with scope (space-separated), for IT_AS_RESOURCE, from a
 * real authorization-code flow: new, or NULL (said on stderr). */
char *it_as_mint(const struct it_as *as, const char *sub, const char *client, const char *scope);

/* ---- loads: concurrent callers, each on its own keep-alive connection ---- */

long long it_now_us(void); /* a monotonic clock, microseconds */

/* A non-blocking TCP connection to 127.0.0.1:port from the loopback address from (NULL: the
 * kernel's choice), under way (-1 when connect fails at once): for what libcurl would hide (a
 * reset, a connection left in the kernel's backlog). */
int it_tcp_connect(unsigned port, const char *from);

/* One HTTP connection, reused from call to call (one thread's). */
struct it_conn {
	void *curl;
	unsigned port;
};
void it_conn_open(struct it_conn *c, unsigned port);
void it_conn_close(struct it_conn *c);
/* A 2026-07-28 tools/call of tool with arguments (a JSON object's text) and JSON-RPC id (a
 * string), with `Authorization: Bearer token` unless token is NULL. */
void it_conn_tool(struct it_conn *c, const char *token, const char *id, const char *tool,
		  const char *arguments, struct it_response *r);

/* One call of a load: the load names it, .prepare says what to send, .check sees the answer. */
struct it_load_call {
	int caller;                     /* 0 .. callers - 1 */
	long n;                         /* the caller's n-th call, from 0 */
	char id[64];                    /* its JSON-RPC id: "PREFIX-CALLER-N" */
	const char *tool;               /* prepare: the tool (get_bike_status unless changed) */
	const char *token;              /* prepare: the bearer token, or NULL (borrowed) */
	char arguments[256];            /* prepare: the arguments, a JSON object's text */
	long long started_us, ended_us; /* it_now_us() before the request, after the answer */
	struct it_response r;           /* the answer, freed after .check */
};

#define IT_LOAD_CALLERS 64
struct it_load_worker;
/* callers threads, each making calls one after the other on its own connection, until each
 * made `calls` (0: no limit), until_us is reached (0: none; one of the two bounds is needed) or,
 * with no limit, the server is gone (no HTTP answer). prepare and check run on the callers'
 * threads (concurrently: check writes only what belongs to c->caller). */
struct it_load {
	unsigned port;
	const char *prefix; /* of the calls' ids: letters and digits */
	int callers;
	long calls;
	long long until_us;
	void (*prepare)(void *ctx, struct it_load_call *c);
	void (*check)(void *ctx, const struct it_load_call *c);
	void *ctx;
	/* the load's own */
	pthread_t *threads;
	struct it_load_worker *workers;
};
/* Starts the callers (0) and returns; -1 when the load is not bounded. */
int it_load_start(struct it_load *l);
/* Waits for every caller to end. */
void it_load_wait(struct it_load *l);

/* Audit rows of a load's calls: those naming one of the n ids (of_ids), those of any call whose
 * id starts with "PREFIX-" (all) and how many such ids have more than one row (doubled). Returns
 * 0, or -1 on a database error. */
struct it_audit_count {
	long of_ids, all, doubled;
};
int it_audit_count(const char *prefix, char *const *ids, size_t n, struct it_audit_count *out);

/* How many lines of s's log (stderr) contain needle; -1 when it has no log. */
long it_log_count(const struct it_server *s, const char *needle);

#endif
