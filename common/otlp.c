/* The span exporter (otlp.h): a bounded lock-free queue (D. Vyukov's bounded MPMC queue, here
 * with one consumer), the exporter's thread, the protobuf encoding of an
 * ExportTraceServiceRequest (opentelemetry-proto, collector/trace/v1) and its POST with libcurl. */
#include "otlp.h"

#include <assert.h>
#include <curl/curl.h>
#include <errno.h>
#include <poll.h>
#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "log.h"
#include "mem.h"
#include "metrics.h"

/* ---- protobuf ------------------------------------------------------------------------------
 * Only what OTLP needs: varints, fixed64/fixed32, length-delimited fields. A nested message is
 * written after room for the longest length prefix, then moved back once its length is known. */

struct pb {
	unsigned char *p;
	size_t len, cap;
};

enum { PB_VARINT = 0, PB_I64 = 1, PB_LEN = 2, PB_I32 = 5 };
#define PB_PREFIX_MAX 5 /* a length below 4 GiB */

static void pb_room(struct pb *b, size_t n)
{
	if (b->len + n <= b->cap)
		return;
	b->cap = (b->len + n) * 2;
	b->p = mem_realloc(b->p, b->cap);
}

static size_t pb_varint_at(unsigned char *out, uint64_t v)
{
	size_t n = 0;
	do {
		out[n++] = (unsigned char)((v & 0x7f) | (v > 0x7f ? 0x80 : 0));
		v >>= 7;
	} while (v);
	return n;
}

static void pb_varint(struct pb *b, uint64_t v)
{
	pb_room(b, 10);
	b->len += pb_varint_at(b->p + b->len, v);
}

static void pb_tag(struct pb *b, unsigned field, unsigned type)
{
	pb_varint(b, (uint64_t)field << 3 | type);
}

static void pb_bytes(struct pb *b, unsigned field, const void *p, size_t n)
{
	pb_tag(b, field, PB_LEN);
	pb_varint(b, n);
	pb_room(b, n);
	memcpy(b->p + b->len, p, n);
	b->len += n;
}

static void pb_string(struct pb *b, unsigned field, const char *s)
{
	pb_bytes(b, field, s, strlen(s));
}

static void pb_fixed(struct pb *b, unsigned field, uint64_t v, size_t width)
{
	pb_tag(b, field, width == 8 ? PB_I64 : PB_I32);
	pb_room(b, width);
	for (size_t i = 0; i < width; i++)
		b->p[b->len++] = (unsigned char)(v >> (8 * i)); /* little-endian */
}

/* Opens a nested message as field: returns where its body begins (pb_close's argument). */
static size_t pb_open(struct pb *b, unsigned field)
{
	pb_tag(b, field, PB_LEN);
	pb_room(b, PB_PREFIX_MAX);
	b->len += PB_PREFIX_MAX;
	return b->len;
}

static void pb_close(struct pb *b, size_t body)
{
	size_t n = b->len - body;
	unsigned char prefix[10];
	size_t k = pb_varint_at(prefix, n);
	memmove(b->p + body - PB_PREFIX_MAX + k, b->p + body, n);
	memcpy(b->p + body - PB_PREFIX_MAX, prefix, k);
	b->len = body - PB_PREFIX_MAX + k + n;
}

static size_t pb_varint_len(uint64_t v)
{
	size_t n = 1;
	for (; v > 0x7f; v >>= 7)
		n++;
	return n;
}

/* KeyValue {1 key, 2 AnyValue value {1 string_value | 2 bool_value | 3 int_value}}: most of a
 * body's messages, so written in one go, its lengths counted first (opening and closing its two
 * nested messages moved every attribute's bytes twice). Its fields are below 16: one-byte tags. */
