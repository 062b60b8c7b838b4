/* The metrics registry: counters, gauges and latency histograms with bounded label sets, rendered
 * in the Prometheus text exposition format (GET /metrics on BIKAROO_METRICS_LISTEN).
 *
 * Cheap on the hot path: a series is found by a lock-free probe of one fixed table and moved with
 * atomics; no lock is ever taken by metrics_add() or metrics_observe(). A series is created on its
 * first use. Label values must come from bounded sets (a method or tool name from a table, an
 * outcome word, an HTTP status): never a subject, a bike, a case or anything a client chose.
 *
 * Every family is declared once, here, and listed in metrics.c's table (so that /metrics shows it
 * before its first event). To count something new: add its `extern` below and its row there. */
#ifndef BIKAROO_METRICS_H
#define BIKAROO_METRICS_H

#include <stdbool.h>
#include <stddef.h>

enum metrics_type { METRICS_COUNTER, METRICS_GAUGE, METRICS_HISTOGRAM };

/* Label values, at most this many per family. */
#define METRICS_MAX_LABELS 8
/* Upper bounds of a histogram (the +Inf bucket comes on top). */
#define METRICS_MAX_BUCKETS 14

struct metrics_family {
	const char *name; /* bikaroo_..._total */
	const char *help;
	enum metrics_type type;
	size_t nlabels;
	const char *labels[METRICS_MAX_LABELS]; /* label names */
};

/* The families (metrics.c). Label names in brackets, in the order metrics_add() takes them. */
extern const struct metrics_family metrics_requests; /* [transport method name outcome status] */
extern const struct metrics_family metrics_request_seconds; /* histogram [transport method name] */
extern const struct metrics_family metrics_db_busy;         /* gauge: statements running */
extern const struct metrics_family metrics_db_connections;  /* gauge: connections open */
extern const struct metrics_family metrics_db_waits;        /* waits for a free connection */
extern const struct metrics_family metrics_db_errors;       /* [kind] */
extern const struct metrics_family metrics_token_validations; /* [mode outcome] */
extern const struct metrics_family metrics_token_cache;       /* [result]: hit or miss */
extern const struct metrics_family metrics_rights_cache;      /* [result]: hit, miss or unwatched */
extern const struct metrics_family metrics_rights_changes;    /* rights changes heard */
extern const struct metrics_family metrics_listen_streams;    /* gauge [transport] */
extern const struct metrics_family metrics_rate_limited;      /* [reason]: read or write
								  (tools/call), listen_share or
								  listen_full (listen streams) */
extern const struct metrics_family metrics_rate_limited_client; /* [client budget]: tools/call
								  refused, by client application
								  (bounded: ratelimit.h) */
extern const struct metrics_family metrics_rate_store_calls;    /* [result]: ok or failed */
extern const struct metrics_family metrics_rate_fallback;       /* gauge: 1 while the budget store
								  fails and budgets are local */
extern const struct metrics_family metrics_connections_cut;     /* [reason]: header_deadline,
								    body_deadline, pending_cap or
								    door_full */
extern const struct metrics_family metrics_http_shed;           /* [reason]: waited, stopping, full,
								   per_address */
extern const struct metrics_family metrics_build_info;          /* gauge [version revision] */
extern const struct metrics_family metrics_ready;         /* gauge [check]: database, issuer_keys */
extern const struct metrics_family metrics_audit_batches; /* [result]: ok, failed or split */
extern const struct metrics_family metrics_reads_alone;   /* reads run again alone */
extern const struct metrics_family metrics_drain_started; /* gauge: unix seconds, 0 */
extern const struct metrics_family metrics_drain_limit;   /* gauge: BIKAROO_DRAIN_MS, seconds */
extern const struct metrics_family metrics_build_info;    /* gauge [version revision] */
/* OpenTelemetry's names (semantic conventions), as its Prometheus exporter writes them. */
extern const struct metrics_family
	metrics_mcp_duration; /* histogram mcp.server.operation.
				 duration [mcp_method_name
				 gen_ai_tool_name gen_ai_prompt_name
				 gen_ai_operation_name error_type
				 rpc_response_status_code
				 network_transport mcp_protocol_version] */
/* Histogram http.client.request.duration, the requests to the identity provider:
 * [http_request_method server_address server_port http_response_status_code error_type]. */
extern const struct metrics_family metrics_http_client_seconds;
extern const struct metrics_family metrics_spans_processed;     /* [error_type] */
extern const struct metrics_family metrics_spans_exported;      /* [error_type] */
extern const struct metrics_family metrics_span_queue_size;     /* gauge */
extern const struct metrics_family metrics_span_queue_capacity; /* gauge */

/* Adds delta to the series of f with these label values (f->nlabels of them, borrowed; NULL
 * when f has none). A counter only grows: a negative delta is ignored. */
void metrics_add(const struct metrics_family *f, const char *const *values, long delta);
/* Sets a gauge's series to value. */
void metrics_set(const struct metrics_family *f, const char *const *values, long value);
/* A histogram observation, in seconds. */
void metrics_observe(const struct metrics_family *f, const char *const *values, double seconds);

/* metrics_add() for a family without labels. */
static inline void metrics_inc(const struct metrics_family *f)
{
	metrics_add(f, NULL, 1);
}

/* Sets bikaroo_build_info{version,revision} = 1 (strings borrowed for the call). */
void metrics_set_build(const char *version, const char *revision);

/* The exposition text of every family (new; caller frees). */
char *metrics_render(void);

/* The value of one counter or gauge series, 0 when it does not exist (for tests). */
long metrics_value(const struct metrics_family *f, const char *const *values);

#endif
