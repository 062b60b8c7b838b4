/* The span exporter: OTLP/HTTP with protobuf bodies (the OTLP specification's default), over the
 * libcurl the product already links, from a thread of its own. Ended spans wait in a bounded
 * queue, lock-free for the threads that push them; the exporter sends them in batches when a
 * batch is full or the schedule delay has passed. A push never waits: past the queue's capacity
 * the span is dropped and counted (otel_sdk_processor_span_processed_total{error_type=
 * "queue_full"}), so a slow or absent collector costs callers nothing and memory stays bounded
 * (the queue's capacity times a span's size). A batch the collector refuses or does not answer
 * within the timeout is dropped and counted (otel_sdk_exporter_span_exported_total{error_type}),
 * and the next export waits a back-off that doubles up to 30 s while the collector keeps failing.
 *
 * Process-wide (a singleton): one exporter, started once before the serving threads. */
#ifndef BIKAROO_OTLP_H
#define BIKAROO_OTLP_H

#include <stdbool.h>
#include <stddef.h>

#include "span.h"

/* The exporter's settings (strings borrowed for the call of otlp_start; copied). */
struct otlp_settings {
	const char *endpoint; /* the traces URL, e.g. http://collector:4318/v1/traces */
	const char *headers;  /* "k=v,k2=v2" (OTEL_EXPORTER_OTLP_HEADERS), values percent-encoded */
	const char *certificate, *client_key, *client_certificate; /* PEM files, "" for none */
	long timeout_ms;                                           /* one export's bound */
	const char *service_name;
	const char *resource_attributes; /* "k=v,..." (OTEL_RESOURCE_ATTRIBUTES), percent-encoded */
	const char *version;             /* service.version */
	long queue_size;                 /* spans waiting at most (rounded up to a power of two) */
	long batch_size;                 /* spans in one export at most */
	long schedule_delay_ms;          /* a batch not full goes after this long */
};

enum otlp_status { OTLP_OK = 0, OTLP_INVALID };

/* Starts the exporter's thread. OTLP_INVALID, logged, for settings that cannot work (a URL
 * that is not http or https, a header list it cannot read). */
enum otlp_status otlp_start(const struct otlp_settings *set) __attribute__((warn_unused_result));
/* Hands s (new: the exporter frees it) to the queue; false when it was dropped (the queue is
 * full, or the exporter is not running). Any thread; never waits. */
bool otlp_push(struct trace_span *s);
/* Sends what waits, within flush_ms, then ends the thread. */
void otlp_stop(long flush_ms);

/* The ExportTraceServiceRequest body of spans[0..n) for resource attributes res (encoded
 * KeyValue messages, res_len bytes) and the instrumentation scope: new memory (caller frees),
 * its length in *len. */
unsigned char *otlp_encode(struct trace_span *const *spans, size_t n, const unsigned char *res,
			   size_t res_len, const char *version, size_t *len);
/* The resource's attributes, encoded (new memory, length in *len): service.name, service.version,
 * service.instance.id, then those of attributes ("k=v,...", percent-encoded); NULL, with *why
 * set, when attributes cannot be read. */
unsigned char *otlp_resource(const char *service_name, const char *version, const char *attributes,
			     size_t *len, const char **why);

#endif
