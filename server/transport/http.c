/* The HTTP adapter: per-request state is created on the first callback and freed in the
 * completion callback; libmicrohttpd types never leave this file. */
#include "http.h"

#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <microhttpd.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "access.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "guard.h"
#include "listen.h"
#include "server/auth/auth.h"
#include "server/protocol/dispatch.h"
#include "sse.h"

struct http_server {
	struct MHD_Daemon *daemon;
	const struct mcp_server *mcp;
	struct fleet_actor actor;
	bool tokens; /* every request carries a bearer token (auth.c); actor is unused */
	size_t max_body;
	char *allowed_hosts;
	char *allowed_origins;
	struct listen_hub *hub; /* the listen streams */
	struct guard *guard;    /* header and body deadlines, the pending-headers cap */
	http_ready_fn ready;
	atomic_bool draining;       /* http_set_draining(): /readyz says so */
	struct MHD_Daemon *metrics; /* GET /metrics, on its own address; NULL: none */
};

struct http_req {
	char *body;
	size_t len, cap;
	bool refused;     /* a response was already queued (e.g. 413) */
	bool probe;       /* GET /healthz or /readyz: answered once the request is read */
	bool too_large;   /* a streamed body passed the limit: discard the rest, then 413 */
	size_t discarded; /* bytes thrown away since */
	char reqid[24];
	/* For the access line and the metrics, written when the request completes. */
	struct timespec t0;
	char verb[8];        /* GET, POST... */
	const char *path;    /* static: the endpoint's name, for labels */
	const char *method;  /* static: response.method, or NULL */
	const char *name;    /* static: response.name, or NULL */
	const char *outcome; /* static, or NULL (then from the status) */
	char subject[FLEET_ID_MAX], client[FLEET_ID_MAX];
	char trace[33];
};

static atomic_ulong http_counter;
/* Stopping: new requests get 503 and every answer closes its connection (http_drain). */
static atomic_bool http_draining;
/* Requests between their headers and their answer's last byte (the completion callback). */
static atomic_int http_inflight;

/* Past this many discarded bytes of an oversized streamed body, the connection is closed. */
#define HTTP_DISCARD_MAX ((size_t)64 * 1024 * 1024)
/* Each connection's libmicrohttpd memory pool: the request line and headers (a token is at most
 * JWT_MAX_TOKEN, 8 KiB) and the read buffer; bodies are copied out as they come. libmicrohttpd
 * zeroes the pool between requests, so its size is paid per request (the profile of the issue
 * "Hot path at the database's own pace": 2.5-4.5% of the CPU at 64 KiB). */
#define HTTP_CONNECTION_MEMORY ((size_t)16 * 1024)

/* ---- allow-lists -------------------------------------------------------------------- */

static bool http_name_in(const char *name, size_t n, const char *list)
{
	static const char *const loopback[] = {"localhost", "127.0.0.1", "[::1]"};
	for (size_t i = 0; i < 3; i++)
		if (strlen(loopback[i]) == n && strncasecmp(name, loopback[i], n) == 0)
			return true;
	for (const char *p = list; p && *p;) {
		const char *end = strchr(p, ',');
		size_t len = end ? (size_t)(end - p) : strlen(p);
		while (len && *p == ' ')
			p++, len--;
		while (len && p[len - 1] == ' ')
			len--;
		if (len == n && n && strncasecmp(p, name, n) == 0)
			return true;
		p = end ? end + 1 : NULL;
	}
	return false;
}

/* Length of the host part of "host[:port]" ("[v6]" keeps its brackets); 0 if malformed. */
static size_t http_host_part(const char *hp)
{
	if (hp[0] == '[') {
		const char *close = strchr(hp, ']');
		if (!close || (close[1] && close[1] != ':'))
			return 0;
		return (size_t)(close - hp + 1);
	}
	size_t n = strcspn(hp, ":");
	if (hp[n] == ':')
		for (const char *p = hp + n + 1; *p; p++)
			if (*p < '0' || *p > '9')
				return 0;
	return n;
}

bool http_host_allowed(const char *host_port, const char *extra)
{
	if (!host_port || !*host_port || strlen(host_port) > 255)
		return false;
	size_t n = http_host_part(host_port);
	return n && http_name_in(host_port, n, extra);
}

bool http_origin_allowed(const char *origin, const char *extra)
{
	const char *p;
	if (strncasecmp(origin, "http://", 7) == 0)
		p = origin + 7;
	else if (strncasecmp(origin, "https://", 8) == 0)
		p = origin + 8;
	else
		return false; /* includes the literal "null" */
	if (strchr(p, '/') || strlen(p) > 255)
		return false;
	size_t n = http_host_part(p);
	return n && http_name_in(p, n, extra);
}

/* ---- responses ---------------------------------------------------------------------- */

/* Sends body (new, may be NULL) with status and extra headers: NULL-terminated name/value pairs. */
static enum MHD_Result http_send_headers(struct MHD_Connection *c, unsigned status, char *body,
					 const char *const *headers)
{
	struct MHD_Response *r = MHD_create_response_from_buffer(
		body ? strlen(body) : 0, body ? body : (void *)"",
		body ? MHD_RESPMEM_MUST_FREE : MHD_RESPMEM_PERSISTENT);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	if (body)
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "application/json");
	for (const char *const *h = headers; h && h[0]; h += 2)
		MHD_add_response_header(r, h[0], h[1]);
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-store");
	if (atomic_load(&http_draining))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A JSON-RPC error without id, for refusals before the body is read, with one extra header
 * (name NULL: none). */
