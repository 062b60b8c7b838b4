/* Host and Origin allow-lists of the HTTP transport, against DNS rebinding: loopback names always,
 * and the names configured (BIKAROO_ALLOWED_HOSTS, BIKAROO_ALLOWED_ORIGINS). */
#ifndef BIKAROO_HTTP_ALLOW_H
#define BIKAROO_HTTP_ALLOW_H

#include <stdbool.h>

/* host_port is the Host header value, origin the Origin header value (both borrowed); extra is
 * a comma-separated list of extra names. */
bool http_host_allowed(const char *host_port, const char *extra);
bool http_origin_allowed(const char *origin, const char *extra);

#endif
