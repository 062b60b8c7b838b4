/* What an operator reads: the metrics registry (exact counts under concurrent adds, histogram
 * buckets, label escaping) and the listen addresses accepted (traceparent: test_trace.c). */
#include <arpa/inet.h>
#include <check.h>
#include <netinet/in.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/metrics.h"
#include "server/transport/http.h"
#include "tests/check_main.h"

#define OPS_THREADS 4
#define OPS_ADDS 20000

static void *ops_adder(void *arg)
{
	const char *labels[] = {"unit", "tools/call", (const char *)arg, "ok", "200"};
	for (int i = 0; i < OPS_ADDS; i++)
		metrics_add(&metrics_requests, labels, 1);
	return NULL;
}

START_TEST(concurrent_adds_are_all_counted)
{
	pthread_t t[OPS_THREADS];
	/* Two threads on one series (the race to create it), two on another. */
	const char *names[OPS_THREADS] = {"unit_a", "unit_a", "unit_b", "unit_b"};
	for (int i = 0; i < OPS_THREADS; i++)
		pthread_create(&t[i], NULL, ops_adder, (void *)names[i]);
	for (int i = 0; i < OPS_THREADS; i++)
		pthread_join(t[i], NULL);
	const char *a[] = {"unit", "tools/call", "unit_a", "ok", "200"};
	const char *b[] = {"unit", "tools/call", "unit_b", "ok", "200"};
	ck_assert_int_eq(metrics_value(&metrics_requests, a), 2 * OPS_ADDS);
	ck_assert_int_eq(metrics_value(&metrics_requests, b), 2 * OPS_ADDS);
	char *text = metrics_render();
	ck_assert_ptr_nonnull(strstr(text, "bikaroo_requests_total{transport=\"unit\","
					   "method=\"tools/call\",name=\"unit_a\",outcome=\"ok\","
					   "status=\"200\"} 40000\n"));
	free(text);
}
END_TEST

START_TEST(counters_only_grow_and_gauges_go_both_ways)
{
	const char *r[] = {"unit-read"};
	metrics_add(&metrics_rate_limited, r, 3);
	metrics_add(&metrics_rate_limited, r, -2);
	ck_assert_int_eq(metrics_value(&metrics_rate_limited, r), 3);
	const char *s[] = {"unit-transport"};
	metrics_add(&metrics_listen_streams, s, 2);
	metrics_add(&metrics_listen_streams, s, -1);
	ck_assert_int_eq(metrics_value(&metrics_listen_streams, s), 1);
}
END_TEST

START_TEST(histograms_are_cumulative_with_sum_and_count)
{
	const char *l[] = {"unit-h", "ping", ""};
	metrics_observe(&metrics_request_seconds, l, 0.0004); /* first bucket, 0.0005 */
	metrics_observe(&metrics_request_seconds, l, 0.2);    /* 0.25 */
	metrics_observe(&metrics_request_seconds, l, 60);     /* only +Inf */
	char *text = metrics_render();
	const char *p =
		"bikaroo_request_duration_seconds_bucket{transport=\"unit-h\",method=\"ping\","
		"name=\"\",le=\"";
	char want[256];
	snprintf(want, sizeof want, "%s0.0005\"} 1\n", p);
	ck_assert_ptr_nonnull(strstr(text, want));
	snprintf(want, sizeof want, "%s0.1\"} 1\n", p);
	ck_assert_ptr_nonnull(strstr(text, want));
	snprintf(want, sizeof want, "%s0.25\"} 2\n", p);
	ck_assert_ptr_nonnull(strstr(text, want));
	snprintf(want, sizeof want, "%s10\"} 2\n", p);
	ck_assert_ptr_nonnull(strstr(text, want));
	snprintf(want, sizeof want, "%s+Inf\"} 3\n", p);
	ck_assert_ptr_nonnull(strstr(text, want));
	ck_assert_ptr_nonnull(strstr(text,
				     "bikaroo_request_duration_seconds_count{transport=\"unit-h\","
				     "method=\"ping\",name=\"\"} 3\n"));
	ck_assert_ptr_nonnull(strstr(text,
				     "bikaroo_request_duration_seconds_sum{transport=\"unit-h\","
				     "method=\"ping\",name=\"\"} 60.2004"));
	free(text);
}
END_TEST

