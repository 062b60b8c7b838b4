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

/* Steps 4-5 of the order of checks: the bearer token names the actor, or the request is
 * refused here (401/400/503) with a challenge, queued with its result in *ret. Returns true
 * when *actor is set. */
bool http_authenticate(struct http_server *s, struct MHD_Connection *c, struct http_req *st,
		       struct fleet_actor *actor, enum MHD_Result *ret);

#endif
