/* Access lines and request metrics (access.h). */
#include "access.h"

#include <stdio.h>

#include "common/log.h"
#include "common/metrics.h"

void access_record(const struct access_entry *e)
{
	struct timespec t1;
	clock_gettime(CLOCK_MONOTONIC, &t1);
	double secs =
		(double)(t1.tv_sec - e->t0.tv_sec) + (double)(t1.tv_nsec - e->t0.tv_nsec) / 1e9;
	char status[12] = "", ms[24];
	if (e->status)
		snprintf(status, sizeof status, "%u", e->status);
	snprintf(ms, sizeof ms, "%.1f", secs * 1000);
	const char *method = e->method ? e->method : e->path ? e->path : "";
	const char *labels[] = {e->transport, method, e->name ? e->name : "",
				e->outcome ? e->outcome : "", status};
	metrics_add(&metrics_requests, labels, 1);
	metrics_observe(&metrics_request_seconds, labels, secs); /* its labels: the first three */
	const struct log_field f[] = {
		{"transport", e->transport},
		{"trace", e->trace},
		{"http", e->http},
		{"path", e->path},
		{"method", e->method},
		{"name", e->name},
		{"subject", e->subject && *e->subject ? e->subject : NULL},
		{"client", e->client && *e->client ? e->client : NULL},
		{"outcome", e->outcome},
		{"status", *status ? status : NULL},
		{"ms", ms},
	};
	log_fields(e->quiet ? LOG_DEBUG : LOG_INFO, e->reqid, "access", f, sizeof f / sizeof f[0]);
}