static enum MHD_Result http_refuse_with(struct MHD_Connection *c, unsigned status, int code,
					const char *message, const char *name, const char *value)
{
	json_t *msg = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
				code, "message", message);
	char *body = jsonw_dump(msg);
	json_decref(msg);
	const char *h[] = {name, value, NULL};
	return http_send_headers(c, status, body, name ? h : NULL);
}

/* The same, with Allow when allow is not NULL. */
static enum MHD_Result http_refuse(struct MHD_Connection *c, unsigned status, int code,
				   const char *message, const char *allow)
{
	return http_refuse_with(c, status, code, message, allow ? MHD_HTTP_HEADER_ALLOW : NULL,
				allow);
}

/* ---- request checks ------------------------------------------------------------------ */

static const char *http_header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

/* Every occurrence of one header: its first two values and how many there are (a repeated
 * Host, Origin or Authorization is refused, never read as its first value). */
struct http_values {
	const char *name;
	const char *values[2];
	size_t n;
};

static enum MHD_Result http_collect(void *cls, enum MHD_ValueKind kind, const char *key,
				    const char *value)
{
	(void)kind;
	struct http_values *a = cls;
	if (key && strcasecmp(key, a->name) == 0) {
		if (a->n < 2)
			a->values[a->n] = value ? value : "";
		a->n++;
	}
	return MHD_YES;
}

static struct http_values http_header_all(struct MHD_Connection *c, const char *name)
{
	struct http_values v = {.name = name};
	MHD_get_connection_values(c, MHD_HEADER_KIND, http_collect, &v);
	return v;
}

static bool http_media_is(const char *value, const char *type)
{
	size_t n = strlen(type);
	while (*value == ' ')
		value++;
	return strncasecmp(value, type, n) == 0 &&
	       (value[n] == '\0' || value[n] == ';' || value[n] == ' ' || value[n] == ',');
}

/* The guard's record of c's connection (the socket context http_connection set). */
static struct guard_conn *http_guard_conn(struct MHD_Connection *c)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_SOCKET_CONTEXT);
	return ci ? ci->socket_context : NULL;
}

/* True when an Accept header names type ("application/json") or a wildcard covering it. */
static bool http_accepts(const char *accept, const char *type)
{
	char family[32]; /* the family wildcard of type (text/event-stream: text, slash, star) */
	snprintf(family, sizeof family, "%.*s/*", (int)strcspn(type, "/"), type);
	for (const char *p = accept; p;) {
		if (http_media_is(p, type) || http_media_is(p, family) || http_media_is(p, "*/*"))
			return true;
		p = strchr(p, ',');
		if (p)
			p++;
	}
	return false;
}

/* True when an Accept header admits application/json (absent Accept admits everything). */
static bool http_accepts_json(const char *accept)
{
	return !accept || http_accepts(accept, "application/json");
}

/* True when an Accept header admits text/event-stream: only then may a response become an SSE
 * stream. */
static bool http_accepts_sse(const char *accept)
{
	return http_accepts(accept, "text/event-stream");
}

/* Queues r (consumed) as a 200 SSE stream. */
static enum MHD_Result http_queue_sse(struct MHD_Connection *c, struct MHD_Response *r)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	if (atomic_load(&http_draining))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

/* A 200 whose body is SSE events (server/sse.h); body is stolen. */
static enum MHD_Result http_send_sse(struct MHD_Connection *c, char *body)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	return http_queue_sse(c, r);
}

/* ---- subscriptions/listen streams (2026-07-28) -------------------------------------------
 * A listen request's response is an SSE stream that stays open, fed by the server's listen hub
 * (listen.h): the acknowledgement first, then notifications/resources/updated events, a comment
 * line on every tick of the change feed as a keep-alive, and the request's result when the
 * stream ends. libmicrohttpd pulls the bytes through http_stream_read; with nothing to send the
 * connection is suspended, and resumed when something arrives. libmicrohttpd is never called
 * with one of our locks held by another thread (a suspended connection cannot go away, so the
 * one who flips `suspended` may resume it after unlocking). */

/* Listen streams one server holds at once. */
#define HTTP_MAX_STREAMS 256
/* Bytes a stream may hold unsent; a client that reads slower than this is cut off. */
#define HTTP_STREAM_MAX_BYTES ((size_t)256 * 1024)

struct http_stream {
	pthread_mutex_t lock;        /* guards what follows */
	struct MHD_Connection *conn; /* NULL once libmicrohttpd released the response */
	char *buf;
	size_t len, off, cap;
	bool suspended, ending;
	int refs;            /* the hub's and the response's */
	struct guard *guard; /* watches for the client hanging up (borrowed) */
};

/* Streams whose response libmicrohttpd still holds (for the drain at shutdown). */
static atomic_int http_live_streams;

static void http_stream_unref(void *out)
{
	struct http_stream *st = out;
	pthread_mutex_lock(&st->lock);
	bool last = --st->refs == 0;
	pthread_mutex_unlock(&st->lock);
	if (!last)
		return;
	free(st->buf);
	pthread_mutex_destroy(&st->lock);
	free(st);
}

/* Appends text (under st->lock); returns the connection to resume, or NULL. */
static struct MHD_Connection *http_stream_append(struct http_stream *st, const char *text)
{
	size_t n = strlen(text);
	if (!st->conn || st->ending)
		return NULL;
	if (st->len - st->off + n > HTTP_STREAM_MAX_BYTES) {
		log_warn("listen stream: the client reads too slowly; closing it");
		st->ending = true; /* the reader ends the stream once the buffer is drained */
	} else {
		if (st->off && st->off == st->len)
			st->off = st->len = 0;
		if (st->len + n > st->cap) {
			st->cap = (st->len + n) * 2;
			st->buf = mem_realloc(st->buf, st->cap);
		}
		memcpy(st->buf + st->len, text, n);
		st->len += n;
	}
	if (!st->suspended)
		return NULL;
	st->suspended = false;
	return st->conn;
}

