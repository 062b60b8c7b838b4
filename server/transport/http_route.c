/* Routing of the HTTP transport (http_route.h). */
#include "http_route.h"

#include <limits.h>
#include <netdb.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "access.h"
#include "common/jsonw.h"
#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "common/trace.h"
#include "http_admit.h"
#include "http_allow.h"
#include "http_auth.h"
#include "http_frame.h"
#include "http_health.h"
#include "http_reply.h"
#include "http_server.h"
#include "http_stream.h"
#include "http_trace.h"
#include "server/auth/auth.h"
#include "server/protocol/dispatch.h"
#include "sse.h"

/* Past this many discarded bytes of an oversized streamed body, the connection is closed. */
#define HTTP_DISCARD_MAX ((size_t)64 * 1024 * 1024)

/* The protocol core answers st's call into st->out, within the call's deadline. local_only:
 * outside a task, where nothing may wait; false (nothing done) when the call's method is not
 * local, to be run as a task. */
static bool http_call_answer(struct http_req *st, bool local_only)
{
	struct http_server *s = st->srv;
	struct mcp_request req = {
		.transport = MCP_TRANSPORT_HTTP,
		.body = st->body ? st->body : "",
		.body_len = st->len,
		.h_protocol_version = st->h_version,
		.h_method = st->h_method,
		.h_name = st->h_name,
		.actor = s->tokens ? &st->actor : &s->actor,
		.reqid = st->reqid,
		.per_principal = s->tokens,
		.trace_id = st->trace,
		.transport_trace = &st->tctx,
		.transport_tracestate = st->tracestate,
		.arrived_ns = st->arrived_ns,
		.local_only = local_only,
	};
	snprintf(st->subject, sizeof st->subject, "%s", req.actor->subject);
	snprintf(st->client, sizeof st->client, "%s", req.actor->client_id);
	struct sse_buf sse = {0};
	struct http_listen_req lr = {.srv = s, .hl = st->hl, .conn = st->conn};
	struct mcp_listen listen = {http_listen_open, &lr};
	req.listen = &listen;
	if (st->sse_ok) {
		req.emit = sse_emit;
		req.emit_ctx = &sse;
	}
	struct mcp_response resp;
	task_deadline_in(s->call_timeout_ms);
	mcp_handle(s->mcp, &req, &resp);
	task_deadline_in(0);
	if (resp.not_local) {
		sse_free(&sse);
		mcp_response_free(&resp);
		return false;
	}
	st->method = resp.method;
	st->name = resp.name;
	st->outcome = resp.outcome;
	memcpy(st->trace, resp.trace_id, sizeof st->trace);
	st->op = resp.op;
	st->span = resp.span;
	resp.span = NULL;
	http_trace_parts(st);
	struct http_out *o = &st->out;
	if (lr.opened) {
		/* A listen stream lives on: its message was answered by its opening. */
		trace_end(st->span, 0);
		st->span = NULL;
		o->stream = lr.opened;
	} else {
		o->status = (unsigned)resp.http_status;
		o->body = resp.body;
		resp.body = NULL;
		o->challenge = resp.missing_scope
				       ? auth_challenge(AUTH_OK, resp.missing_scope, NULL)
				       : NULL;
		/* Notifications went out before the result: answer as an SSE stream (a refusal
		 * keeps its status and plain JSON body; the notifications are then dropped). */
		if (sse.events && o->body && o->status == 200) {
			char *stream = sse_finish(&sse, o->body);
			free(o->body);
			o->body = stream;
			o->sse = true;
		} else if (!o->challenge && (resp.unavailable || resp.retry_after)) {
			o->retry_after = resp.retry_after ? resp.retry_after : MCP_RETRY_AFTER;
		}
	}
	sse_free(&sse);
	mcp_response_free(&resp);
	return true;
}

