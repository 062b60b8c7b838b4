/* Traces (common/trace.h, common/otlp.h, domain/pg/dbtrace.h): W3C traceparent read and written,
 * the samplers, spans that cost nothing when export is off, the OTLP body's framing, a full
 * queue that drops and counts instead of waiting, a span's rule (its thread's until it ends,
 * untouched after) as a check that aborts, and the query summaries of database spans. */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "common/metrics.h"
#include "common/otlp.h"
#include "common/trace.h"
#include "domain/pg/dbtrace.h"
#include "tests/check_main.h"

START_TEST(traceparent_is_taken_only_when_valid)
{
	struct trace_ctx c;
	char id[33], back[TRACE_PARENT_LEN];
	ck_assert(trace_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &c));
	trace_id_hex(&c, id);
	ck_assert_str_eq(id, "4bf92f3577b34da6a3ce929d0e0e4736");
	ck_assert_int_eq(c.flags, TRACE_SAMPLED);
	trace_format(&c, back);
	ck_assert_str_eq(back, "00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01");
	/* A later version may append fields; flags other than sampled are not passed on. */
	ck_assert(trace_parse("01-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-03-later", &c));
	ck_assert_int_eq(c.flags, TRACE_SAMPLED);
	ck_assert(trace_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", &c));
	ck_assert_int_eq(c.flags, 0);
	static const char *const bad[] = {
		"ff-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   /* version ff */
		"00-00000000000000000000000000000000-00f067aa0ba902b7-01",   /* zero trace id */
		"00-4bf92f3577b34da6a3ce929d0e0e4736-0000000000000000-01",   /* zero parent id */
		"00-4BF92F3577B34DA6A3CE929D0E0E4736-00f067aa0ba902b7-01",   /* upper case */
		"00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01-x", /* 00 with more */
		"00-4bf92f3577b34da6a3ce929d0e0e473-00f067aa0ba902b7-01",    /* short */
		"00_4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01",   /* separator */
		"",
		NULL,
	};
	for (size_t i = 0; i < sizeof bad / sizeof bad[0]; i++) {
		ck_assert_msg(!trace_parse(bad[i], &c), "%s", bad[i] ? bad[i] : "NULL");
		ck_assert(!c.valid);
	}
	struct trace_ctx a = {0}, b = {0};
	trace_new_id(&a);
	trace_new_id(&b);
	ck_assert(memcmp(a.trace_id, b.trace_id, 16) != 0);
	ck_assert(trace_id_parse("4bf92f3577b34da6a3ce929d0e0e4736", &a));
	ck_assert(!trace_id_parse("00000000000000000000000000000000", &a));
	ck_assert(!trace_id_parse("4bf92f3577b34da6", &a));
	ck_assert(trace_state_ok("rojo=00f067aa0ba902b7,congo=t61rcWkgMzE"));
	ck_assert(!trace_state_ok("a=b\nc=d"));
	char long_state[TRACE_STATE_MAX + 2];
	memset(long_state, 'a', sizeof long_state - 1);
	long_state[sizeof long_state - 1] = '\0';
	ck_assert(!trace_state_ok(long_state));
}
END_TEST

START_TEST(samplers_are_read_as_the_sdk_names_them)
{
	struct trace_settings set;
	const char *why = NULL;
	ck_assert_int_eq(trace_parse_sampler("", "", &set, &why), TRACE_OK);
	ck_assert_int_eq(set.sampler, TRACE_PARENT_ALWAYS_ON);
	ck_assert_int_eq(trace_parse_sampler("parentbased_traceidratio", "0.1", &set, &why),
			 TRACE_OK);
	ck_assert_int_eq(set.sampler, TRACE_PARENT_RATIO);
	ck_assert(set.ratio > 0.099 && set.ratio < 0.101);
	ck_assert_int_eq(trace_parse_sampler("traceidratio", "", &set, &why), TRACE_OK);
	ck_assert(set.ratio == 1.0);
	ck_assert_int_eq(trace_parse_sampler("jaeger_remote", "", &set, &why), TRACE_INVALID);
	ck_assert_ptr_nonnull(strstr(why, "OTEL_TRACES_SAMPLER"));
	ck_assert_int_eq(trace_parse_sampler("traceidratio", "1.5", &set, &why), TRACE_INVALID);
	ck_assert_int_eq(trace_parse_sampler("traceidratio", "half", &set, &why), TRACE_INVALID);
}
END_TEST