static void *http_stream_text(struct http_stream *st, const char *text, bool end)
{
	pthread_mutex_lock(&st->lock);
	struct MHD_Connection *resume = text ? http_stream_append(st, text) : NULL;
	if (end) {
		st->ending = true;
		if (st->suspended && st->conn) {
			st->suspended = false;
			resume = st->conn;
		}
	}
	pthread_mutex_unlock(&st->lock);
	return resume;
}

/* listen_out_ops for an HTTP stream: one SSE event per message. */
static void *http_stream_write(void *out, const json_t *msg)
{
	char *json = jsonw_dump(msg);
	char *ev = mem_printf("event: message\ndata: %s\n\n", json);
	free(json);
	void *resume = http_stream_text(out, ev, false);
	free(ev);
	return resume;
}

static void *http_stream_ping(void *out)
{
	return http_stream_text(out, ": keep-alive\n\n", false);
}

static void *http_stream_end(void *out)
{
	return http_stream_text(out, NULL, true);
}

static void http_stream_kick(void *token)
{
	MHD_resume_connection(token);
}

static bool http_stream_gone(void *out)
{
	struct http_stream *st = out;
	pthread_mutex_lock(&st->lock);
	bool gone = st->conn == NULL;
	pthread_mutex_unlock(&st->lock);
	return gone;
}

static const struct listen_out_ops http_stream_ops = {
	.write = http_stream_write,
	.ping = http_stream_ping,
	.end = http_stream_end,
	.kick = http_stream_kick,
	.gone = http_stream_gone,
	.release = http_stream_unref,
};

static ssize_t http_stream_read(void *cls, uint64_t pos, char *out, size_t max)
{
	(void)pos;
	struct http_stream *st = cls;
	ssize_t n = 0;
	pthread_mutex_lock(&st->lock);
	if (st->off < st->len) {
		size_t k = st->len - st->off < max ? st->len - st->off : max;
		memcpy(out, st->buf + st->off, k);
		st->off += k;
		n = (ssize_t)k;
	} else if (st->ending) {
		n = MHD_CONTENT_READER_END_OF_STREAM;
	} else {
		st->suspended = true;
		MHD_suspend_connection(st->conn);
	}
	pthread_mutex_unlock(&st->lock);
	return n;
}

/* The client hung up (guard.h; under the guard's lock, so st is alive): the stream ends now,
 * not at its next keep-alive, and its slot is free for the next listen. */
static void http_stream_hangup(void *arg)
{
	void *resume = http_stream_text(arg, NULL, true);
	if (resume)
		MHD_resume_connection(resume);
}

/* libmicrohttpd is done with the response (the client left, or the stream ended). */
static void http_stream_released(void *cls)
{
	struct http_stream *st = cls;
	if (st->guard)
		guard_unwatch(st->guard, st);
	pthread_mutex_lock(&st->lock);
	st->conn = NULL;
	pthread_mutex_unlock(&st->lock);
	atomic_fetch_sub(&http_live_streams, 1);
	static const char *const http_label[] = {"http"};
	metrics_add(&metrics_listen_streams, http_label, -1);
	http_stream_unref(st);
}

/* What one request's listen (if any) opened. */
struct http_listen_req {
	struct http_server *srv;
	struct MHD_Connection *conn;
	struct http_stream *opened;
};

/* mcp_listen.open for one HTTP request. */
static enum mcp_listen_status http_listen_open(void *ctx, const struct fleet_actor *actor,
					       const json_t *id, const json_t *ack,
					       const char *const *uris, size_t n)
{
	struct http_listen_req *lr = ctx;
	struct http_stream *st = mem_calloc(1, sizeof *st);
	pthread_mutex_init(&st->lock, NULL);
	st->conn = lr->conn;
	st->refs = 2;
	st->guard = lr->srv->guard;
	atomic_fetch_add(&http_live_streams, 1);
	static const char *const http_label[] = {"http"};
	metrics_add(&metrics_listen_streams, http_label, 1);
	enum mcp_listen_status ls =
		listen_hub_open(lr->srv->hub, actor, id, ack, uris, n, &http_stream_ops, st);
	if (ls != MCP_LISTEN_OK) {
		http_stream_released(st); /* the response's reference */
		http_stream_unref(st);    /* the hub's */
		return ls;
	}
	lr->opened = st;
	return MCP_LISTEN_OK;
}

/* The response of a listen request: its stream, open until the client leaves. */
static enum MHD_Result http_send_stream(struct MHD_Connection *c, struct http_stream *st)
{
	struct MHD_Response *r = MHD_create_response_from_callback(
		MHD_SIZE_UNKNOWN, 4096, http_stream_read, st, http_stream_released);
	if (!r) {
		http_stream_released(st);
		return MHD_NO;
	}
	guard_watch(st->guard, http_guard_conn(c), http_stream_hangup, st);
	return http_queue_sse(c, r);
}

/* Waits (at most about two seconds) until libmicrohttpd has sent every ended stream to its
 * end, so that stopping the daemon does not cut a final result short. */
