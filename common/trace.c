/* Spans and their W3C context (trace.h): parsing and writing traceparent, the sampler, a span's
 * attributes and links, the span each task runs in. Spans go to common/otlp.c once ended. */
#include "trace.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>

#include "log.h"
#include "mem.h"
#include "metrics.h"
#include "task.h"

/* A span's name, "name target", is cut to this many bytes. */
#define TRACE_NAME_MAX 159

/* Set once by trace_start(), before the serving threads, then only read. */
static struct {
	atomic_bool on;
	enum trace_sampler sampler;
	uint64_t ratio_bound; /* a trace id's low 56 bits below it: sampled */
	bool personal_data;
} trace_cfg;

/* ---- W3C context ---------------------------------------------------------------------------- */

static int trace_hexval(char c)
{
	if (c >= '0' && c <= '9')
		return c - '0';
	if (c >= 'a' && c <= 'f')
		return c - 'a' + 10;
	return -1; /* upper case is not valid in traceparent */
}

/* n bytes from 2n lowercase hex digits; false when one is not. */
static bool trace_unhex(const char *s, uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		int hi = trace_hexval(s[2 * i]), lo = trace_hexval(s[2 * i + 1]);
		if (hi < 0 || lo < 0)
			return false;
		out[i] = (uint8_t)(hi << 4 | lo);
	}
	return true;
}

static void trace_hex(const uint8_t *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}

static bool trace_zero(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i])
			return false;
	return true;
}

bool trace_parse(const char *tp, struct trace_ctx *out)
{
	memset(out, 0, sizeof *out);
	size_t len = tp ? strnlen(tp, 64) : 0;
	uint8_t version;
	if (len < 55 || !trace_unhex(tp, &version, 1) || version == 0xff || tp[2] != '-' ||
	    !trace_unhex(tp + 3, out->trace_id, 16) || tp[35] != '-' ||
	    !trace_unhex(tp + 36, out->span_id, 8) || tp[52] != '-' ||
	    !trace_unhex(tp + 53, &out->flags, 1))
		goto bad;
	/* Version 00 is exactly 55 characters; a later one may append "-" and more. */
	if (version == 0 ? len != 55 : len > 55 && tp[55] != '-')
		goto bad;
	if (trace_zero(out->trace_id, 16) || trace_zero(out->span_id, 8))
		goto bad;
	out->flags &= TRACE_SAMPLED; /* the other bits are not ours to pass on */
	out->valid = true;
	return true;
bad:
	memset(out, 0, sizeof *out);
	return false;
}

void trace_format(const struct trace_ctx *c, char out[TRACE_PARENT_LEN])
{
	memcpy(out, "00-", 3);
	trace_hex(c->trace_id, 16, out + 3);
	out[35] = '-';
	trace_hex(c->span_id, 8, out + 36);
	out[52] = '-';
	trace_hex(&c->flags, 1, out + 53);
}

void trace_id_hex(const struct trace_ctx *c, char out[33])
{
	trace_hex(c->trace_id, 16, out);
}

bool trace_id_parse(const char *hex, struct trace_ctx *c)
{
	return hex && strnlen(hex, 33) == 32 && trace_unhex(hex, c->trace_id, 16) &&
	       !trace_zero(c->trace_id, 16);
}

bool trace_state_ok(const char *ts)
{
	size_t n = ts ? strnlen(ts, TRACE_STATE_MAX + 1) : 0;
	if (n == 0 || n > TRACE_STATE_MAX)
		return false;
	for (size_t i = 0; i < n; i++)
		if (ts[i] < 0x20 || ts[i] > 0x7e)
			return false;
	return true;
}

/* Unique, not secret (W3C asks for random ids, not unpredictable ones): a per-thread
 * generator seeded once from the kernel. */
static uint64_t trace_random(void)
{
	static _Thread_local uint64_t state;
	if (!state && getrandom(&state, sizeof state, 0) != sizeof state)
		state = (uint64_t)time(NULL) ^ (uint64_t)(uintptr_t)&state;
	state |= 1;
	uint64_t z = (state += 0x9e3779b97f4a7c15ull);
	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
	return z ^ (z >> 31);
}

static void trace_random_bytes(uint8_t *out, size_t n)
{
	for (size_t i = 0; i < n; i += 8) {
		uint64_t r = trace_random();
		memcpy(out + i, &r, n - i < 8 ? n - i : 8);
	}
}

void trace_new_id(struct trace_ctx *c)
{
	trace_random_bytes(c->trace_id, 16);
}