START_TEST(nothing_is_recorded_when_export_is_off)
{
	struct trace_settings set = {0};
	ck_assert_int_eq(trace_start(&set), TRACE_OK);
	ck_assert(!trace_enabled());
	struct trace_span *s =
		trace_begin(&(struct trace_begin){.name = "x", .kind = TRACE_SERVER});
	ck_assert_ptr_null(s);
	/* Every function takes NULL and does nothing. */
	trace_str(s, "k", "v");
	trace_int(s, "k", 1);
	trace_fail(s, "m");
	ck_assert(!trace_link(s, NULL, NULL));
	ck_assert_ptr_null(trace_child(s, "c", TRACE_INTERNAL, 0));
	trace_end(s, 0);
	ck_assert(!trace_ctx_of(s).valid);
}
END_TEST

/* Starts export to endpoint (NULL: a port where nothing listens) with a queue of queue spans,
 * sent at the stop or once a batch is full. */
static void trace_start_to(const char *endpoint, double ratio, enum trace_sampler sampler,
			   long queue)
{
	struct trace_settings set = {
		.export = {.endpoint = endpoint ? endpoint : "http://127.0.0.1:9/v1/traces",
			   .headers = "x-api-key=abc%20def",
			   .timeout_ms = 1500,
			   .service_name = "unit",
			   .resource_attributes = "deployment.environment.name=test",
			   .version = "0",
			   .queue_size = queue,
			   .batch_size = queue,
			   .schedule_delay_ms = 600000},
		.sampler = sampler,
		.ratio = ratio,
	};
	ck_assert_int_eq(trace_start(&set), TRACE_OK);
	ck_assert(trace_enabled());
}

static void trace_spans(int n)
{
	for (int i = 0; i < n; i++) {
		struct trace_span *s =
			trace_begin(&(struct trace_begin){.name = "x", .kind = TRACE_SERVER});
		ck_assert_ptr_nonnull(s);
		trace_str(s, "k", "v");
		trace_end(s, 0);
	}
}

/* A collector that takes the connection and never answers: the export waits its timeout, the
 * queue fills behind it, and what does not fit is dropped and counted, never waited for. */
START_TEST(a_full_queue_drops_and_counts)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK)};
	socklen_t sl = sizeof sa;
	ck_assert(fd >= 0 && bind(fd, (struct sockaddr *)&sa, sizeof sa) == 0 &&
		  listen(fd, 16) == 0 && getsockname(fd, (struct sockaddr *)&sa, &sl) == 0);
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/v1/traces", ntohs(sa.sin_port));
	const char *full[] = {"queue_full"}, *timeout[] = {"timeout"}, *ok[] = {""};
	const char *shut[] = {"already_shutdown"};
	long full0 = metrics_value(&metrics_spans_processed, full);
	long late0 = metrics_value(&metrics_spans_exported, timeout);
	long passed0 = metrics_value(&metrics_spans_processed, ok);
	long shut0 = metrics_value(&metrics_spans_processed, shut);
	trace_start_to(url, 1, TRACE_ALWAYS_ON, 64);
	trace_spans(64); /* a batch: the exporter takes it and waits for the silent collector */
	for (int i = 0; i < 500 && metrics_value(&metrics_spans_processed, ok) - passed0 < 64; i++)
		usleep(10000);
	ck_assert_int_eq(metrics_value(&metrics_spans_processed, ok) - passed0, 64);
	trace_spans(100); /* 64 wait, 36 are dropped at once */
	ck_assert_int_eq(metrics_value(&metrics_spans_processed, full) - full0, 36);
	trace_stop(100);
	ck_assert(!trace_enabled());
	/* The first batch timed out; the stop's time was over before the second could go. */
	ck_assert_int_eq(metrics_value(&metrics_spans_exported, timeout) - late0, 64);
	ck_assert_int_eq(metrics_value(&metrics_spans_processed, shut) - shut0, 64);
	/* Ended after the stop: dropped too. */
	struct trace_span *after =
		trace_begin(&(struct trace_begin){.name = "x", .kind = TRACE_SERVER});
	ck_assert_ptr_null(after);
	close(fd);
}
END_TEST