static void http_streams_drain(void)
{
	for (int i = 0; i < 200 && atomic_load(&http_live_streams) > 0; i++) {
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
}

/* ---- authorization (server/auth.c decides; this file only speaks HTTP) ----------------- */

/* RFC 9728 metadata: public, cacheable by anyone, readable cross-origin. */
static enum MHD_Result http_prm(struct MHD_Connection *c, const char *method)
{
	if (strcmp(method, MHD_HTTP_METHOD_OPTIONS) == 0) {
		/* CORS preflight from a browser-based client on another origin. */
		const char *h[] = {MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN,
				   "*",
				   "Access-Control-Allow-Methods",
				   "GET, HEAD, OPTIONS",
				   "Access-Control-Allow-Headers",
				   "MCP-Protocol-Version",
				   "Access-Control-Max-Age",
				   "86400",
				   NULL};
		return http_send_headers(c, 204, NULL, h);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		const char *h[] = {MHD_HTTP_HEADER_ALLOW, "GET, HEAD, OPTIONS", NULL};
		return http_send_headers(c, 405, NULL, h);
	}
	json_t *doc = auth_prm_document();
	char *body = jsonw_dump(doc);
	json_decref(doc);
	const char *h[] = {MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, "*", NULL};
	return http_send_headers(c, 200, body, h);
}

/* Steps 4-5 of the order of checks: the bearer token names the actor, or the request is
 * refused here (401/400/503) with a challenge. Returns true when *actor is set. */
static bool http_authenticate(struct MHD_Connection *c, struct http_req *st,
			      struct fleet_actor *actor, enum MHD_Result *ret)
{
	struct http_values a = http_header_all(c, MHD_HTTP_HEADER_AUTHORIZATION);
	const char *token = NULL, *why = NULL;
	size_t len = 0;
	enum auth_status as = auth_bearer(a.values, a.n < 2 ? a.n : 2, &token, &len);
	/* A token in the query (RFC 6750 section 2.3) is never used. Alone it is no credentials
	 * (401 above); next to a header it is more than one method: a malformed request. */
	if (a.n && MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "access_token"))
		as = AUTH_BAD_REQUEST, why = "a token in the header and in the query";
	if (as == AUTH_OK)
		as = auth_validate(token, len, actor, &why);
	if (as == AUTH_OK)
		return true;
	st->outcome = as == AUTH_UNAVAILABLE ? "unavailable" : "unauthorized";
	unsigned status;
	const char *error, *text;
	switch (as) {
	case AUTH_NO_TOKEN:
		status = 401, error = "unauthorized";
		text = "An access token is required: Authorization: Bearer <token>";
		break;
	case AUTH_BAD_REQUEST:
		status = 400, error = "invalid_request";
		text = "Send exactly one Authorization header of the form: Bearer <token>";
		break;
	case AUTH_UNAVAILABLE:
		status = 503, error = "temporarily_unavailable";
		text = "The authorization server cannot be reached; retry later";
		break;
	default:
		status = 401, error = "invalid_token";
		text = why ? why : "The access token is not valid for this server";
		break;
	}
	log_msg(LOG_WARN, st->reqid, "refused: %s (%s)", error, why ? why : "-");
	json_t *msg = json_pack("{s:s, s:s}", "error", error, "error_description", text);
	char *body = jsonw_dump(msg);
	json_decref(msg);
	char retry[16];
	snprintf(retry, sizeof retry, "%d", MCP_RETRY_AFTER);
	char *challenge = status == 503 ? NULL : auth_challenge(as, NULL, why);
	const char *h[] = {status == 503 ? MHD_HTTP_HEADER_RETRY_AFTER
					 : MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			   status == 503 ? retry : challenge, NULL};
	*ret = http_send_headers(c, status, body, h);
	free(challenge);
	return false;
}

static enum MHD_Result http_handle_mcp(struct http_server *s, struct MHD_Connection *c,
				       struct http_req *st)
{
	struct fleet_actor token_actor;
	if (s->tokens) {
		enum MHD_Result refused;
		if (!http_authenticate(c, st, &token_actor, &refused))
			return refused;
	}
	const char *ct = http_header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!ct || !http_media_is(ct, "application/json"))
		return http_refuse(c, 415, MCP_INVALID_REQUEST,
				   "Unsupported Media Type: Content-Type must be application/json",
				   NULL);
	if (!http_accepts_json(http_header(c, MHD_HTTP_HEADER_ACCEPT)))
		return http_refuse(c, 406, MCP_INVALID_REQUEST,
				   "Not Acceptable: Accept must admit application/json", NULL);
	struct mcp_request req = {
		.transport = MCP_TRANSPORT_HTTP,
		.body = st->body ? st->body : "",
		.body_len = st->len,
		.h_protocol_version = http_header(c, "MCP-Protocol-Version"),
		.h_method = http_header(c, "Mcp-Method"),
		.h_name = http_header(c, "Mcp-Name"),
		.actor = s->tokens ? &token_actor : &s->actor,
		.reqid = st->reqid,
		.per_principal = s->tokens,
		.trace_id = st->trace,
	};
	snprintf(st->subject, sizeof st->subject, "%s", req.actor->subject);
	snprintf(st->client, sizeof st->client, "%s", req.actor->client_id);
	struct sse_buf sse = {0};
	struct http_listen_req lr = {.srv = s, .conn = c};
	struct mcp_listen listen = {http_listen_open, &lr};
	req.listen = &listen;
	if (http_accepts_sse(http_header(c, MHD_HTTP_HEADER_ACCEPT))) {
		req.emit = sse_emit;
		req.emit_ctx = &sse;
	}
	struct mcp_response resp;
	mcp_handle(s->mcp, &req, &resp);
	st->method = resp.method;
	st->name = resp.name;
	st->outcome = resp.outcome;
	if (lr.opened) {
		sse_free(&sse);
		mcp_response_free(&resp);
		return http_send_stream(c, lr.opened);
	}
	char *ch = resp.missing_scope ? auth_challenge(AUTH_OK, resp.missing_scope, NULL) : NULL;
	char *body = resp.body;
	resp.body = NULL;
	/* Notifications went out before the result: answer as an SSE stream (a refusal keeps its
	 * status and plain JSON body; the notifications are then dropped). */
	if (sse.events && body && resp.http_status == 200) {
		char *stream = sse_finish(&sse, body);
		free(body);
		free(ch);
		return http_send_sse(c, stream);
	}
	sse_free(&sse);
	char retry[24];
	snprintf(retry, sizeof retry, "%ld", resp.retry_after ? resp.retry_after : MCP_RETRY_AFTER);
	const char *h[] = {ch ? MHD_HTTP_HEADER_WWW_AUTHENTICATE : MHD_HTTP_HEADER_RETRY_AFTER,
			   ch ? ch : retry, NULL};
	enum MHD_Result ret =
		http_send_headers(c, (unsigned)resp.http_status, body,
				  ch || resp.unavailable || resp.retry_after ? h : NULL);
	free(ch);
	return ret;
}

