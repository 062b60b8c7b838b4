/* Integration tests of the HTTP edges under attack and overload: strict request framing (no
 * request smuggling), checks made on the headers before any body is awaited, bounded waits when
 * the database stalls, and load shed with answers rather than resets. Raw sockets, so that what
 * libcurl would never send is sent. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

static long ed_count(const char *sql)
{
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "query failed: %s", sql);
	long n = strtol(v, NULL, 10);
	free(v);
	return n;
}

static void ed_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	nanosleep(&ts, NULL);
}

/* A blocking TCP connection to the server, with 5 s receive and send timeouts. */
static int ed_connect(unsigned port)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	ck_assert_int_ge(fd, 0);
	struct timeval tv = {5, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	return fd;
}

static void ed_send_all(int fd, const char *bytes, size_t n)
{
	ck_assert_int_eq(send(fd, bytes, n, MSG_NOSIGNAL), (ssize_t)n);
}

/* Everything the server sends on fd until it closes it (true) or wait_ms pass without a byte
 * (false); into buf (cap bytes, NUL-terminated). */
static bool ed_read_to_close(int fd, char *buf, size_t cap, int wait_ms)
{
	size_t n = 0;
	buf[0] = '\0';
	for (;;) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		if (poll(&p, 1, wait_ms) <= 0)
			return false;
		ssize_t got = recv(fd, buf + n, cap - 1 - n, 0);
		if (got == 0 || (got < 0 && errno == ECONNRESET))
			return true;
		if (got < 0)
			return false;
		n += (size_t)got;
		buf[n] = '\0';
		if (n >= cap - 1)
			return false;
	}
}

static int ed_occurrences(const char *hay, const char *needle)
{
	int n = 0;
	for (const char *p = strstr(hay, needle); p; p = strstr(p + 1, needle))
		n++;
	return n;
}

/* ---- strict framing -------------------------------------------------------------------------- */

/* A complete, valid tools/call (an audited read) with JSON-RPC id `id`: the request hidden after a
 * head framed two ways. If it ever ran, it has its audit row and its response. */
static char *ed_hidden_call(const char *id)
{
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"tools/call\",\"params\":{\"name\":"
		"\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"},\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		id);
	char *req = mem_printf("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n"
			       "Content-Type: application/json\r\nAccept: application/json\r\n"
			       "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: tools/call\r\n"
			       "Mcp-Name: get_bike_status\r\nContent-Length: %zu\r\n\r\n%s",
			       strlen(body), body);
	free(body);
	return req;
}

static long ed_audit_rows(const char *id)
{
	char *q =
		mem_printf("SELECT count(*) FROM fleet.audit_log WHERE request_id = '\"%s\"'", id);
	long n = ed_count(q);
	free(q);
	return n;
}

#define ED_HEAD                                                                                    \
	"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"              \
	"Accept: application/json\r\n"

/* Each way to frame one request two ways (RFC 9112 section 6.3, and the lines a proxy may read
 * otherwise) is a 400 that closes the connection: the request hidden after it never runs (no
 * second response, no audit row), whatever libmicrohttpd would have made of it. The same hidden
 * request after a well-framed one runs (the control: the test sees a request that runs). */