static unsigned char *pb_kv_head(struct pb *b, unsigned field, const char *key, size_t k,
				 size_t any)
{
	assert(field < 16);
	size_t kv = 1 + pb_varint_len(k) + k + 1 + pb_varint_len(any) + any;
	pb_room(b, 1 + PB_PREFIX_MAX + kv);
	unsigned char *p = b->p + b->len;
	*p++ = (unsigned char)(field << 3 | PB_LEN);
	p += pb_varint_at(p, kv);
	*p++ = 1 << 3 | PB_LEN;
	p += pb_varint_at(p, k);
	memcpy(p, key, k);
	p += k;
	*p++ = 2 << 3 | PB_LEN;
	p += pb_varint_at(p, any);
	return p; /* where the AnyValue's body goes */
}

static void pb_kv_string(struct pb *b, unsigned field, const char *key, const char *v, size_t n)
{
	unsigned char *p = pb_kv_head(b, field, key, strlen(key), 1 + pb_varint_len(n) + n);
	*p++ = 1 << 3 | PB_LEN;
	p += pb_varint_at(p, n);
	memcpy(p, v, n);
	b->len = (size_t)(p + n - b->p);
}

static void pb_kv_int(struct pb *b, unsigned field, const char *key, int64_t v, bool boolean)
{
	unsigned char *p = pb_kv_head(b, field, key, strlen(key), 1 + pb_varint_len((uint64_t)v));
	*p++ = (unsigned char)((boolean ? 2 : 3) << 3 | PB_VARINT);
	p += pb_varint_at(p, (uint64_t)v);
	b->len = (size_t)(p - b->p);
}

/* Span: 1 trace_id, 2 span_id, 3 trace_state, 4 parent_span_id, 5 name, 6 kind, 7 start, 8 end,
 * 9 attributes, 10 dropped_attributes_count, 13 links (1 trace_id, 2 span_id, 4 attributes,
 * 6 flags), 14 dropped_links_count, 15 status (2 message, 3 code), 16 flags. */
static void otlp_span(struct pb *b, const struct trace_span *s)
{
	size_t body = pb_open(b, 2); /* ScopeSpans.spans */
	pb_bytes(b, 1, s->ctx.trace_id, 16);
	pb_bytes(b, 2, s->ctx.span_id, 8);
	if (s->state_len)
		pb_bytes(b, 3, s->text + s->state_off, s->state_len);
	if (s->has_parent)
		pb_bytes(b, 4, s->parent_id, 8);
	pb_bytes(b, 5, s->text + s->name_off, s->name_len);
	pb_tag(b, 6, PB_VARINT);
	pb_varint(b, (uint64_t)s->kind);
	pb_fixed(b, 7, (uint64_t)s->start_ns, 8);
	pb_fixed(b, 8, (uint64_t)s->end_ns, 8);
	for (uint16_t i = 0; i < s->nattrs; i++) {
		const struct trace_attr *a = &s->attrs[i];
		if (a->type == TRACE_STR)
			pb_kv_string(b, 9, a->key, s->text + a->off, a->len);
		else
			pb_kv_int(b, 9, a->key, a->i, a->type == TRACE_BOOL);
	}
	if (s->dropped_attrs) {
		pb_tag(b, 10, PB_VARINT);
		pb_varint(b, s->dropped_attrs);
	}
	for (uint16_t i = 0; i < s->nlinks; i++) {
		const struct trace_link *l = &s->links[i];
		size_t link = pb_open(b, 13);
		pb_bytes(b, 1, l->ctx.trace_id, 16);
		pb_bytes(b, 2, l->ctx.span_id, 8);
		if (l->relation)
			pb_kv_string(b, 4, "bikaroo.link", l->relation, strlen(l->relation));
		/* The linked context is another process's or ours: flags say which it is not. */
		pb_fixed(b, 6, (uint64_t)(l->ctx.flags | 0x100), 4);
		pb_close(b, link);
	}
	if (s->dropped_links) {
		pb_tag(b, 14, PB_VARINT);
		pb_varint(b, s->dropped_links);
	}
	if (s->error) {
		size_t status = pb_open(b, 15);
		if (s->status_len)
			pb_bytes(b, 2, s->text + s->status_off, s->status_len);
		pb_tag(b, 3, PB_VARINT);
		pb_varint(b, 2); /* STATUS_CODE_ERROR */
		pb_close(b, status);
	}
	/* The trace flags, and whether the parent is remote (0x100: known, 0x200: remote). */
	uint32_t flags = s->ctx.flags | 0x100 | (s->has_parent && s->parent_remote ? 0x200 : 0);
	pb_fixed(b, 16, flags, 4);
	pb_close(b, body);
}