START_TEST(ratio_sampling_follows_the_trace_id_and_parents_decide_below)
{
	trace_start_to(NULL, 0.25, TRACE_PARENT_RATIO, 64);
	int sampled = 0;
	for (int i = 0; i < 4000; i++) {
		struct trace_span *s =
			trace_begin(&(struct trace_begin){.name = "x", .kind = TRACE_SERVER});
		sampled += s != NULL;
		/* A child of ours is recorded with its parent; its trace is the parent's. */
		struct trace_span *c = trace_child(s, "c", TRACE_INTERNAL, 0);
		ck_assert((c != NULL) == (s != NULL));
		if (c)
			ck_assert(memcmp(c->ctx.trace_id, s->ctx.trace_id, 16) == 0 &&
				  c->has_parent && !c->parent_remote);
		trace_discard(c);
		trace_discard(s);
	}
	ck_assert_msg(sampled > 800 && sampled < 1200, "%d of 4000 at 0.25", sampled);
	/* Parent-based: a remote parent's flag decides, whatever the ratio. */
	struct trace_ctx on, off;
	ck_assert(trace_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &on));
	ck_assert(trace_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-00", &off));
	for (int i = 0; i < 50; i++) {
		struct trace_span *a = trace_begin(&(struct trace_begin){
			.name = "x", .kind = TRACE_SERVER, .remote = &on, .tracestate = "k=v"});
		ck_assert_ptr_nonnull(a);
		ck_assert(a->has_parent && a->parent_remote);
		ck_assert(memcmp(a->parent_id, on.span_id, 8) == 0);
		ck_assert_int_eq(a->state_len, 3);
		trace_discard(a);
		ck_assert_ptr_null(trace_begin(
			&(struct trace_begin){.name = "x", .kind = TRACE_SERVER, .remote = &off}));
	}
	trace_stop(0);
}
END_TEST

/* Work done under a span before its parent is known (the issuer's fetch inside a token check,
 * before the message is read) is kept with it and moves with it: into the message's span when
 * that continues the same trace; else the kept child stays under the old parent in its own
 * trace, where the contexts already given out point, and the moved span links to it. */
/* A span's name is "name target" (the conventions' "{mcp.method.name} {target}"), cut at 159
 * bytes; its attributes' text after it stays whole. */
START_TEST(a_span_is_named_by_its_method_and_target)
{
	trace_start_to(NULL, 1, TRACE_ALWAYS_ON, 64);
	struct trace_span *s =
		trace_begin(&(struct trace_begin){.name = "tools/call", .kind = TRACE_SERVER});
	ck_assert_ptr_nonnull(s);
	ck_assert_int_eq(s->name_len, 10);
	ck_assert(memcmp(s->text + s->name_off, "tools/call", 10) == 0);
	trace_rename(s, "tools/call", "get_bike_status");
	ck_assert_int_eq(s->name_len, 26);
	ck_assert(memcmp(s->text + s->name_off, "tools/call get_bike_status", 26) == 0);
	trace_str(s, "gen_ai.tool.name", "get_bike_status");
	ck_assert(memcmp(s->text + s->attrs[0].off, "get_bike_status", s->attrs[0].len) == 0);
	char long_target[300];
	memset(long_target, 'x', sizeof long_target - 1);
	long_target[sizeof long_target - 1] = '\0';
	trace_rename(s, "prompts/get", long_target);
	ck_assert_int_eq(s->name_len, 159);
	ck_assert(memcmp(s->text + s->name_off, "prompts/get xxx", 15) == 0);
	ck_assert_int_eq(s->text[s->name_off + 158], 'x');
	trace_discard(s);
	trace_stop(0);
}
END_TEST

