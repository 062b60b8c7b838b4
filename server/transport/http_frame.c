/* Strict HTTP/1.1 framing (http_frame.h).
 *
 * libmicrohttpd (0.9.75, the version this server is built against) tolerates what a proxy may
 * read otherwise: it takes a folded line's continuation into the header's name, keeps
 * whitespace before the colon in the name (so "Content-Length : 5" is no length to it), reads
 * the first of two Content-Length, prefers Transfer-Encoding to Content-Length, and reads a body
 * of unknown coding to the end of the connection. Its parsed headers alone cannot show a fold,
 * so the check reads the request head as libmicrohttpd left it: parsed in place in the
 * connection's read buffer, from the method (the access call's method argument points there)
 * for MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE bytes, each CR and LF of a line end and each
 * header's colon overwritten with a NUL, each header's name and value pointing into it. The
 * walk accounts for every byte from the end of the request line to the end of the head, in
 * order: any header not where the previous line ended (a folded one was moved out of the
 * buffer), any byte out of its grammar, and the request is refused. Should a libmicrohttpd
 * build ever lay the head out otherwise, every request is refused (the tests say so at once):
 * the check fails closed, never open.
 *
 * A Content-Length it cannot parse, libmicrohttpd refuses itself before any access call, with a
 * head written twice; http_frame_mhd_said answers those requests in its place (http_frame.h). */
#include "http_frame.h"

#include <stdbool.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "common/mem.h"
#include "http_reply.h"
#include "server/protocol/mcp.h"

/* RFC 9110 section 5.6.2: tchar. */
static bool http_frame_tchar(unsigned char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
		return true;
	return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

void http_frame_begin(struct http_frame_walk *w, const char *head, size_t size, const char *version)
{
	*w = (struct http_frame_walk){.version = version};
	/* The request line ends after the version, with its CRLF. */
	if (!head || !version || version <= head || (size_t)(version - head) >= size) {
		w->why = "no version in the request line";
		return;
	}
	w->end = head + size;
	w->at = version + strnlen(version, (size_t)(w->end - version));
	if (w->end - w->at < 2 || w->at[0] || w->at[1]) {
		w->why = "a request line not ended by CRLF";
		return;
	}
	w->at += 2;
}

/* One header line, in the order of the head: name ":" OWS value CRLF, the colon and the CRLF
 * overwritten by libmicrohttpd. */
bool http_frame_line(struct http_frame_walk *w, const char *key, const char *value)
{
	if (w->why)
		return false;
	if (!key || !value || key != w->at) {
		w->why = "a folded or misplaced header line";
		return false;
	}
	size_t klen = strnlen(key, (size_t)(w->end - key));
	if (klen == 0 || key + klen >= w->end) {
		w->why = "an empty or unterminated header name";
		return false;
	}
	for (size_t i = 0; i < klen; i++)
		if (!http_frame_tchar((unsigned char)key[i])) {
			w->why = "whitespace or a separator in a header name";
			return false;
		}
	const char *p = key + klen + 1; /* past the colon */
	while (p < w->end && (*p == ' ' || *p == '\t'))
		p++;
	if (value != p) {
		w->why = "a header value out of place";
		return false;
	}
	size_t vlen = strnlen(value, (size_t)(w->end - value));
	for (size_t i = 0; i < vlen; i++) {
		unsigned char ch = (unsigned char)value[i];
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			w->why = "a control byte in a header value";
			return false;
		}
	}
	p = value + vlen;
	if (w->end - p < 2 || p[0] || p[1]) { /* CR LF, or a bare LF (one NUL) */
		w->why = "a header line not ended by CRLF";
		return false;
	}
	w->at = p + 2;
	if (strcasecmp(key, "Transfer-Encoding") == 0 && w->te++ == 0)
		w->te_v = value;
	if (strcasecmp(key, "Content-Length") == 0 && w->cl++ == 0)
		w->cl_v = value;
	return true;
}

bool http_frame_length_valid(const char *value)
{
	return *value && strspn(value, "0123456789") == strlen(value);
}

