/* Strict HTTP/1.1 framing at the server (RFC 9112 sections 5 and 6.3), whatever libmicrohttpd
 * accepts: a request whose head could be framed two ways by two parsers (a proxy in front and
 * this server) is refused before anything of it is processed, so that bytes a proxy took for a
 * body never run here as a request of their own (request smuggling). */
#ifndef BIKAROO_HTTP_FRAME_H
#define BIKAROO_HTTP_FRAME_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

/* Checks the head of c's current request, at the first access call (its headers complete):
 * exactly one way to read its length (not both Transfer-Encoding and Content-Length, at most
 * one Content-Length of digits, no transfer coding but a single "chunked", none in HTTP/1.0),
 * and every header line of the form name ":" OWS value CRLF (no obs-fold, no whitespace before
 * the colon, no control byte, no bare LF). method and version are the access call's (borrowed).
 * Returns NULL when the head is sound, else why not (a static string). */
const char *http_frame_check(struct MHD_Connection *c, const char *method, const char *version);

/* libmicrohttpd 0.9.75 refuses a Content-Length it cannot parse ("+5", "0x5", "5, 5", one past
 * 2^64) itself, before the server sees the request, and writes the head of its 400 or 413 twice.
 * These hooks of a daemon put one well-formed answer in its place, written on the socket whose
 * sending side is then shut (libmicrohttpd's own then fails and the connection closes). A daemon
 * registers all three: */
/* its URI log callback: notes the connection whose request line this event thread has read; */
void *http_frame_uri(void *cls, const char *uri, struct MHD_Connection *c);
/* on its connection-closed notification, forgets it (http_frame_notify is that notification
 * for a daemon that has none of its own); */
void http_frame_closed(struct MHD_Connection *c);
void http_frame_notify(void *cls, struct MHD_Connection *c, void **socket_context,
		       enum MHD_ConnectionNotificationCode code);
/* from its logger, with each line it logs: answers the refused connection, when the line says
 * libmicrohttpd refuses a Content-Length. */
void http_frame_mhd_said(const char *line);

/* The same decision as a pure function of the head's bytes as libmicrohttpd left them and the
 * header pointers it hands out (no libmicrohttpd call: tests/fuzz/fuzz_frame.c feeds it any
 * bytes and pointers). head is the method, size the head's length (the buffer need not be
 * NUL-terminated: nothing is read at or past head + size), version the request line's version
 * in it; then every header in order (name and value NUL-terminated, anywhere), then the
 * verdict: NULL when the head is sound, else why not (a static string). All borrowed. */
struct http_frame_walk {
	const char *at, *end; /* [at, end): what is left to account for */
	const char *version;
	unsigned te, cl;  /* Transfer-Encoding and Content-Length lines seen */
	const char *te_v; /* the first Transfer-Encoding's value */
	const char *cl_v; /* the first Content-Length's value */
	const char *why;  /* the first fault, or NULL */
};
void http_frame_begin(struct http_frame_walk *w, const char *head, size_t size,
		      const char *version);
/* False once a fault is found (the rest need not be given). */
bool http_frame_line(struct http_frame_walk *w, const char *name, const char *value);
const char *http_frame_end(const struct http_frame_walk *w);

/* True when a Content-Length value is what RFC 9110 section 8.6 allows: 1*DIGIT. */
bool http_frame_length_valid(const char *value);

#endif