/* Sends what the task made of the call (the connection resumed, or never suspended). */
static enum MHD_Result http_send_out(struct http_server *s, struct MHD_Connection *c,
				     struct http_req *st)
{
	struct http_out *o = &st->out;
	if (o->stream) {
		struct http_stream *stream = o->stream;
		o->stream = NULL;
		return http_send_stream(s, c, stream);
	}
	char *body = o->body, *ch = o->challenge;
	o->body = o->challenge = NULL;
	if (o->sse)
		return http_send_sse(s, c, body);
	char retry[24];
	snprintf(retry, sizeof retry, "%ld", o->retry_after);
	const char *h[] = {ch ? MHD_HTTP_HEADER_WWW_AUTHENTICATE : MHD_HTTP_HEADER_RETRY_AFTER,
			   ch ? ch : retry, NULL};
	enum MHD_Result ret =
		http_send_headers(s, c, o->status, body, ch || o->retry_after ? h : NULL);
	free(ch);
	return ret;
}

/* A call's task: the protocol core answers it (waiting without holding the loop), then its
 * connection resumes (if it was suspended: the task waited) and the loop sends st->out. */
static void http_call_task(void *arg)
{
	struct http_req *st = arg;
	if (st->probe)
		http_health_answer(st->srv, true, true, &st->out);
	else
		http_call_answer(st, false);
	st->answered = true;
	st->hl->done += !st->probe;
	st->hl->calls -= !st->probe; /* a waiting call may start: the loop's hook (http_admit) */
	if (st->suspended) {
		MHD_resume_connection(st->conn);
		st->hl->resumed = true;
	}
}

/* Runs st as a task of its loop: answered now when it does not wait, else its connection waits
 * (suspended) until the task resumes it. */
static enum MHD_Result http_run_task(struct MHD_Connection *c, struct http_req *st)
{
	st->conn = c;
	st->queued = true;
	task_start(st->hl->loop, http_call_task, st);
	if (st->answered)
		return http_send_out(st->srv, c, st);
	st->suspended = true;
	MHD_suspend_connection(c);
	return MHD_YES;
}

long long http_admit(struct http_loop *hl, long long now)
{
	struct http_req *st;
	long long due;
	while ((st = http_wait_next(hl, now, &due))) {
		hl->calls++;
		st->wait_ns[1] = st->wait_ns[0] ? trace_now_ns() : 0;
		task_start(hl->loop, http_call_task, st);
	}
	return due;
}

/* Runs a call read whole as a task of its loop, or has it wait for a slot (above). */
static enum MHD_Result http_hand_over(struct http_server *s, struct MHD_Connection *c,
				      struct http_req *st)
{
	st->srv = s;
	st->conn = c;
	st->h_version = http_header(c, "MCP-Protocol-Version");
	st->h_method = http_header(c, "Mcp-Method");
	st->h_name = http_header(c, "Mcp-Name");
	st->sse_ok = http_accepts_sse(http_header(c, MHD_HTTP_HEADER_ACCEPT));
	/* A call whose method answers without waiting (server/discover) is answered here, outside
	 * the calls' count: under a load of calls that wait, it still answers at once. The core
	 * checks the header against the body and runs nothing else here (then the call goes on
	 * below). */
	if (mcp_method_local(s->mcp, st->h_method) && http_call_answer(st, true))
		return http_send_out(s, c, st);
	struct http_loop *hl = st->hl;
	if (http_wait_full(hl, !guard_fresh(http_guard_conn(c)))) {
		http_shed(st, "queue");
		st->queued = true;
		return http_send_out(s, c, st);
	}
	if (hl->calls >= hl->calls_max || hl->wait_first) {
		st->queued = st->suspended = true;
		http_wait(hl, st);
		MHD_suspend_connection(c);
		return MHD_YES;
	}
	hl->calls++;
	return http_run_task(c, st);
}

/* Whether the request announces a body (a Content-Length other than 0, or a transfer coding). */
static bool http_has_body(struct MHD_Connection *c)
{
	const char *cl = http_header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
	return http_header(c, MHD_HTTP_HEADER_TRANSFER_ENCODING) || (cl && strtoull(cl, NULL, 10));
}

/* Steps 4 to 7 of the order of checks, on the headers of a POST /mcp: the bearer token (4-5),
 * the media types (6), one of each MCP header (7). Sets st->refused with the refusal queued. */