unsigned char *otlp_encode(struct trace_span *const *spans, size_t n, const unsigned char *res,
			   size_t res_len, const char *version, size_t *len)
{
	struct pb b = {mem_alloc(4096), 0, 4096};
	size_t rs = pb_open(&b, 1);       /* ExportTraceServiceRequest.resource_spans */
	size_t resource = pb_open(&b, 1); /* ResourceSpans.resource */
	pb_room(&b, res_len);
	memcpy(b.p + b.len, res, res_len); /* Resource.attributes (field 1), encoded once */
	b.len += res_len;
	pb_close(&b, resource);
	size_t ss = pb_open(&b, 2);    /* ResourceSpans.scope_spans */
	size_t scope = pb_open(&b, 1); /* ScopeSpans.scope */
	pb_string(&b, 1, "bikaroo-mcp");
	pb_string(&b, 2, version ? version : "");
	pb_close(&b, scope);
	for (size_t i = 0; i < n; i++)
		otlp_span(&b, spans[i]);
	pb_close(&b, ss);
	pb_close(&b, rs);
	*len = b.len;
	return b.p;
}

static int otlp_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	if (c >= 'A' && c <= 'F')
		return c - 'A' + 10;
	return -1;
}

/* Percent-decodes s[0..n) (the W3C Baggage form the OTEL_* lists use) into out (cap bytes,
 * terminated, blanks around trimmed); false when it is empty, does not fit, or a %XX is
 * malformed. */
static bool otlp_unescape(const char *s, size_t n, char *out, size_t cap)
{
	while (n && (*s == ' ' || *s == '\t'))
		s++, n--;
	while (n && (s[n - 1] == ' ' || s[n - 1] == '\t'))
		n--;
	size_t o = 0;
	for (size_t i = 0; i < n; i++) {
		int c = (unsigned char)s[i];
		if (c == '%') {
			int hi = i + 2 < n ? otlp_hexval(s[i + 1]) : -1;
			int lo = i + 2 < n ? otlp_hexval(s[i + 2]) : -1;
			if (hi < 0 || lo < 0)
				return false;
			c = hi << 4 | lo;
			i += 2;
		}
		if (c < 0x20 || c == 0x7f || o + 1 >= cap)
			return false; /* no control byte: a header's value could forge a header */
		out[o++] = (char)c;
	}
	out[o] = '\0';
	return o > 0;
}

/* Calls each(key, value, ctx) for every "key=value" of a comma-separated list (both decoded);
 * false, with *why, when one is malformed. */
static bool otlp_pairs(const char *list, void (*each)(const char *k, const char *v, void *ctx),
		       void *ctx, const char **why)
{
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t n = end ? (size_t)(end - p) : strlen(p);
		const char *eq = memchr(p, '=', n);
		char k[256], v[1024];
		if (n && (!eq || !otlp_unescape(p, (size_t)(eq - p), k, sizeof k) ||
			  !otlp_unescape(eq + 1, n - (size_t)(eq - p) - 1, v, sizeof v))) {
			*why = "an entry is not key=value (values percent-encoded, keys up to 255 "
			       "bytes, values up to 1023)";
			return false;
		}
		if (n)
			each(k, v, ctx);
		p = end ? end + 1 : p + n;
	}
	return true;
}

static void otlp_res_pair(const char *k, const char *v, void *ctx)
{
	struct pb *b = ctx;
	/* Ours come first and win: service.name and service.version are set by their own
	 * settings (OTEL_SERVICE_NAME wins over OTEL_RESOURCE_ATTRIBUTES, as the SDKs do). */
	if (strcmp(k, "service.name") != 0 && strcmp(k, "service.version") != 0 &&
	    strcmp(k, "service.instance.id") != 0)
		pb_kv_string(b, 1, k, v, strlen(v));
}