START_TEST(a_request_framed_two_ways_is_refused_and_what_follows_never_runs)
{
	static const struct {
		const char *what, *head, *body;
	} cases[] = {
		{"Content-Length then Transfer-Encoding",
		 ED_HEAD "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "0\r\n\r\n"},
		{"Transfer-Encoding then Content-Length",
		 ED_HEAD "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", "0\r\n\r\n"},
		{"TE: CHUNKED and Content-Length",
		 ED_HEAD "Transfer-Encoding: CHUNKED\r\nContent-Length: 5\r\n\r\n", "0\r\n\r\n"},
		{"TE:<tab>chunked and Content-Length",
		 ED_HEAD "Transfer-Encoding:\tchunked\r\nContent-Length: 5\r\n\r\n", "0\r\n\r\n"},
		{"two differing Content-Length",
		 ED_HEAD "Content-Length: 0\r\nContent-Length: 5\r\n\r\n", ""},
		{"an obs-fold continuing Content-Length", ED_HEAD "Content-Length: 5\r\n 0\r\n\r\n",
		 "hello"},
		{"an obs-fold after another header",
		 ED_HEAD "X-Note: a\r\n\tb\r\nContent-Length: 0\r\n\r\n", ""},
		{"whitespace before the colon", ED_HEAD "Content-Length : 5\r\n\r\n", "hello"},
		{"a tab before the colon", ED_HEAD "Transfer-Encoding\t: chunked\r\n\r\n",
		 "0\r\n\r\n"},
		{"a transfer coding other than chunked", ED_HEAD "Transfer-Encoding: gzip\r\n\r\n",
		 ""},
		{"chunked after another coding", ED_HEAD "Transfer-Encoding: gzip, chunked\r\n\r\n",
		 "0\r\n\r\n"},
		{"two Transfer-Encoding lines",
		 ED_HEAD "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n",
		 "0\r\n\r\n"},
		{"a bare LF ending a header line", ED_HEAD "Content-Length: 0\nX-After: 1\r\n\r\n",
		 ""},
	};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	char buf[8192], failed[4096] = "";
	size_t n_failed = 0;
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		char id[32];
		snprintf(id, sizeof id, "smuggled-%d-%zu", (int)getpid(), i);
		char *hidden = ed_hidden_call(id);
		char *bytes = mem_printf("%s%s%s", cases[i].head, cases[i].body, hidden);
		int fd = ed_connect(s.port);
		ed_send_all(fd, bytes, strlen(bytes));
		bool closed = ed_read_to_close(fd, buf, sizeof buf, 5000);
		close(fd);
		const char *fault = strncmp(buf, "HTTP/1.1 400", 12) != 0   ? "not a 400"
				    : !closed                               ? "left open"
				    : ed_occurrences(buf, "HTTP/1.1 ") != 1 ? "a second response"
									    : NULL;
		if (fault) {
			n_failed++;
			size_t used = strlen(failed);
			snprintf(failed + used, sizeof failed - used, "\n  %s: %s", cases[i].what,
				 fault);
		}
		free(bytes);
		free(hidden);
	}
	ck_assert_msg(n_failed == 0, "%zu of %zu cases framed two ways were served:%s", n_failed,
		      sizeof cases / sizeof cases[0], failed);
	/* The control: a well-framed request, then the same kind of hidden request, runs both. */
	char id[32];
	snprintf(id, sizeof id, "smuggled-%d-control", (int)getpid());
	char *hidden = ed_hidden_call(id);
	const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
	char *bytes =
		mem_printf(ED_HEAD "Content-Length: %zu\r\n\r\n%s%s", strlen(ping), ping, hidden);
	int fd = ed_connect(s.port);
	ed_send_all(fd, bytes, strlen(bytes));
	shutdown(fd, SHUT_WR);
	ed_read_to_close(fd, buf, sizeof buf, 5000);
	close(fd);
	ck_assert_msg(ed_occurrences(buf, "HTTP/1.1 200") == 2, "control:\n%s", buf);
	free(bytes);
	free(hidden);
	/* Audit rows of reads are written by group commit: give it time, then none of the hidden
	 * requests has one, and the control's has. */
	long control = 0;
	for (int t = 0; t < 100 && control == 0; t++) {
		ed_sleep_ms(50);
		control = ed_audit_rows(id);
	}
	ck_assert_int_eq(control, 1);
	char like[64];
	snprintf(like, sizeof like, "\"smuggled-%d-%%", (int)getpid());
	char *q = mem_printf("SELECT count(*) FROM fleet.audit_log WHERE request_id LIKE '%s' AND "
			     "request_id <> '\"%s\"'",
			     like, id);
	ck_assert_int_eq(ed_count(q), 0);
	free(q);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* The metrics listener holds the same line: a head framed two ways is a 400 and the end. */
START_TEST(the_metrics_listener_refuses_a_request_framed_two_ways)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	unsigned mport = it_metrics_port(&s);
	ck_assert_uint_gt(mport, 0);
	const char *bytes =
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
		"Content-Length: 60\r\n\r\nGET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n";
	int fd = ed_connect(mport);
	ed_send_all(fd, bytes, strlen(bytes));
	char buf[4096];
	bool closed = ed_read_to_close(fd, buf, sizeof buf, 5000);
	close(fd);
	ck_assert_msg(strncmp(buf, "HTTP/1.1 400", 12) == 0, "%.60s", buf);
	ck_assert(closed);
	ck_assert_int_eq(ed_occurrences(buf, "HTTP/1.1 "), 1);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- checks before bodies ------------------------------------------------------------------ */

static double ed_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec * 1000.0 + (double)ts.tv_nsec / 1e6;
}

/* The status of the answer to head (sent on fd, a new connection to port when fd is -1), 0 when
 * none came within 5 s; *ms how long it took. */
static int ed_status_of(unsigned port, const char *head, double *ms)
{
	int fd = ed_connect(port);
	double t0 = ed_now_ms();
	ed_send_all(fd, head, strlen(head));
	char buf[256] = {0};
	ssize_t n = recv(fd, buf, sizeof buf - 1, 0);
	*ms = ed_now_ms() - t0;
	close(fd);
	int status = 0;
	return n > 0 && sscanf(buf, "HTTP/1.1 %d", &status) == 1 ? status : 0;
}

