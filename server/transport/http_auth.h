/* Authorization over HTTP: server/auth decides, this speaks HTTP (the bearer header, the
 * challenge, the protected resource metadata). */
#ifndef BIKAROO_HTTP_AUTH_H
#define BIKAROO_HTTP_AUTH_H

#include <microhttpd.h>
#include <stdbool.h>

#include "domain/types.h"
#include "http_server.h"

/* RFC 9728 metadata (GET, HEAD; OPTIONS for a CORS preflight): public, cacheable by anyone,
 * readable cross-origin. */
enum MHD_Result http_prm(struct http_server *s, struct MHD_Connection *c, const char *method);

/* How far the bearer token's check went. */
enum http_auth_step {
	HTTP_AUTH_OK = 0,  /* st->actor is the token's principal */
	HTTP_AUTH_REFUSED, /* refused (401/400/503 with its challenge), queued with its result */
	HTTP_AUTH_WAITS,   /* the check needs the issuer: a task of the loop runs it while the
			    * connection waits, suspended; libmicrohttpd calls the handler again
			    * once it is resumed, before the body, and this is asked again */
};

/* Steps 4-5 of the order of checks, on the headers of a request: the bearer token names the
 * actor, or the request is refused here, or it waits for the issuer (above). The one place
 * where a request's authorization begins and, once decided, ends. *ret: what to return to
 * libmicrohttpd on a refusal. */
enum http_auth_step http_authenticate(struct http_server *s, struct MHD_Connection *c,
				      struct http_req *st, enum MHD_Result *ret)
	__attribute__((warn_unused_result));

#endif