unsigned char *otlp_resource(const char *service_name, const char *version, const char *attributes,
			     size_t *len, const char **why)
{
	struct pb b = {mem_alloc(512), 0, 512};
	/* service.instance.id: a version 4 UUID, new for each process. */
	uint8_t id[16];
	if (getrandom(id, sizeof id, 0) != sizeof id)
		memset(id, 0, sizeof id);
	id[6] = (uint8_t)((id[6] & 0x0f) | 0x40);
	id[8] = (uint8_t)((id[8] & 0x3f) | 0x80);
	char hex[37];
	snprintf(hex, sizeof hex,
		 "%02x%02x%02x%02x-%02x%02x-%02x%02x-%02x%02x-%02x%02x%02x%02x%02x%02x", id[0],
		 id[1], id[2], id[3], id[4], id[5], id[6], id[7], id[8], id[9], id[10], id[11],
		 id[12], id[13], id[14], id[15]);
	const char *name = service_name && *service_name ? service_name : "bikaroo-mcp";
	pb_kv_string(&b, 1, "service.name", name, strlen(name));
	pb_kv_string(&b, 1, "service.version", version ? version : "",
		     version ? strlen(version) : 0);
	pb_kv_string(&b, 1, "service.instance.id", hex, strlen(hex));
	if (!otlp_pairs(attributes, otlp_res_pair, &b, why)) {
		free(b.p);
		return NULL;
	}
	*len = b.len;
	return b.p;
}

/* ---- the queue and the exporter's thread ---------------------------------------------------- */

struct otlp_cell {
	atomic_size_t seq;
	struct trace_span *span;
};

/* Set by otlp_start() before any other thread pushes; then the queue's positions move. */
static struct {
	struct otlp_cell *cells;
	size_t mask;
	atomic_size_t head;   /* the next position a push claims */
	atomic_size_t tail;   /* the next the exporter takes (written by it alone) */
	atomic_bool running;  /* pushes are taken */
	atomic_bool stopping; /* otlp_stop(): send what waits, then end */
	atomic_bool woken;    /* the eventfd was written since the exporter last read it */
	long long flush_until;
	int wake; /* eventfd */
	size_t batch;
	long delay_ms, timeout_ms;
	CURL *curl;
	struct curl_slist *headers;
	unsigned char *res;
	size_t res_len;
	char *version;
	pthread_t thread;
} otlp;

static long long otlp_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* Counts n spans of the processor: error NULL when passed to the export, else why dropped. */
static void otlp_processed(const char *error, long n)
{
	const char *l[] = {error ? error : ""};
	metrics_add(&metrics_spans_processed, l, n);
}

bool otlp_push(struct trace_span *s)
{
	if (!atomic_load_explicit(&otlp.running, memory_order_acquire)) {
		otlp_processed("already_shutdown", 1);
		return false;
	}
	size_t pos = atomic_load_explicit(&otlp.head, memory_order_relaxed);
	struct otlp_cell *c;
	for (;;) {
		c = &otlp.cells[pos & otlp.mask];
		size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
		intptr_t dif = (intptr_t)seq - (intptr_t)pos;
		if (dif == 0 && atomic_compare_exchange_weak_explicit(&otlp.head, &pos, pos + 1,
								      memory_order_relaxed,
								      memory_order_relaxed))
			break;
		if (dif < 0) {
			otlp_processed("queue_full", 1);
			return false;
		}
		if (dif > 0)
			pos = atomic_load_explicit(&otlp.head, memory_order_relaxed);
	}
	c->span = s;
	atomic_store_explicit(&c->seq, pos + 1, memory_order_release);
	/* A batch is ready: one wake-up per batch (the only system call a push may make). */
	size_t tail = atomic_load_explicit(&otlp.tail, memory_order_relaxed);
	if (pos + 1 - tail >= otlp.batch &&
	    !atomic_exchange_explicit(&otlp.woken, true, memory_order_relaxed)) {
		uint64_t one = 1;
		if (write(otlp.wake, &one, sizeof one) < 0)
			atomic_store(&otlp.woken, false);
	}
	return true;
}