static enum MHD_Result http_check_headers(struct http_server *s, struct MHD_Connection *c,
					  struct http_req *st)
{
	enum MHD_Result ret = MHD_YES;
	st->refused = true;
	/* The authorization's span covers the issuer's wait too: its start is kept when the
	 * connection resumes and these checks run again. */
	if (!st->auth_ns[0])
		st->auth_ns[0] = s->tokens && trace_enabled() ? trace_now_ns() : 0;
	enum http_auth_step step = s->tokens ? http_authenticate(s, c, st, &ret) : HTTP_AUTH_OK;
	if (step != HTTP_AUTH_WAITS)
		st->auth_ns[1] = st->auth_ns[0] ? trace_now_ns() : 0;
	switch (step) {
	case HTTP_AUTH_OK: break;
	case HTTP_AUTH_REFUSED: return ret;
	case HTTP_AUTH_WAITS:
		/* Suspended for the issuer: the wait is the server's, not the client's (no body
		 * deadline meanwhile); these checks go on once it resumes (http_route). */
		guard_body_done(st->hl->guard, http_guard_conn(c));
		st->refused = false;
		return MHD_YES;
	}
	const char *ct = http_header(c, MHD_HTTP_HEADER_CONTENT_TYPE);
	if (!ct || !http_media_is(ct, "application/json"))
		return http_refuse(s, c, 415, MCP_INVALID_REQUEST,
				   "Unsupported Media Type: Content-Type must be application/json",
				   NULL);
	if (!http_accepts_json(http_header(c, MHD_HTTP_HEADER_ACCEPT)))
		return http_refuse(s, c, 406, MCP_INVALID_REQUEST,
				   "Not Acceptable: Accept must admit application/json", NULL);
	static const char names[][24] = {"MCP-Protocol-Version", "Mcp-Method", "Mcp-Name"};
	for (size_t i = 0; i < sizeof names / sizeof names[0]; i++)
		if (http_header_all(c, names[i]).n > 1) {
			log_msg(LOG_WARN, st->reqid, "refused: more than one %s header", names[i]);
			char *text = mem_printf("Bad Request: more than one %s header", names[i]);
			ret = http_refuse(s, c, 400, MCP_INVALID_REQUEST, text, NULL);
			free(text);
			return ret;
		}
	st->refused = false;
	return MHD_YES;
}

static const char *http_path_label(const char *url)
{
	if (strcmp(url, "/mcp") == 0)
		return "/mcp";
	if (strcmp(url, "/healthz") == 0)
		return "/healthz";
	if (strcmp(url, "/readyz") == 0)
		return "/readyz";
	return auth_prm_path(url) ? "/.well-known/oauth-protected-resource" : "other";
}

/* A streamed body past the limit: the 413 goes out as soon as it passes (libmicrohttpd would
 * answer only after the last chunk, so it is written on the socket), then what still comes is
 * discarded, never stored, until the client stops or the connection ends (a sender that never
 * stops is cut off). */
static enum MHD_Result http_body_too_large(struct MHD_Connection *c, struct http_req *st,
					   size_t *upload_size)
{
	if (!st->too_large) {
		st->too_large = true;
		free(st->body);
		st->body = NULL;
		st->len = st->cap = 0;
		log_msg(LOG_WARN, st->reqid, "refused: a streamed body past the size limit");
		if (!http_refuse_on_socket(c, 413, "Content Too Large", MCP_INVALID_REQUEST,
					   "Payload Too Large"))
			return MHD_NO;
		st->socket_status = 413;
	}
	st->discarded += *upload_size;
	*upload_size = 0;
	return st->discarded > HTTP_DISCARD_MAX ? MHD_NO : MHD_YES;
}