/* ---- connections: the slow-client guard (guard.h) sees each one from accept to close ---- */

/* libmicrohttpd tells of a connection before its descriptor is closed. */
static void http_connection(void *cls, struct MHD_Connection *c, void **socket_context,
			    enum MHD_ConnectionNotificationCode code)
{
	struct http_server *s = cls;
	if (code == MHD_CONNECTION_NOTIFY_STARTED) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
		*socket_context = ci ? guard_opened(s->guard, ci->connect_fd) : NULL;
	} else {
		guard_closed(s->guard, *socket_context);
		*socket_context = NULL;
	}
}

/* Raises the soft limit on open descriptors to what max_conn connections need (plus database
 * connections, logs, the listen socket); returns the connections the limit allows. */
static long http_fd_budget(long max_conn)
{
	const long spare = 128;
	struct rlimit rl;
	if (getrlimit(RLIMIT_NOFILE, &rl) != 0)
		return max_conn;
	rlim_t need = (rlim_t)(max_conn + spare);
	if (rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < need) {
		rl.rlim_cur =
			rl.rlim_max == RLIM_INFINITY || rl.rlim_max > need ? need : rl.rlim_max;
		if (setrlimit(RLIMIT_NOFILE, &rl) != 0 || rl.rlim_cur < need) {
			long fit =
				(long)rl.rlim_cur > 2 * spare ? (long)rl.rlim_cur - spare : spare;
			log_warn("http: the descriptor limit allows %ld connections, not %ld", fit,
				 max_conn);
			return fit;
		}
	}
	return max_conn;
}

/* ---- health (public: no token, no data, no Host check: a load balancer or an orchestrator
 * asks by address) ------------------------------------------------------------------------- */

static enum MHD_Result http_health(struct http_server *s, struct MHD_Connection *c,
				   const char *method, bool ready)
{
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		const char *h[] = {MHD_HTTP_HEADER_ALLOW, "GET, HEAD", NULL};
		return http_send_headers(c, 405, NULL, h);
	}
	json_t *missing = json_array();
	if (ready && (atomic_load(&s->draining) || atomic_load(&http_draining)))
		json_array_append_new(missing, json_string("draining: this instance is stopping"));
	else if (ready && s->ready)
		s->ready(missing);
	bool ok = json_array_size(missing) == 0;
	json_t *doc = ok ? json_pack("{s:s}", "status", ready ? "ready" : "alive")
			 : json_pack("{s:s, s:O}", "status", "not ready", "missing", missing);
	json_decref(missing);
	char *body = jsonw_dump(doc);
	json_decref(doc);
	return http_send_headers(c, ok ? 200 : 503, body, NULL);
}

void http_set_draining(struct http_server *s, bool draining)
{
	atomic_store(&s->draining, draining);
}

/* The endpoint's name in access lines and metric labels: a fixed set, never the client's URL. */
static const char *http_path_label(const char *url)
{
	static const char *const known[] = {"/mcp", "/healthz", "/readyz"};
	for (size_t i = 0; i < sizeof known / sizeof known[0]; i++)
		if (strcmp(url, known[i]) == 0)
			return known[i];
	return auth_prm_path(url) ? "/.well-known/oauth-protected-resource" : "other";
}

