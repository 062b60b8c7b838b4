/* Integration tests of the server under abuse and faults: volume limits on tools/call (a burst
 * past the budget is refused before the database), slow clients that dribble their headers, a
 * stop in the middle of a load, and a database that is down when the server starts. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

static long ab_count(const char *sql)
{
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "query failed: %s", sql);
	long n = strtol(v, NULL, 10);
	free(v);
	return n;
}

static double ab_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

static void ab_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

static bool ab_slow_build(void)
{
	return *it_env("BIKAROO_WRAPPER") != '\0'; /* valgrind */
}

/* True once the server closed fd (EOF or reset), within wait_ms. */
static bool ab_closed_within(int fd, int wait_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (poll(&p, 1, wait_ms) <= 0)
		return false;
	char b[256];
	ssize_t n = recv(fd, b, sizeof b, MSG_DONTWAIT);
	return n == 0 || (n < 0 && errno != EAGAIN);
}

/* Sends a whole raw request on a new connection; returns the status of the answer (0: none
 * within 5 s). For what libcurl will not send (two Host headers). */
/* A new connection that has sent request whole; returns its descriptor. */
static int ab_send(unsigned port, const char *request)
{
	int fd = it_tcp_connect(port, NULL);
	ck_assert_int_ge(fd, 0);
	struct pollfd p = {.fd = fd, .events = POLLOUT};
	poll(&p, 1, 5000);
	ck_assert_int_eq(send(fd, request, strlen(request), MSG_NOSIGNAL),
			 (ssize_t)strlen(request));
	return fd;
}

/* Reads what fd has next into buf (cap bytes, *n used so far, kept NUL-terminated), waiting
 * at most wait_ms; false at end of stream, on an error, a timeout or a full buffer. */
static bool ab_recv_more(int fd, char *buf, size_t cap, size_t *n, int wait_ms)
{
	struct pollfd p = {.fd = fd, .events = POLLIN};
	if (*n >= cap - 1 || poll(&p, 1, wait_ms) <= 0)
		return false;
	ssize_t got = recv(fd, buf + *n, cap - 1 - *n, 0);
	if (got <= 0)
		return false;
	*n += (size_t)got;
	buf[*n] = '\0';
	return true;
}