#define ED_BIG_HEAD(auth, type)                                                                    \
	"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\n" auth "Content-Type: " type "\r\n"              \
	"Accept: application/json\r\nContent-Length: 65536\r\n\r\n"

/* A request without a valid token that announces 64 KiB and sends none of them is answered 401
 * on its headers, its body never awaited, and its connection ends: a flood of them (more than
 * the connection limit) leaves the server serving new connections. */
START_TEST(a_request_without_a_valid_token_is_refused_on_its_headers)
{
	const char *env[] = {"BIKAROO_AUTH=jwt",
			     "BIKAROO_AUTH_ISSUER=https://issuer.bikaroo.test",
			     "BIKAROO_RESOURCE_URI=https://mcp.bikaroo.test/mcp",
			     "BIKAROO_MAX_CONNECTIONS=64",
			     "BIKAROO_MAX_PENDING_HEADERS=16",
			     NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	/* A token is judged with the issuer's keys, which this issuer (unreachable) never gives:
	 * 503 temporarily_unavailable, at once too. */
	static const char *const heads[] = {
		ED_BIG_HEAD("", "application/json"),
		ED_BIG_HEAD("Authorization: Basic Zm9vOmJhcg==\r\n", "application/json"),
		ED_BIG_HEAD("Authorization: Bearer garbage\r\n", "application/json"),
	};
	static const int expect[] = {401, 401, 503};
	for (size_t i = 0; i < sizeof heads / sizeof heads[0]; i++) {
		double ms;
		int status = ed_status_of(s.port, heads[i], &ms);
		ck_assert_msg(status == expect[i] && ms < 2000, "head %zu: %d after %.0f ms", i,
			      status, ms);
	}
	/* 100 of them within a second, on connections the client keeps open (more than the 64
	 * allowed): each is answered and closed by the server; a new connection is then served
	 * at once. */
	enum { ED_FLOOD = 100 };
	int fds[ED_FLOOD];
	for (int i = 0; i < ED_FLOOD; i++) {
		fds[i] = ed_connect(s.port);
		send(fds[i], heads[i % 3], strlen(heads[i % 3]), MSG_NOSIGNAL);
		ed_sleep_ms(10); /* 100 in a second: more than 64 held would be refused */
	}
	int answered = 0;
	for (int i = 0; i < ED_FLOOD; i++) {
		char buf[256] = {0};
		int status = 0;
		if (recv(fds[i], buf, sizeof buf - 1, 0) > 0 &&
		    sscanf(buf, "HTTP/1.1 %d", &status) == 1 && status == expect[i % 3])
			answered++;
	}
	ck_assert_int_eq(answered, ED_FLOOD);
	double ms;
	int status = ed_status_of(s.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &ms);
	ck_assert_msg(status == 200 && ms < 2000, "healthz: %d after %.0f ms", status, ms);
	for (int i = 0; i < ED_FLOOD; i++)
		close(fds[i]);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* The other checks the headers decide are made on them too: a wrong media type (415), an Accept
 * without JSON (406), a repeated MCP header (400), a probe announcing a body: answered at once,
 * the 64 KiB announced never awaited. */
START_TEST(checks_on_headers_never_wait_for_the_body)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	static const struct {
		const char *head;
		int status;
	} cases[] = {
		{ED_BIG_HEAD("", "text/plain"), 415},
		{"POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
		 "Accept: text/html\r\nContent-Length: 65536\r\n\r\n",
		 406},
		{ED_BIG_HEAD("Mcp-Method: ping\r\nMcp-Method: tools/call\r\n", "application/json"),
		 400},
		{"GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 65536\r\n\r\n", 200},
	};
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		double ms;
		int status = ed_status_of(s.port, cases[i].head, &ms);
		ck_assert_msg(status == cases[i].status && ms < 2000, "case %zu: %d after %.0f ms",
			      i, status, ms);
	}
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

CHECK_SUITE(edges)
{
	Suite *su = suite_create("edges");
	TCase *tc = tcase_create("edges");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_request_framed_two_ways_is_refused_and_what_follows_never_runs);
	tcase_add_test(tc, the_metrics_listener_refuses_a_request_framed_two_ways);
	tcase_add_test(tc, a_request_without_a_valid_token_is_refused_on_its_headers);
	tcase_add_test(tc, checks_on_headers_never_wait_for_the_body);
	suite_add_tcase(su, tc);
	return su;
}