static enum MHD_Result http_route(struct http_server *s, struct MHD_Connection *c, const char *url,
				  const char *method, const char *upload, size_t *upload_size,
				  struct http_req *st, bool first)
{
	if (first) {
		if (strcmp(st->path, "/healthz") == 0 || strcmp(st->path, "/readyz") == 0) {
			/* Answered at the end of the request, not now: libmicrohttpd closes the
			 * connection after an answer queued before the request was read, and a
			 * probe (or a load balancer) keeps its connection. */
			st->probe = true;
			return MHD_YES;
		}
		if (atomic_load(&http_draining)) {
			/* Not begun, so nothing done: another instance may take it. */
			st->refused = true;
			return http_refuse_with(
				c, 503, MCP_INTERNAL_ERROR,
				"Service Unavailable: this server is stopping; retry "
				"(nothing was done)",
				MHD_HTTP_HEADER_RETRY_AFTER, "1");
		}
		/* 1: Host and Origin against DNS rebinding; exactly one of each (RFC 9112 section
		 * 3.2: a repeated Host is a 400). */
		struct http_values host = http_header_all(c, MHD_HTTP_HEADER_HOST);
		struct http_values origin = http_header_all(c, MHD_HTTP_HEADER_ORIGIN);
		if (host.n > 1) {
			log_msg(LOG_WARN, st->reqid, "refused: more than one Host header");
			st->refused = true;
			return http_refuse(c, 400, MCP_INVALID_REQUEST,
					   "Bad Request: more than one Host header", NULL);
		}
		if (!http_host_allowed(host.values[0], s->allowed_hosts) || origin.n > 1 ||
		    (origin.n && !http_origin_allowed(origin.values[0], s->allowed_origins))) {
			log_msg(LOG_WARN, st->reqid, "refused: Host or Origin not allowed");
			st->refused = true;
			return http_refuse(c, 403, MCP_INVALID_REQUEST,
					   "Forbidden: Host or Origin not allowed", NULL);
		}
		if (auth_prm_path(url)) {
			st->refused = true;
			return http_prm(c, method);
		}
		if (strcmp(url, "/mcp") != 0) {
			st->refused = true;
			return http_refuse(c, 404, MCP_INVALID_REQUEST,
					   "Not Found: the endpoint is /mcp", NULL);
		}
		/* 2: POST only. */
		if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
			st->refused = true;
			return http_refuse(c, 405, MCP_INVALID_REQUEST,
					   "Method Not Allowed: this endpoint accepts POST only",
					   "POST");
		}
		/* 3: the declared size, before reading anything. */
		const char *cl = http_header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > s->max_body) {
			st->refused = true;
			return http_refuse(c, 413, MCP_INVALID_REQUEST, "Payload Too Large", NULL);
		}
		return MHD_YES;
	}
	if (!*upload_size)
		guard_body_done(s->guard, http_guard_conn(c));
	if (st->probe) {
		if (!*upload_size)
			return http_health(s, c, method, strcmp(url, "/readyz") == 0);
		*upload_size = 0; /* a probe's body, if any, is not read */
		return MHD_YES;
	}
	if (st->refused) {
		*upload_size = 0; /* discard what is still arriving; the answer is already queued */
		return MHD_YES;
	}
	if (*upload_size) {
		/* 3 again: streamed bodies (chunked) are counted as they arrive. libmicrohttpd
		 * cannot answer in the middle of a body, so the rest is discarded (not stored)
		 * and the 413 goes out at its end; a sender that never stops is cut off. */
		if (st->too_large || st->len + *upload_size > s->max_body) {
			st->too_large = true;
			st->discarded += *upload_size;
			*upload_size = 0;
			free(st->body);
			st->body = NULL;
			st->len = st->cap = 0;
			return st->discarded > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
		}
		if (st->len + *upload_size + 1 > st->cap) {
			st->cap = (st->len + *upload_size + 1) * 2;
			if (st->cap > s->max_body + 1)
				st->cap = s->max_body + 1;
			st->body = mem_realloc(st->body, st->cap);
		}
		memcpy(st->body + st->len, upload, *upload_size);
		st->len += *upload_size;
		st->body[st->len] = '\0';
		*upload_size = 0;
		return MHD_YES;
	}
	if (st->too_large) {
		st->refused = true;
		return http_refuse(c, 413, MCP_INVALID_REQUEST, "Payload Too Large", NULL);
	}
	return http_handle_mcp(s, c, st);
}

static enum MHD_Result http_access(void *cls, struct MHD_Connection *c, const char *url,
				   const char *method, const char *version, const char *upload,
				   size_t *upload_size, void **con_cls)
{
	(void)version;
	struct http_server *s = cls;
	struct http_req *st = *con_cls;
	bool first = !st;
	if (first) {
		guard_headers_done(s->guard, http_guard_conn(c));
		st = mem_calloc(1, sizeof *st);
		clock_gettime(CLOCK_MONOTONIC, &st->t0);
		snprintf(st->reqid, sizeof st->reqid, "r%lu",
			 atomic_fetch_add(&http_counter, 1) + 1);
		st->path = http_path_label(url);
		log_trace_id(http_header(c, "traceparent"), st->trace);
		snprintf(st->verb, sizeof st->verb, "%s", method);
		*con_cls = st;
		atomic_fetch_add(&http_inflight, 1); /* until http_completed */
	}
	return http_route(s, c, url, method, upload, upload_size, st, first);
}

/* The request's access line and metrics (access.h). */
static void http_account(const struct http_req *st, unsigned http_status)
{
	/* Probes come every few seconds: their lines are debug, the rest info. */
	bool probe = strcmp(st->path, "/healthz") == 0 || strcmp(st->path, "/readyz") == 0;
	struct access_entry e = {
		.transport = "http",
		.reqid = st->reqid,
		.trace = st->trace,
		.http = st->verb,
		.path = st->path,
		.method = st->method,
		.name = st->name,
		.subject = st->subject,
		.client = st->client,
		.outcome = st->outcome         ? st->outcome
			   : http_status == 0  ? "aborted"
			   : http_status < 400 ? "ok"
					       : "refused",
		.status = http_status,
		.t0 = st->t0,
		.quiet = probe,
	};
	access_record(&e);
}

static void http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
			   enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	struct http_server *s = cls;
	guard_request_done(s->guard, http_guard_conn(c));
	struct http_req *st = *con_cls;
	if (st) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
		http_account(st, ci ? ci->http_status : 0);
		free(st->body);
		free(st);
		atomic_fetch_sub(&http_inflight, 1);
	}
	*con_cls = NULL;
}

/* libmicrohttpd's own messages: fmt is its format string. */
__attribute__((format(printf, 2, 0))) static void http_mhd_log(void *cls, const char *fmt,
							       va_list ap)
{
	(void)cls;
	char line[512];
	vsnprintf(line, sizeof line, fmt, ap);
	log_warn("http: %s", line);
}