const char *http_frame_end(const struct http_frame_walk *w)
{
	if (w->why)
		return w->why;
	/* Then the empty line, and the head ends there. */
	if (w->end - w->at != 2 || w->at[0] || w->at[1])
		return "bytes in the head that are no header line";
	if (w->te && w->cl)
		return "both Transfer-Encoding and Content-Length";
	if (w->te && (w->te > 1 || strcasecmp(w->te_v, "chunked") != 0))
		return "a transfer coding other than chunked";
	if (w->te && strcmp(w->version, MHD_HTTP_VERSION_1_1) != 0)
		return "Transfer-Encoding in a request older than HTTP/1.1";
	if (w->cl > 1)
		return "more than one Content-Length";
	if (w->cl && !http_frame_length_valid(w->cl_v))
		return "a Content-Length that is not a number";
	return NULL;
}

static enum MHD_Result http_frame_next(void *cls, enum MHD_ValueKind kind, const char *key,
				       const char *value)
{
	(void)kind;
	return http_frame_line(cls, key, value) ? MHD_YES : MHD_NO;
}

/* The connections of this event thread whose request line it has read and whose head the server
 * has not seen yet, the oldest forgotten first past HTTP_FRAME_READING. Per event thread, not
 * process-wide: libmicrohttpd runs each connection on the one thread that accepted it, and its
 * logger is told of no connection. */
#define HTTP_FRAME_READING 16
static _Thread_local struct MHD_Connection *http_frame_reading[HTTP_FRAME_READING];
static _Thread_local unsigned http_frame_next_slot;

void *http_frame_uri(void *cls, const char *uri, struct MHD_Connection *c)
{
	(void)cls, (void)uri;
	http_frame_closed(c);
	http_frame_reading[http_frame_next_slot++ % HTTP_FRAME_READING] = c;
	return NULL; /* no request state yet: the access call makes it */
}

void http_frame_closed(struct MHD_Connection *c)
{
	for (size_t i = 0; i < HTTP_FRAME_READING; i++)
		if (http_frame_reading[i] == c)
			http_frame_reading[i] = NULL;
}

void http_frame_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code)
{
	(void)cls, (void)socket_context;
	if (code == MHD_CONNECTION_NOTIFY_CLOSED)
		http_frame_closed(c);
}

void http_frame_mhd_said(const char *line)
{
	/* libmicrohttpd 0.9.75 refuses a Content-Length it cannot read itself, after the head
	 * and before any access call, and then writes its answer's head twice (its state
	 * machine overwrites the state its refusal set). Only these two messages say so. */
	if (!strstr(line, "Content-Length") || !strstr(line, "header. Closing connection"))
		return;
	/* The refused connection is the one whose head is complete, unseen and unanswered: the
	 * others noted here still wait for the rest of their head (a connection refused for
	 * another reason has its answer queued; one the server saw is no longer noted). */
	struct MHD_Connection *c = NULL;
	for (size_t i = 0; i < HTTP_FRAME_READING && !c; i++)
		if (http_frame_reading[i] &&
		    MHD_get_connection_info(http_frame_reading[i],
					    MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE) &&
		    !MHD_get_connection_info(http_frame_reading[i],
					     MHD_CONNECTION_INFO_HTTP_STATUS))
			c = http_frame_reading[i];
	if (!c)
		return; /* forgotten: libmicrohttpd's own answer goes out */
	http_frame_closed(c);
	const char *cl = MHD_lookup_connection_value(c, MHD_HEADER_KIND, "Content-Length");
	bool too_large = cl && http_frame_length_valid(cl);
	const char *why = too_large ? "a Content-Length past any body this server reads"
				    : "a Content-Length that is not a number";
	log_warn("http: refused: request framing (%s)", why);
	char *text = mem_printf("%s: %s", too_large ? "Payload Too Large" : "Bad Request", why);
	(void)http_refuse_on_socket(c, too_large ? 413 : 400,
				    too_large ? "Content Too Large" : "Bad Request",
				    MCP_INVALID_REQUEST, text);
	free(text);
}

const char *http_frame_check(struct MHD_Connection *c, const char *method, const char *version)
{
	http_frame_closed(c); /* its head is the server's now */
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	if (!ci || !method || !version)
		return "no request head";
	struct http_frame_walk w;
	http_frame_begin(&w, method, ci->header_size, version);
	if (!w.why)
		MHD_get_connection_values(c, MHD_HEADER_KIND, http_frame_next, &w);
	return http_frame_end(&w);
}