/* The oldest waiting span, or NULL. The exporter's thread only. */
static struct trace_span *otlp_take(void)
{
	size_t pos = atomic_load_explicit(&otlp.tail, memory_order_relaxed);
	struct otlp_cell *c = &otlp.cells[pos & otlp.mask];
	size_t seq = atomic_load_explicit(&c->seq, memory_order_acquire);
	if ((intptr_t)seq - (intptr_t)(pos + 1) < 0)
		return NULL;
	struct trace_span *s = c->span;
	atomic_store_explicit(&c->seq, pos + otlp.mask + 1, memory_order_release);
	atomic_store_explicit(&otlp.tail, pos + 1, memory_order_relaxed);
	return s;
}

static size_t otlp_waiting(void)
{
	return atomic_load(&otlp.head) - atomic_load(&otlp.tail);
}

/* libcurl's progress callback, at least once a second during an export: a stop whose time is
 * over ends it (a collector that never answers must not hold the process's exit). */
static int otlp_progress(void *ctx, curl_off_t dt, curl_off_t dn, curl_off_t ut, curl_off_t un)
{
	(void)ctx, (void)dt, (void)dn, (void)ut, (void)un;
	return atomic_load(&otlp.stopping) && otlp_now_ms() >= otlp.flush_until;
}

static size_t otlp_discard(char *p, size_t size, size_t n, void *ctx)
{
	(void)p;
	size_t *got = ctx;
	*got += size * n;
	return *got > 65536 ? 0 : size * n; /* an answer past 64 KiB ends the transfer */
}

/* Sends spans[0..n) within timeout_ms: NULL when the collector took them, else the error type
 * (into buf: an HTTP status, timeout, unreachable or transport). */
static const char *otlp_send(struct trace_span **spans, size_t n, long timeout_ms, char buf[16])
{
	size_t len, got = 0;
	unsigned char *body = otlp_encode(spans, n, otlp.res, otlp.res_len, otlp.version, &len);
	curl_easy_setopt(otlp.curl, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(otlp.curl, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)len);
	curl_easy_setopt(otlp.curl, CURLOPT_TIMEOUT_MS, timeout_ms > 1 ? timeout_ms : 1L);
	curl_easy_setopt(otlp.curl, CURLOPT_WRITEDATA, &got);
	CURLcode rc = curl_easy_perform(otlp.curl);
	free(body);
	long status = 0;
	curl_easy_getinfo(otlp.curl, CURLINFO_RESPONSE_CODE, &status);
	if (rc == CURLE_OK && status >= 200 && status < 300)
		return NULL;
	if (rc == CURLE_OK || rc == CURLE_WRITE_ERROR)
		snprintf(buf, 16, "%ld", status);
	else
		snprintf(buf, 16, "%s",
			 rc == CURLE_OPERATION_TIMEDOUT || rc == CURLE_ABORTED_BY_CALLBACK
				 ? "timeout"
			 : rc == CURLE_COULDNT_CONNECT || rc == CURLE_COULDNT_RESOLVE_HOST
				 ? "unreachable"
				 : "transport");
	static struct log_limit limit;
	unsigned long skipped;
	if (log_due(&limit, 60, &skipped))
		log_warn(
			"traces: the collector did not take %zu span(s) (%s%s%s); they are dropped "
			"(%lu such failures before this one in the last minute)",
			n, buf, rc == CURLE_OK ? "" : ": ",
			rc == CURLE_OK ? "" : curl_easy_strerror(rc), skipped);
	return buf;
}

/* The exporter's thread: a batch goes when it is full, when the oldest waited the schedule
 * delay, or at the stop; after a failure the next waits a back-off (1 s doubling to 30 s). */