static int ab_raw_status(unsigned port, const char *request)
{
	int fd = ab_send(port, request);
	char buf[512] = {0};
	size_t n = 0;
	while (n < 12 && ab_recv_more(fd, buf, sizeof buf, &n, 5000))
		;
	close(fd);
	int status = 0;
	return sscanf(buf, "HTTP/1.1 %d", &status) == 1 ? status : 0;
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
	ck_assert_int_eq(it_metric(&s, "bikaroo_rate_limit_rejections_total{reason=\"write\"}"),
			 limited);
	/* Reads have their own budget: still served. */
	struct it_response r;
	it_mcp(s.port, "tools/call", "get_bike_status",
	       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"" AB_BURST_BIKE "\"}", &r);
	ck_assert_msg(r.status == 200, "%ld %s", r.status, r.body);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* With BIKAROO_RATE_STORE=local the limits are per instance (docs/limits.md): two instances of one
 * subject each grant their own budget, so N instances allow N times it (tests/budgets shows the
 * default, one budget for the deployment). */
START_TEST(each_instance_keeps_its_own_budget)
{
	struct it_server a, b;
	const char *env[] = {"BIKAROO_RATE_WRITES=1", "BIKAROO_RATE_WRITE_BURST=5",
			     "BIKAROO_RATE_STORE=local", NULL};
	ck_assert_int_eq(it_server_start(&a, env), 0);
	ck_assert_int_eq(it_server_start(&b, env), 0);
	int ok[2] = {0, 0};
	for (int k = 0; k < 2; k++) {
		struct ab_burst run = {.port = k ? b.port : a.port, .calls = 8};
		ab_burst_run(&run);
		ck_assert_int_eq(run.other + run.bad_limited, 0);
		ok[k] = run.answered;
	}
	ck_assert_int_eq(ok[0], 5);
	ck_assert_int_eq(ok[1], 5);
	ck_assert_int_eq(it_server_stop(&a), 0);
	ck_assert_int_eq(it_server_stop(&b), 0);
}
END_TEST

/* ---- transport: one Host -----------------------------------------------------------------------
 */

/* Two Host headers are a 400 (RFC 9112 section 3.2), whichever comes first, never read as one of
 * them; a single one is served. Nothing reaches the database. */
START_TEST(two_host_headers_are_a_bad_request)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
	char req[1024];
#define AB_REQ                                                                                     \
	"POST /mcp HTTP/1.1\r\n%sContent-Type: application/json\r\nAccept: application/json\r\n"   \
	"Content-Length: %zu\r\nConnection: close\r\n\r\n%s"
	snprintf(req, sizeof req, AB_REQ, "Host: 127.0.0.1\r\nHost: evil.example.com\r\n",
		 strlen(body), body);
	ck_assert_int_eq(ab_raw_status(s.port, req), 400);
	snprintf(req, sizeof req, AB_REQ, "Host: 127.0.0.1\r\nHost: 127.0.0.1\r\n", strlen(body),
		 body);
	ck_assert_int_eq(ab_raw_status(s.port, req), 400);
	snprintf(req, sizeof req, AB_REQ, "Host: 127.0.0.1\r\n", strlen(body), body);
	ck_assert_int_eq(ab_raw_status(s.port, req), 200);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- logs ------------------------------------------------------------------------------------ */

/* A client's control bytes (an ANSI escape in a method name, a forged line break, a C1 CSI) reach
 * the server's log escaped, never raw. */
START_TEST(control_bytes_from_a_client_are_escaped_in_the_log)
{
	struct it_server s;
	/* The line naming the method as sent is debug (access lines name only table methods). */
	const char *env[] = {"BIKAROO_LOG_LEVEL=debug", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
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

/* ---- slow clients ---------------------------------------------------------------------------- */

#define AB_DRIBBLE                                                                                 \
	"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: aaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaaa"

/* A byte every 100 ms keeps libmicrohttpd's inactivity timeout (30 s) from ever firing: only the
 * deadlines close these two, the headers one 1 s after it began, the body one 1 s after its
 * headers; the server serves on. */
START_TEST(header_and_body_deadlines_close_dribblers_whatever_their_rate)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_HEADER_TIMEOUT_MS=1000", "BIKAROO_BODY_TIMEOUT_MS=1000",
			     NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	/* Each time from before what starts its deadline: a stall of this thread (a loaded
	 * machine) can then only make a close look later, never earlier. */
	double t_head = ab_now_ms();
	int head = it_tcp_connect(s.port, NULL), body = it_tcp_connect(s.port, NULL);
	ck_assert_int_ge(head, 0);
	ck_assert_int_ge(body, 0);
	ab_sleep_ms(50);
	const char *hdr =
		"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
		"Content-Length: 1000\r\n\r\n";
	double t0 = ab_now_ms(), head_closed = 0, body_closed = 0;
	ck_assert_int_eq(send(body, hdr, strlen(hdr), MSG_NOSIGNAL), (ssize_t)strlen(hdr));
	for (size_t i = 0; ab_now_ms() - t0 < 5000 && (!head_closed || !body_closed); i++) {
		if (!head_closed) {
			send(head, AB_DRIBBLE + i % (sizeof AB_DRIBBLE - 1), 1, MSG_NOSIGNAL);
			if (ab_closed_within(head, 0))
				head_closed = ab_now_ms() - t_head;
		}
		if (!body_closed) {
			send(body, " ", 1, MSG_NOSIGNAL);
			if (ab_closed_within(body, 0))
				body_closed = ab_now_ms() - t0;
		}
		ab_sleep_ms(100);
	}
	fprintf(stderr, "deadlines: headers closed after %.0f ms, body after %.0f ms\n",
		head_closed, body_closed);
	double slack = ab_slow_build() ? 10000 : 1000;
	ck_assert_msg(head_closed >= 900 && head_closed <= 1000 + slack, "%.0f", head_closed);
	ck_assert_msg(body_closed >= 900 && body_closed <= 1000 + slack, "%.0f", body_closed);
	ck_assert_int_eq(
		it_metric(&s, "bikaroo_http_connections_closed_total{reason=\"header_deadline\"}"),
		1);
	ck_assert_int_eq(
		it_metric(&s, "bikaroo_http_connections_closed_total{reason=\"body_deadline\"}"),
		1);
	close(head);
	close(body);
	struct it_response r;
	it_mcp(s.port, "server/discover", NULL, "", &r);
	ck_assert_int_eq(r.status, 200);
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* BIKAROO_MAX_CONNECTIONS_PER_IP: past it a connection from that address is answered 429 +
 * Retry-After at once, whatever it asks, and closed (never reset, never served); when one of
 * the others ends, the address is served again. */
START_TEST(connections_per_address_are_limited)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_MAX_CONNECTIONS_PER_IP=4", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	int fds[4];
	for (int i = 0; i < 4; i++) {
		fds[i] = it_tcp_connect(s.port, NULL);
		ck_assert_int_ge(fds[i], 0);
	}
	ab_sleep_ms(200);
	int extra = ab_send(s.port, "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
				    "application/json\r\nContent-Length: 2\r\n\r\n{}");
	char buf[1024] = {0};
	size_t n = 0;
	while (ab_recv_more(extra, buf, sizeof buf, &n, 2000))
		;
	ck_assert_msg(strncmp(buf, "HTTP/1.1 429 ", 13) == 0 && strstr(buf, "Retry-After: 1\r\n") &&
			      strstr(buf, "-32029"),
		      "a fifth connection from one address: %s", buf);
	ck_assert_msg(ab_closed_within(extra, 2000),
		      "a fifth connection from one address stayed open after its answer");
	close(extra);
	for (int i = 0; i < 4; i++)
		ck_assert_msg(!ab_closed_within(fds[i], 0), "connection %d was closed", i);
	close(fds[0]);
	ab_sleep_ms(200);
	struct it_response r;
	it_mcp(s.port, "server/discover", NULL, "", &r);
	ck_assert_int_eq(r.status, 200);
	it_response_free(&r);
	for (int i = 1; i < 4; i++)
		close(fds[i]);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

struct ab_dribblers {
	unsigned port;
	int n;
	volatile int stop;
	int opened, closed_by_server, most_open;
};

/* n connections from one address, each sending one header byte every 2 s and never finishing;
 * one the server closes is opened again (at most ~500 a second), for as long as stop is 0. */
static void *ab_dribble_run(void *p)
{
	struct ab_dribblers *d = p;
	int *fd = calloc((size_t)d->n, sizeof *fd);
	double *last = calloc((size_t)d->n, sizeof *last);
	size_t *pos = calloc((size_t)d->n, sizeof *pos);
	struct pollfd *pf = calloc((size_t)d->n, sizeof *pf);
	for (int i = 0; i < d->n; i++)
		fd[i] = -1;
	while (!d->stop) {
		double now = ab_now_ms();
		int budget = 50, open = 0; /* new connections per 100 ms tick */
		for (int i = 0; i < d->n; i++) {
			if (fd[i] < 0 && budget > 0) {
				budget--;
				fd[i] = it_tcp_connect(d->port, NULL);
				if (fd[i] >= 0)
					d->opened++;
				last[i] = 0;
				pos[i] = 0;
			}
			if (fd[i] >= 0 && now - last[i] >= 2000) {
				send(fd[i], AB_DRIBBLE + pos[i] % (sizeof AB_DRIBBLE - 1), 1,
				     MSG_NOSIGNAL);
				pos[i]++;
				last[i] = now;
			}
			pf[i] = (struct pollfd){.fd = fd[i], .events = POLLIN};
		}
		poll(pf, (nfds_t)d->n, 0);
		for (int i = 0; i < d->n; i++) {
			if (fd[i] >= 0 && (pf[i].revents & (POLLIN | POLLHUP | POLLERR))) {
				close(fd[i]);
				fd[i] = -1;
				d->closed_by_server++;
			}
			open += fd[i] >= 0;
		}
		if (open > d->most_open)
			d->most_open = open;
		ab_sleep_ms(100);
	}
	for (int i = 0; i < d->n; i++)
		if (fd[i] >= 0)
			close(fd[i]);
	free(fd);
	free(last);
	free(pos);
	free(pf);
	return NULL;
}

static int ab_cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;
	return x < y ? -1 : x > y;
}

/* 1,000 connections dribbling their headers from the address valid clients use, past the
 * per-address limit (512) and the pending-headers cap (256): the oldest dribblers are closed
 * to make room, so a valid request on a new connection is answered at once throughout
 * (without the cap, none is: the dribblers hold the address's 512 connections). */
START_TEST(a_thousand_dribblers_leave_valid_requests_answered)
{
	struct rlimit rl;
	getrlimit(RLIMIT_NOFILE, &rl);
	if (rl.rlim_cur < 4096 && (rl.rlim_max == RLIM_INFINITY || rl.rlim_max >= 4096)) {
		rl.rlim_cur = 4096;
		setrlimit(RLIMIT_NOFILE, &rl);
	}
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	struct ab_dribblers d = {.port = s.port, .n = 1000};
	pthread_t t;
	pthread_create(&t, NULL, ab_dribble_run, &d);
	ab_sleep_ms(2500); /* every dribbler has connected and sent a byte */
	enum { PROBES = 150 };
	double lat[PROBES];
	int ok = 0;
	for (int i = 0; i < PROBES; i++) {
		struct it_response r;
		double t0 = ab_now_ms();
		it_mcp(s.port, "tools/call", "get_bike_status",
		       "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}", &r);
		lat[i] = ab_now_ms() - t0;
		ok += r.status == 200 && json_object_get(r.json, "result") != NULL;
		it_response_free(&r);
		ab_sleep_ms(50);
	}
	d.stop = 1;
	pthread_join(t, NULL);
	qsort(lat, PROBES, sizeof lat[0], ab_cmp_double);
	fprintf(stderr,
		"dribblers: %d connections opened, %d closed by the server, at most %d open at "
		"once; %d/%d valid requests answered, latency p50 %.1f ms, p99 %.1f ms, max "
		"%.1f ms\n",
		d.opened, d.closed_by_server, d.most_open, ok, PROBES, lat[PROBES / 2],
		lat[PROBES * 99 / 100], lat[PROBES - 1]);
	ck_assert_int_ge(d.opened, 1000);
	ck_assert_int_gt(d.closed_by_server, 0);
	ck_assert_int_gt(
		it_metric(&s, "bikaroo_http_connections_closed_total{reason=\"pending_cap\"}"), 0);
	ck_assert_int_eq(ok, PROBES);
	/* Without the defence no probe is answered before the dribblers stop (30 s and more), so
	 * the bounds tell the two apart with a wide margin: the median within 100 ms, every probe
	 * within 3 s. The 100 ms p99 target is a figure printed above and measured by the bench,
	 * not asserted: on a busy 2-core machine (other tests, other builds) a probe in a hundred
	 * can wait for the scheduler, dribblers or not. */
	double p50 = lat[PROBES / 2], max = lat[PROBES - 1];
	ck_assert_msg(p50 < (ab_slow_build() ? 1000 : 100), "p50 %.1f ms", p50);
	ck_assert_msg(max < (ab_slow_build() ? 10000 : 3000), "max %.1f ms", max);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- a graceful stop ------------------------------------------------------------------------- */

#define AB_STOP_BIKE "VL-3305"

struct ab_load {
	unsigned port;
	volatile int *stop;
	pthread_mutex_t *lock;
	json_t *answered; /* report ids the clients saw */
	int refused;      /* 503 while draining, or no connection: nothing done */
	int lost;         /* a connection that ended without an answer once the request was sent */
};

static void *ab_load_run(void *p)
{
	struct ab_load *l = p;
	while (!*l->stop) {
		struct it_response r;
		it_mcp(l->port, "tools/call", "report_damaged_bike",
		       "\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":\"" AB_STOP_BIKE
		       "\",\"issue\":\"other\"}",
		       &r);
		const char *id = json_string_value(json_object_get(
			json_object_get(json_object_get(r.json, "result"), "structuredContent"),
			"reportId"));
		pthread_mutex_lock(l->lock);
		if (r.status == 200 && id)
			json_array_append_new(l->answered, json_string(id));
		else if (r.status == 503 || r.status < 0)
			l->refused++;
		else
			l->lost++;
		pthread_mutex_unlock(l->lock);
		int st = (int)r.status;
		it_response_free(&r);
		if (st < 0)
			break; /* the server is gone */
	}
	return NULL;
}

/* SIGTERM in the middle of a load of reports without idempotency keys: the server stops
 * accepting, answers every request it had begun, exits 0 within the drain limit; every report
 * a client saw exists, and every report that exists was seen by its client. */
START_TEST(sigterm_mid_load_answers_every_report_it_writes)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_RATE_WRITES=0", "BIKAROO_DRAIN_MS=5000", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	const char *count =
		"SELECT count(*) FROM fleet.damage_reports WHERE bike_id = '" AB_STOP_BIKE "'";
	long before = ab_count(count);
	enum { THREADS = 8 };
	volatile int stop = 0;
	pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	json_t *answered = json_array();
	struct ab_load l[THREADS];
	pthread_t t[THREADS];
	for (int i = 0; i < THREADS; i++) {
		l[i] = (struct ab_load){s.port, &stop, &lock, answered, 0, 0};
		pthread_create(&t[i], NULL, ab_load_run, &l[i]);
	}
	for (int i = 0; i < 400 && json_array_size(answered) < 100; i++)
		ab_sleep_ms(10);
	double t0 = ab_now_ms();
	kill(s.pid, SIGTERM);
	int status = 0;
	waitpid(s.pid, &status, 0);
	double drain = ab_now_ms() - t0;
	s.pid = 0;
	stop = 1;
	int refused = 0, lost = 0;
	for (int i = 0; i < THREADS; i++) {
		pthread_join(t[i], NULL);
		refused += l[i].refused;
		lost += l[i].lost;
	}
	long written = ab_count(count) - before;
	char *ids = json_dumps(answered, JSON_COMPACT);
	char *sql = mem_printf("SELECT count(*) FROM fleet.damage_reports WHERE report_id IN "
			       "(SELECT json_array_elements_text('%s'::json))",
			       ids);
	long seen_and_stored = ab_count(sql);
	fprintf(stderr,
		"sigterm: exit %d after %.0f ms; %zu reports answered, %ld written, %ld of the "
		"answered found stored; %d refused (503 or no connection), %d lost\n",
		WIFEXITED(status) ? WEXITSTATUS(status) : -1, drain, json_array_size(answered),
		written, seen_and_stored, refused, lost);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	ck_assert_msg(drain < (ab_slow_build() ? 30000 : 5000), "%.0f ms", drain);
	ck_assert_int_gt(json_array_size(answered), 0);
	ck_assert_int_eq(lost, 0);
	ck_assert_int_eq(written, (long)json_array_size(answered)); /* no row without its answer */
	ck_assert_int_eq(seen_and_stored, written);                 /* no answer without its row */
	free(sql);
	free(ids);
	json_decref(answered);
}
END_TEST

/* ---- listen streams: a share per subject, slots back when the client hangs up ------------------
 */

/* Opens a listen stream on a raw connection; *status is the HTTP status (0: none), the stream
 * stays open on the returned descriptor once acknowledged (-1 otherwise, closed). */
static int ab_listen(unsigned port, int *status)
{
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":\"l\",\"method\":\"subscriptions/listen\",\"params\":{"
		"\"notifications\":{\"resourceSubscriptions\":[]},\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	char req[1024];
	snprintf(req, sizeof req,
		 "POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
		 "Accept: application/json, text/event-stream\r\nMCP-Protocol-Version: "
		 "2026-07-28\r\nMcp-Method: subscriptions/listen\r\nContent-Length: %zu\r\n\r\n%s",
		 strlen(body), body);
	int fd = ab_send(port, req);
	char buf[4096] = {0};
	size_t n = 0;
	*status = 0;
	while (ab_recv_more(fd, buf, sizeof buf, &n, 5000)) {
		if (sscanf(buf, "HTTP/1.1 %d", status) == 1 && *status != 200 &&
		    strstr(buf, "\r\n\r\n"))
			break;
		if (strstr(buf, "subscriptions/acknowledged"))
			return fd;
	}
	if (*status == 429 || *status == 503)
		ck_assert_msg(strstr(buf, "Retry-After: ") && strstr(buf, "-32029"), "%s", buf);
	close(fd);
	return -1;
}

/* One subject holds at most its share of the streams (then 429); the slots come back as soon as
 * its client hangs up, not at the stream's next keep-alive. */
START_TEST(listen_share_per_subject_and_slots_back_on_hangup)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_LISTEN_PER_SUBJECT=3", "BIKAROO_KEEPALIVE_SECONDS=60", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	int fds[3], status;
	for (int i = 0; i < 3; i++) {
		fds[i] = ab_listen(s.port, &status);
		ck_assert_int_eq(status, 200);
		ck_assert_int_ge(fds[i], 0);
	}
	ck_assert_int_eq(ab_listen(s.port, &status), -1);
	ck_assert_int_eq(status, 429);
	ck_assert_int_eq(
		it_metric(&s, "bikaroo_rate_limit_rejections_total{reason=\"listen_share\"}"), 1);
	for (int i = 0; i < 3; i++)
		close(fds[i]);
	double t0 = ab_now_ms(), back = -1;
	int fd = -1;
	while (ab_now_ms() - t0 < (ab_slow_build() ? 10000 : 2000)) {
		fd = ab_listen(s.port, &status);
		if (fd >= 0) {
			back = ab_now_ms() - t0;
			break;
		}
		ab_sleep_ms(50);
	}
	fprintf(stderr, "listen: a slot came back %.0f ms after the holder hung up\n", back);
	ck_assert_msg(fd >= 0, "no slot back within 2 s of the hang-up (keep-alive is 60 s)");
	close(fd);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* A full server (256 streams) answers 503 + Retry-After, not a -32603 in a 200. */
START_TEST(listen_on_a_full_server_is_503)
{
	struct it_server s;
	const char *env[] = {"BIKAROO_LISTEN_PER_SUBJECT=0", NULL};
	ck_assert_int_eq(it_server_start(&s, env), 0);
	int fds[256], status;
	for (int i = 0; i < 256; i++) {
		fds[i] = ab_listen(s.port, &status);
		ck_assert_int_eq(status, 200);
	}
	ck_assert_int_eq(ab_listen(s.port, &status), -1);
	ck_assert_int_eq(status, 503);
	for (int i = 0; i < 256; i++)
		close(fds[i]);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- outbound URLs: judged on libcurl's parse -------------------------------------------------
 */

/* A listener on addr:0 answering every request with body (a JSON document), counting them. */
struct ab_httpd {
	int fd;
	unsigned port;
	char body[512];
	volatile int stop;
	int hits;
	pthread_t thread;
};

static void *ab_httpd_run(void *p)
{
	struct ab_httpd *h = p;
	while (!h->stop) {
		struct pollfd pf = {.fd = h->fd, .events = POLLIN};
		if (poll(&pf, 1, 50) <= 0)
			continue;
		int c = accept(h->fd, NULL, NULL);
		if (c < 0)
			continue;
		h->hits++;
		char req[4096] = {0};
		size_t n = 0;
		while (!strstr(req, "\r\n\r\n") && ab_recv_more(c, req, sizeof req, &n, 2000))
			;
		char resp[1024];
		int len = snprintf(resp, sizeof resp,
				   "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\n"
				   "Content-Length: %zu\r\nConnection: close\r\n\r\n%s",
				   strlen(h->body), h->body);
		ssize_t sent = send(c, resp, (size_t)len, MSG_NOSIGNAL);
		(void)sent;
		close(c);
	}
	return NULL;
}

static void ab_httpd_start(struct ab_httpd *h, const char *addr)
{
	h->fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(h->fd, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	inet_pton(AF_INET, addr, &sa.sin_addr);
	ck_assert_int_eq(bind(h->fd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(listen(h->fd, 16), 0);
	socklen_t sl = sizeof sa;
	getsockname(h->fd, (struct sockaddr *)&sa, &sl);
	h->port = ntohs(sa.sin_port);
	pthread_create(&h->thread, NULL, ab_httpd_run, h);
}

static void ab_httpd_stop(struct ab_httpd *h)
{
	h->stop = 1;
	pthread_join(h->thread, NULL);
	close(h->fd);
}

/* Issuer metadata naming jwks_uri http://localhost:1@127.0.0.2:PORT/jwks: a prefix check read
 * it as loopback, libcurl as user "localhost" at 127.0.0.2. The server must never fetch from
 * 127.0.0.2, and never accept a token for want of keys. */
START_TEST(jwks_uri_with_userinfo_is_never_fetched)
{
	struct ab_httpd evil = {0}, iss = {0};
	snprintf(evil.body, sizeof evil.body, "{\"keys\":[]}");
	ab_httpd_start(&evil, "127.0.0.2");
	ab_httpd_start(&iss, "127.0.0.1");
	snprintf(iss.body, sizeof iss.body,
		 "{\"issuer\":\"http://127.0.0.1:%u\",\"jwks_uri\":\"http://"
		 "localhost:1@127.0.0.2:%u/"
		 "jwks\"}",
		 iss.port, evil.port);
	char issuer[96];
	snprintf(issuer, sizeof issuer, "BIKAROO_AUTH_ISSUER=http://127.0.0.1:%u", iss.port);
	const char *env[] = {"BIKAROO_AUTH=jwt", issuer,
			     "BIKAROO_RESOURCE_URI=https://mcp.bikaroo.test/mcp",
			     "BIKAROO_AUTH_INSECURE_LOOPBACK=1", NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	/* A JWS naming a key: validating it needs the key set. */
	const char *token = "eyJhbGciOiJSUzI1NiIsInR5cCI6ImF0K2p3dCIsImtpZCI6ImsxIn0."
			    "eyJzdWIiOiJtYXJpZSJ9.c2lnbmF0dXJl";
	char auth[256];
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", token);
	const char *h[] = {"Content-Type: application/json", "MCP-Protocol-Version: 2026-07-28",
			   "Mcp-Method: tools/list", auth, NULL};
	const char *body = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"tools/list\",\"params\":{"
			   "\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
			   "\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	struct it_response r;
	it_http(s.port, "POST", "/mcp", h, body, strlen(body), &r);
	long status = r.status;
	it_response_free(&r);
	ck_assert_int_eq(it_server_stop(&s), 0);
	ab_httpd_stop(&iss);
	ab_httpd_stop(&evil);
	ck_assert_int_gt(iss.hits, 0); /* the metadata was read */
	ck_assert_int_eq(evil.hits, 0);
	ck_assert_msg(status == 503 || status == 401, "status %ld", status);
}
END_TEST

CHECK_SUITE(abuse)
{
	Suite *s = suite_create("abuse");
	TCase *tc = tcase_create("limits");
	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, burst_past_the_write_budget_gets_429_and_reaches_no_database);
	tcase_add_test(tc, control_bytes_from_a_client_are_escaped_in_the_log);
	tcase_add_test(tc, two_host_headers_are_a_bad_request);
	tcase_add_test(tc, each_instance_keeps_its_own_budget);
	tcase_add_test(tc, header_and_body_deadlines_close_dribblers_whatever_their_rate);
	tcase_add_test(tc, connections_per_address_are_limited);
	tcase_add_test(tc, a_thousand_dribblers_leave_valid_requests_answered);
	tcase_add_test(tc, sigterm_mid_load_answers_every_report_it_writes);
	tcase_add_test(tc, listen_share_per_subject_and_slots_back_on_hangup);
	tcase_add_test(tc, listen_on_a_full_server_is_503);
	tcase_add_test(tc, jwks_uri_with_userinfo_is_never_fetched);
	suite_add_tcase(s, tc);
	return s;
}
