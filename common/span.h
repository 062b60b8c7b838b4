/* The data model of a span, shared by the tracing API (trace.h: what code calls) and the
 * exporter (otlp.h: what it sends): a W3C context, a name, times, attributes and links, all in
 * one fixed-size struct (no allocation past the span's own). Types only. */
#ifndef BIKAROO_SPAN_H
#define BIKAROO_SPAN_H

#include <pthread.h>
#include <stdbool.h>
#include <stdint.h>

/* A span's context, as W3C traceparent carries it. */
struct trace_ctx {
	uint8_t trace_id[16];
	uint8_t span_id[8];
	uint8_t flags; /* TRACE_SAMPLED */
	bool valid;    /* both ids set (not all zero) */
};
#define TRACE_SAMPLED 0x01
/* A traceparent value of version 00: 55 characters and a NUL. */
#define TRACE_PARENT_LEN 56
/* tracestate longer than this is dropped whole (W3C: 512 characters at least are kept). */
#define TRACE_STATE_MAX 512

enum trace_kind { TRACE_INTERNAL = 1, TRACE_SERVER = 2, TRACE_CLIENT = 3 };

#define TRACE_ATTRS_MAX 24
#define TRACE_LINKS_MAX 8
#define TRACE_TEXT_MAX 2048 /* the name, string values and tracestate of one span together */

enum trace_attr_type { TRACE_STR, TRACE_INT, TRACE_BOOL };

struct trace_attr {
	const char *key; /* a static string: the conventions' name */
	enum trace_attr_type type;
	int64_t i;         /* TRACE_INT, TRACE_BOOL */
	uint16_t off, len; /* TRACE_STR: in text */
};

struct trace_link {
	struct trace_ctx ctx;
	const char *relation; /* a static string for its bikaroo.link attribute, or NULL */
};

/* One span. Code sets its fields through trace.h, on the thread that began it (owner) until it
 * ends (end_ns set); the exporter reads them once it has ended. */
struct trace_span {
	struct trace_ctx ctx;
	pthread_t owner;
	uint8_t parent_id[8];
	bool has_parent, parent_remote;
	enum trace_kind kind;
	bool error;
	int64_t start_ns, end_ns; /* unix nanoseconds */
	uint16_t name_off, name_len, state_off, state_len, status_off, status_len;
	uint16_t nattrs, nlinks, text_len;
	uint32_t dropped_attrs, dropped_links;
	/* Children ended before this span's place in its trace was known (trace_keep): sent, moved
	 * and freed with it. */
	struct trace_span *kept, *kept_next;
	struct trace_attr attrs[TRACE_ATTRS_MAX];
	struct trace_link links[TRACE_LINKS_MAX];
	char text[TRACE_TEXT_MAX];
};

#endif
