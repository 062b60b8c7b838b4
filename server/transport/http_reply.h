/* What every file of the HTTP transport needs to read a request's headers and answer it: the
 * responses (JSON bodies, refusals, SSE bodies) and the media types. libmicrohttpd types stay
 * in the http_* files of this folder. */
#ifndef BIKAROO_HTTP_REPLY_H
#define BIKAROO_HTTP_REPLY_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "http_server.h"

/* Sends body (new, may be NULL) with status and extra headers: NULL-terminated name/value pairs
 * (borrowed). While s stops, every answer closes its connection. */
enum MHD_Result http_send_headers(struct http_server *s, struct MHD_Connection *c, unsigned status,
				  char *body, const char *const *headers);
/* A JSON-RPC error without id, as a body (new). */
char *http_error_body(int code, const char *message);
/* A JSON-RPC error without id, for refusals before the body is read, with one extra header
 * (name NULL: none). */
enum MHD_Result http_refuse_with(struct http_server *s, struct MHD_Connection *c, unsigned status,
				 int code, const char *message, const char *name,
				 const char *value);
/* The same, with Allow when allow is not NULL. */
enum MHD_Result http_refuse(struct http_server *s, struct MHD_Connection *c, unsigned status,
			    int code, const char *message, const char *allow);
/* A refusal written on c's socket now, status line (reason: its reason phrase) and all,
 * then the socket's sending side shut: for a request in the middle of its body, which
 * libmicrohttpd 0.9.75 answers only after its end (MHD_queue_response refuses a connection then).
 * The caller queues nothing for this request afterwards and ends the connection: it discards
 * what still comes (a client mid-send reads the answer rather than a reset), then returns MHD_NO.
 * True when the whole answer went out; false when it could not (close at once). */
bool http_refuse_on_socket(struct MHD_Connection *c, unsigned status, const char *reason, int code,
			   const char *message);
/* A whole HTTP/1.1 answer that closes its connection (new): the status line, Date, Connection:
 * close, the headers of a JSON body, extra (whole header lines, or ""), then body. */
char *http_answer_text(unsigned status, const char *reason, const char *extra, const char *body);
/* Writes that answer on fd (a socket nothing else writes on yet: it goes whole or not at all);
 * whether it went. */
bool http_answer_on_socket(int fd, unsigned status, const char *reason, const char *extra,
			   const char *body);
/* A 200 whose body is SSE events (sse.h); body is stolen. */
enum MHD_Result http_send_sse(struct http_server *s, struct MHD_Connection *c, char *body);
/* Queues r (consumed) as a 200 SSE stream. */
enum MHD_Result http_queue_sse(struct http_server *s, struct MHD_Connection *c,
			       struct MHD_Response *r);

/* A request header's first value (borrowed from libmicrohttpd), or NULL. */
const char *http_header(struct MHD_Connection *c, const char *name);

/* Every occurrence of one header: its first two values and how many there are (a repeated
 * Host, Origin or Authorization is refused, never read as its first value). */
struct http_values {
	const char *name;
	const char *values[2];
	size_t n;
};
struct http_values http_header_all(struct MHD_Connection *c, const char *name);

/* True when a media type value (Content-Type, one item of Accept) is type, parameters aside. */
bool http_media_is(const char *value, const char *type);
/* True when an Accept header admits application/json (absent Accept admits everything). */
bool http_accepts_json(const char *accept);
/* True when an Accept header admits text/event-stream: only then may a response become an SSE
 * stream. */
bool http_accepts_sse(const char *accept);

/* The guard's record of c's connection (the socket context http.c set), or NULL. */
struct guard_conn *http_guard_conn(struct MHD_Connection *c);

#endif
