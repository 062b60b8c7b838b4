/* The metrics registry (metrics.h): one fixed table of series, claimed lock-free on first use. */
#include "metrics.h"

#include <dirent.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdatomic.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "mem.h"

#define METRICS_SLOTS 1024 /* a power of two: the series the table can hold */
#define METRICS_KEY_MAX 256

const struct metrics_family metrics_requests = {
	"bikaroo_requests_total",
	"Requests answered, by transport, JSON-RPC method, tool or resource, outcome and HTTP "
	"status",
	METRICS_COUNTER,
	5,
	{"transport", "method", "name", "outcome", "status"}};
const struct metrics_family metrics_request_seconds = {
	"bikaroo_request_duration_seconds",
	"Time from a request's arrival to its answer, by transport, method and tool or resource",
	METRICS_HISTOGRAM,
	3,
	{"transport", "method", "name"}};
const struct metrics_family metrics_db_busy = {"bikaroo_db_connections_busy",
					       "Database connections running a statement now",
					       METRICS_GAUGE,
					       0,
					       {0}};
const struct metrics_family metrics_db_connections = {
	"bikaroo_db_connections_open", "Database connections open", METRICS_GAUGE, 0, {0}};
const struct metrics_family metrics_db_waits = {
	"bikaroo_db_connection_waits_total",
	"Statements that had to wait for a free database connection",
	METRICS_COUNTER,
	0,
	{0}};
const struct metrics_family metrics_db_errors = {
	"bikaroo_db_errors_total",
	"Database failures: connect (cannot connect), lost (connection broke while a statement "
	"ran), statement (the statement failed), timeout (no answer within the call timeout)",
	METRICS_COUNTER,
	1,
	{"kind"}};
const struct metrics_family metrics_token_validations = {
	"bikaroo_token_validations_total",
	"Bearer token validations by mode and outcome (ok, invalid, unavailable)",
	METRICS_COUNTER,
	2,
	{"mode", "outcome"}};
const struct metrics_family metrics_token_cache = {
	"bikaroo_token_cache_lookups_total",
	"Validated-token cache lookups: hit (answered from the cache) or miss",
	METRICS_COUNTER,
	1,
	{"result"}};
const struct metrics_family metrics_rights_cache = {
	"bikaroo_rights_cache_lookups_total",
	"Callers' rights asked for a list: hit (known, none changed since), miss (read from the "
	"database) or unwatched (no change feed: read from the database, not kept)",
	METRICS_COUNTER,
	1,
	{"result"}};
const struct metrics_family metrics_rights_changes = {
	"bikaroo_rights_changes_heard_total",
	"Committed rights changes the change feed heard (each ends every caller's rights kept)",
	METRICS_COUNTER,
	0,
	{0}};
const struct metrics_family metrics_listen_streams = {"bikaroo_listen_streams_open",
						      "subscriptions/listen streams open now",
						      METRICS_GAUGE,
						      1,
						      {"transport"}};
const struct metrics_family metrics_rate_limited = {"bikaroo_rate_limit_rejections_total",
						    "Requests refused by a rate or volume limit",
						    METRICS_COUNTER,
						    1,
						    {"reason"}};
const struct metrics_family metrics_rate_limited_client = {
	"bikaroo_rate_limit_client_rejections_total",
	"tools/call refused by a volume limit, by client application (the first 32 named, the "
	"others as \"other\") and budget (read or write)",
	METRICS_COUNTER,
	2,
	{"client", "budget"}};
const struct metrics_family metrics_rate_store_calls = {
	"bikaroo_rate_limit_store_calls_total",
	"Leases asked of the deployment-wide budget store: ok (answered) or failed",
	METRICS_COUNTER,
	1,
	{"result"}};
const struct metrics_family metrics_rate_fallback = {
	"bikaroo_rate_limit_local_fallback",
	"1 while the budget store does not answer and this instance enforces budgets of its own "
	"(each instance grants a whole budget), else 0",
	METRICS_GAUGE,
	0,
	{0}};
