/* Traces: OpenTelemetry spans of the server's own work (an MCP message, the wait for a call
 * slot, a token check, a database unit, an input round trip) in W3C Trace Context, handed to the
 * exporter (common/otlp.h), which sends them over OTLP/HTTP from a thread of its own.
 *
 * A span belongs to the thread that began it until trace_end() hands it to the exporter's queue,
 * which never waits: a full queue drops the span and counts it. Every function given a span
 * checks it: on another thread, or once the span has ended (trace_end, trace_keep), it logs
 * which and aborts (our bug). Nothing here waits, takes a lock or makes a system call.
 *
 * With export off (no endpoint) or a span not sampled, trace_begin() returns NULL, and every
 * function taking a span does nothing with NULL: callers do not test.
 *
 * The span a call runs in (trace_current) lives in its task (common/task.h), as its deadline
 * does: the database unit a call waits for finds its parent there.
 *
 * Process-wide state (a singleton): the sampler and the personal-data setting, set once by
 * trace_start() before any serving thread runs. */
#ifndef BIKAROO_TRACE_H
#define BIKAROO_TRACE_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "otlp.h"
#include "span.h"

/* Parses a traceparent value (W3C Trace Context: lowercase hex, version ff and all-zero ids
 * invalid, a later version may append fields). False (out->valid false) when it is none. */
bool trace_parse(const char *traceparent, struct trace_ctx *out);
/* Writes c as a version 00 traceparent. */
void trace_format(const struct trace_ctx *c, char out[TRACE_PARENT_LEN]);
/* The 32 lowercase hex digits of c's trace id. */
void trace_id_hex(const struct trace_ctx *c, char out[33]);
/* Reads 32 hex digits into c's trace id (false when they are not); c->valid is left as it is. */
bool trace_id_parse(const char *hex, struct trace_ctx *c);
/* A new random trace id into c (a root's); its span id is left as it is. */
void trace_new_id(struct trace_ctx *c);
/* Whether a tracestate value may be passed on: printable ASCII, at most TRACE_STATE_MAX. */
bool trace_state_ok(const char *tracestate);

/* ---- settings ------------------------------------------------------------------------------ */

enum trace_sampler {
	TRACE_PARENT_ALWAYS_ON = 0, /* parentbased_always_on: the default */
	TRACE_PARENT_ALWAYS_OFF,
	TRACE_PARENT_RATIO,
	TRACE_ALWAYS_ON,
	TRACE_ALWAYS_OFF,
	TRACE_RATIO,
};

struct trace_settings {
	struct otlp_settings export; /* export.endpoint NULL or "": nothing is ever recorded */
	enum trace_sampler sampler;
	double ratio;       /* TRACE_*RATIO: the share of new traces sampled, 0 to 1 */
	bool personal_data; /* subjects, client addresses and URIs naming a bike or case in spans */
};

enum trace_status { TRACE_OK = 0, TRACE_INVALID };

/* OTEL_TRACES_SAMPLER and OTEL_TRACES_SAMPLER_ARG into set->sampler and set->ratio (name ""
 * is the default; arg "" is 1.0). TRACE_INVALID, *why static text, for one it does not know. */
enum trace_status trace_parse_sampler(const char *name, const char *arg, struct trace_settings *set,
				      const char **why) __attribute__((warn_unused_result));
/* Starts export when set->export.endpoint is set (its thread: otlp_start); without one, spans
 * are never recorded. Once, before any serving thread. TRACE_INVALID (logged) when the exporter
 * cannot start. */
enum trace_status trace_start(const struct trace_settings *set) __attribute__((warn_unused_result));
/* Sends what waits (within flush_ms), then stops export: spans ended later are dropped. */
void trace_stop(long flush_ms);
/* Whether spans are recorded at all (export started). */
bool trace_enabled(void);
/* Whether subjects, client addresses and URIs naming a bike or a case may go into spans. */
bool trace_personal_data(void);

/* ---- spans --------------------------------------------------------------------------------- */

/* How a span begins. */
struct trace_begin {
	const char *name;
	enum trace_kind kind;
	int64_t start_ns; /* 0: now */
	/* Its parent: a span of ours (NULL: none), else a remote context (NULL or invalid: none)
	 * with its tracestate (may be NULL). Without either it is a new trace's root. */
	const struct trace_span *parent;
	const struct trace_ctx *remote;
	const char *tracestate;
	/* A root's trace id (the one the request's log line already carries); NULL: a new one. */
	const struct trace_ctx *root;
};

/* A new span, or NULL when export is off, the sampler drops it, or its parent was not
 * recorded. The caller ends it with trace_end(). */
struct trace_span *trace_begin(const struct trace_begin *b) __attribute__((warn_unused_result));
/* A child of parent (NULL: NULL is returned) beginning at start_ns (0: now). */
struct trace_span *trace_child(const struct trace_span *parent, const char *name,
			       enum trace_kind kind, int64_t start_ns)
	__attribute__((warn_unused_result));
/* Ends s at end_ns (0: now) and hands it to the exporter: s is gone after. */
void trace_end(struct trace_span *s, int64_t end_ns);
/* Frees s without exporting it (and the children it kept). */
void trace_discard(struct trace_span *s);
/* Ends child (begun under parent) at end_ns (0: now) and keeps it with parent: it is sent when
 * parent is, moved with it (trace_move), freed with it. For work done under a span whose parent
 * is not known yet. parent NULL: trace_end(child). */
void trace_keep(struct trace_span *parent, struct trace_span *child, int64_t end_ns);
/* Moves s (begun on its own) under parent (NULL: s stays where it is), into parent's trace. The
 * children s kept follow it when they were in that trace already; else they stay in theirs,
 * under s's former parent, and s links to each (relation "moved"): their contexts, given out
 * when they began, stay true. */
void trace_move(struct trace_span *s, const struct trace_span *parent);

/* Attributes: key is a static string (the conventions' name); a string value is copied, cut to
 * the room left. Past TRACE_ATTRS_MAX they are counted as dropped. */
void trace_str(struct trace_span *s, const char *key, const char *value);
void trace_strn(struct trace_span *s, const char *key, const char *value, size_t n);
void trace_int(struct trace_span *s, const char *key, int64_t value);
void trace_bool(struct trace_span *s, const char *key, bool value);
/* Names s "name target" (target NULL: name alone): a message's name is known once it is read. */
void trace_rename(struct trace_span *s, const char *name, const char *target);
/* Status ERROR with its description (copied; NULL: none). */
void trace_fail(struct trace_span *s, const char *message);
/* A link from s to c; relation (a static word, or NULL) becomes its bikaroo.link attribute.
 * False when none was added: s or c is none, s links to c already, or it has no room. */
bool trace_link(struct trace_span *s, const struct trace_ctx *c, const char *relation);
/* s's context (invalid for NULL). */
struct trace_ctx trace_ctx_of(const struct trace_span *s);

/* The span the calling code runs in (its task's), or NULL; trace_swap sets it and returns the
 * one it replaces. */
struct trace_span *trace_current(void);
struct trace_span *trace_swap(struct trace_span *s);

/* Now, in unix nanoseconds (CLOCK_REALTIME). */
int64_t trace_now_ns(void);

#endif