static void *otlp_run(void *arg)
{
	(void)arg;
	struct trace_span **batch = mem_alloc(otlp.batch * sizeof *batch);
	long long last = otlp_now_ms(), retry_at = 0;
	long backoff = 0;
	for (;;) {
		bool stopping = atomic_load(&otlp.stopping);
		long long now = otlp_now_ms();
		size_t waiting = otlp_waiting();
		if (stopping && (!waiting || now >= otlp.flush_until))
			break;
		bool due = waiting >= otlp.batch || (waiting && now - last >= otlp.delay_ms) ||
			   (stopping && waiting);
		if (!due || (now < retry_at && !stopping)) {
			long long until = now < retry_at ? retry_at : last + otlp.delay_ms;
			long wait = until > now ? (long)(until - now) : otlp.delay_ms;
			struct pollfd p = {.fd = otlp.wake, .events = POLLIN};
			if (poll(&p, 1, (int)(wait > 1000 ? 1000 : wait)) > 0) {
				uint64_t v;
				if (read(otlp.wake, &v, sizeof v) < 0 && errno != EAGAIN)
					log_warn("traces: the exporter's wake-up: %s",
						 strerror(errno));
			}
			atomic_store(&otlp.woken, false);
			if (!waiting)
				last = otlp_now_ms(); /* nothing waited: the delay counts from now
						       */
			continue;
		}
		size_t n = 0;
		while (n < otlp.batch && (batch[n] = otlp_take()) != NULL)
			n++;
		otlp_processed(NULL, (long)n);
		long timeout = otlp.timeout_ms;
		if (stopping && otlp.flush_until - now < timeout)
			timeout = (long)(otlp.flush_until - now);
		char buf[16];
		const char *error = otlp_send(batch, n, timeout, buf);
		const char *l[] = {error ? error : ""};
		metrics_add(&metrics_spans_exported, l, (long)n);
		for (size_t i = 0; i < n; i++)
			free(batch[i]);
		backoff =
			error ? (backoff ? (backoff * 2 > 30000 ? 30000 : backoff * 2) : 1000) : 0;
		last = otlp_now_ms();
		retry_at = error ? last + backoff : 0;
		metrics_set(&metrics_span_queue_size, NULL, (long)otlp_waiting());
	}
	/* What is left when the stop's time ran out: dropped. */
	long left = 0;
	for (struct trace_span *s; (s = otlp_take()) != NULL; left++)
		free(s);
	if (left)
		otlp_processed("already_shutdown", left);
	free(batch);
	return NULL;
}

static bool otlp_header(const char *k, const char *v, struct curl_slist **list)
{
	for (const char *p = k; *p; p++)
		if (*p <= ' ' || *p == ':' || *p == 0x7f)
			return false;
	char *line = mem_printf("%s: %s", k, v);
	*list = curl_slist_append(*list, line);
	free(line);
	return *list != NULL;
}

static void otlp_header_pair(const char *k, const char *v, void *ctx)
{
	struct curl_slist **list = ctx;
	if (!otlp_header(k, v, list))
		log_warn("traces: OTEL_EXPORTER_OTLP_HEADERS: the header name %s is not valid; "
			 "left out",
			 k);
}

