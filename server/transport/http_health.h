/* Health and metrics over HTTP: GET /healthz and /readyz (public: no token, no data, no Host
 * check: a load balancer or an orchestrator asks by address) and GET /metrics on its own
 * listener. */
#ifndef BIKAROO_HTTP_HEALTH_H
#define BIKAROO_HTTP_HEALTH_H

#include <microhttpd.h>
#include <stdbool.h>
#include <stddef.h>

#include "http_server.h"

/* Whether a probe must run as a task: /readyz with its checks (s->ready waits for the
 * database). */
bool http_health_waits(struct http_server *s, const char *method, bool ready);
/* The answer to a GET /healthz (ready false) or /readyz (ready true: what s->ready says is
 * missing when check is set, or "draining") into out. With check it waits: in a task. */
void http_health_answer(struct http_server *s, bool ready, bool check, struct http_out *out);
/* Answers a probe that does not wait (http_health_waits false): 405 for a method other than
 * GET and HEAD, /healthz, or /readyz while draining. */
enum MHD_Result http_health(struct http_server *s, struct MHD_Connection *c, const char *method,
			    bool ready);

/* The metrics listener's access handler (cls: the struct http_server): GET /metrics only. */
enum MHD_Result http_metrics_access(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version, const char *upload,
				    size_t *upload_size, void **con_cls);

#endif