/* ---- settings ------------------------------------------------------------------------------ */

enum trace_status trace_parse_sampler(const char *name, const char *arg, struct trace_settings *set,
				      const char **why)
{
	static const struct {
		const char *name;
		enum trace_sampler s;
	} names[] = {
		{"parentbased_always_on", TRACE_PARENT_ALWAYS_ON},
		{"parentbased_always_off", TRACE_PARENT_ALWAYS_OFF},
		{"parentbased_traceidratio", TRACE_PARENT_RATIO},
		{"always_on", TRACE_ALWAYS_ON},
		{"always_off", TRACE_ALWAYS_OFF},
		{"traceidratio", TRACE_RATIO},
	};
	size_t i = 0;
	while (name && *name && i < sizeof names / sizeof names[0] && strcmp(name, names[i].name))
		i++;
	if (i == sizeof names / sizeof names[0]) {
		*why = "OTEL_TRACES_SAMPLER must be parentbased_always_on (the default), "
		       "parentbased_always_off, parentbased_traceidratio, always_on, always_off or "
		       "traceidratio";
		return TRACE_INVALID;
	}
	set->sampler = name && *name ? names[i].s : TRACE_PARENT_ALWAYS_ON;
	set->ratio = 1.0;
	if (arg && *arg && (set->sampler == TRACE_RATIO || set->sampler == TRACE_PARENT_RATIO)) {
		char *end;
		double r = strtod(arg, &end);
		if (end == arg || *end || !(r >= 0 && r <= 1)) {
			*why = "OTEL_TRACES_SAMPLER_ARG must be a number from 0 to 1 (the share of "
			       "new traces sampled)";
			return TRACE_INVALID;
		}
		set->ratio = r;
	}
	return TRACE_OK;
}

enum trace_status trace_start(const struct trace_settings *set)
{
	trace_cfg.sampler = set->sampler;
	trace_cfg.personal_data = set->personal_data;
	/* The ratio as a bound on the trace id's last 56 bits (the random ones of W3C level 2). */
	trace_cfg.ratio_bound = (uint64_t)(set->ratio * (double)(1ull << 56));
	if (!set->export.endpoint || !*set->export.endpoint)
		return TRACE_OK;
	if (otlp_start(&set->export) != OTLP_OK)
		return TRACE_INVALID;
	atomic_store(&trace_cfg.on, true);
	return TRACE_OK;
}

void trace_stop(long flush_ms)
{
	if (!atomic_exchange(&trace_cfg.on, false))
		return;
	otlp_stop(flush_ms);
}

bool trace_enabled(void)
{
	return atomic_load_explicit(&trace_cfg.on, memory_order_relaxed);
}

bool trace_personal_data(void)
{
	return trace_cfg.personal_data;
}

/* The sampler's decision for a span with this parent context (valid or not) and trace id. */
static bool trace_sampled(const struct trace_ctx *parent, const uint8_t trace_id[16])
{
	enum trace_sampler s = trace_cfg.sampler;
	bool parented = s == TRACE_PARENT_ALWAYS_ON || s == TRACE_PARENT_ALWAYS_OFF ||
			s == TRACE_PARENT_RATIO;
	if (parented && parent && parent->valid)
		return parent->flags & TRACE_SAMPLED;
	if (s == TRACE_ALWAYS_ON || s == TRACE_PARENT_ALWAYS_ON)
		return true;
	if (s == TRACE_ALWAYS_OFF || s == TRACE_PARENT_ALWAYS_OFF)
		return false;
	uint64_t low = 0;
	for (int i = 9; i < 16; i++)
		low = low << 8 | trace_id[i];
	return low < trace_cfg.ratio_bound;
}

/* ---- spans --------------------------------------------------------------------------------- */

int64_t trace_now_ns(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_REALTIME, &ts);
	return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* The rule of a span (docs/concurrency.md): it is the thread's that began it until it ends, then
 * the exporter's queue's, or its parent's when kept. Every function given a span checks it here
 * (a load and a compare): another thread's touch would race with its own, an ended span's with
 * the exporter that sends and frees it. */
static void trace_owned(const struct trace_span *s, const char *what)
{
	if (!s->end_ns && pthread_equal(s->owner, pthread_self()))
		return;
	log_error("trace: %s on the span \"%.*s\" %s", what, (int)s->name_len,
		  s->text + s->name_off,
		  s->end_ns ? "once it had ended" : "from a thread that did not begin it");
	abort(); /* our bug */
}

