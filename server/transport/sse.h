/* Server-Sent Events framing for a request that produced notifications before its response.
 * Chosen design: buffered. Handlers are synchronous and short, so the notifications a handler
 * emits are collected here while it runs and sent as one text/event-stream body, followed by the
 * final response as the last event; libmicrohttpd never has to stream from another thread.
 * One event per message: "event: message\ndata: <one-line JSON>\n\n" (no id: fields, the
 * streams are not resumable). No libmicrohttpd types here: http_reply.c sends the response. */
#ifndef BIKAROO_SSE_H
#define BIKAROO_SSE_H

#include <jansson.h>
#include <stddef.h>

/* Ceiling on the notifications buffered for one request; past it further ones are dropped. */
#define SSE_MAX_BYTES ((size_t)1024 * 1024)

struct sse_buf {
	char *data; /* owned */
	size_t len, cap;
	unsigned events;
	unsigned dropped;
};

/* An mcp_emit_fn: appends one message (borrowed) to the sse_buf passed as emit_ctx. */
void sse_emit(void *emit_ctx, const json_t *msg);

/* Appends the final response (a serialized JSON-RPC message) as the last event and hands the
 * whole body out (new memory, caller frees); the buffer is left empty. */
char *sse_finish(struct sse_buf *b, const char *final_json);

void sse_free(struct sse_buf *b);

#endif
