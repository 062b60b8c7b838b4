/* Responses, header lookups and media types of the HTTP transport (http_reply.h). */
#include "http_reply.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <time.h>

#include "common/jsonw.h"
#include "common/mem.h"

enum MHD_Result http_send_headers(struct http_server *s, struct MHD_Connection *c, unsigned status,
				  char *body, const char *const *headers)
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
	if (atomic_load(&s->stopping))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}

/* A JSON-RPC error without id (new). */
char *http_error_body(int code, const char *message)
{
	json_t *msg = json_pack("{s:s, s:n, s:{s:i, s:s}}", "jsonrpc", "2.0", "id", "error", "code",
				code, "message", message);
	char *body = jsonw_dump(msg);
	json_decref(msg);
	return body;
}

enum MHD_Result http_refuse_with(struct http_server *s, struct MHD_Connection *c, unsigned status,
				 int code, const char *message, const char *name, const char *value)
{
	const char *h[] = {name, value, NULL};
	return http_send_headers(s, c, status, http_error_body(code, message), name ? h : NULL);
}

char *http_answer_text(unsigned status, const char *reason, const char *extra, const char *body)
{
	char date[64];
	struct tm tm;
	time_t now = time(NULL);
	strftime(date, sizeof date, "%a, %d %b %Y %H:%M:%S GMT", gmtime_r(&now, &tm));
	return mem_printf("HTTP/1.1 %u %s\r\nDate: %s\r\nConnection: close\r\n"
			  "Content-Type: application/json\r\nCache-Control: no-store\r\n%s"
			  "Content-Length: %zu\r\n\r\n%s",
			  status, reason, date, extra, strlen(body), body);
}

bool http_answer_on_socket(int fd, unsigned status, const char *reason, const char *extra,
			   const char *body)
{
	char *answer = http_answer_text(status, reason, extra, body);
	size_t n = strlen(answer);
	/* Nothing else is being written on this connection: the socket's buffer is empty and
	 * takes the answer whole at once. */
	bool whole = send(fd, answer, n, MSG_NOSIGNAL | MSG_DONTWAIT) == (ssize_t)n;
	free(answer);
	return whole;
}

bool http_refuse_on_socket(struct MHD_Connection *c, unsigned status, const char *reason, int code,
			   const char *message)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_CONNECTION_FD);
	if (!ci)
		return false;
	/* libmicrohttpd answers a request after its body: nothing of it is on the socket. */
	char *body = http_error_body(code, message);
	bool whole = http_answer_on_socket(ci->connect_fd, status, reason, "", body);
	shutdown(ci->connect_fd, SHUT_WR);
	free(body);
	return whole;
}

enum MHD_Result http_refuse(struct http_server *s, struct MHD_Connection *c, unsigned status,
			    int code, const char *message, const char *allow)
{
	return http_refuse_with(s, c, status, code, message, allow ? MHD_HTTP_HEADER_ALLOW : NULL,
				allow);
}

/* ---- request checks ------------------------------------------------------------------ */

const char *http_header(struct MHD_Connection *c, const char *name)
{
	return MHD_lookup_connection_value(c, MHD_HEADER_KIND, name);
}

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

struct http_values http_header_all(struct MHD_Connection *c, const char *name)
{
	struct http_values v = {.name = name};
	MHD_get_connection_values(c, MHD_HEADER_KIND, http_collect, &v);
	return v;
}

bool http_media_is(const char *value, const char *type)
{
	size_t n = strlen(type);
	while (*value == ' ')
		value++;
	return strncasecmp(value, type, n) == 0 &&
	       (value[n] == '\0' || value[n] == ';' || value[n] == ' ' || value[n] == ',');
}

struct guard_conn *http_guard_conn(struct MHD_Connection *c)
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

bool http_accepts_json(const char *accept)
{
	return !accept || http_accepts(accept, "application/json");
}

bool http_accepts_sse(const char *accept)
{
	return http_accepts(accept, "text/event-stream");
}

enum MHD_Result http_queue_sse(struct http_server *s, struct MHD_Connection *c,
			       struct MHD_Response *r)
{
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE, "text/event-stream");
	MHD_add_response_header(r, MHD_HTTP_HEADER_CACHE_CONTROL, "no-cache");
	MHD_add_response_header(r, "X-Accel-Buffering", "no");
	if (atomic_load(&s->stopping))
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = MHD_queue_response(c, MHD_HTTP_OK, r);
	MHD_destroy_response(r);
	return ret;
}

enum MHD_Result http_send_sse(struct http_server *s, struct MHD_Connection *c, char *body)
{
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	return http_queue_sse(s, c, r);
}