START_TEST(label_values_are_escaped)
{
	const char *l[] = {"a\"b\\c\nd"};
	metrics_add(&metrics_db_errors, l, 1);
	char *text = metrics_render();
	ck_assert_ptr_nonnull(
		strstr(text, "bikaroo_db_errors_total{kind=\"a\\\"b\\\\c\\nd\"} 1\n"));
	/* Every family is announced, an unlabelled one reads 0 before its first event. */
	ck_assert_ptr_nonnull(strstr(text, "# TYPE bikaroo_db_connection_waits_total counter\n"
					   "bikaroo_db_connection_waits_total 0\n"));
	free(text);
}
END_TEST

/* BIKAROO_LOG_FORMAT=json: a message cut at the line's limit inside a character ("é" across
 * the cut) keeps its text, never becomes "(not UTF-8)". */
START_TEST(a_json_log_line_cut_inside_a_character_keeps_its_text)
{
	char path[] = "/tmp/bikaroo-log-XXXXXX";
	int fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	close(fd);
	int saved = dup(STDERR_FILENO); /* given back below: CK_FORK=no runs the next tests here */
	ck_assert_ptr_nonnull(freopen(path, "w", stderr));
	char msg[1100];
	memset(msg, 'a', 1022);
	snprintf(msg + 1022, sizeof msg - 1022, "\xc3\xa9 and more");
	log_set_json(true);
	log_msg(LOG_ERROR, NULL, "%s", msg);
	log_set_json(false);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	/* freopen left stderr fully buffered, as a file's stream: unbuffered again, or a later
	 * test's message before an abort stays in the buffer. */
	setvbuf(stderr, NULL, _IONBF, 0);
	FILE *f = fopen(path, "r");
	ck_assert_ptr_nonnull(f);
	char line[2048] = "";
	ck_assert_ptr_nonnull(fgets(line, sizeof line, f));
	fclose(f);
	unlink(path);
	ck_assert_msg(strstr(line, "\"msg\":\"aaaaaaaa") != NULL, "%.120s", line);
}
END_TEST

START_TEST(listen_addresses_v4_and_v6)
{
	struct sockaddr_storage sa;
	unsigned len;
	long port = -1;
	ck_assert_int_eq(http_parse_address("127.0.0.1", NULL, &sa, &len), 0);
	ck_assert_int_eq(sa.ss_family, AF_INET);
	ck_assert_int_eq(http_parse_address("::1", NULL, &sa, &len), 0);
	ck_assert_int_eq(sa.ss_family, AF_INET6);
	ck_assert_int_eq(http_parse_address("[::1]", NULL, &sa, &len), 0);
	ck_assert_int_eq(sa.ss_family, AF_INET6);
	ck_assert_int_eq(http_parse_address("127.0.0.1:9464", &port, &sa, &len), 0);
	ck_assert_int_eq(port, 9464);
	ck_assert_int_eq(ntohs(((struct sockaddr_in *)&sa)->sin_port), 9464);
	ck_assert_int_eq(http_parse_address("[::1]:0", &port, &sa, &len), 0);
	ck_assert_int_eq(port, 0);
	ck_assert_int_eq(sa.ss_family, AF_INET6);
	static const char *const bad_addr[] = {"localhost", "127.0.0.1:80", "[::1", "", "1.2.3"};
	for (size_t i = 0; i < sizeof bad_addr / sizeof bad_addr[0]; i++)
		ck_assert_msg(http_parse_address(bad_addr[i], NULL, &sa, &len) != 0, "%s",
			      bad_addr[i]);
	static const char *const bad_port[] = {
		"::1:9464", "127.0.0.1", "127.0.0.1:", "127.0.0.1:65536", "127.0.0.1:x", "[::1]"};
	for (size_t i = 0; i < sizeof bad_port / sizeof bad_port[0]; i++)
		ck_assert_msg(http_parse_address(bad_port[i], &port, &sa, &len) != 0, "%s",
			      bad_port[i]);
}
END_TEST

CHECK_SUITE(ops)
{
	Suite *s = suite_create("ops");
	TCase *tc = tcase_create("metrics-traces-addresses");
	tcase_add_test(tc, concurrent_adds_are_all_counted);
	tcase_add_test(tc, counters_only_grow_and_gauges_go_both_ways);
	tcase_add_test(tc, histograms_are_cumulative_with_sum_and_count);
	tcase_add_test(tc, label_values_are_escaped);
	tcase_add_test(tc, listen_addresses_v4_and_v6);
	tcase_add_test(tc, a_json_log_line_cut_inside_a_character_keeps_its_text);
	suite_add_tcase(s, tc);
	return s;
}
