/* Integration tests of the server under abuse and faults: volume limits on tools/call (a burst
 * past the budget is refused before the database), slow clients that dribble their headers, a
 * stop in the middle of a load, and a database that is down when the server starts. */
#include <check.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "harness.h"
#include "suites.h"

static long ab_count(const char *sql)
{
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "query failed: %s", sql);
	long n = strtol(v, NULL, 10);
	free(v);
	return n;
}

/* ---- volume limits --------------------------------------------------------------------------- */

#define AB_BURST_BIKE "VL-3302"
#define AB_REPORT                                                                                  \
	"\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":\"" AB_BURST_BIKE              \
	"\",\"issue\":\"flat_tire\"}"

struct ab_burst {
	unsigned port;
	int calls;
	int answered, limited, other;
	int bad_limited; /* a 429 without Retry-After or without the JSON-RPC error */
};

static void *ab_burst_run(void *p)
{
	struct ab_burst *b = p;
	for (int i = 0; i < b->calls; i++) {
		struct it_response r;
		it_mcp(b->port, "tools/call", "report_damaged_bike", AB_REPORT, &r);
		json_t *err = json_object_get(r.json, "error");
		if (r.status == 200 && json_object_get(r.json, "result")) {
			b->answered++;
		} else if (r.status == 429) {
			b->limited++;
			json_t *ra =
				json_object_get(json_object_get(err, "data"), "retryAfterSeconds");
			if (!strstr(r.headers, "Retry-After: ") ||
			    json_integer_value(json_object_get(err, "code")) != -32029 ||
			    json_integer_value(ra) < 1)
				b->bad_limited++;
		} else {
			b->other++;
		}
		it_response_free(&r);
	}
	return NULL;
}

START_TEST(burst_past_the_write_budget_gets_429_and_reaches_no_database)
{
	struct it_server s;
	/* A burst of 50 writes, then one a minute: the test ends long before the next. */
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=marie",
			     "BIKAROO_LOCAL_CLIENT=customer-care-assistant",
			     "BIKAROO_RATE_WRITES=1", "BIKAROO_RATE_WRITE_BURST=50", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	const char *audit = "SELECT count(*) FROM fleet.audit_log WHERE subject = 'marie'";
	const char *reports =
		"SELECT count(*) FROM fleet.damage_reports WHERE bike_id = '" AB_BURST_BIKE "'";
	long audit0 = ab_count(audit), reports0 = ab_count(reports);
	enum { THREADS = 8, EACH = 50 };
	struct ab_burst b[THREADS];
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		b[i] = (struct ab_burst){.port = s.port, .calls = EACH};
		pthread_create(&t[i], NULL, ab_burst_run, &b[i]);
	}
	int answered = 0, limited = 0, other = 0, bad = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		answered += b[i].answered;
		limited += b[i].limited;
		other += b[i].other;
		bad += b[i].bad_limited;
	}
	fprintf(stderr, "burst: %d calls, %d answered, %d limited (429), %d other\n",
		THREADS * EACH, answered, limited, other);
	ck_assert_int_eq(other, 0);
	ck_assert_int_eq(bad, 0);
	ck_assert_int_eq(answered, 50);
	ck_assert_int_eq(limited, THREADS * EACH - 50);
	/* Nothing past the budget reached the database: one audit row and one report per answer. */
	ck_assert_int_eq(ab_count(audit) - audit0, answered);
	ck_assert_int_eq(ab_count(reports) - reports0, answered);
	/* Reads have their own budget: still served. */
	struct it_response r;
	it_mcp(s.port, "tools/call", "get_bike_status",
	       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"" AB_BURST_BIKE "\"}", &r);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- logs ------------------------------------------------------------------------------------ */

/* A client's control bytes (an ANSI escape in a method name, a forged line break, a C1 CSI) reach
 * the server's log escaped, never raw. */
START_TEST(control_bytes_from_a_client_are_escaped_in_the_log)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"\\u001b[31mred\\r\\n"
			   "FAKE error line\\u009b2J\",\"params\":{}}";
	const char *headers[] = {"Content-Type: application/json", "Accept: application/json",
				 NULL};
	struct it_response r;
	it_http(s.port, "POST", "/mcp", headers, body, strlen(body), &r);
	ck_assert_int_eq(r.status, 200); /* a 2025-era unknown method: -32601 in-band */
	it_response_free(&r);
	FILE *f = fopen(s.log_file, "rb");
	ck_assert_ptr_nonnull(f);
	char log[1 << 16];
	size_t n = fread(log, 1, sizeof log - 1, f);
	fclose(f);
	log[n] = '\0';
	ck_assert_msg(strstr(log, "\\x1b[31mred\\x0d\\x0aFAKE error line\\x9b2J") != NULL, "%s",
		      log);
	for (size_t i = 0; i < n; i++) {
		const unsigned char *b = (const unsigned char *)log + i;
		ck_assert_msg(b[0] == '\n' || (b[0] >= 0x20 && b[0] != 0x7f),
			      "raw control byte 0x%02x in the log", b[0]);
		ck_assert_msg(!(b[0] == 0xc2 && b[1] >= 0x80 && b[1] <= 0x9f), "raw C1 control");
	}
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

Suite *abuse_suite(void)
{
	Suite *s = suite_create("abuse");
	TCase *tc = tcase_create("limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, burst_past_the_write_budget_gets_429_and_reaches_no_database);
	tcase_add_test(tc, control_bytes_from_a_client_are_escaped_in_the_log);
	suite_add_tcase(s, tc);
	return s;
}
