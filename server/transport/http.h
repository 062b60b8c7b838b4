/* Streamable HTTP transport (libmicrohttpd). Moves bytes and headers; semantics live in mcp.c. */
#ifndef BIKAROO_HTTP_H
#define BIKAROO_HTTP_H

#include "domain/types.h"
#include "server/cfg.h"

struct http_server;

enum http_status { HTTP_OK = 0, HTTP_START_FAILED };

/* Starts serving POST /mcp on cfg->listen:cfg->port, acting as actor (copied), or, when actor
 * is NULL, as the principal of each request's bearer token (auth.c, initialised before).
 * *out is new (free with http_stop). *bound_port receives the port actually bound, also
 * written to cfg->ready_file when that is set. */
enum http_status http_start(const struct cfg *cfg, const struct fleet_actor *actor,
			    struct http_server **out, unsigned *bound_port)
	__attribute__((warn_unused_result));
void http_stop(struct http_server *s);

/* Host/Origin allow-list checks (exposed for unit tests). host_port is the Host header
 * value, origin the Origin header value; extra is a comma-separated list of extra names. */
bool http_host_allowed(const char *host_port, const char *extra);
bool http_origin_allowed(const char *origin, const char *extra);

#endif