static enum MHD_Result http_route(struct http_server *s, struct MHD_Connection *c, const char *url,
				  const char *method, const char *upload, size_t *upload_size,
				  struct http_req *st, bool first)
{
	if (first) {
		if (strcmp(st->path, "/healthz") == 0 || strcmp(st->path, "/readyz") == 0) {
			/* Answered at the end of the request, not now: libmicrohttpd closes the
			 * connection after an answer queued before the request was read, and a
			 * probe (or a load balancer) keeps its connection. One that announces a
			 * body is answered now: its body is never awaited. */
			st->probe = true;
			if (!http_has_body(c))
				return MHD_YES;
			st->refused = true;
			return http_health(s, c, method, strcmp(url, "/readyz") == 0);
		}
		if (atomic_load(&s->stopping)) {
			/* Not begun, so nothing done: another instance may take it. */
			st->refused = true;
			return http_refuse_with(
				s, c, 503, MCP_RATE_LIMITED,
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
			return http_refuse(s, c, 400, MCP_INVALID_REQUEST,
					   "Bad Request: more than one Host header", NULL);
		}
		if (!http_host_allowed(host.values[0], s->allowed_hosts) || origin.n > 1 ||
		    (origin.n && !http_origin_allowed(origin.values[0], s->allowed_origins))) {
			log_msg(LOG_WARN, st->reqid, "refused: Host or Origin not allowed");
			st->refused = true;
			return http_refuse(s, c, 403, MCP_INVALID_REQUEST,
					   "Forbidden: Host or Origin not allowed", NULL);
		}
		if (auth_prm_path(url)) {
			st->refused = true;
			return http_prm(s, c, method);
		}
		if (strcmp(url, "/mcp") != 0) {
			st->refused = true;
			return http_refuse(s, c, 404, MCP_INVALID_REQUEST,
					   "Not Found: the endpoint is /mcp", NULL);
		}
		/* 2: POST only. */
		if (strcmp(method, MHD_HTTP_METHOD_POST) != 0) {
			st->refused = true;
			return http_refuse(s, c, 405, MCP_INVALID_REQUEST,
					   "Method Not Allowed: this endpoint accepts POST only",
					   "POST");
		}
		/* 3: the declared size, before reading anything. */
		const char *cl = http_header(c, MHD_HTTP_HEADER_CONTENT_LENGTH);
		if (cl && strtoull(cl, NULL, 10) > s->max_body) {
			st->refused = true;
			return http_refuse(s, c, 413, MCP_INVALID_REQUEST, "Payload Too Large",
					   NULL);
		}
		/* While its loop's wait is too long for one more (http_wait_full), a call is
		 * refused on its headers, its token never checked; its body is read and dropped
		 * and the answer sent once the request is read, so that the connection is kept
		 * (libmicrohttpd closes one answered before: a client that reconnects costs both
		 * sides a handshake and comes back fresh). Methods that need no slot
		 * (server/discover), like probes, are answered as ever. */
		struct http_loop *hl = st->hl;
		if (http_wait_full(hl, !guard_fresh(http_guard_conn(c))) &&
		    !mcp_method_local(s->mcp, http_header(c, "Mcp-Method"))) {
			http_shed(st, "queue");
			st->queued = st->dropping = true;
			return MHD_YES;
		}
		/* 4 and after: everything the headers alone decide, so that a request that fails
		 * is answered now and its body never awaited (libmicrohttpd discards what still
		 * comes, then closes): a connection without a valid token ends with its headers. */
		enum MHD_Result ret = http_check_headers(s, c, st);
		if (st->refused)
			return ret;
		return MHD_YES;
	}
	if (st->auth_suspended) {
		/* Resumed once the token was judged (http_auth.c): libmicrohttpd asks again before
		 * the body, where a refusal may be queued; the body's deadline starts now. */
		st->auth_suspended = false;
		guard_headers_done(st->hl->guard, http_guard_conn(c));
		return http_check_headers(s, c, st);
	}
	if (!*upload_size)
		guard_body_done(st->hl->guard, http_guard_conn(c));
	if (st->refused) {
		*upload_size = 0; /* discard what is still arriving; the answer is already queued */
		return MHD_YES;
	}
	if (st->dropping && *upload_size) {
		/* A refused call's body, past the limit if streamed (the connection then ends). */
		st->discarded += *upload_size;
		*upload_size = 0;
		return st->discarded > s->max_body ? MHD_NO : MHD_YES;
	}
	if (st->probe) {
		if (*upload_size) {
			*upload_size = 0; /* a probe's body, if any, is not read */
			return MHD_YES;
		}
		if (st->queued)
			return http_send_out(s, c, st);
		bool ready = strcmp(url, "/readyz") == 0;
		if (!http_health_waits(s, method, ready))
			return http_health(s, c, method, ready);
		/* Its checks wait for the database: a task, outside the calls' count. */
		st->srv = s;
		return http_run_task(c, st);
	}
	if (*upload_size) {
		/* 3 again: streamed bodies (chunked) are counted as they arrive. */
		if (st->too_large || st->len + *upload_size > s->max_body)
			return http_body_too_large(c, st, upload_size);
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
	if (st->too_large)
		return MHD_NO; /* answered when it passed the limit: the connection ends */
	if (st->queued)
		return http_send_out(s, c, st);
	return http_hand_over(s, c, st);
}

enum MHD_Result http_access(void *cls, struct MHD_Connection *c, const char *url,
			    const char *method, const char *version, const char *upload,
			    size_t *upload_size, void **con_cls)
{
	struct http_loop *hl = cls;
	struct http_server *s = hl->srv;
	struct http_req *st = *con_cls;
	bool first = !st;
	if (first) {
		guard_headers_done(hl->guard, http_guard_conn(c));
		st = mem_calloc(1, sizeof *st);
		st->hl = hl;
		clock_gettime(CLOCK_MONOTONIC, &st->t0);
		snprintf(st->reqid, sizeof st->reqid, "r%lu", atomic_fetch_add(&s->counter, 1) + 1);
		st->path = http_path_label(url);
		/* The trace of the access line: the client's traceparent's, else a new one (a
		 * traceparent in the message's _meta wins once it is read). */
		if (!trace_parse(http_header(c, "traceparent"), &st->tctx))
			trace_new_id(&st->tctx);
		trace_id_hex(&st->tctx, st->trace);
		st->tracestate = http_header(c, "tracestate");
		st->arrived_ns = trace_enabled() ? trace_now_ns() : 0;
		snprintf(st->proto, sizeof st->proto, "%s",
			 strncmp(version, "HTTP/", 5) == 0 ? version + 5 : version);
		snprintf(st->verb, sizeof st->verb, "%s", method);
		*con_cls = st;
		atomic_fetch_add(&s->inflight, 1); /* until http_completed */
		/* 0: one way to frame it, before anything else (probes included): the answer
		 * closes the connection, so what follows the head is never read as a request. */
		const char *bad = http_frame_check(c, method, version);
		if (bad) {
			log_msg(LOG_WARN, st->reqid, "refused: request framing (%s)", bad);
			st->refused = true;
			char *text = mem_printf("Bad Request: %s", bad);
			enum MHD_Result ret = http_refuse_with(s, c, 400, MCP_INVALID_REQUEST, text,
							       MHD_HTTP_HEADER_CONNECTION, "close");
			free(text);
			return ret;
		}
	}
	return http_route(s, c, url, method, upload, upload_size, st, first);
}

/* The request's access line and metrics (access.h). */
static void http_account(struct http_req *st, unsigned http_status)
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
		.op = st->op,
		.span = st->span,
	};
	access_record(&e);
	st->span = NULL; /* ended there */
}

void http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode toe)
{
	(void)toe;
	struct http_loop *hl = cls;
	struct http_server *s = hl->srv;
	guard_request_done(hl->guard, http_guard_conn(c));
	struct http_req *st = *con_cls;
	if (st) {
		const union MHD_ConnectionInfo *ci =
			MHD_get_connection_info(c, MHD_CONNECTION_INFO_HTTP_STATUS);
		http_account(st, ci ? ci->http_status : st->socket_status);
		/* A request that ended before its message had a span (its token refused, its
		 * body not read): the authorization's span on its own, in the request's trace. */
		trace_end(st->auth_span, st->auth_ns[1]);
		free(st->out.body);
		free(st->out.challenge);
		if (st->out.stream)
			http_stream_abandon(st->out.stream);
		free(st->body);
		free(st);
		atomic_fetch_sub(&s->inflight, 1);
	}
	*con_cls = NULL;
}