const struct metrics_family metrics_connections_cut = {
	"bikaroo_http_connections_closed_total",
	"Connections closed without a request served: past a deadline, the oldest of too many "
	"without headers (told 503 + Retry-After first), or from an address past its share while "
	"the loop's door was full (door_full)",
	METRICS_COUNTER,
	1,
	{"reason"}};
const struct metrics_family metrics_http_shed = {
	"bikaroo_http_calls_shed_total",
	"HTTP calls answered 503 or 429 + Retry-After without being run: they waited past the "
	"bound (1 s) for one of the BIKAROO_CALLS_MAX slots of their loop (waited), came while "
	"their loop's wait was longer than 20 ms at its pace (queue), the server stopped "
	"(stopping), or their new connection was answered at the loop's door: 503 while the loop "
	"held its share of connections (full), 429 from an address past "
	"BIKAROO_MAX_CONNECTIONS_PER_IP (per_address)",
	METRICS_COUNTER,
	1,
	{"reason"}};
const struct metrics_family metrics_ready = {
	"bikaroo_ready",
	"1 when this readiness check passed the last time it ran (every 5 s, and on GET /readyz): "
	"database (the login role answers, the schema is the one this binary needs), issuer_keys "
	"(jwt mode: the issuer's key set is loaded)",
	METRICS_GAUGE,
	1,
	{"check"}};
const struct metrics_family metrics_audit_batches = {
	"bikaroo_audit_batches_total",
	"Batches of reads and their audit rows, one transaction each: ok (committed), failed "
	"(nothing written: their reads answered 503 or failed), split (refused by the database: "
	"run again call by call, each alone)",
	METRICS_COUNTER,
	1,
	{"result"}};
const struct metrics_family metrics_reads_alone = {
	"bikaroo_read_calls_run_alone_total",
	"Reads of batches the database refused (a read that raised, a COMMIT that failed), run "
	"again each alone so that one call's failure is its answer only: none in normal operation",
	METRICS_COUNTER,
	0,
	{NULL}};
const struct metrics_family metrics_drain_started = {
	"bikaroo_drain_started_seconds",
	"When this instance began draining (SIGTERM), in seconds since the epoch; 0 while serving",
	METRICS_GAUGE,
	0,
	{0}};
const struct metrics_family metrics_drain_limit = {
	"bikaroo_drain_limit_seconds", "BIKAROO_DRAIN_MS, in seconds", METRICS_GAUGE, 0, {0}};
const struct metrics_family metrics_build_info = {"bikaroo_build_info",
						  "The version and source revision of this binary",
						  METRICS_GAUGE,
						  2,
						  {"version", "revision"}};

/* mcp.server.operation.duration: the bucket bounds the MCP semantic conventions give. */
static const double metrics_mcp_bounds[METRICS_MAX_BUCKETS] = {
	0.01, 0.02, 0.05, 0.1, 0.2, 0.5, 1, 2, 5, 10, 30, 60, 120, 300};
const struct metrics_family metrics_mcp_duration = {
	"mcp_server_operation_duration_seconds",
	"MCP request or notification duration as observed on the receiver from the time it was "
	"received until the result or ack is sent (OpenTelemetry's mcp.server.operation.duration)",
	METRICS_HISTOGRAM,
	8,
	{"mcp_method_name", "gen_ai_tool_name", "gen_ai_prompt_name", "gen_ai_operation_name",
	 "error_type", "rpc_response_status_code", "network_transport", "mcp_protocol_version"}};
/* http.client.request.duration: the bucket bounds the HTTP semantic conventions advise. */
static const double metrics_http_client_bounds[METRICS_MAX_BUCKETS] = {
	0.005, 0.01, 0.025, 0.05, 0.075, 0.1, 0.25, 0.5, 0.75, 1, 2.5, 5, 7.5, 10};
const struct metrics_family metrics_http_client_seconds = {
	"http_client_request_duration_seconds",
	"Duration of this server's own HTTP requests (the identity provider's metadata, key set "
	"and token introspection), from the transfer's start to its end (OpenTelemetry's "
	"http.client.request.duration)",
	METRICS_HISTOGRAM,
	5,
	{"http_request_method", "server_address", "server_port", "http_response_status_code",
	 "error_type"}};