enum otlp_status otlp_start(const struct otlp_settings *set)
{
	const char *why = NULL;
	if (strncmp(set->endpoint, "http://", 7) != 0 &&
	    strncmp(set->endpoint, "https://", 8) != 0) {
		log_error(
			"traces: the OTLP endpoint must be an http:// or https:// URL (OTLP/HTTP)");
		return OTLP_INVALID;
	}
	otlp.res = otlp_resource(set->service_name, set->version, set->resource_attributes,
				 &otlp.res_len, &why);
	if (!otlp.res) {
		log_error("traces: OTEL_RESOURCE_ATTRIBUTES: %s", why);
		return OTLP_INVALID;
	}
	struct curl_slist *h = curl_slist_append(NULL, "Content-Type: application/x-protobuf");
	if (!otlp_pairs(set->headers, otlp_header_pair, &h, &why)) {
		log_error("traces: OTEL_EXPORTER_OTLP_HEADERS: %s", why);
		curl_slist_free_all(h);
		free(otlp.res);
		return OTLP_INVALID;
	}
	size_t cap = 64;
	while (cap < (size_t)set->queue_size)
		cap *= 2;
	otlp.cells = mem_calloc(cap, sizeof *otlp.cells);
	for (size_t i = 0; i < cap; i++)
		atomic_init(&otlp.cells[i].seq, i);
	otlp.mask = cap - 1;
	atomic_store(&otlp.head, 0);
	atomic_store(&otlp.tail, 0);
	atomic_store(&otlp.woken, false);
	otlp.batch = set->batch_size < 1 ? 1 : (size_t)set->batch_size;
	if (otlp.batch > cap)
		otlp.batch = cap;
	otlp.delay_ms = set->schedule_delay_ms > 0 ? set->schedule_delay_ms : 1;
	otlp.timeout_ms = set->timeout_ms;
	otlp.version = mem_strdup(set->version ? set->version : "");
	otlp.headers = h;
	otlp.wake = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	CURL *c = otlp.curl = curl_easy_init();
	if (otlp.wake < 0 || !c) {
		log_error("traces: cannot start the exporter (no descriptor or no memory)");
		abort(); /* the process cannot work: mem.h's policy */
	}
	char agent[64];
	snprintf(agent, sizeof agent, "bikaroo-mcp/%s", otlp.version);
	curl_easy_setopt(c, CURLOPT_URL, set->endpoint);
	curl_easy_setopt(c, CURLOPT_POST, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, otlp.headers);
	curl_easy_setopt(c, CURLOPT_USERAGENT, agent);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L);
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, "http,https");
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, otlp_discard);
	curl_easy_setopt(c, CURLOPT_XFERINFOFUNCTION, otlp_progress);
	curl_easy_setopt(c, CURLOPT_NOPROGRESS, 0L);
	if (set->certificate && *set->certificate)
		curl_easy_setopt(c, CURLOPT_CAINFO, set->certificate);
	if (set->client_certificate && *set->client_certificate)
		curl_easy_setopt(c, CURLOPT_SSLCERT, set->client_certificate);
	if (set->client_key && *set->client_key)
		curl_easy_setopt(c, CURLOPT_SSLKEY, set->client_key);
	metrics_set(&metrics_span_queue_capacity, NULL, (long)cap);
	otlp_processed("queue_full", 0); /* the series shown at 0 from the start */
	atomic_store(&otlp.running, true);
	/* The thread takes no signal: the serving code waits for them (main.c). */
	sigset_t all, old;
	sigfillset(&all);
	pthread_sigmask(SIG_BLOCK, &all, &old);
	mem_thread(&otlp.thread, otlp_run, NULL, "span exporter");
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	log_info("traces: exporting spans over OTLP/HTTP (queue %zu, batch %zu, every %ld ms at "
		 "most)",
		 cap, otlp.batch, otlp.delay_ms);
	return OTLP_OK;
}

void otlp_stop(long flush_ms)
{
	if (!atomic_exchange(&otlp.running, false))
		return;
	otlp.flush_until = otlp_now_ms() + (flush_ms > 0 ? flush_ms : 0);
	atomic_store(&otlp.stopping, true);
	uint64_t one = 1;
	if (write(otlp.wake, &one, sizeof one) < 0)
		log_warn("traces: cannot wake the exporter: %s", strerror(errno));
	pthread_join(otlp.thread, NULL);
	curl_easy_cleanup(otlp.curl);
	curl_slist_free_all(otlp.headers);
	curl_global_cleanup();
	close(otlp.wake);
	free(otlp.cells);
	free(otlp.res);
	free(otlp.version);
	otlp.cells = NULL;
	otlp.res = NULL;
	otlp.version = NULL;
	atomic_store(&otlp.stopping, false);
}
