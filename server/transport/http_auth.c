/* Authorization over HTTP (http_auth.h). */
#include "http_auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/task.h"
#include "common/trace.h"
#include "http_reply.h"
#include "server/auth/auth.h"
#include "server/protocol/dispatch.h"

enum MHD_Result http_prm(struct http_server *s, struct MHD_Connection *c, const char *method)
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
		return http_send_headers(s, c, 204, NULL, h);
	}
	if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 && strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		const char *h[] = {MHD_HTTP_HEADER_ALLOW, "GET, HEAD, OPTIONS", NULL};
		return http_send_headers(s, c, 405, NULL, h);
	}
	json_t *doc = auth_prm_document();
	char *body = jsonw_dump(doc);
	json_decref(doc);
	const char *h[] = {MHD_HTTP_HEADER_ACCESS_CONTROL_ALLOW_ORIGIN, "*", NULL};
	return http_send_headers(s, c, 200, body, h);
}

/* A check that needs the issuer, as a task of the request's loop: its fetch (or the one under
 * way for the same key set or token) parks the task and leaves the loop free; then the
 * connection resumes and the handler asks again (http_authenticate). */
static void http_auth_task(void *arg)
{
	struct http_req *st = arg;
	/* The span the issuer's fetches go into (fetch.h), in the trace of the request's own
	 * context: the message's is not read yet. */
	st->auth_span = trace_begin(&(struct trace_begin){.name = "authorize",
							  .kind = TRACE_INTERNAL,
							  .start_ns = st->auth_ns[0],
							  .remote = &st->tctx,
							  .tracestate = st->tracestate,
							  .root = &st->tctx});
	(void)trace_swap(st->auth_span);
	st->auth_st = auth_validate(st->token, st->token_len, true, &st->actor, &st->auth_why);
	(void)trace_swap(NULL);
	st->auth_decided = true;
	if (st->auth_suspended) {
		MHD_resume_connection(st->conn);
		st->hl->resumed = true;
	}
}

enum http_auth_step http_authenticate(struct http_server *s, struct MHD_Connection *c,
				      struct http_req *st, enum MHD_Result *ret)
{
	enum auth_status as;
	const char *why = NULL;
	if (st->auth_decided) {
		as = st->auth_st; /* the task's, now that the connection resumed */
		why = st->auth_why;
	} else {
		struct http_values a = http_header_all(c, MHD_HTTP_HEADER_AUTHORIZATION);
		const char *token = NULL;
		size_t len = 0;
		as = auth_bearer(a.values, a.n < 2 ? a.n : 2, &token, &len);
		/* A token in the query (RFC 6750 section 2.3) is never used. Alone it is no
		 * credentials (401 above); next to a header it is more than one method: a
		 * malformed request. */
		if (a.n && MHD_lookup_connection_value(c, MHD_GET_ARGUMENT_KIND, "access_token"))
			as = AUTH_BAD_REQUEST, why = "a token in the header and in the query";
		if (as == AUTH_OK)
			as = auth_validate(token, len, false, &st->actor, &why);
		if (as == AUTH_PENDING) {
			/* libmicrohttpd keeps the headers until the request ends. */
			st->token = token;
			st->token_len = len;
			st->conn = c;
			task_start(st->hl->loop, http_auth_task, st);
			if (!st->auth_decided) {
				st->auth_suspended = true;
				MHD_suspend_connection(c);
				return HTTP_AUTH_WAITS;
			}
			as = st->auth_st; /* decided without waiting (the issuer just failed) */
			why = st->auth_why;
		}
	}
	if (as == AUTH_OK)
		return HTTP_AUTH_OK;
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
	trace_fail(st->auth_span, error);
	json_t *msg = json_pack("{s:s, s:s}", "error", error, "error_description", text);
	char *body = jsonw_dump(msg);
	json_decref(msg);
	char retry[16];
	snprintf(retry, sizeof retry, "%d", MCP_RETRY_AFTER);
	char *challenge = status == 503 ? NULL : auth_challenge(as, NULL, why);
	const char *h[] = {status == 503 ? MHD_HTTP_HEADER_RETRY_AFTER
					 : MHD_HTTP_HEADER_WWW_AUTHENTICATE,
			   status == 503 ? retry : challenge, NULL};
	*ret = http_send_headers(s, c, status, body, h);
	free(challenge);
	return HTTP_AUTH_REFUSED;
}