const struct metrics_family metrics_spans_processed = {
	"otel_sdk_processor_span_processed_total",
	"Spans handed to the exporter (error_type empty) or dropped before it: queue_full (the "
	"collector is slow or down and the queue is full), already_shutdown",
	METRICS_COUNTER,
	1,
	{"error_type"}};
const struct metrics_family metrics_spans_exported = {
	"otel_sdk_exporter_span_exported_total",
	"Spans whose export ended: taken by the collector (error_type empty), or dropped with "
	"its HTTP status, timeout, unreachable or transport",
	METRICS_COUNTER,
	1,
	{"error_type"}};
const struct metrics_family metrics_span_queue_size = {
	"otel_sdk_processor_span_queue_size", "Spans waiting for export", METRICS_GAUGE, 0, {0}};
const struct metrics_family metrics_span_queue_capacity = {
	"otel_sdk_processor_span_queue_capacity",
	"Spans the export queue holds at most (0: traces are not exported)",
	METRICS_GAUGE,
	0,
	{0}};

/* Every family, in the order /metrics shows them. */
static const struct metrics_family *const metrics_families[] = {
	&metrics_build_info,          &metrics_requests,
	&metrics_request_seconds,     &metrics_db_busy,
	&metrics_db_connections,      &metrics_db_waits,
	&metrics_db_errors,           &metrics_token_validations,
	&metrics_token_cache,         &metrics_listen_streams,
	&metrics_rate_limited,        &metrics_rate_limited_client,
	&metrics_rate_store_calls,    &metrics_rate_fallback,
	&metrics_connections_cut,     &metrics_ready,
	&metrics_audit_batches,       &metrics_drain_started,
	&metrics_drain_limit,         &metrics_http_shed,
	&metrics_reads_alone,         &metrics_mcp_duration,
	&metrics_http_client_seconds, &metrics_spans_processed,
	&metrics_spans_exported,      &metrics_span_queue_size,
	&metrics_span_queue_capacity, &metrics_rights_cache,
	&metrics_rights_changes,
};

/* Upper bounds of every latency histogram, seconds. */
static const double metrics_bounds[METRICS_MAX_BUCKETS] = {
	0.0005, 0.001, 0.0025, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10};

/* A histogram's upper bounds: the conventions' for mcp.server.operation.duration and
 * http.client.request.duration, else the latency bounds above. */
static const double *metrics_bounds_of(const struct metrics_family *f)
{
	return f == &metrics_mcp_duration          ? metrics_mcp_bounds
	       : f == &metrics_http_client_seconds ? metrics_http_client_bounds
						   : metrics_bounds;
}

enum { SLOT_FREE = 0, SLOT_FILLING, SLOT_READY };

struct metrics_slot {
	atomic_int state;
	const struct metrics_family *family; /* written before state turns READY */
	char key[METRICS_KEY_MAX];           /* label values joined by \x1f */
	atomic_long value;                   /* counter, gauge; histogram: observations */
	atomic_uint_fast64_t
		bucket[METRICS_MAX_BUCKETS]; /* histogram: per bucket, not cumulative */
	atomic_uint_fast64_t sum_ns;         /* histogram: sum of observations */
};

static struct metrics_slot metrics_table[METRICS_SLOTS];
/* Series that found no room (the table is full or a key too long): shown, never lost silently. */
static atomic_long metrics_dropped;

static size_t metrics_key(const struct metrics_family *f, const char *const *values, char *key)
{
	size_t n = 0;
	for (size_t i = 0; i < f->nlabels; i++) {
		const char *v = values && values[i] ? values[i] : "";
		size_t len = strlen(v);
		if (n + len + 2 > METRICS_KEY_MAX)
			return 0;
		if (i)
			key[n++] = '\x1f';
		memcpy(key + n, v, len);
		n += len;
	}
	key[n] = '\0';
	return n + 1;
}