START_TEST(a_kept_child_moves_with_its_span_or_stays_linked)
{
	trace_start_to(NULL, 1, TRACE_ALWAYS_ON, 64);
	struct trace_ctx http, other;
	ck_assert(trace_parse("00-4bf92f3577b34da6a3ce929d0e0e4736-00f067aa0ba902b7-01", &http));
	ck_assert(trace_parse("00-0af7651916cd43dd8448eb211c80319c-b7ad6b7169203331-01", &other));
	for (int split = 0; split < 2; split++) {
		struct trace_span *auth = trace_begin(&(struct trace_begin){
			.name = "authorize", .kind = TRACE_INTERNAL, .remote = &http});
		struct trace_span *fetch = trace_child(auth, "GET", TRACE_CLIENT, 0);
		ck_assert_ptr_nonnull(fetch);
		struct trace_ctx given = trace_ctx_of(fetch);
		trace_keep(auth, fetch, 0);
		ck_assert(auth->kept == fetch && fetch->end_ns >= fetch->start_ns);
		struct trace_span *msg =
			trace_begin(&(struct trace_begin){.name = "tools/call",
							  .kind = TRACE_SERVER,
							  .remote = split ? &other : &http});
		trace_move(auth, msg);
		ck_assert(memcmp(auth->ctx.trace_id, msg->ctx.trace_id, 16) == 0);
		ck_assert(memcmp(auth->parent_id, msg->ctx.span_id, 8) == 0 && auth->has_parent &&
			  !auth->parent_remote);
		/* The fetch's context is the one given out: other calls may link to it. */
		ck_assert(memcmp(&fetch->ctx, &given, sizeof given) == 0);
		if (!split) {
			ck_assert(memcmp(fetch->parent_id, auth->ctx.span_id, 8) == 0);
			ck_assert_int_eq(auth->nlinks, 0);
		} else {
			ck_assert(memcmp(fetch->parent_id, http.span_id, 8) == 0 &&
				  fetch->parent_remote);
			ck_assert_int_eq(auth->nlinks, 1);
			ck_assert(memcmp(&auth->links[0].ctx, &given, sizeof given) == 0);
			ck_assert_str_eq(auth->links[0].relation, "moved");
		}
		trace_discard(auth); /* and the child it kept (valgrind and ASan see a leak else) */
		trace_discard(msg);
	}
	/* Without a parent to keep it, a child is simply ended. */
	trace_keep(NULL, NULL, 0);
	trace_stop(0);
}
END_TEST

/* ---- a span is its thread's until it ends; ended, no one touches it ------------------------ */

static struct trace_span *tr_span;

static void *tr_touch(void *arg)
{
	(void)arg;
	trace_str(tr_span, "gen_ai.tool.name", "get_bike_status");
	return NULL;
}

/* Begun on this thread (its loop's), written by another. */
static void tr_other_thread_touches(void)
{
	trace_start_to(NULL, 1, TRACE_ALWAYS_ON, 64);
	tr_span = trace_begin(&(struct trace_begin){.name = "tools/call", .kind = TRACE_SERVER});
	pthread_t t;
	pthread_create(&t, NULL, tr_touch, NULL);
	pthread_join(t, NULL);
}

START_TEST(a_span_touched_from_another_thread_aborts)
{
	check_aborts(tr_other_thread_touches, "trace: gen_ai.tool.name on the span \"tools/call\" "
					      "from a thread that did not begin it");
}
END_TEST

