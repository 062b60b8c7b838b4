/* SSE framing of request-scoped notifications followed by the response (see sse.h). */
#include "sse.h"

#include <string.h>

#include "common/jsonw.h"
#include "common/log.h"
#include "common/mem.h"

static void sse_append(struct sse_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->data = mem_realloc(b->data, b->cap);
	}
	memcpy(b->data + b->len, s, n);
	b->len += n;
	b->data[b->len] = '\0';
}

static void sse_event(struct sse_buf *b, const char *json)
{
	static const char head[] = "event: message\ndata: ";
	sse_append(b, head, sizeof head - 1);
	sse_append(b, json, strlen(json)); /* compact JSON: no newline inside */
	sse_append(b, "\n\n", 2);
}

void sse_emit(void *emit_ctx, const json_t *msg)
{
	struct sse_buf *b = emit_ctx;
	char *json = jsonw_dump(msg);
	if (!json)
		return;
	if (b->len + strlen(json) > SSE_MAX_BYTES) {
		if (b->dropped++ == 0)
			log_warn("sse: notifications past %zu bytes dropped", SSE_MAX_BYTES);
	} else {
		sse_event(b, json);
		b->events++;
	}
	free(json);
}

char *sse_finish(struct sse_buf *b, const char *final_json)
{
	sse_event(b, final_json);
	char *out = b->data;
	b->data = NULL;
	b->len = b->cap = 0;
	b->events = 0;
	return out;
}

void sse_free(struct sse_buf *b)
{
	free(b->data);
	memset(b, 0, sizeof *b);
}