/* The slot of f's series for values, created when absent; NULL when there is no room. */
static struct metrics_slot *metrics_find(const struct metrics_family *f, const char *const *values,
					 bool create)
{
	char key[METRICS_KEY_MAX];
	if (!metrics_key(f, values, key)) {
		atomic_fetch_add(&metrics_dropped, 1);
		return NULL;
	}
	uint64_t h = 1469598103934665603ull ^ (uint64_t)(uintptr_t)f;
	for (const char *p = key; *p; p++)
		h = (h ^ (unsigned char)*p) * 1099511628211ull;
	for (size_t probe = 0; probe < METRICS_SLOTS; probe++) {
		struct metrics_slot *s = &metrics_table[(h + probe) & (METRICS_SLOTS - 1)];
		int state = atomic_load_explicit(&s->state, memory_order_acquire);
		if (state == SLOT_FREE) {
			if (!create)
				return NULL;
			int expect = SLOT_FREE;
			if (atomic_compare_exchange_strong(&s->state, &expect, SLOT_FILLING)) {
				s->family = f;
				memcpy(s->key, key, sizeof key);
				atomic_store_explicit(&s->state, SLOT_READY, memory_order_release);
				return s;
			}
			state = expect;
		}
		/* Another thread is filling it: its key is known in a few instructions. */
		while (state == SLOT_FILLING)
			state = atomic_load_explicit(&s->state, memory_order_acquire);
		if (s->family == f && strcmp(s->key, key) == 0)
			return s;
	}
	atomic_fetch_add(&metrics_dropped, 1);
	return NULL;
}

void metrics_add(const struct metrics_family *f, const char *const *values, long delta)
{
	if (f->type == METRICS_COUNTER && delta < 0)
		return;
	struct metrics_slot *s = metrics_find(f, values, true);
	if (s)
		atomic_fetch_add_explicit(&s->value, delta, memory_order_relaxed);
}

void metrics_set(const struct metrics_family *f, const char *const *values, long value)
{
	struct metrics_slot *s = metrics_find(f, values, true);
	if (s && f->type == METRICS_GAUGE)
		atomic_store_explicit(&s->value, value, memory_order_relaxed);
}

void metrics_observe(const struct metrics_family *f, const char *const *values, double seconds)
{
	struct metrics_slot *s = metrics_find(f, values, true);
	if (!s)
		return;
	if (seconds < 0)
		seconds = 0;
	const double *bounds = metrics_bounds_of(f);
	size_t b = 0;
	while (b < METRICS_MAX_BUCKETS && seconds > bounds[b])
		b++;
	if (b < METRICS_MAX_BUCKETS)
		atomic_fetch_add_explicit(&s->bucket[b], 1, memory_order_relaxed);
	atomic_fetch_add_explicit(&s->sum_ns, (uint_fast64_t)(seconds * 1e9), memory_order_relaxed);
	atomic_fetch_add_explicit(&s->value, 1, memory_order_relaxed);
}

void metrics_set_build(const char *version, const char *revision)
{
	const char *v[] = {version, revision};
	struct metrics_slot *s = metrics_find(&metrics_build_info, v, true);
	if (s)
		atomic_store(&s->value, 1);
}

long metrics_value(const struct metrics_family *f, const char *const *values)
{
	struct metrics_slot *s = metrics_find(f, values, false);
	return s ? atomic_load(&s->value) : 0;
}

/* ---- rendering (off the hot path) -------------------------------------------------------- */

struct metrics_buf {
	char *p;
	size_t len, cap;
};

__attribute__((format(printf, 2, 3))) static void metrics_put(struct metrics_buf *b,
							      const char *fmt, ...)
{
	for (;;) {
		va_list ap;
		va_start(ap, fmt);
		int n = vsnprintf(b->p + b->len, b->cap - b->len, fmt, ap);
		va_end(ap);
		if (n < 0)
			return;
		if ((size_t)n < b->cap - b->len) {
			b->len += (size_t)n;
			return;
		}
		b->cap = (b->cap + (size_t)n + 1) * 2;
		b->p = mem_realloc(b->p, b->cap);
	}
}

/* The label set {name="value",...} of key (plus one extra pair when le is set), escaped as the
 * exposition format asks (backslash, double quote, newline). */
