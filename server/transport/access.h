/* One access line and the request metrics of each request, for every transport: who (subject,
 * client), what (method, tool or resource), how it ended (outcome, status) and how long it
 * took. Never a token, never the arguments, never a URI (it may name a bike or a case). For an
 * MCP message also OpenTelemetry's mcp.server.operation.duration, and the end of its span. */
#ifndef BIKAROO_ACCESS_H
#define BIKAROO_ACCESS_H

#include <stdbool.h>
#include <time.h>

#include "server/protocol/mcp.h"

/* One finished request; every string borrowed, NULL when unknown. Labels of the metrics come
 * from transport, method, name, outcome and status only: static strings from bounded sets. */
struct access_entry {
	const char *transport; /* "http" or "stdio" */
	const char *reqid;
	const char *trace;  /* 32 hex digits */
	const char *http;   /* the HTTP method (GET, POST), or NULL */
	const char *path;   /* the endpoint's name (/mcp, /healthz...), or NULL */
	const char *method; /* the method table's name, or NULL */
	const char *name;   /* the tool, resource or prompt of the description, or NULL */
	const char *subject, *client;
	const char *outcome;
	unsigned status;    /* HTTP status (0: none: stdio, or an aborted connection) */
	struct timespec t0; /* CLOCK_MONOTONIC at the request's arrival */
	bool quiet;         /* write the line at debug (probes, stdio) */
	/* An MCP message (op.method NULL: none was read) and its span (NULL: none), ended here. */
	struct mcp_operation op;
	struct trace_span *span;
};

void access_record(const struct access_entry *e);

#endif
