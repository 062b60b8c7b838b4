/* Authorization over HTTP (http_auth.h). */
#include "http_auth.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/log.h"
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

bool http_authenticate(struct http_server *s, struct MHD_Connection *c, struct http_req *st,
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
	*ret = http_send_headers(s, c, status, body, h);
	free(challenge);
	return false;
}