/* Copies v[0..n) into s's text, cut to the room left; its offset and length. */
static void trace_text(struct trace_span *s, const char *v, size_t n, uint16_t *off, uint16_t *len)
{
	size_t room = TRACE_TEXT_MAX - s->text_len;
	if (n > room)
		n = room;
	memcpy(s->text + s->text_len, v, n);
	*off = s->text_len;
	*len = (uint16_t)n;
	s->text_len = (uint16_t)(s->text_len + n);
}

struct trace_span *trace_begin(const struct trace_begin *b)
{
	if (!trace_enabled())
		return NULL;
	if (b->parent)
		trace_owned(b->parent, "a child begun");
	const struct trace_ctx *remote = b->remote && b->remote->valid ? b->remote : NULL;
	struct trace_ctx parent = b->parent ? b->parent->ctx
				  : remote  ? *remote
					    : (struct trace_ctx){0};
	if (b->parent && !b->parent->ctx.valid)
		return NULL;
	struct trace_ctx ctx = {.valid = true};
	if (parent.valid)
		memcpy(ctx.trace_id, parent.trace_id, 16);
	else if (b->root && !trace_zero(b->root->trace_id, 16))
		memcpy(ctx.trace_id, b->root->trace_id, 16);
	else
		trace_new_id(&ctx);
	/* A child of ours follows its parent (recorded, so sampled); the others ask the sampler. */
	if (!b->parent && !trace_sampled(&parent, ctx.trace_id))
		return NULL;
	ctx.flags = TRACE_SAMPLED;
	do
		trace_random_bytes(ctx.span_id, 8);
	while (trace_zero(ctx.span_id, 8));
	struct trace_span *s = mem_alloc(sizeof *s);
	memset(s, 0, offsetof(struct trace_span, attrs)); /* attrs, links, text: as they are set */
	s->ctx = ctx;
	s->owner = pthread_self();
	s->kind = b->kind;
	s->start_ns = b->start_ns ? b->start_ns : trace_now_ns();
	if (parent.valid) {
		memcpy(s->parent_id, parent.span_id, 8);
		s->has_parent = true;
		s->parent_remote = !b->parent;
	}
	/* tracestate is the trace's, passed from parent to child. */
	const char *state = NULL;
	size_t state_len = 0;
	if (b->parent && b->parent->state_len) {
		state = b->parent->text + b->parent->state_off;
		state_len = b->parent->state_len;
	} else if (!b->parent && remote && trace_state_ok(b->tracestate)) {
		state = b->tracestate;
		state_len = strlen(state);
	}
	if (state)
		trace_text(s, state, state_len, &s->state_off, &s->state_len);
	trace_rename(s, b->name, NULL);
	return s;
}

struct trace_span *trace_child(const struct trace_span *parent, const char *name,
			       enum trace_kind kind, int64_t start_ns)
{
	if (!parent)
		return NULL;
	return trace_begin(&(struct trace_begin){
		.name = name, .kind = kind, .start_ns = start_ns, .parent = parent});
}

/* Sets s's end (0: now), never before its start. */
static void trace_stamp_end(struct trace_span *s, int64_t end_ns)
{
	s->end_ns = end_ns ? end_ns : trace_now_ns();
	if (s->end_ns < s->start_ns)
		s->end_ns = s->start_ns;
}

void trace_end(struct trace_span *s, int64_t end_ns)
{
	if (!s)
		return;
	trace_owned(s, "trace_end");
	trace_stamp_end(s, end_ns);
	/* The exporter owns a span once pushed: the chain is read before. */
	for (struct trace_span *k = s->kept, *next; k; k = next) {
		next = k->kept_next;
		if (!otlp_push(k))
			free(k);
	}
	if (!otlp_push(s))
		free(s);
}

void trace_discard(struct trace_span *s)
{
	if (!s)
		return;
	trace_owned(s, "trace_discard");
	for (struct trace_span *k = s->kept, *next; k; k = next) {
		next = k->kept_next;
		free(k);
	}
	free(s);
}

void trace_keep(struct trace_span *parent, struct trace_span *child, int64_t end_ns)
{
	if (!child)
		return;
	if (!parent) {
		trace_end(child, end_ns);
		return;
	}
	trace_owned(parent, "trace_keep (its parent)");
	trace_owned(child, "trace_keep");
	trace_stamp_end(child, end_ns);
	child->kept_next = parent->kept;
	parent->kept = child;
}

