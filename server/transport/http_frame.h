/* Strict HTTP/1.1 framing at the server (RFC 9112 sections 5 and 6.3), whatever libmicrohttpd
 * accepts: a request whose head could be framed two ways by two parsers (a proxy in front and
 * this server) is refused before anything of it is processed, so that bytes a proxy took for a
 * body never run here as a request of their own (request smuggling). */
#ifndef BIKAROO_HTTP_FRAME_H
#define BIKAROO_HTTP_FRAME_H

#include <microhttpd.h>

/* Checks the head of c's current request, at the first access call (its headers complete):
 * exactly one way to read its length (not both Transfer-Encoding and Content-Length, at most
 * one Content-Length of digits, no transfer coding but a single "chunked", none in HTTP/1.0),
 * and every header line of the form name ":" OWS value CRLF (no obs-fold, no whitespace before
 * the colon, no control byte, no bare LF). method and version are the access call's (borrowed).
 * Returns NULL when the head is sound, else why not (a static string). */
const char *http_frame_check(struct MHD_Connection *c, const char *method, const char *version);

#endif