static void metrics_labels(struct metrics_buf *b, const struct metrics_family *f, const char *key,
			   const char *le)
{
	if (!f->nlabels && !le)
		return;
	metrics_put(b, "{");
	const char *v = key;
	for (size_t i = 0; i < f->nlabels; i++) {
		metrics_put(b, "%s%s=\"", i ? "," : "", f->labels[i]);
		for (; *v && *v != '\x1f'; v++) {
			if (*v == '\\' || *v == '"')
				metrics_put(b, "\\%c", *v);
			else if (*v == '\n')
				metrics_put(b, "\\n");
			else
				metrics_put(b, "%c", *v);
		}
		metrics_put(b, "\"");
		if (*v)
			v++;
	}
	if (le)
		metrics_put(b, "%sle=\"%s\"", f->nlabels ? "," : "", le);
	metrics_put(b, "}");
}

static void metrics_render_slot(struct metrics_buf *b, const struct metrics_family *f,
				struct metrics_slot *s)
{
	if (f->type != METRICS_HISTOGRAM) {
		metrics_put(b, "%s", f->name);
		metrics_labels(b, f, s->key, NULL);
		metrics_put(b, " %ld\n", atomic_load(&s->value));
		return;
	}
	uint_fast64_t cumulative = 0;
	const double *bounds = metrics_bounds_of(f);
	for (size_t i = 0; i < METRICS_MAX_BUCKETS; i++) {
		char le[32];
		snprintf(le, sizeof le, "%g", bounds[i]);
		cumulative += atomic_load(&s->bucket[i]);
		metrics_put(b, "%s_bucket", f->name);
		metrics_labels(b, f, s->key, le);
		metrics_put(b, " %" PRIuFAST64 "\n", cumulative);
	}
	/* Read the count after the buckets: +Inf is never below the last bound's count. */
	long count = atomic_load(&s->value);
	if ((uint_fast64_t)count < cumulative)
		count = (long)cumulative;
	metrics_put(b, "%s_bucket", f->name);
	metrics_labels(b, f, s->key, "+Inf");
	metrics_put(b, " %ld\n%s_sum", count, f->name);
	metrics_labels(b, f, s->key, NULL);
	metrics_put(b, " %.9f\n%s_count", (double)atomic_load(&s->sum_ns) / 1e9, f->name);
	metrics_labels(b, f, s->key, NULL);
	metrics_put(b, " %ld\n", count);
}

/* A number read from a /proc file: the field-th (1-based) space-separated one after the
 * first `skip_to` character (0: from the start); -1 when it cannot be read. */
static double metrics_proc_field(const char *path, char skip_to, int field)
{
	char buf[1024];
	FILE *f = fopen(path, "r");
	if (!f)
		return -1;
	size_t n = fread(buf, 1, sizeof buf - 1, f);
	fclose(f);
	buf[n] = '\0';
	const char *p = buf;
	if (skip_to) { /* /proc/self/stat: the command may hold spaces, up to its last ')' */
		p = strrchr(buf, skip_to);
		if (!p)
			return -1;
		p++;
	}
	for (int i = 1; i < field; i++) {
		p += strspn(p, " ");
		p += strcspn(p, " ");
	}
	char *end;
	double v = strtod(p, &end);
	return end == p ? -1 : v;
}

/* The process start, in seconds since the epoch: boot time (/proc/stat btime) plus the
 * process's start in clock ticks after boot (field 22 of /proc/self/stat). 0 when unknown. */
static double metrics_start_time(void)
{
	static double start;
	if (start > 0)
		return start;
	char line[256];
	double btime = -1;
	FILE *f = fopen("/proc/stat", "r");
	while (f && fgets(line, sizeof line, f))
		if (strncmp(line, "btime ", 6) == 0)
			btime = strtod(line + 6, NULL);
	if (f)
		fclose(f);
	/* Fields after the command: state is 3, starttime 22; counted from the ')' that is 3. */
	double ticks = metrics_proc_field("/proc/self/stat", ')', 22 - 2);
	long hz = sysconf(_SC_CLK_TCK);
	if (btime > 0 && ticks >= 0 && hz > 0)
		start = btime + ticks / (double)hz;
	return start;
}

