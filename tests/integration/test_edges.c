/* Integration tests of the HTTP edges under attack and overload: strict request framing (no
 * request smuggling), checks made on the headers before any body is awaited, bounded waits when
 * the database stalls, and load shed with answers rather than resets. Raw sockets, so that what
 * libcurl would never send is sent. */
#include <arpa/inet.h>
#include <check.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/socket.h>
#include <sys/un.h>
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

/* Time limits of the tests, times ten under valgrind (BIKAROO_WRAPPER). */
static double ed_ms(double ms)
{
	return *it_env("BIKAROO_WRAPPER") ? ms * 10 : ms;
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

/* Whether buf starts with one well-formed HTTP/1.1 response: a status line, header lines each
 * "name: value" ended by CRLF, one Content-Length, then at least that many bytes of body. NULL
 * when it does (*status: its status, *next: what follows it), else what is wrong. */
static const char *ed_response_at(const char *buf, int *status, const char **next)
{
	*status = 0;
	if (strncmp(buf, "HTTP/1.1 ", 9) != 0 || sscanf(buf + 9, "%3d", status) != 1 ||
	    buf[12] != ' ')
		return "no status line";
	const char *end = strstr(buf, "\r\n\r\n");
	if (!end)
		return "no end of head";
	long length = -1;
	for (const char *line = strstr(buf, "\r\n") + 2; line < end + 2;) {
		const char *eol = strstr(line, "\r\n");
		const char *colon = memchr(line, ':', (size_t)(eol - line));
		if (!colon || colon == line)
			return "a head line that is no header (a second status line?)";
		if ((size_t)(colon - line) == 14 && strncasecmp(line, "Content-Length", 14) == 0) {
			if (length >= 0)
				return "two Content-Length";
			length = strtol(colon + 1, NULL, 10);
		}
		line = eol + 2;
	}
	if (length < 0)
		return "no Content-Length";
	if (strlen(end + 4) < (size_t)length)
		return "a body shorter than announced";
	*next = end + 4 + length;
	return NULL;
}

/* Whether buf (all the server sent before it closed) is exactly one well-formed response and
 * nothing after it: NULL when it is, else what is wrong. */
static const char *ed_one_response(const char *buf, int *status)
{
	const char *next = NULL;
	const char *why = ed_response_at(buf, status, &next);
	return why ? why : *next ? "bytes after the response (a second head?)" : NULL;
}

/* Sends bytes on a new connection to port and reads until the server closes it (into buf, cap
 * bytes): NULL when what came is exactly one well-formed response of status want and the
 * connection closed, else what is wrong. */
static const char *ed_answered_once(unsigned port, const char *bytes, int want, char *buf,
				    size_t cap)
{
	int fd = ed_connect(port);
	ed_send_all(fd, bytes, strlen(bytes));
	bool closed = ed_read_to_close(fd, buf, cap, 5000);
	close(fd);
	int status;
	const char *fault = ed_one_response(buf, &status);
	return fault ? fault : status != want ? "another status" : !closed ? "left open" : NULL;
}

/* Each way to frame one request two ways (RFC 9112 section 6.3, and the lines a proxy may read
 * otherwise), and each Content-Length that is no number, gets exactly one well-formed 400 (413
 * for a number past any counter) that closes the connection: the request hidden after it never runs
 * (no second response, no audit row), whatever libmicrohttpd would have made of it. The same hidden
 * request after a well-framed one runs (the control: the test sees a request that runs). */
START_TEST(a_request_framed_two_ways_is_refused_and_what_follows_never_runs)
{
	static const struct {
		const char *what, *head, *body;
		int status;
	} cases[] = {
		{"Content-Length then Transfer-Encoding",
		 ED_HEAD "Content-Length: 5\r\nTransfer-Encoding: chunked\r\n\r\n", "0\r\n\r\n",
		 400},
		{"Transfer-Encoding then Content-Length",
		 ED_HEAD "Transfer-Encoding: chunked\r\nContent-Length: 5\r\n\r\n", "0\r\n\r\n",
		 400},
		{"TE: CHUNKED and Content-Length",
		 ED_HEAD "Transfer-Encoding: CHUNKED\r\nContent-Length: 5\r\n\r\n", "0\r\n\r\n",
		 400},
		{"TE:<tab>chunked and Content-Length",
		 ED_HEAD "Transfer-Encoding:\tchunked\r\nContent-Length: 5\r\n\r\n", "0\r\n\r\n",
		 400},
		{"two differing Content-Length",
		 ED_HEAD "Content-Length: 0\r\nContent-Length: 5\r\n\r\n", "", 400},
		{"an obs-fold continuing Content-Length", ED_HEAD "Content-Length: 5\r\n 0\r\n\r\n",
		 "hello", 400},
		{"an obs-fold after another header",
		 ED_HEAD "X-Note: a\r\n\tb\r\nContent-Length: 0\r\n\r\n", "", 400},
		{"whitespace before the colon", ED_HEAD "Content-Length : 5\r\n\r\n", "hello", 400},
		{"a tab before the colon", ED_HEAD "Transfer-Encoding\t: chunked\r\n\r\n",
		 "0\r\n\r\n", 400},
		{"a transfer coding other than chunked", ED_HEAD "Transfer-Encoding: gzip\r\n\r\n",
		 "", 400},
		{"chunked after another coding", ED_HEAD "Transfer-Encoding: gzip, chunked\r\n\r\n",
		 "0\r\n\r\n", 400},
		{"two Transfer-Encoding lines",
		 ED_HEAD "Transfer-Encoding: chunked\r\nTransfer-Encoding: identity\r\n\r\n",
		 "0\r\n\r\n", 400},
		{"a bare LF ending a header line", ED_HEAD "Content-Length: 0\nX-After: 1\r\n\r\n",
		 "", 400},
		/* Lengths that are no number (RFC 9110 section 8.6: 1*DIGIT), which libmicrohttpd
		 * 0.9.75 refuses itself, writing its answer's head twice. */
		{"Content-Length: +5", ED_HEAD "Content-Length: +5\r\n\r\n", "hello", 400},
		{"Content-Length: 0x5", ED_HEAD "Content-Length: 0x5\r\n\r\n", "hello", 400},
		{"Content-Length: 5, 5", ED_HEAD "Content-Length: 5, 5\r\n\r\n", "hello", 400},
		{"Content-Length: 5,5", ED_HEAD "Content-Length: 5,5\r\n\r\n", "hello", 400},
		{"Content-Length: -5", ED_HEAD "Content-Length: -5\r\n\r\n", "hello", 400},
		{"Content-Length: 5<space>", ED_HEAD "Content-Length: 5 \r\n\r\n", "hello", 400},
		{"Content-Length: 5a", ED_HEAD "Content-Length: 5a\r\n\r\n", "hello", 400},
		{"Content-Length past 2^64",
		 ED_HEAD "Content-Length: 99999999999999999999999\r\n\r\n", "hello", 413},
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
		const char *fault = ed_answered_once(
			s.port, bytes, cases[i].status ? cases[i].status : 400, buf, sizeof buf);
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
	/* A read's audit row is written with the read, in its caller's statement of the batch, and
	 * committed before the answer (domain/reads.h); the wait is only a bound. None of the
	 * hidden requests has a row, and the control's has. */
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

/* The metrics listener holds the same line: a head framed two ways, or a Content-Length that is
 * no number, is one well-formed 400 and the end. */
START_TEST(the_metrics_listener_refuses_a_request_framed_two_ways)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	unsigned mport = it_metrics_port(&s);
	ck_assert_uint_gt(mport, 0);
	static const char *const cases[] = {
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n"
		"Content-Length: 60\r\n\r\nGET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: +0\r\n\r\n"
		"GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n",
	};
	char buf[4096];
	for (size_t i = 0; i < sizeof cases / sizeof cases[0]; i++) {
		const char *fault = ed_answered_once(mport, cases[i], 400, buf, sizeof buf);
		ck_assert_msg(!fault, "case %zu: %s\n%s", i, fault, buf);
	}
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

/* A Content-Length that is no number as the second request of a kept-alive connection (its
 * ping answered, then one 400 and the end), and in a head sent in three parts a moment apart
 * (one 400): libmicrohttpd 0.9.75 refuses these itself, before the server sees them, and wrote
 * its head twice. */
START_TEST(a_content_length_that_is_no_number_gets_one_answer_kept_alive_or_in_parts)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	char buf[8192];
	const char *ping = "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"ping\"}";
	char *bytes = mem_printf(ED_HEAD "Content-Length: %zu\r\n\r\n%s" ED_HEAD
					 "Content-Length: 0x5\r\n\r\nhello",
				 strlen(ping), ping);
	int fd = ed_connect(s.port);
	ed_send_all(fd, bytes, strlen(bytes));
	bool closed = ed_read_to_close(fd, buf, sizeof buf, 5000);
	close(fd);
	free(bytes);
	int status;
	const char *next = NULL;
	const char *fault = ed_response_at(buf, &status, &next);
	ck_assert_msg(!fault && status == 200, "kept alive, the ping: %s\n%s", fault, buf);
	fault = ed_one_response(next, &status);
	ck_assert_msg(!fault && status == 400 && closed, "kept alive: %s\n%s", fault, buf);
	static const char *const parts[] = {"POST /mcp HTTP/1.1\r\n",
					    "Host: 127.0.0.1\r\nContent-Type: application/json\r\n",
					    "Content-Length: +5\r\n\r\nhello"};
	fd = ed_connect(s.port);
	for (size_t i = 0; i < 3; i++) {
		ed_send_all(fd, parts[i], strlen(parts[i]));
		ed_sleep_ms(50);
	}
	closed = ed_read_to_close(fd, buf, sizeof buf, 5000);
	close(fd);
	fault = ed_one_response(buf, &status);
	ck_assert_msg(!fault && status == 400 && closed, "in parts: %s\n%s", fault, buf);
	double ms; /* the server serves on */
	ck_assert_int_eq(
		ed_status_of(s.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &ms), 200);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* A chunked body that passes BIKAROO_MAX_BODY_BYTES is answered 413 as soon as it passes, as
 * nginx answers when a chunk crosses client_max_body_size, not after its last chunk: the
 * client, still sending (40 MiB planned), reads one well-formed 413, and the connection ends
 * once it stops. */
START_TEST(a_chunked_body_past_the_limit_is_answered_as_it_passes)
{
	const char *env[] = {"BIKAROO_MAX_BODY_BYTES=65536", NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	int fd = ed_connect(s.port);
	int small = 64 * 1024; /* what the client's socket holds unsent stays small */
	setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &small, sizeof small);
	const char *head = ED_HEAD "Transfer-Encoding: chunked\r\n\r\n";
	ed_send_all(fd, head, strlen(head));
	enum { ED_CHUNK = 64 * 1024, ED_CHUNKS = 640 };
	char *chunk = mem_alloc(ED_CHUNK + 16);
	int hl = snprintf(chunk, 16, "%x\r\n", ED_CHUNK);
	memset(chunk + hl, '[', ED_CHUNK);
	memcpy(chunk + hl + ED_CHUNK, "\r\n", 2);
	size_t chunk_len = (size_t)hl + ED_CHUNK + 2, sent = 0;
	double t0 = ed_now_ms();
	bool answered = false;
	for (int i = 0; i < ED_CHUNKS && !answered; i++) {
		struct pollfd p = {.fd = fd, .events = POLLIN};
		answered = poll(&p, 1, 0) == 1;
		if (!answered) {
			ed_send_all(fd, chunk, chunk_len);
			sent += chunk_len;
		}
	}
	double ms = ed_now_ms() - t0;
	free(chunk);
	ck_assert_msg(answered, "no answer while %zu bytes of body were sent in %.0f ms", sent, ms);
	ck_assert_msg(sent < (size_t)16 * 1024 * 1024, "answered only after %zu bytes", sent);
	shutdown(fd, SHUT_WR);
	char buf[4096];
	bool closed = ed_read_to_close(fd, buf, sizeof buf, 5000);
	close(fd);
	int status;
	const char *fault = ed_one_response(buf, &status);
	ck_assert_msg(!fault && status == 413, "%s:\n%s", fault ? fault : "not 413", buf);
	ck_assert(closed);
	double probe_ms;
	ck_assert_int_eq(
		ed_status_of(s.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &probe_ms),
		200);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

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
		ck_assert_msg(status == expect[i] && ms < ed_ms(2000), "head %zu: %d after %.0f ms",
			      i, status, ms);
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
	ck_assert_msg(status == 200 && ms < ed_ms(2000), "healthz: %d after %.0f ms", status, ms);
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
		ck_assert_msg(status == cases[i].status && ms < ed_ms(2000),
			      "case %zu: %d after %.0f ms", i, status, ms);
	}
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

/* ---- bounded waits: a frozen path to PostgreSQL --------------------------------------------- */

/* A TCP relay of the test's own between the server and PostgreSQL's unix socket. Frozen, it
 * moves no byte and accepts no connection, but closes none: a network partition or a stuck
 * proxy, the connections open and silent. */
struct ed_relay {
	int lfd;
	unsigned port;
	char target[100]; /* the unix socket */
	atomic_bool frozen, stop;
	int fds[64][2]; /* [client side, server side], -1: free */
	pthread_t thread;
};

static void ed_relay_close(struct ed_relay *r, int i)
{
	close(r->fds[i][0]);
	close(r->fds[i][1]);
	r->fds[i][0] = r->fds[i][1] = -1;
}

static void *ed_relay_run(void *p)
{
	struct ed_relay *r = p;
	while (!atomic_load(&r->stop)) {
		if (atomic_load(&r->frozen)) {
			ed_sleep_ms(20);
			continue;
		}
		struct pollfd pf[129];
		int map[129];
		int n = 0;
		pf[n] = (struct pollfd){.fd = r->lfd, .events = POLLIN};
		map[n++] = -1;
		for (int i = 0; i < 64; i++)
			for (int k = 0; k < 2 && r->fds[i][0] >= 0; k++) {
				pf[n] = (struct pollfd){.fd = r->fds[i][k], .events = POLLIN};
				map[n++] = i * 2 + k;
			}
		if (poll(pf, (nfds_t)n, 20) <= 0)
			continue;
		for (int j = 0; j < n && !atomic_load(&r->frozen); j++) {
			if (!pf[j].revents)
				continue;
			if (map[j] < 0) {
				int c = accept(r->lfd, NULL, NULL);
				int u = socket(AF_UNIX, SOCK_STREAM, 0);
				struct sockaddr_un sa = {.sun_family = AF_UNIX};
				snprintf(sa.sun_path, sizeof sa.sun_path, "%s", r->target);
				int slot = -1;
				for (int i = 0; i < 64 && slot < 0; i++)
					if (r->fds[i][0] < 0)
						slot = i;
				if (c < 0 || u < 0 || slot < 0 ||
				    connect(u, (struct sockaddr *)&sa, sizeof sa) != 0) {
					close(c), close(u);
					continue;
				}
				r->fds[slot][0] = c, r->fds[slot][1] = u;
				continue;
			}
			int i = map[j] / 2, k = map[j] % 2;
			if (r->fds[i][0] < 0)
				continue;
			char buf[65536];
			ssize_t got = recv(r->fds[i][k], buf, sizeof buf, 0);
			if (got <= 0 ||
			    send(r->fds[i][1 - k], buf, (size_t)got, MSG_NOSIGNAL) != got)
				ed_relay_close(r, i);
		}
	}
	for (int i = 0; i < 64; i++)
		if (r->fds[i][0] >= 0)
			ed_relay_close(r, i);
	return NULL;
}

static void ed_relay_start(struct ed_relay *r)
{
	memset(r, 0, sizeof *r);
	memset(r->fds, -1, sizeof r->fds);
	snprintf(r->target, sizeof r->target, "%s/.s.PGSQL.5432", it_env("PGTMP_SOCK"));
	r->lfd = socket(AF_INET, SOCK_STREAM, 0);
	struct sockaddr_in sa = {.sin_family = AF_INET};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	ck_assert_int_eq(bind(r->lfd, (struct sockaddr *)&sa, sizeof sa), 0);
	ck_assert_int_eq(listen(r->lfd, 64), 0);
	socklen_t len = sizeof sa;
	getsockname(r->lfd, (struct sockaddr *)&sa, &len);
	r->port = ntohs(sa.sin_port);
	pthread_create(&r->thread, NULL, ed_relay_run, r);
}

static void ed_relay_stop(struct ed_relay *r)
{
	atomic_store(&r->stop, true);
	pthread_join(r->thread, NULL);
	close(r->lfd);
}

/* DATABASE_URL=... for a server of the test's own: the harness's URL with every pin kept, but
 * through the relay on relay_port (0: directly) and with application_name app. New string. */
static char *ed_database_url(unsigned relay_port, const char *app)
{
	const char *url = it_env("DATABASE_URL");
	const char *q = strchr(url, '?');
	ck_assert_ptr_nonnull(q);
	char *rest = mem_strdup(q + 1), *kept = mem_strdup("");
	for (char *save = NULL, *kv = strtok_r(rest, "&", &save); kv;
	     kv = strtok_r(NULL, "&", &save)) {
		bool moved = relay_port &&
			     (strncmp(kv, "host=", 5) == 0 || strncmp(kv, "port=", 5) == 0);
		if (moved || strncmp(kv, "application_name=", 17) == 0)
			continue;
		char *more = mem_printf("%s&%s", kept, kv);
		free(kept);
		kept = more;
	}
	char *db = relay_port ? mem_printf("DATABASE_URL=%.*s?host=127.0.0.1&port=%u%s"
					   "&application_name=%s",
					   (int)(q - url), url, relay_port, kept, app)
			      : mem_printf("DATABASE_URL=%.*s?%s&application_name=%s",
					   (int)(q - url), url, kept + 1, app);
	free(rest);
	free(kept);
	return db;
}

/* One call on a thread of its own: its status, its time, whether it said Retry-After. */
struct ed_call {
	unsigned port;
	const char *tool, *params;
	long status;
	double ms;
	bool retry_after;
	char message[256];
	pthread_t thread;
};

static void *ed_call_run(void *p)
{
	struct ed_call *c = p;
	struct it_response r;
	double t0 = ed_now_ms();
	it_mcp(c->port, "tools/call", c->tool, c->params, &r);
	c->ms = ed_now_ms() - t0;
	c->status = r.status;
	c->retry_after = r.headers && strstr(r.headers, "Retry-After: ") != NULL;
	const char *m =
		json_string_value(json_object_get(json_object_get(r.json, "error"), "message"));
	snprintf(c->message, sizeof c->message, "%s", m ? m : "");
	it_response_free(&r);
	return NULL;
}

#define ED_READ "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}"
/* A report whose idempotency key is this run's own (key: cap bytes). */
static char *ed_report_params(char *key, size_t cap)
{
	snprintf(key, cap, "edges-stall-%d", (int)getpid());
	return mem_printf("\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":"
			  "\"VL-3302\",\"issue\":\"flat_tire\",\"idempotencyKey\":\"%s\"}",
			  key);
}

/* The TCP path to PostgreSQL frozen for 8 s (the connections open, nothing moving): every call
 * is answered 503 + Retry-After within the call timeout (1.5 s here) and what waited for a
 * worker soon after, none waits out the freeze; a report says it may not have been filed and
 * that its retry with the same idempotency key is safe; /healthz answers at once and /readyz
 * within its bound, 503 naming the database. Thawed, the same process serves again on new
 * connections, and the report retried with its key is filed exactly once. */
START_TEST(a_frozen_database_path_gets_503_within_the_call_timeout)
{
	struct ed_relay relay;
	ed_relay_start(&relay);
	char *db = ed_database_url(relay.port, "bikaroo");
	const char *env[] = {db, "BIKAROO_CALL_TIMEOUT_MS=1500", "BIKAROO_THREADS=4", NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	char key[64];
	char *report = ed_report_params(key, sizeof key);
	struct it_response r;
	it_mcp(s.port, "tools/call", "get_bike_status", ED_READ, &r);
	ck_assert_int_eq(r.status, 200);
	it_response_free(&r);

	atomic_store(&relay.frozen, true);
	enum { ED_CALLS = 8 };
	struct ed_call calls[ED_CALLS];
	for (int i = 0; i < ED_CALLS; i++) {
		bool is_report = i == 0;
		calls[i] = (struct ed_call){.port = s.port,
					    .tool = is_report ? "report_damaged_bike"
							      : "get_bike_status",
					    .params = is_report ? report : ED_READ};
		pthread_create(&calls[i].thread, NULL, ed_call_run, &calls[i]);
		if (is_report)
			ed_sleep_ms(100); /* the report first: it runs (and waits), not queued */
	}
	ed_sleep_ms(300);
	double ms;
	int status = ed_status_of(s.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &ms);
	ck_assert_msg(status == 200 && ms < ed_ms(500), "healthz: %d after %.0f ms", status, ms);
	for (int i = 0; i < ED_CALLS; i++)
		pthread_join(calls[i].thread, NULL);
	for (int i = 0; i < ED_CALLS; i++) {
		ck_assert_msg(calls[i].status == 503 && calls[i].retry_after &&
				      calls[i].ms < ed_ms(4000),
			      "call %d: %ld after %.0f ms (Retry-After: %d)", i, calls[i].status,
			      calls[i].ms, calls[i].retry_after);
	}
	ck_assert_msg(strstr(calls[0].message, "idempotencyKey") != NULL, "%s", calls[0].message);
	double slowest = 0;
	for (int i = 0; i < ED_CALLS; i++)
		slowest = calls[i].ms > slowest ? calls[i].ms : slowest;
	struct it_response ready;
	double t0 = ed_now_ms();
	it_http(s.port, "GET", "/readyz", NULL, NULL, 0, &ready);
	double ready_ms = ed_now_ms() - t0;
	ck_assert_msg(ready.status == 503 && ready_ms < ed_ms(2500) &&
			      strstr(ready.body, "database"),
		      "readyz: %ld after %.0f ms: %s", ready.status, ready_ms, ready.body);
	it_response_free(&ready);
	status = ed_status_of(s.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &ms);
	ck_assert_msg(status == 200 && ms < ed_ms(500), "healthz: %d after %.0f ms", status, ms);
	printf("stall: %d calls answered 503 + Retry-After, the slowest after %.0f ms (call "
	       "timeout 1500 ms); /healthz %.0f ms, /readyz 503 after %.0f ms\n",
	       ED_CALLS, slowest, ms, ready_ms);

	ed_sleep_ms(8000 - 4000); /* the freeze lasts 8 s in all */
	atomic_store(&relay.frozen, false);
	long ok = 0;
	for (int t = 0; t < 50 && ok != 200; t++) {
		it_mcp(s.port, "tools/call", "get_bike_status", ED_READ, &r);
		ok = r.status;
		it_response_free(&r);
		if (ok != 200)
			ed_sleep_ms(200);
	}
	ck_assert_int_eq(ok, 200);
	it_mcp(s.port, "tools/call", "report_damaged_bike", report, &r);
	ck_assert_int_eq(r.status, 200);
	it_response_free(&r);
	char *q1 = mem_printf("SELECT count(*) FROM fleet.idempotent_calls WHERE idem_key = '%s'",
			      key);
	ck_assert_int_eq(ed_count(q1), 1);
	free(q1);
	free(report);
	ck_assert_int_eq(it_server_stop(&s), 0);
	ed_relay_stop(&relay);
	free(db);
}
END_TEST

/* A server on 2 loops with 2 calls under way at most (one each), its path to PostgreSQL through
 * relay (frozen once started): the call timeout as given. *db is the server's DATABASE_URL
 * setting (the caller frees it). */
static void ed_small_frozen(struct it_server *s, struct ed_relay *relay, char **db,
			    const char *timeout)
{
	ed_relay_start(relay);
	*db = ed_database_url(relay->port, "bikaroo");
	const char *env[] = {*db,
			     timeout,
			     "BIKAROO_THREADS=2",
			     "BIKAROO_CALLS_MAX=2",
			     "BIKAROO_RATE_READ_BURST=1000",
			     NULL};
	ck_assert_int_eq(it_server_start(s, env), 0);
	atomic_store(&relay->frozen, true);
}

/* Overload: 40 calls at once, each on a new connection, on 2 loops of 1 call under way each,
 * the calls held (the path to PostgreSQL frozen): the running ones are answered 503 at their
 * deadline (2 s), one a loop waits for a slot and is answered 503 + Retry-After once it waited
 * its bound (at most a second), and the others, finding their loop's wait a round of slots
 * long, 503 + Retry-After on their headers at once (nothing run): every call answered, none
 * reset, none held to the deadline but those running; /healthz and /metrics answered
 * meanwhile. */
START_TEST(overload_is_answered_503_never_reset)
{
	struct ed_relay relay;
	struct it_server s;
	char *db;
	ed_small_frozen(&s, &relay, &db, "BIKAROO_CALL_TIMEOUT_MS=2000");
	enum { ED_LOAD = 40 };
	static struct ed_call calls[ED_LOAD];
	for (int i = 0; i < ED_LOAD; i++) {
		calls[i] = (struct ed_call){
			.port = s.port, .tool = "get_bike_status", .params = ED_READ};
		pthread_create(&calls[i].thread, NULL, ed_call_run, &calls[i]);
	}
	ed_sleep_ms(200);
	double ms;
	int status = ed_status_of(s.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &ms);
	ck_assert_msg(status == 200 && ms < ed_ms(500), "healthz: %d after %.0f ms", status, ms);
	unsigned mport = it_metrics_port(&s);
	status = ed_status_of(mport, "GET /metrics HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &ms);
	ck_assert_msg(status == 200 && ms < ed_ms(500), "metrics: %d after %.0f ms", status, ms);
	for (int i = 0; i < ED_LOAD; i++)
		pthread_join(calls[i].thread, NULL);
	int early = 0;
	for (int i = 0; i < ED_LOAD; i++) {
		ck_assert_msg(calls[i].status == 503 && calls[i].retry_after,
			      "call %d: %ld after %.0f ms", i, calls[i].status, calls[i].ms);
		early += calls[i].ms < ed_ms(1500);
	}
	ck_assert_msg(early >= ED_LOAD - 2, "only %d of %d answered before the deadline", early,
		      ED_LOAD);
	long waited = it_metric(&s, "bikaroo_http_calls_shed_total{reason=\"waited\"}");
	long queue = it_metric(&s, "bikaroo_http_calls_shed_total{reason=\"queue\"}");
	long shed = (waited > 0 ? waited : 0) + (queue > 0 ? queue : 0);
	ck_assert_msg(shed >= ED_LOAD - 6, "%ld calls shed of %d", shed, ED_LOAD);
	printf("overload: %d calls on 2 loops of one call each: all answered 503 + Retry-After, "
	       "%d of them before the deadline of those running\n",
	       ED_LOAD, early);
	atomic_store(&relay.frozen, false);
	ck_assert_int_eq(it_server_stop(&s), 0);
	ed_relay_stop(&relay);
	free(db);
}
END_TEST

/* A call on a kept-alive connection that would wait past its loop's pace is refused at once:
 * one loop of one call under way, that call held (the path to PostgreSQL frozen), a round of
 * slots (one) already waiting: the kept-alive connection's next call is answered 503 +
 * Retry-After on arrival (shed as "queue"), before the call that waits is refused at its bound,
 * where a fixed bound had it wait its second too. */
START_TEST(a_kept_alive_call_past_a_full_wait_is_refused_at_once)
{
	struct ed_relay relay;
	ed_relay_start(&relay);
	char *db = ed_database_url(relay.port, "bikaroo");
	const char *env[] = {db,
			     "BIKAROO_CALL_TIMEOUT_MS=3000",
			     "BIKAROO_THREADS=1",
			     "BIKAROO_CALLS_MAX=1",
			     "BIKAROO_RATE_READ_BURST=1000",
			     NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	struct it_conn kept;
	it_conn_open(&kept, s.port);
	struct it_response r;
	static const char args[] = "{\"bikeId\":\"VL-2048\"}";
	it_conn_tool(&kept, NULL, "kept-1", "get_bike_status", args, &r);
	ck_assert_int_eq(r.status, 200); /* the connection has been served: no longer new */
	it_response_free(&r);
	atomic_store(&relay.frozen, true);
	struct ed_call running = {.port = s.port, .tool = "get_bike_status", .params = ED_READ};
	struct ed_call waiting = running;
	pthread_create(&running.thread, NULL, ed_call_run, &running);
	ed_sleep_ms(300);
	pthread_create(&waiting.thread, NULL, ed_call_run, &waiting);
	ed_sleep_ms(300);
	ck_assert_int_le(it_metric(&s, "bikaroo_http_calls_shed_total{reason=\"queue\"}"), 0);
	it_conn_tool(&kept, NULL, "kept-2", "get_bike_status", args, &r);
	ck_assert_msg(r.status == 503 && r.headers && strstr(r.headers, "Retry-After: "),
		      "the kept-alive call past the wait: %ld", r.status);
	it_response_free(&r);
	ck_assert_int_eq(it_metric(&s, "bikaroo_http_calls_shed_total{reason=\"queue\"}"), 1);
	pthread_join(waiting.thread, NULL);
	ck_assert_msg(waiting.status == 503 && waiting.retry_after, "the waiting call: %ld",
		      waiting.status);
	atomic_store(&relay.frozen, false);
	pthread_join(running.thread, NULL);
	it_conn_close(&kept);
	ck_assert_int_eq(it_server_stop(&s), 0);
	ed_relay_stop(&relay);
	free(db);
}
END_TEST

/* A legacy tools/call that announces itself as Mcp-Method: server/discover, on a thread of its
 * own (lie->status, lie->ms). */
static void *ed_lie_run(void *p)
{
	struct ed_call *c = p;
	static const char *const h[] = {"Content-Type: application/json",
					"Accept: application/json, text/event-stream",
					"Mcp-Method: server/discover", NULL};
	static const char body[] = "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\","
				   "\"params\":{" ED_READ "}}";
	struct it_response r;
	double t0 = ed_now_ms();
	it_http(c->port, "POST", "/mcp", h, body, sizeof body - 1, &r);
	c->ms = ed_now_ms() - t0;
	c->status = r.status;
	it_response_free(&r);
	return NULL;
}

/* server/discover is answered without a call slot: with every slot taken by calls held at a
 * frozen database, it answers at once. Those calls claim to be server/discover (a legacy body,
 * which the header check does not cover): they still take a slot (or are refused 503 for want of
 * one) and run as tasks, since a call the core finds not to be local is never run outside one;
 * run there, they would hold their loop for the call timeout, and neither server/discover nor
 * /healthz would answer meanwhile. */
START_TEST(server_discover_answers_at_once_and_a_call_posing_as_it_waits_elsewhere)
{
	struct ed_relay relay;
	struct it_server s;
	char *db;
	ed_small_frozen(&s, &relay, &db, "BIKAROO_CALL_TIMEOUT_MS=3000");
	enum { ED_LIARS = 8 };
	struct ed_call calls[ED_LIARS];
	for (int i = 0; i < ED_LIARS; i++) {
		calls[i] = (struct ed_call){.port = s.port};
		pthread_create(&calls[i].thread, NULL, ed_lie_run, &calls[i]);
	}
	ed_sleep_ms(300);
	struct it_response r;
	double t0 = ed_now_ms();
	it_mcp(s.port, "server/discover", NULL, "", &r);
	double discover_ms = ed_now_ms() - t0;
	ck_assert_msg(r.status == 200 && json_object_get(r.json, "result"),
		      "server/discover: %ld after %.0f ms: %s", r.status, discover_ms, r.body);
	it_response_free(&r);
	ck_assert_msg(discover_ms < ed_ms(500), "server/discover took %.0f ms", discover_ms);
	double ms;
	int status = ed_status_of(s.port, "GET /healthz HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n", &ms);
	ck_assert_msg(status == 200 && ms < ed_ms(500), "healthz: %d after %.0f ms", status, ms);
	for (int i = 0; i < ED_LIARS; i++)
		pthread_join(calls[i].thread, NULL);
	for (int i = 0; i < ED_LIARS; i++)
		ck_assert_msg(calls[i].status == 503, "posing call %d: %ld after %.0f ms", i,
			      calls[i].status, calls[i].ms);
	printf("server/discover answered in %.0f ms, /healthz in %.0f ms, while %d calls posing "
	       "as it waited at a frozen database (all answered 503)\n",
	       discover_ms, ms, ED_LIARS);
	atomic_store(&relay.frozen, false);
	ck_assert_int_eq(it_server_stop(&s), 0);
	ed_relay_stop(&relay);
	free(db);
}
END_TEST

/* ---- listen streams ------------------------------------------------------------------------- */

/* A client that stops reading its listen stream (a 2 KiB receive buffer) while 25,000 updates
 * come (the kernel's send buffer, up to 4 MiB, fills first): the server ends the stream once it
 * holds 256 KiB unsent, and its last event is still the listen request's result. */
START_TEST(a_stream_cut_for_a_slow_reader_ends_with_its_result)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":\"slow-1\",\"method\":\"subscriptions/listen\","
		"\"params\":{\"notifications\":{\"resourceSubscriptions\":[\"bikaroo://fleet/bikes/"
		"VL-2078\"]},\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	char *req = mem_printf("POST /mcp HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: "
			       "application/json\r\nAccept: application/json, text/event-stream\r\n"
			       "MCP-Protocol-Version: 2026-07-28\r\nMcp-Method: "
			       "subscriptions/listen\r\nContent-Length: %zu\r\n\r\n%s",
			       strlen(body), body);
	int fd = socket(AF_INET, SOCK_STREAM, 0);
	int small = 2048;
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &small, sizeof small);
	struct timeval tv = {10, 0};
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof tv);
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)s.port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	ck_assert_int_eq(connect(fd, (struct sockaddr *)&sa, sizeof sa), 0);
	ed_send_all(fd, req, strlen(req));
	free(req);
	/* The acknowledgement, then no more reading while the updates come. */
	size_t cap = 16 << 20, n = 0;
	char *got = mem_alloc(cap);
	got[0] = '\0';
	while (!strstr(got, "slow-1") && n < cap - 1) {
		ssize_t k = recv(fd, got + n, cap - 1 - n, 0);
		ck_assert_int_gt(k, 0);
		n += (size_t)k;
		got[n] = '\0';
	}
	char *touched = it_sql("DO $$ BEGIN FOR i IN 1..25000 LOOP UPDATE fleet.bikes SET "
			       "battery_pct = (coalesce(battery_pct, 0) + 1) % 100 WHERE bike_id = "
			       "'VL-2078'; COMMIT; END LOOP; END $$");
	ck_assert_ptr_nonnull(touched);
	free(touched);
	ed_sleep_ms(1000);
	for (;;) {
		ssize_t k = recv(fd, got + n, cap - 1 - n, 0);
		if (k <= 0)
			break;
		n += (size_t)k;
		got[n] = '\0';
	}
	close(fd);
	ck_assert_msg(n < cap - 1, "the stream was never cut");
	/* The last event of the stream is the result of listen slow-1. */
	const char *last = NULL;
	for (const char *p = strstr(got, "event: message"); p; p = strstr(p + 1, "event: message"))
		last = p;
	ck_assert_ptr_nonnull(last);
	ck_assert_msg(strstr(last, "\"result\"") && strstr(last, "slow-1"),
		      "the stream (%zu bytes) ended with %s", n, got + (n > 400 ? n - 400 : 0));
	ck_assert_msg(ed_occurrences(got, "notifications/resources/updated") < 25000,
		      "every update was sent: no cut");
	ck_assert_int_eq(it_server_stop(&s), 0);
	free(got);
}
END_TEST

/* A server keeps its loops' database connections (BIKAROO_DB_CONNECTIONS each) and the change
 * feed's, no more: the start-up check of its login role does not keep one of its own open and
 * idle. */
START_TEST(the_login_role_check_keeps_no_connection)
{
	char *db = ed_database_url(0, "edges-conns");
	const char *env[] = {db, "BIKAROO_THREADS=2", "BIKAROO_DB_CONNECTIONS=2", NULL};
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, env), 0);
	for (int i = 0; i < 20; i++) {
		struct it_response r;
		it_mcp(s.port, "tools/call", "get_bike_status", ED_READ, &r);
		ck_assert_int_eq(r.status, 200);
		it_response_free(&r);
	}
	long all = ed_count("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
			    "'edges-conns'");
	long feed = ed_count("SELECT count(*) FROM pg_stat_activity WHERE application_name = "
			     "'edges-conns' AND query LIKE 'LISTEN%'");
	ck_assert_msg(all - feed <= 4,
		      "%ld connections besides the change feed's for 2 loops of 2 each",
		      all - feed);
	ck_assert_int_eq(it_server_stop(&s), 0);
	free(db);
}
END_TEST