/* Writes the bound port to path (when set) once the socket accepts connections, atomically
 * (write then rename), for the harnesses and scripts that start the server on port 0. */
static int http_write_ready(const char *path, unsigned port)
{
	if (!*path)
		return 0;
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

int http_parse_address(const char *text, long *port_out, struct sockaddr_storage *sa, unsigned *len)
{
	char host[64];
	const char *p = text;
	size_t n;
	const char *rest;
	if (*p == '[') {
		const char *close = strchr(p, ']');
		if (!close)
			return -1;
		n = (size_t)(close - p - 1);
		p++;
		rest = close + 1;
	} else if (port_out) {
		const char *colon = strrchr(p, ':');
		if (!colon || strchr(p, ':') != colon)
			return -1; /* an IPv6 address with a port needs its brackets */
		n = (size_t)(colon - p);
		rest = colon;
	} else {
		n = strlen(p);
		rest = p + n;
	}
	if (n == 0 || n >= sizeof host)
		return -1;
	memcpy(host, p, n);
	host[n] = '\0';
	long port = 0;
	if (port_out) {
		char *end = NULL;
		if (*rest != ':' || !rest[1])
			return -1;
		errno = 0;
		port = strtol(rest + 1, &end, 10);
		if (errno || *end || port < 0 || port > 65535)
			return -1;
		*port_out = port;
	} else if (*rest) {
		return -1;
	}
	memset(sa, 0, sizeof *sa);
	struct sockaddr_in *v4 = (struct sockaddr_in *)sa;
	struct sockaddr_in6 *v6 = (struct sockaddr_in6 *)sa;
	if (inet_pton(AF_INET, host, &v4->sin_addr) == 1) {
		v4->sin_family = AF_INET;
		v4->sin_port = htons((uint16_t)port);
		*len = sizeof *v4;
		return 0;
	}
	if (inet_pton(AF_INET6, host, &v6->sin6_addr) == 1) {
		v6->sin6_family = AF_INET6;
		v6->sin6_port = htons((uint16_t)port);
		*len = sizeof *v6;
		return 0;
	}
	return -1;
}

/* A listening socket on sa:port (port overrides sa's), or -1 with errno set. */
static int http_listen_socket(struct sockaddr_storage *sa, unsigned len, long port)
{
	if (sa->ss_family == AF_INET6)
		((struct sockaddr_in6 *)sa)->sin6_port = htons((uint16_t)port);
	else
		((struct sockaddr_in *)sa)->sin_port = htons((uint16_t)port);
	int fd = socket(sa->ss_family, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	int on = 1;
	setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &on, sizeof on);
	if (sa->ss_family == AF_INET6)
		setsockopt(fd, IPPROTO_IPV6, IPV6_V6ONLY, &on, sizeof on);
	if (bind(fd, (struct sockaddr *)sa, (socklen_t)len) != 0 || listen(fd, 128) != 0) {
		int e = errno;
		close(fd);
		errno = e;
		return -1;
	}
	return fd;
}

static unsigned http_bound_port(int fd)
{
	struct sockaddr_storage sa;
	socklen_t len = sizeof sa;
	if (getsockname(fd, (struct sockaddr *)&sa, &len) != 0)
		return 0;
	return ntohs(sa.ss_family == AF_INET6 ? ((struct sockaddr_in6 *)&sa)->sin6_port
					      : ((struct sockaddr_in *)&sa)->sin_port);
}

/* GET /metrics (the metrics listener's only path). */
static enum MHD_Result http_metrics_access(void *cls, struct MHD_Connection *c, const char *url,
					   const char *method, const char *version,
					   const char *upload, size_t *upload_size, void **con_cls)
{
	(void)cls, (void)version, (void)upload, (void)upload_size;
	if (!*con_cls) { /* the headers: answer once the (empty) body is in */
		*con_cls = (void *)1;
		return MHD_YES;
	}
	unsigned status = 200;
	char *body;
	if (strcmp(url, "/metrics") != 0) {
		status = 404;
		body = mem_strdup("Not Found: the metrics are at /metrics\n");
	} else if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
		   strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		status = 405;
		body = mem_strdup("Method Not Allowed: GET /metrics\n");
	} else {
		body = metrics_render();
	}
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == 200 ? "text/plain; version=0.0.4; charset=utf-8"
					      : "text/plain; charset=utf-8");
	if (status == 405)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* The metrics listener on set->metrics_listen; 0 (also when none is configured), or -1
 * (logged). */
static int http_metrics_start(struct http_server *s, const char *listen)
{
	if (!*listen)
		return 0;
	struct sockaddr_storage sa;
	unsigned len;
	long port;
	if (http_parse_address(listen, &port, &sa, &len) != 0) {
		log_error("BIKAROO_METRICS_LISTEN must be ADDRESS:PORT (127.0.0.1:9464, "
			  "[::1]:9464), got %s",
			  listen);
		return -1;
	}
	int fd = http_listen_socket(&sa, len, port);
	if (fd < 0) {
		log_error("cannot listen for metrics on %s (BIKAROO_METRICS_LISTEN): %s", listen,
			  strerror(errno));
		return -1;
	}
	unsigned bound = http_bound_port(fd);
	s->metrics = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_POLL | MHD_USE_ERROR_LOG |
			(sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, http_metrics_access, s, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log,
		NULL, MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)10,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)64, MHD_OPTION_END);
	if (!s->metrics) {
		close(fd);
		log_error("cannot serve metrics on %s (BIKAROO_METRICS_LISTEN)", listen);
		return -1;
	}
	char shown[80];
	snprintf(shown, sizeof shown, "%.*s", (int)(strrchr(listen, ':') - listen), listen);
	log_info("metrics at http://%s:%u/metrics", shown, bound);
	return 0;
}