/* The standard process_* families (the names Prometheus client libraries use). */
static void metrics_process(struct metrics_buf *b)
{
	struct rusage ru;
	double cpu = 0;
	if (getrusage(RUSAGE_SELF, &ru) == 0)
		cpu = (double)ru.ru_utime.tv_sec + (double)ru.ru_utime.tv_usec / 1e6 +
		      (double)ru.ru_stime.tv_sec + (double)ru.ru_stime.tv_usec / 1e6;
	long page = sysconf(_SC_PAGESIZE);
	double rss = metrics_proc_field("/proc/self/statm", 0, 2);
	double vsz = metrics_proc_field("/proc/self/statm", 0, 1);
	long fds = 0;
	DIR *d = opendir("/proc/self/fd");
	for (struct dirent *e; d && (e = readdir(d));)
		fds += e->d_name[0] != '.';
	if (d) {
		fds--; /* the descriptor of this listing */
		closedir(d);
	}
	struct rlimit rl;
	double max_fds = getrlimit(RLIMIT_NOFILE, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY
				 ? (double)rl.rlim_cur
				 : -1;
	metrics_put(b,
		    "# HELP process_cpu_seconds_total User and system CPU time spent, in seconds\n"
		    "# TYPE process_cpu_seconds_total counter\nprocess_cpu_seconds_total %.3f\n",
		    cpu);
	if (rss >= 0 && page > 0)
		metrics_put(b,
			    "# HELP process_resident_memory_bytes Resident memory size in bytes\n"
			    "# TYPE process_resident_memory_bytes gauge\n"
			    "process_resident_memory_bytes %.0f\n"
			    "# HELP process_virtual_memory_bytes Virtual memory size in bytes\n"
			    "# TYPE process_virtual_memory_bytes gauge\n"
			    "process_virtual_memory_bytes %.0f\n",
			    rss * (double)page, vsz * (double)page);
	if (d)
		metrics_put(b,
			    "# HELP process_open_fds Open file descriptors\n"
			    "# TYPE process_open_fds gauge\nprocess_open_fds %ld\n",
			    fds);
	if (max_fds >= 0)
		metrics_put(b,
			    "# HELP process_max_fds The limit of open file descriptors\n"
			    "# TYPE process_max_fds gauge\nprocess_max_fds %.0f\n",
			    max_fds);
	double start = metrics_start_time();
	if (start > 0)
		metrics_put(b,
			    "# HELP process_start_time_seconds Start time of the process since the "
			    "Unix epoch, in seconds\n"
			    "# TYPE process_start_time_seconds gauge\n"
			    "process_start_time_seconds %.2f\n",
			    start);
}

char *metrics_render(void)
{
	static const char *const types[] = {"counter", "gauge", "histogram"};
	struct metrics_buf b = {mem_alloc(4096), 0, 4096};
	b.p[0] = '\0';
	size_t nfam = sizeof metrics_families / sizeof metrics_families[0];
	for (size_t i = 0; i < nfam; i++) {
		const struct metrics_family *f = metrics_families[i];
		metrics_put(&b, "# HELP %s %s\n# TYPE %s %s\n", f->name, f->help, f->name,
			    types[f->type]);
		bool any = false;
		for (size_t k = 0; k < METRICS_SLOTS; k++) {
			struct metrics_slot *s = &metrics_table[k];
			if (atomic_load_explicit(&s->state, memory_order_acquire) != SLOT_READY ||
			    s->family != f)
				continue;
			metrics_render_slot(&b, f, s);
			any = true;
		}
		/* A family without labels reads 0 before its first event. */
		if (!any && !f->nlabels && f->type != METRICS_HISTOGRAM)
			metrics_put(&b, "%s 0\n", f->name);
	}
	metrics_put(&b,
		    "# HELP bikaroo_metrics_series_dropped_total Series not recorded: the registry "
		    "was full\n# TYPE bikaroo_metrics_series_dropped_total counter\n"
		    "bikaroo_metrics_series_dropped_total %ld\n",
		    atomic_load(&metrics_dropped));
	metrics_process(&b);
	return b.p;
}
