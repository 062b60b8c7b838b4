/* Routing of the HTTP transport: the order of checks of every request, the /mcp handler, and the
 * request's access line. libmicrohttpd's per-request callbacks (cls: the struct http_loop). */
#ifndef BIKAROO_HTTP_ROUTE_H
#define BIKAROO_HTTP_ROUTE_H

#include <microhttpd.h>
#include <stddef.h>

/* MHD_AccessHandlerCallback: per-request state (struct http_req) is created on the first call
 * and freed in http_completed. */
enum MHD_Result http_access(void *cls, struct MHD_Connection *c, const char *url,
			    const char *method, const char *version, const char *upload,
			    size_t *upload_size, void **con_cls);
/* MHD_RequestCompletedCallback: the access line and metrics, then the request's state freed. */
void http_completed(void *cls, struct MHD_Connection *c, void **con_cls,
		    enum MHD_RequestTerminationCode toe);

#endif