/* Ended, it waits in the exporter's queue (a batch of 64, sent in ten minutes): the second end
 * would push it twice, and the exporter would free it twice. */
static void tr_ended_twice(void)
{
	trace_start_to(NULL, 1, TRACE_ALWAYS_ON, 64);
	struct trace_span *s =
		trace_begin(&(struct trace_begin){.name = "tools/call", .kind = TRACE_SERVER});
	trace_end(s, 0);
	trace_end(s, 0);
}

START_TEST(a_span_ended_twice_aborts)
{
	check_aborts(tr_ended_twice, "trace_end on the span \"tools/call\" once it had ended");
}
END_TEST

/* A child kept by its parent has ended: it is its parent's to send, not its code's to write. */
static void tr_kept_then_touched(void)
{
	trace_start_to(NULL, 1, TRACE_ALWAYS_ON, 64);
	struct trace_span *auth =
		trace_begin(&(struct trace_begin){.name = "authorize", .kind = TRACE_INTERNAL});
	struct trace_span *fetch = trace_child(auth, "GET", TRACE_CLIENT, 0);
	trace_keep(auth, fetch, 0);
	trace_fail(fetch, "timed out");
}

START_TEST(a_kept_span_touched_after_aborts)
{
	check_aborts(tr_kept_then_touched, "trace_fail on the span \"GET\" once it had ended");
}
END_TEST

/* Its own span, written and ended; *arg (a bool): whether the attribute was written. */
static void *tr_own_span(void *arg)
{
	struct trace_span *s =
		trace_begin(&(struct trace_begin){.name = "postgresql", .kind = TRACE_CLIENT});
	trace_int(s, "db.response.returned_rows", 1);
	*(bool *)arg = s && s->nattrs == 1 && s->attrs[0].i == 1;
	trace_end(s, 0);
	return NULL;
}

/* What the rule allows: each thread its own spans, at once, each ended where it began. */
START_TEST(each_thread_writes_and_ends_its_own_spans)
{
	trace_start_to(NULL, 1, TRACE_ALWAYS_ON, 64);
	struct trace_span *s =
		trace_begin(&(struct trace_begin){.name = "tools/call", .kind = TRACE_SERVER});
	pthread_t t;
	bool theirs = false;
	pthread_create(&t, NULL, tr_own_span, &theirs);
	trace_str(s, "gen_ai.tool.name", "get_bike_status");
	pthread_join(t, NULL);
	ck_assert_msg(theirs, "the other thread's span was not written");
	ck_assert_int_eq(s->nattrs, 1);
	struct trace_span *child = trace_child(s, "postgresql", TRACE_CLIENT, 0);
	trace_keep(s, child, 0);
	ck_assert(s->kept == child && child->end_ns >= child->start_ns);
	trace_end(s, 0);
	trace_stop(0);
}
END_TEST

/* Whether needle[0..m) is in p[0..n) (memmem is a GNU extension). */
static const void *trace_find(const void *p, size_t n, const void *needle, size_t m)
{
	for (size_t i = 0; m <= n && i <= n - m; i++)
		if (memcmp((const char *)p + i, needle, m) == 0)
			return (const char *)p + i;
	return NULL;
}

/* A minimal protobuf reader: the next field of p[0..n) from *at (its number, and its value's
 * bytes for a length-delimited one); false at the end, or when the framing does not hold. */
static bool pb_next(const unsigned char *p, size_t n, size_t *at, unsigned *field,
		    const unsigned char **v, size_t *vlen)
{
	uint64_t x[2] = {0, 0};
	for (int k = 0; k < 2; k++) {
		if (k == 1 && (x[0] & 7) != 0 && (x[0] & 7) != 2)
			break;
		for (int shift = 0;; shift += 7) {
			if (*at >= n || shift > 63)
				return false;
			unsigned char b = p[(*at)++];
			x[k] |= (uint64_t)(b & 0x7f) << shift;
			if (!(b & 0x80))
				break;
		}
	}
	*field = (unsigned)(x[0] >> 3);
	size_t w = (x[0] & 7) == 1 ? 8 : (x[0] & 7) == 5 ? 4 : (x[0] & 7) == 2 ? x[1] : 0;
	if (*at + w > n)
		return false;
	*v = p + *at;
	*vlen = w;
	*at += w;
	return true;
}

