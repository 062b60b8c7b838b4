/* Health and metrics over HTTP (http_health.h). */
#include "http_health.h"

#include <stdlib.h>
#include <string.h>

#include "common/jsonw.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "http_frame.h"
#include "http_reply.h"

/* /readyz answers within about this long, whatever the database does. */
#define HTTP_READY_MS 2000L

static bool http_health_get(const char *method)
{
	return strcmp(method, MHD_HTTP_METHOD_GET) == 0 ||
	       strcmp(method, MHD_HTTP_METHOD_HEAD) == 0;
}

bool http_health_waits(struct http_server *s, const char *method, bool ready)
{
	return ready && s->ready && http_health_get(method) && !atomic_load(&s->draining) &&
	       !atomic_load(&s->stopping);
}

void http_health_answer(struct http_server *s, bool ready, bool check, struct http_out *out)
{
	json_t *missing = json_array();
	if (ready && (atomic_load(&s->draining) || atomic_load(&s->stopping))) {
		json_array_append_new(missing, json_string("draining: this instance is stopping"));
	} else if (ready && check && s->ready) {
		/* In a task: its database statement is bounded, and while statements time out
		 * readiness says so without one (domain/pg/db.h db_stalled). */
		task_deadline_in(s->call_timeout_ms < HTTP_READY_MS ? s->call_timeout_ms
								    : HTTP_READY_MS);
		s->ready(missing);
	}
	bool ok = json_array_size(missing) == 0;
	json_t *doc = ok ? json_pack("{s:s}", "status", ready ? "ready" : "alive")
			 : json_pack("{s:s, s:O}", "status", "not ready", "missing", missing);
	json_decref(missing);
	out->status = ok ? 200 : 503;
	out->body = jsonw_dump(doc);
	json_decref(doc);
}

enum MHD_Result http_health(struct http_server *s, struct MHD_Connection *c, const char *method,
			    bool ready)
{
	if (!http_health_get(method)) {
		const char *h[] = {MHD_HTTP_HEADER_ALLOW, "GET, HEAD", NULL};
		return http_send_headers(s, c, 405, NULL, h);
	}
	struct http_out o = {0};
	http_health_answer(s, ready, false, &o);
	return http_send_headers(s, c, o.status, o.body, NULL);
}

enum MHD_Result http_metrics_access(void *cls, struct MHD_Connection *c, const char *url,
				    const char *method, const char *version, const char *upload,
				    size_t *upload_size, void **con_cls)
{
	(void)cls, (void)upload, (void)upload_size;
	unsigned status = 200;
	char *body;
	const char *bad = NULL;
	if (!*con_cls) { /* the headers: answer once the (empty) body is in */
		bad = http_frame_check(c, method, version);
		if (!bad) {
			*con_cls = (void *)1;
			return MHD_YES;
		}
		status = 400;
		body = mem_printf("Bad Request: %s\n", bad);
	} else if (strcmp(url, "/metrics") != 0) {
		status = 404;
		body = mem_strdup("Not Found: the metrics are at /metrics\n");
	} else if (strcmp(method, MHD_HTTP_METHOD_GET) != 0 &&
		   strcmp(method, MHD_HTTP_METHOD_HEAD) != 0) {
		status = 405;
		body = mem_strdup("Method Not Allowed: GET /metrics\n");
	} else {
		body = metrics_render();
	}
	struct MHD_Response *r =
		MHD_create_response_from_buffer(strlen(body), body, MHD_RESPMEM_MUST_FREE);
	if (!r) {
		free(body);
		return MHD_NO;
	}
	MHD_add_response_header(r, MHD_HTTP_HEADER_CONTENT_TYPE,
				status == 200 ? "text/plain; version=0.0.4; charset=utf-8"
					      : "text/plain; charset=utf-8");
	if (status == 405)
		MHD_add_response_header(r, MHD_HTTP_HEADER_ALLOW, "GET, HEAD");
	if (bad) /* what follows the head is never read as a request */
		MHD_add_response_header(r, MHD_HTTP_HEADER_CONNECTION, "close");
	enum MHD_Result ret = MHD_queue_response(c, status, r);
	MHD_destroy_response(r);
	return ret;
}