CHECK_SUITE(edges)
{
	Suite *su = suite_create("edges");
	TCase *tc = tcase_create("edges");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, a_request_framed_two_ways_is_refused_and_what_follows_never_runs);
	tcase_add_test(tc, the_metrics_listener_refuses_a_request_framed_two_ways);
	tcase_add_test(tc,
		       a_content_length_that_is_no_number_gets_one_answer_kept_alive_or_in_parts);
	tcase_add_test(tc, a_chunked_body_past_the_limit_is_answered_as_it_passes);
	tcase_add_test(tc, a_request_without_a_valid_token_is_refused_on_its_headers);
	tcase_add_test(tc, checks_on_headers_never_wait_for_the_body);
	tcase_add_test(tc, a_frozen_database_path_gets_503_within_the_call_timeout);
	tcase_add_test(tc, the_login_role_check_keeps_no_connection);
	tcase_add_test(tc, overload_is_answered_503_never_reset);
	tcase_add_test(tc, a_kept_alive_call_past_a_full_wait_is_refused_at_once);
	tcase_add_test(tc, server_discover_answers_at_once_and_a_call_posing_as_it_waits_elsewhere);
	tcase_add_test(tc, a_stream_cut_for_a_slow_reader_ends_with_its_result);
	suite_add_tcase(su, tc);
	return su;
}