/* The fields numbered field of message p[0..n): how many, the last one's value in *v. */
static int pb_count(const unsigned char *p, size_t n, unsigned field, const unsigned char **v,
		    size_t *vlen)
{
	size_t at = 0;
	unsigned f;
	const unsigned char *x;
	size_t xl;
	int count = 0;
	while (pb_next(p, n, &at, &f, &x, &xl))
		if (f == field) {
			count++;
			*v = x;
			*vlen = xl;
		}
	ck_assert_msg(at == n, "a message's framing does not hold");
	return count;
}

START_TEST(the_otlp_body_is_well_framed)
{
	trace_start_to(NULL, 1, TRACE_ALWAYS_ON, 64);
	struct trace_span *s[3];
	s[0] = trace_begin(&(struct trace_begin){.name = "tools/call", .kind = TRACE_SERVER});
	/* A long value: its length prefix takes more than one byte. */
	char big[1500];
	memset(big, 'q', sizeof big - 1);
	big[sizeof big - 1] = '\0';
	trace_str(s[0], "db.query.text", big);
	trace_int(s[0], "n", -5);
	trace_bool(s[0], "b", true);
	trace_fail(s[0], "boom");
	s[1] = trace_child(s[0], "child", TRACE_INTERNAL, 0);
	struct trace_ctx other = trace_ctx_of(s[0]);
	ck_assert(trace_link(s[1], &other, "db_unit"));
	ck_assert(!trace_link(s[1], &other, "db_unit")); /* once */
	s[2] = trace_child(s[0], "empty", TRACE_CLIENT, 0);
	size_t res_len, len;
	const char *why = NULL;
	unsigned char *res = otlp_resource("svc", "1.0", "a=b,c=%2Cd", &res_len, &why);
	ck_assert_ptr_nonnull(res);
	ck_assert_ptr_null(otlp_resource("svc", "1.0", "novalue", &res_len, &why));
	ck_assert_ptr_null(otlp_resource("svc", "1.0", "k=%0Aforged", &res_len, &why));
	unsigned char *body = otlp_encode(s, 3, res, res_len, "1.0", &len);
	/* ExportTraceServiceRequest 1 ResourceSpans {1 Resource {1 KeyValue}, 2 ScopeSpans {1
	 * scope, 2 Span {1 trace_id, 9 KeyValue {1 key, 2 AnyValue}, 13 Link, 15 Status}}}. */
	const unsigned char *rs, *resource, *ss, *span, *kv, *x;
	size_t rsl, resl, ssl, spl, kvl, xl;
	ck_assert_int_eq(pb_count(body, len, 1, &rs, &rsl), 1);
	ck_assert_int_eq(pb_count(rs, rsl, 1, &resource, &resl), 1);
	ck_assert_int_eq(pb_count(resource, resl, 1, &kv, &kvl), 5); /* 3 ours, a and c */
	ck_assert_int_eq(pb_count(rs, rsl, 2, &ss, &ssl), 1);
	ck_assert_int_eq(pb_count(ss, ssl, 2, &span, &spl), 3);
	/* The first span, walked field by field. */
	size_t at = 0;
	unsigned f;
	int attrs = 0;
	while (pb_next(ss, ssl, &at, &f, &x, &xl) && f != 2)
		;
	span = x;
	spl = xl;
	ck_assert_int_eq(pb_count(span, spl, 1, &x, &xl), 1);
	ck_assert(xl == 16 && memcmp(x, s[0]->ctx.trace_id, 16) == 0);
	ck_assert_int_eq(pb_count(span, spl, 5, &x, &xl), 1);
	ck_assert(xl == strlen("tools/call") && memcmp(x, "tools/call", xl) == 0);
	attrs = pb_count(span, spl, 9, &kv, &kvl);
	ck_assert_int_eq(attrs, 3);
	ck_assert_int_eq(pb_count(kv, kvl, 2, &x, &xl), 1); /* the last: b, a bool */
	ck_assert_int_eq(pb_count(span, spl, 15, &x, &xl), 1);
	ck_assert_ptr_nonnull(trace_find(x, xl, "boom", 4));
	ck_assert_int_eq(pb_count(span, spl, 16, &x, &xl), 1);
	ck_assert(xl == 4 && x[0] == TRACE_SAMPLED && x[1] == 0x01); /* sampled, has is_remote */
	/* The big value, whole. */
	ck_assert_ptr_nonnull(trace_find(span, spl, big, sizeof big - 1));
	ck_assert_ptr_nonnull(trace_find(resource, resl, ",d", 2));
	free(body);
	free(res);
	for (int i = 0; i < 3; i++)
		trace_discard(s[i]);
	trace_stop(0);
}
END_TEST