enum http_status http_start(const struct http_settings *set, const struct mcp_server *mcp,
			    const struct fleet_actor *actor, struct http_server **out,
			    unsigned *bound_port)
{
	struct sockaddr_storage sa;
	unsigned salen;
	if (http_parse_address(set->listen, NULL, &sa, &salen) != 0) {
		log_error("BIKAROO_LISTEN must be an IPv4 or IPv6 address (127.0.0.1, ::1), got %s",
			  set->listen);
		return HTTP_START_FAILED;
	}
	int fd = http_listen_socket(&sa, salen, set->port);
	if (fd < 0) {
		log_error("cannot listen on %s port %ld (BIKAROO_LISTEN, BIKAROO_PORT): %s",
			  set->listen, set->port, strerror(errno));
		return HTTP_START_FAILED;
	}
	*bound_port = http_bound_port(fd);
	struct http_server *s = mem_calloc(1, sizeof *s);
	s->ready = set->ready;
	s->mcp = mcp;
	s->tokens = actor == NULL;
	if (actor)
		s->actor = *actor;
	s->max_body = set->max_body;
	s->allowed_hosts = mem_strdup(set->allowed_hosts);
	s->allowed_origins = mem_strdup(set->allowed_origins);
	s->hub = listen_hub_new(mcp->changes, HTTP_MAX_STREAMS, (size_t)set->listen_per_subject,
				set->keepalive_s);
	struct guard_settings gs = {.header_ms = set->header_timeout_ms,
				    .body_ms = set->body_timeout_ms,
				    .max_pending = set->max_pending};
	s->guard = guard_new(&gs);
	long max_conn = http_fd_budget(set->max_connections);
	s->daemon = MHD_start_daemon(
		MHD_USE_INTERNAL_POLLING_THREAD | MHD_USE_EPOLL | MHD_USE_ERROR_LOG |
			MHD_ALLOW_SUSPEND_RESUME | (sa.ss_family == AF_INET6 ? MHD_USE_IPv6 : 0),
		0, NULL, NULL, http_access, s, MHD_OPTION_EXTERNAL_LOGGER, http_mhd_log, NULL,
		MHD_OPTION_LISTEN_SOCKET, fd, MHD_OPTION_THREAD_POOL_SIZE, (unsigned)set->threads,
		MHD_OPTION_NOTIFY_COMPLETED, http_completed, s, MHD_OPTION_NOTIFY_CONNECTION,
		http_connection, s, MHD_OPTION_CONNECTION_TIMEOUT, (unsigned)30,
		MHD_OPTION_CONNECTION_LIMIT, (unsigned)max_conn, MHD_OPTION_PER_IP_CONNECTION_LIMIT,
		(unsigned)set->max_per_ip, MHD_OPTION_CONNECTION_MEMORY_LIMIT,
		HTTP_CONNECTION_MEMORY, MHD_OPTION_END);
	if (!s->daemon) {
		close(fd);
		log_error("cannot serve HTTP on %s port %ld (BIKAROO_LISTEN, BIKAROO_PORT)",
			  set->listen, set->port);
		http_stop(s);
		return HTTP_START_FAILED;
	}
	if (http_metrics_start(s, set->metrics_listen ? set->metrics_listen : "") != 0) {
		http_stop(s);
		return HTTP_START_FAILED;
	}
	if (http_write_ready(set->ready_file, *bound_port) != 0)
		log_warn("cannot write the ready file %s", set->ready_file);
	*out = s;
	return HTTP_OK;
}

long http_drain(struct http_server *s, long limit_ms)
{
	struct timespec t0, now;
	clock_gettime(CLOCK_MONOTONIC, &t0);
	/* From here on every new request is answered 503 "stopping; retry (nothing was done)" with
	 * Connection: close (http_route, http_send_headers). The listening socket stays open:
	 * libmicrohttpd 0.9.75's MHD_quiesce_daemon() races its own epoll workers (both remove the
	 * socket from a worker's epoll set; the loser aborts the process, "Failed to remove listen
	 * FD from epoll set", seen in CI at a stop with 16 workers). */
	atomic_store(&http_draining, true);
	guard_cut_waiting(s->guard);      /* idle ones: a proxy sends its next request elsewhere */
	listen_hub_end_all(s->hub, true); /* each stream ends with its result */
	long waited = 0;
	int left;
	while ((left = atomic_load(&http_inflight)) > 0 && waited < limit_ms) {
		struct timespec ts = {0, 5 * 1000 * 1000};
		nanosleep(&ts, NULL);
		clock_gettime(CLOCK_MONOTONIC, &now);
		waited = (now.tv_sec - t0.tv_sec) * 1000 + (now.tv_nsec - t0.tv_nsec) / 1000000;
	}
	if (left > 0)
		log_warn("http: %d request(s) still unanswered after the drain limit (%ld ms)",
			 left, limit_ms);
	return waited;
}

void http_stop(struct http_server *s)
{
	if (!s)
		return;
	if (s->daemon) {
		/* Listen streams end with their result; libmicrohttpd may stop only when no
		 * connection is suspended, which ending them ensures. */
		listen_hub_end_all(s->hub, true);
		http_streams_drain();
		MHD_stop_daemon(s->daemon);
	}
	if (s->metrics)
		MHD_stop_daemon(s->metrics);
	guard_free(s->guard); /* after the daemon: every connection was closed */
	listen_hub_free(s->hub);
	free(s->allowed_hosts);
	free(s->allowed_origins);
	free(s);
}
