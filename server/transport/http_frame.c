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
 * the check fails closed, never open. */
#include "http_frame.h"

#include <stdbool.h>
#include <stddef.h>
#include <string.h>
#include <strings.h>

/* The walk over the head: [at, end) is what is left to account for. */
struct http_frame_walk {
	const char *at, *end;
	unsigned te, cl;  /* Transfer-Encoding and Content-Length lines seen */
	const char *te_v; /* the first Transfer-Encoding's value */
	const char *cl_v; /* the first Content-Length's value */
	const char *why;  /* the first fault, or NULL */
};

/* RFC 9110 section 5.6.2: tchar. */
static bool http_frame_tchar(unsigned char ch)
{
	if ((ch >= 'a' && ch <= 'z') || (ch >= 'A' && ch <= 'Z') || (ch >= '0' && ch <= '9'))
		return true;
	return ch && strchr("!#$%&'*+-.^_`|~", ch) != NULL;
}

/* One header line, in the order of the head: name ":" OWS value CRLF, the colon and the CRLF
 * overwritten by libmicrohttpd. */
static enum MHD_Result http_frame_line(void *cls, enum MHD_ValueKind kind, const char *key,
				       const char *value)
{
	(void)kind;
	struct http_frame_walk *w = cls;
	if (w->why)
		return MHD_NO;
	if (!key || !value || key != w->at) {
		w->why = "a folded or misplaced header line";
		return MHD_NO;
	}
	size_t klen = strnlen(key, (size_t)(w->end - key));
	if (klen == 0 || key + klen >= w->end) {
		w->why = "an empty or unterminated header name";
		return MHD_NO;
	}
	for (size_t i = 0; i < klen; i++)
		if (!http_frame_tchar((unsigned char)key[i])) {
			w->why = "whitespace or a separator in a header name";
			return MHD_NO;
		}
	const char *p = key + klen + 1; /* past the colon */
	while (p < w->end && (*p == ' ' || *p == '\t'))
		p++;
	if (value != p) {
		w->why = "a header value out of place";
		return MHD_NO;
	}
	size_t vlen = strnlen(value, (size_t)(w->end - value));
	for (size_t i = 0; i < vlen; i++) {
		unsigned char ch = (unsigned char)value[i];
		if ((ch < 0x20 && ch != '\t') || ch == 0x7f) {
			w->why = "a control byte in a header value";
			return MHD_NO;
		}
	}
	p = value + vlen;
	if (w->end - p < 2 || p[0] || p[1]) { /* CR LF, or a bare LF (one NUL) */
		w->why = "a header line not ended by CRLF";
		return MHD_NO;
	}
	w->at = p + 2;
	if (strcasecmp(key, "Transfer-Encoding") == 0 && w->te++ == 0)
		w->te_v = value;
	if (strcasecmp(key, "Content-Length") == 0 && w->cl++ == 0)
		w->cl_v = value;
	return MHD_YES;
}

const char *http_frame_check(struct MHD_Connection *c, const char *method, const char *version)
{
	const union MHD_ConnectionInfo *ci =
		MHD_get_connection_info(c, MHD_CONNECTION_INFO_REQUEST_HEADER_SIZE);
	if (!ci || !method || !version)
		return "no request head";
	const char *end = method + ci->header_size;
	/* The request line ends after the version, with its CRLF. */
	if (version <= method || version >= end)
		return "no version in the request line";
	size_t vlen = strnlen(version, (size_t)(end - version));
	struct http_frame_walk w = {.at = version + vlen, .end = end};
	if (w.end - w.at < 2 || w.at[0] || w.at[1])
		return "a request line not ended by CRLF";
	w.at += 2;
	MHD_get_connection_values(c, MHD_HEADER_KIND, http_frame_line, &w);
	if (w.why)
		return w.why;
	/* Then the empty line, and the head ends there. */
	if (w.end - w.at != 2 || w.at[0] || w.at[1])
		return "bytes in the head that are no header line";
	if (w.te && w.cl)
		return "both Transfer-Encoding and Content-Length";
	if (w.te && (w.te > 1 || strcasecmp(w.te_v, "chunked") != 0))
		return "a transfer coding other than chunked";
	if (w.te && strcmp(version, MHD_HTTP_VERSION_1_1) != 0)
		return "Transfer-Encoding in a request older than HTTP/1.1";
	if (w.cl > 1)
		return "more than one Content-Length";
	if (w.cl && (!*w.cl_v || strspn(w.cl_v, "0123456789") != strlen(w.cl_v)))
		return "a Content-Length that is not a number";
	return NULL;
}