START_TEST(query_summaries_name_the_operation_and_its_objects)
{
	char out[256];
	dbtrace_summary("SELECT fleet.audit_as($1, $2, $3)", out, sizeof out);
	ck_assert_str_eq(out, "SELECT fleet.audit_as");
	dbtrace_summary("SELECT * FROM fleet.report_damaged_bike_as($1, $2)", out, sizeof out);
	ck_assert_str_eq(out, "SELECT fleet.report_damaged_bike_as");
	/* A WITH query: its main operation; each object once, in order; literals never read. */
	dbtrace_summary("WITH a AS MATERIALIZED (SELECT * FROM fleet.act_as($1::text)), r AS "
			"(SELECT * FROM fleet.bike_status_for($1, ARRAY(SELECT "
			"jsonb_array_elements_text($3::jsonb)))) SELECT a.role, fleet.may_read("
			"'not.an_object'), r.* FROM a CROSS JOIN r -- fleet.comment\n"
			"/* fleet.other */ WHERE fleet.act_as(1) IS NOT NULL",
			out, sizeof out);
	ck_assert_str_eq(out, "SELECT fleet.act_as fleet.bike_status_for fleet.may_read");
	dbtrace_summary("INSERT INTO fleet_meta.schema_migrations (name) VALUES ($1)", out,
			sizeof out);
	ck_assert_str_eq(out, "INSERT fleet_meta.schema_migrations");
	dbtrace_summary("", out, sizeof out);
	ck_assert_str_eq(out, "");
}
END_TEST

CHECK_SUITE(trace)
{
	Suite *s = suite_create("trace");
	TCase *tc = tcase_create("context-sampling-export");
	tcase_set_timeout(tc, 30);
	tcase_add_test(tc, traceparent_is_taken_only_when_valid);
	tcase_add_test(tc, samplers_are_read_as_the_sdk_names_them);
	tcase_add_test(tc, nothing_is_recorded_when_export_is_off);
	tcase_add_test(tc, a_full_queue_drops_and_counts);
	tcase_add_test(tc, ratio_sampling_follows_the_trace_id_and_parents_decide_below);
	tcase_add_test(tc, a_span_is_named_by_its_method_and_target);
	tcase_add_test(tc, a_kept_child_moves_with_its_span_or_stays_linked);
	tcase_add_test(tc, a_span_touched_from_another_thread_aborts);
	tcase_add_test(tc, a_span_ended_twice_aborts);
	tcase_add_test(tc, a_kept_span_touched_after_aborts);
	tcase_add_test(tc, each_thread_writes_and_ends_its_own_spans);
	tcase_add_test(tc, the_otlp_body_is_well_framed);
	tcase_add_test(tc, query_summaries_name_the_operation_and_its_objects);
	suite_add_tcase(s, tc);
	return s;
}