void trace_move(struct trace_span *s, const struct trace_span *parent)
{
	if (!s || !parent)
		return;
	trace_owned(s, "trace_move");
	trace_owned(parent, "trace_move (its new parent)");
	bool same = memcmp(s->ctx.trace_id, parent->ctx.trace_id, 16) == 0;
	for (struct trace_span *k = s->kept; k; k = k->kept_next) {
		if (same)
			continue;
		memcpy(k->parent_id, s->parent_id, 8);
		k->has_parent = s->has_parent;
		k->parent_remote = s->parent_remote;
		(void)trace_link(s, &k->ctx, "moved");
	}
	if (!same) /* tracestate is the trace's */
		trace_text(s, parent->text + parent->state_off, parent->state_len, &s->state_off,
			   &s->state_len);
	memcpy(s->ctx.trace_id, parent->ctx.trace_id, 16);
	memcpy(s->parent_id, parent->ctx.span_id, 8);
	s->has_parent = true;
	s->parent_remote = false;
}

/* The next attribute of s, or NULL (counted as dropped) when it has no room. */
static struct trace_attr *trace_attr_new(struct trace_span *s, const char *key,
					 enum trace_attr_type type)
{
	trace_owned(s, key);
	if (s->nattrs == TRACE_ATTRS_MAX) {
		s->dropped_attrs++;
		return NULL;
	}
	struct trace_attr *a = &s->attrs[s->nattrs++];
	*a = (struct trace_attr){.key = key, .type = type};
	return a;
}

void trace_strn(struct trace_span *s, const char *key, const char *value, size_t n)
{
	struct trace_attr *a = s && value ? trace_attr_new(s, key, TRACE_STR) : NULL;
	if (a)
		trace_text(s, value, n, &a->off, &a->len);
}

void trace_str(struct trace_span *s, const char *key, const char *value)
{
	if (s && value)
		trace_strn(s, key, value, strlen(value));
}

void trace_int(struct trace_span *s, const char *key, int64_t value)
{
	struct trace_attr *a = s ? trace_attr_new(s, key, TRACE_INT) : NULL;
	if (a)
		a->i = value;
}

void trace_bool(struct trace_span *s, const char *key, bool value)
{
	struct trace_attr *a = s ? trace_attr_new(s, key, TRACE_BOOL) : NULL;
	if (a)
		a->i = value;
}

void trace_rename(struct trace_span *s, const char *name, const char *target)
{
	if (!s || !name)
		return;
	trace_owned(s, "trace_rename");
	/* Written in place (no formatting: every recorded span is named once or twice). The old
	 * name's bytes stay in text unused: a span is renamed once. */
	size_t n = strnlen(name, TRACE_NAME_MAX);
	trace_text(s, name, n, &s->name_off, &s->name_len);
	if (!target || !*target || n + 1 >= TRACE_NAME_MAX || TRACE_TEXT_MAX - s->text_len < 2)
		return;
	s->text[s->text_len++] = ' ';
	uint16_t off, len;
	trace_text(s, target, strnlen(target, TRACE_NAME_MAX - n - 1), &off, &len);
	s->name_len = (uint16_t)(s->name_len + 1 + len);
}

void trace_fail(struct trace_span *s, const char *message)
{
	if (!s)
		return;
	trace_owned(s, "trace_fail");
	s->error = true;
	if (message)
		trace_text(s, message, strlen(message), &s->status_off, &s->status_len);
}

bool trace_link(struct trace_span *s, const struct trace_ctx *c, const char *relation)
{
	if (!s || !c || !c->valid)
		return false;
	trace_owned(s, "trace_link");
	for (uint16_t i = 0; i < s->nlinks; i++)
		if (memcmp(s->links[i].ctx.span_id, c->span_id, 8) == 0 &&
		    memcmp(s->links[i].ctx.trace_id, c->trace_id, 16) == 0)
			return false;
	if (s->nlinks == TRACE_LINKS_MAX) {
		s->dropped_links++;
		return false;
	}
	s->links[s->nlinks++] = (struct trace_link){.ctx = *c, .relation = relation};
	return true;
}

struct trace_ctx trace_ctx_of(const struct trace_span *s)
{
	if (!s)
		return (struct trace_ctx){0};
	trace_owned(s, "trace_ctx_of");
	return s->ctx;
}

struct trace_span *trace_current(void)
{
	return task_span();
}

struct trace_span *trace_swap(struct trace_span *s)
{
	if (s)
		trace_owned(s, "trace_swap");
	struct trace_span *old = task_span();
	task_set_span(s);
	return old;
}
