/* Integration tests of `bikaroo-mcp stdio` driven through its pipes: framing, bounded lines,
 * legacy negotiation per connection, the discover probe, cancellation, clean exit on EOF. */
#include <check.h>
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

#define META                                                                                       \
	"\"_meta\":{\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","                   \
	"\"io.modelcontextprotocol/clientCapabilities\":{}}"

struct sio {
	pid_t pid;
	int in, out; /* our ends: write requests to in, read responses from out */
	char buf[1 << 20];
	size_t len;
	char log_file[300];
};

/* Starts `bikaroo-mcp stdio` (under BIKAROO_WRAPPER if set) with extra "NAME=value" entries. */
static void sio_start(struct sio *s, const char *const *extra_env)
{
	static unsigned seq;
	memset(s, 0, sizeof *s);
	snprintf(s->log_file, sizeof s->log_file, "%s/stdio-%d-%u.log", it_env("IT_TMP"),
		 (int)getpid(), ++seq);
	int to_child[2], from_child[2];
	ck_assert_int_eq(pipe(to_child), 0);
	ck_assert_int_eq(pipe(from_child), 0);
	s->pid = fork();
	ck_assert_int_ge(s->pid, 0);
	if (s->pid == 0) {
		dup2(to_child[0], STDIN_FILENO);
		dup2(from_child[1], STDOUT_FILENO);
		close(to_child[1]);
		close(from_child[0]);
		if (!freopen(s->log_file, "w", stderr))
			_exit(126);
		for (const char *const *e = extra_env; e && *e; e++)
			putenv((char *)*e);
		char *argv[32];
		int argc = 0;
		char *wrapper = mem_strdup(it_env("BIKAROO_WRAPPER"));
		for (char *tok = wrapper, *save = NULL; argc < 28; tok = NULL) {
			char *w = strtok_r(tok, " ", &save);
			if (!w)
				break;
			argv[argc++] = w;
		}
		argv[argc++] = (char *)it_env("BIKAROO_BIN");
		argv[argc++] = "stdio";
		argv[argc] = NULL;
		execvp(argv[0], argv);
		_exit(127);
	}
	close(to_child[0]);
	close(from_child[1]);
	s->in = to_child[1];
	s->out = from_child[0];
}

static void sio_send(struct sio *s, const char *line)
{
	size_t n = strlen(line);
	ck_assert_int_eq(write(s->in, line, n), (ssize_t)n);
	ck_assert_int_eq(write(s->in, "\n", 1), 1);
}

static int sio_wait_ms(void)
{
	return *it_env("BIKAROO_WRAPPER") ? 60000 : 10000;
}

/* Reads the next line (new, parsed) within timeout_ms; NULL on timeout or EOF. Every line the
 * server writes must be one JSON object: anything else fails the test. */
static json_t *sio_next(struct sio *s, int timeout_ms)
{
	for (;;) {
		char *nl = memchr(s->buf, '\n', s->len);
		if (nl) {
			size_t n = (size_t)(nl - s->buf);
			json_error_t e;
			json_t *j = json_loadb(s->buf, n, 0, &e);
			ck_assert_msg(json_is_object(j), "stdout line is not a JSON object: %.*s",
				      (int)n, s->buf);
			memmove(s->buf, nl + 1, s->len - n - 1);
			s->len -= n + 1;
			return j;
		}
		struct pollfd p = {.fd = s->out, .events = POLLIN};
		int rc = poll(&p, 1, timeout_ms);
		if (rc <= 0)
			return NULL;
		ssize_t got = read(s->out, s->buf + s->len, sizeof s->buf - s->len - 1);
		if (got <= 0)
			return NULL;
		s->len += (size_t)got;
	}
}

/* The response with this integer id (new), skipping nothing: responses come in any order, so
 * others read meanwhile are recorded in *seen (bit per id < 64). */
static json_t *sio_response(struct sio *s, long id, unsigned long long *seen)
{
	for (;;) {
		json_t *j = sio_next(s, sio_wait_ms());
		ck_assert_msg(j != NULL, "no response for id %ld", id);
		json_int_t got = json_integer_value(json_object_get(j, "id"));
		if (seen && got >= 0 && got < 64)
			*seen |= 1ull << got;
		if (got == id)
			return j;
		json_decref(j);
	}
}

/* Closes stdin and returns the exit status (bounded wait). */
static int sio_stop(struct sio *s)
{
	close(s->in);
	int status = 0;
	for (int waited = 0; waited < sio_wait_ms(); waited += 20) {
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			close(s->out);
			if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
				unlink(s->log_file);
			return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
		}
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	close(s->out);
	return -1;
}

static long sio_code(json_t *j)
{
	return (long)json_integer_value(json_object_get(json_object_get(j, "error"), "code"));
}

/* The response with this id must be a JSON-RPC error with this code. */
static void sio_expect_error(struct sio *s, long id, long code)
{
	json_t *j = sio_response(s, id, NULL);
	ck_assert_int_eq(sio_code(j), code);
	json_decref(j);
}

START_TEST(discover_before_initialize_then_legacy_session)
{
	struct sio s;
	sio_start(&s, NULL);
	/* A dual-era client probes first; the probe does not pin the connection. */
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META
		 "}}");
	json_t *j = sio_response(&s, 1, NULL);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(j, "result"), "resultType")),
		"complete");
	json_decref(j);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"2025-03-26\",\"capabilities\":{},"
		     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	j = sio_response(&s, 2, NULL);
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(j, "result"), "protocolVersion")),
		"2025-03-26");
	ck_assert_ptr_null(json_object_get(json_object_get(j, "result"), "resultType"));
	json_decref(j);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/initialized\"}");
	/* Later un-enveloped requests speak the negotiated 2025-03-26: no titles, no
	 * structuredContent, -32002 for a missing resource. */
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\"}");
	j = sio_response(&s, 3, NULL);
	json_t *tool = json_array_get(json_object_get(json_object_get(j, "result"), "tools"), 0);
	ck_assert_ptr_nonnull(tool);
	ck_assert_ptr_null(json_object_get(tool, "title"));
	ck_assert_ptr_null(json_object_get(tool, "outputSchema"));
	json_decref(j);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":4,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}}}");
	j = sio_response(&s, 4, NULL);
	ck_assert(json_is_false(json_object_get(json_object_get(j, "result"), "isError")));
	ck_assert_ptr_null(json_object_get(json_object_get(j, "result"), "structuredContent"));
	json_decref(j);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"resources/read\",\"params\":{"
		     "\"uri\":\"bikaroo://fleet/bikes/VL-2047\"}}");
	sio_expect_error(&s, 5, -32002);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"ping\"}");
	j = sio_response(&s, 6, NULL);
	ck_assert_int_eq(json_object_size(json_object_get(j, "result")), 0);
	ck_assert(json_is_object(json_object_get(j, "result")));
	json_decref(j);
	/* An enveloped request on the same connection is still served as 2026-07-28. */
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"resources/read\",\"params\":{"
		     "\"uri\":\"bikaroo://fleet/bikes/VL-2047\"," META "}}");
	sio_expect_error(&s, 7, -32602);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

/* The response with this id (new); the notifications/message lines before it are appended to
 * msgs (their params). */
static json_t *sio_response_logs(struct sio *s, long id, json_t *msgs)
{
	for (;;) {
		json_t *j = sio_next(s, sio_wait_ms());
		ck_assert_msg(j != NULL, "no response for id %ld", id);
		const char *m = json_string_value(json_object_get(j, "method"));
		if (m && strcmp(m, "notifications/message") == 0)
			json_array_append(msgs, json_object_get(j, "params"));
		else if (json_integer_value(json_object_get(j, "id")) == id)
			return j;
		json_decref(j);
	}
}

static void sio_tool_call(struct sio *s, long id, const char *bike)
{
	char line[300];
	snprintf(line, sizeof line,
		 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"%s\"}}}",
		 id, bike);
	sio_send(s, line);
}

/* MCP Apps on a 2025-era stdio connection: the extension declared in initialize holds for the
 * connection's later requests (the tools' view links, the ui:// views), a later initialize
 * without it takes it back, and a connection that never declared it sees no view. */
static json_t *sio_tool_meta(struct sio *s, long id, const char *tool)
{
	char line[160];
	snprintf(line, sizeof line, "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"tools/list\"}",
		 id);
	sio_send(s, line);
	json_t *j = sio_response(s, id, NULL);
	size_t i;
	json_t *t, *meta = NULL;
	json_array_foreach (json_object_get(json_object_get(j, "result"), "tools"), i, t)
		if (strcmp(json_string_value(json_object_get(t, "name")), tool) == 0)
			meta = json_incref(json_object_get(t, "_meta"));
	json_decref(j);
	return meta;
}

#define SIO_INIT_UI(id, caps)                                                                      \
	"{\"jsonrpc\":\"2.0\",\"id\":" #id ",\"method\":\"initialize\",\"params\":{"               \
	"\"protocolVersion\":\"2025-11-25\",\"capabilities\":" caps ","                            \
	"\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}"

START_TEST(legacy_ui_extension_holds_for_the_connection)
{
	struct sio s;
	sio_start(&s, NULL);
	sio_send(&s, SIO_INIT_UI(1, "{\"extensions\":{\"io.modelcontextprotocol/ui\":{"
				    "\"mimeTypes\":[\"text/html;profile=mcp-app\"]}}}"));
	json_decref(sio_response(&s, 1, NULL));
	json_t *meta = sio_tool_meta(&s, 2, "get_bike_status");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(meta, "ui"), "resourceUri")),
		"ui://bikaroo/bike-card");
	json_decref(meta);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"resources/read\",\"params\":{"
		     "\"uri\":\"ui://bikaroo/case-timeline\"}}");
	json_t *j = sio_response(&s, 3, NULL);
	json_t *c = json_array_get(json_object_get(json_object_get(j, "result"), "contents"), 0);
	ck_assert_str_eq(json_string_value(json_object_get(c, "mimeType")),
			 "text/html;profile=mcp-app");
	ck_assert(json_is_true(json_object_get(json_object_get(json_object_get(c, "_meta"), "ui"),
					       "prefersBorder")));
	json_decref(j);
	sio_send(&s, SIO_INIT_UI(4, "{}"));
	json_decref(sio_response(&s, 4, NULL));
	meta = sio_tool_meta(&s, 5, "get_bike_status");
	ck_assert_ptr_null(json_object_get(meta, "ui"));
	json_decref(meta);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"resources/read\",\"params\":{"
		     "\"uri\":\"ui://bikaroo/bike-card\"}}");
	sio_expect_error(&s, 6, -32002);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

/* 2025-era logging on stdio: nothing until the client sets a level; then every tools/call tells
 * its outcome at info (warning when it failed) if the level admits it; logging/setLevel holds
 * for the rest of the connection, and a bad level changes nothing. */
START_TEST(legacy_log_level_holds_for_the_connection)
{
	struct sio s;
	sio_start(&s, NULL);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
		     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	json_t *j = sio_response(&s, 1, NULL);
	ck_assert_ptr_nonnull(json_object_get(
		json_object_get(json_object_get(j, "result"), "capabilities"), "logging"));
	json_decref(j);
	json_t *msgs = json_array();
	sio_tool_call(&s, 2, "VL-2048"); /* no level set: the server sends none */
	json_decref(sio_response_logs(&s, 2, msgs));
	ck_assert_uint_eq(json_array_size(msgs), 0);

	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"logging/setLevel\",\"params\":"
		     "{\"level\":\"info\"}}");
	j = sio_response(&s, 3, NULL);
	ck_assert(json_is_object(json_object_get(j, "result")));
	ck_assert_uint_eq(json_object_size(json_object_get(j, "result")), 0);
	json_decref(j);
	sio_tool_call(&s, 4, "VL-2048");
	json_decref(sio_response_logs(&s, 4, msgs));
	ck_assert_uint_eq(json_array_size(msgs), 1);
	json_t *m = json_array_get(msgs, 0);
	ck_assert_str_eq(json_string_value(json_object_get(m, "level")), "info");
	ck_assert_str_eq(json_string_value(json_object_get(m, "logger")), "bikaroo.tools");
	json_t *data = json_object_get(m, "data");
	ck_assert_str_eq(json_string_value(json_object_get(data, "tool")), "get_bike_status");
	ck_assert_str_eq(json_string_value(json_object_get(data, "bikeId")), "VL-2048");
	ck_assert_str_eq(json_string_value(json_object_get(data, "outcome")), "ok");
	json_array_clear(msgs);

	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"logging/setLevel\",\"params\":"
		     "{\"level\":\"loud\"}}");
	sio_expect_error(&s, 5, -32602);
	sio_tool_call(&s, 9, "VL-2048"); /* still info */
	json_decref(sio_response_logs(&s, 9, msgs));
	ck_assert_uint_eq(json_array_size(msgs), 1);
	json_array_clear(msgs);

	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":10,\"method\":\"logging/setLevel\",\"params\":"
		     "{\"level\":\"warning\"}}");
	json_decref(sio_response(&s, 10, NULL));
	sio_tool_call(&s, 6, "VL-2048"); /* ok is info: below warning, not sent */
	json_decref(sio_response_logs(&s, 6, msgs));
	ck_assert_uint_eq(json_array_size(msgs), 0);
	sio_tool_call(&s, 7, "VL-2047"); /* another region: failed, a warning */
	j = sio_response_logs(&s, 7, msgs);
	ck_assert(json_is_true(json_object_get(json_object_get(j, "result"), "isError")));
	json_decref(j);
	ck_assert_uint_eq(json_array_size(msgs), 1);
	m = json_array_get(msgs, 0);
	ck_assert_str_eq(json_string_value(json_object_get(m, "level")), "warning");
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(m, "data"), "outcome")),
			 "failed");
	json_array_clear(msgs);

	/* A 2026-07-28 request on the same connection gets messages only when it asks. */
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2047\"}," META "}}");
	json_decref(sio_response_logs(&s, 8, msgs));
	ck_assert_uint_eq(json_array_size(msgs), 0);
	json_decref(msgs);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

/* The next notifications/resources/updated line (new), skipping nothing else: any other line
 * fails the test. */
static json_t *sio_updated(struct sio *s)
{
	json_t *j = sio_next(s, sio_wait_ms());
	ck_assert_msg(j != NULL, "no notifications/resources/updated");
	ck_assert_str_eq(json_string_value(json_object_get(j, "method")),
			 "notifications/resources/updated");
	return j;
}

static void sio_expect_updated(struct sio *s, const char *uri)
{
	json_t *j = sio_updated(s);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "params"), "uri")),
			 uri);
	json_decref(j);
}

static void sio_request(struct sio *s, long id, const char *method, const char *uri)
{
	char line[400];
	snprintf(line, sizeof line,
		 "{\"jsonrpc\":\"2.0\",\"id\":%ld,\"method\":\"%s\",\"params\":{\"uri\":\"%s\"}}",
		 id, method, uri);
	sio_send(s, line);
}

#define SUB_BIKE "bikaroo://fleet/bikes/VL-2057"  /* FR-PAR, the caller's region */
#define SUB_OTHER "bikaroo://fleet/bikes/VL-2060" /* FR-PAR as well */
#define SUB_TOUCH(bike)                                                                            \
	"UPDATE fleet.bikes SET battery_pct = (coalesce(battery_pct, 0) + 1) % 100 WHERE bike_id " \
	"= "                                                                                       \
	"'" bike "'"

/* 2025-era resource subscriptions on stdio: offered in initialize, taken only for a resource
 * the caller can read, told when PostgreSQL commits a change to exactly that resource (from
 * any writer: here the superuser), and no longer once unsubscribed. Notifications arrive in
 * commit order, so "the next one is for X" proves that nothing was sent in between. */
START_TEST(legacy_subscriptions_follow_database_changes)
{
	struct sio s;
	sio_start(&s, NULL);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"initialize\",\"params\":{"
		     "\"protocolVersion\":\"2025-11-25\",\"capabilities\":{},"
		     "\"clientInfo\":{\"name\":\"t\",\"version\":\"1\"}}}");
	json_t *j = sio_response(&s, 1, NULL);
	json_t *res = json_object_get(json_object_get(json_object_get(j, "result"), "capabilities"),
				      "resources");
	ck_assert(json_is_true(json_object_get(res, "subscribe")));
	json_decref(j);

	sio_request(&s, 2, "resources/subscribe", "bikaroo://fleet/bikes/VL-2047"); /* FR-LYO */
	sio_expect_error(&s, 2, -32002);
	sio_request(&s, 3, "resources/subscribe", SUB_BIKE);
	j = sio_response(&s, 3, NULL);
	ck_assert_uint_eq(json_object_size(json_object_get(j, "result")), 0);
	json_decref(j);

	free(it_sql(SUB_TOUCH("VL-2060"))); /* not subscribed */
	free(it_sql(SUB_TOUCH("VL-2057")));
	sio_expect_updated(&s, SUB_BIKE);

	sio_request(&s, 4, "resources/unsubscribe", SUB_BIKE);
	json_decref(sio_response(&s, 4, NULL));
	sio_request(&s, 5, "resources/subscribe", SUB_OTHER);
	json_decref(sio_response(&s, 5, NULL));
	free(it_sql(SUB_TOUCH("VL-2057"))); /* unsubscribed */
	free(it_sql(SUB_TOUCH("VL-2060")));
	sio_expect_updated(&s, SUB_OTHER);

	/* A report on the same connection changes the bike and its case: both are told. */
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":6,\"method\":\"tools/call\",\"params\":{"
		     "\"name\":\"report_damaged_bike\",\"arguments\":{\"bikeId\":\"VL-2060\","
		     "\"issue\":\"brake_failure\"}}}");
	bool answered = false, told = false;
	for (int i = 0; i < 3 && !(answered && told); i++) {
		j = sio_next(&s, sio_wait_ms());
		ck_assert_ptr_nonnull(j);
		if (json_integer_value(json_object_get(j, "id")) == 6)
			answered = json_is_false(
				json_object_get(json_object_get(j, "result"), "isError"));
		else if (strcmp(json_string_value(
					json_object_get(json_object_get(j, "params"), "uri")),
				SUB_OTHER) == 0)
			told = true;
		json_decref(j);
	}
	ck_assert(answered && told);

	/* unsubscribe of what was never subscribed: the same empty result. */
	sio_request(&s, 7, "resources/unsubscribe", "bikaroo://fleet/bikes/VL-9999");
	j = sio_response(&s, 7, NULL);
	ck_assert(json_is_object(json_object_get(j, "result")));
	json_decref(j);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

/* Writes a 2026-07-28 subscriptions/listen request with id and the filter (JSON text). */
static void sio_listen(struct sio *s, const char *id, const char *filter)
{
	char line[1024];
	snprintf(line, sizeof line,
		 "{\"jsonrpc\":\"2.0\",\"id\":\"%s\",\"method\":\"subscriptions/listen\","
		 "\"params\":{\"notifications\":%s," META "}}",
		 id, filter);
	sio_send(s, line);
}

static const char *sio_sub_id(json_t *j)
{
	return json_string_value(
		json_object_get(json_object_get(json_object_get(j, "params"), "_meta"),
				"io.modelcontextprotocol/subscriptionId"));
}

/* 2026-07-28 subscriptions/listen on stdio: advertised by server/discover, acknowledged first
 * with the honoured subset (readable URIs only, no list-changed types: the lists never change),
 * every update tagged with the listen id, none after the client cancels it, and a graceful
 * result for the listens still open at the end of input. */
START_TEST(listen_streams_follow_database_changes)
{
	struct sio s;
	sio_start(&s, NULL);
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"server/discover\",\"params\":{" META
		 "}}");
	json_t *j = sio_response(&s, 1, NULL);
	ck_assert(json_is_true(json_object_get(
		json_object_get(json_object_get(json_object_get(j, "result"), "capabilities"),
				"resources"),
		"subscribe")));
	json_decref(j);

	sio_listen(&s, "L1",
		   "{\"toolsListChanged\":true,\"resourceSubscriptions\":[\"" SUB_BIKE "\","
		   "\"bikaroo://fleet/bikes/VL-2047\",\"" SUB_BIKE "\",\"bikaroo://nothing\"]}");
	j = sio_next(&s, sio_wait_ms());
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "method")),
			 "notifications/subscriptions/acknowledged");
	ck_assert_str_eq(sio_sub_id(j), "L1");
	json_t *honoured = json_object_get(json_object_get(j, "params"), "notifications");
	ck_assert_ptr_null(json_object_get(honoured, "toolsListChanged"));
	json_t *uris = json_object_get(honoured, "resourceSubscriptions");
	ck_assert_uint_eq(json_array_size(uris), 1);
	ck_assert_str_eq(json_string_value(json_array_get(uris, 0)), SUB_BIKE);
	json_decref(j);

	free(it_sql(SUB_TOUCH("VL-2060"))); /* not subscribed */
	free(it_sql(SUB_TOUCH("VL-2057")));
	j = sio_updated(&s);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "params"), "uri")),
			 SUB_BIKE);
	ck_assert_str_eq(sio_sub_id(j), "L1");
	json_decref(j);

	/* The client cancels L1; L2 watches the other bike. */
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
		     "\"requestId\":\"L1\"," META "}}");
	sio_listen(&s, "L2", "{\"resourceSubscriptions\":[\"" SUB_OTHER "\"]}");
	j = sio_next(&s, sio_wait_ms());
	ck_assert_str_eq(sio_sub_id(j), "L2");
	json_decref(j);
	free(it_sql(SUB_TOUCH("VL-2057"))); /* L1 is gone */
	free(it_sql(SUB_TOUCH("VL-2060")));
	j = sio_updated(&s);
	ck_assert_str_eq(json_string_value(json_object_get(json_object_get(j, "params"), "uri")),
			 SUB_OTHER);
	ck_assert_str_eq(sio_sub_id(j), "L2");
	json_decref(j);

	/* End of input: L2 ends with its result, L1 (cancelled) with nothing. */
	close(s.in);
	s.in = -1;
	j = sio_next(&s, sio_wait_ms());
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "L2");
	json_t *r = json_object_get(j, "result");
	ck_assert_str_eq(json_string_value(json_object_get(r, "resultType")), "complete");
	json_decref(j);
	ck_assert_ptr_null(sio_next(&s, sio_wait_ms()));
	int status = 0;
	ck_assert_int_eq(waitpid(s.pid, &status, 0), s.pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(s.out);
	unlink(s.log_file);
}
END_TEST

/* The honoured resourceSubscriptions of an acknowledgement line for listen id. */
static size_t sio_ack_honoured(json_t *j, const char *id)
{
	ck_assert_ptr_nonnull(j);
	ck_assert_str_eq(json_string_value(json_object_get(j, "method")),
			 "notifications/subscriptions/acknowledged");
	ck_assert_str_eq(sio_sub_id(j), id);
	return json_array_size(
		json_object_get(json_object_get(json_object_get(j, "params"), "notifications"),
				"resourceSubscriptions"));
}

/* Starts `bikaroo-mcp stdio` (extra env) listening to SUB_BIKE as L1, acknowledged and honoured. */
static void sio_start_listening(struct sio *s, const char *const *env)
{
	sio_start(s, env);
	sio_listen(s, "L1", "{\"resourceSubscriptions\":[\"" SUB_BIKE "\"]}");
	json_t *j = sio_next(s, sio_wait_ms());
	ck_assert_uint_eq(sio_ack_honoured(j, "L1"), 1);
	json_decref(j);
}

/* A change of the identity's rights in PostgreSQL ends its listens (with their result): what
 * it may hear is checked anew when it listens again. Someone else's change ends nothing. */
START_TEST(listen_ends_when_the_identitys_rights_change)
{
	free(it_sql(IT_RIGHTS_SETUP));
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=rights-probe", NULL};
	struct sio s;
	sio_start_listening(&s, env);
	json_t *j;
	free(it_sql("INSERT INTO fleet.principal_regions VALUES ('rights-bystander', 'BE-BRU')"));
	free(it_sql(SUB_TOUCH("VL-2057")));
	sio_expect_updated(&s, SUB_BIKE);
	free(it_sql("DELETE FROM fleet.principal_regions WHERE subject = 'rights-probe'"));
	j = sio_next(&s, sio_wait_ms());
	ck_assert_msg(j != NULL, "the listen did not end");
	ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "L1");
	ck_assert_str_eq(
		json_string_value(json_object_get(json_object_get(j, "result"), "resultType")),
		"complete");
	json_decref(j);
	sio_listen(&s, "L2", "{\"resourceSubscriptions\":[\"" SUB_BIKE "\"]}");
	j = sio_next(&s, sio_wait_ms());
	ck_assert_uint_eq(sio_ack_honoured(j, "L2"), 0);
	json_decref(j);
	ck_assert_int_eq(sio_stop(&s), 0);
	free(it_sql(IT_RIGHTS_TEARDOWN));
}
END_TEST

/* After a gap in the change feed (its connection ended from the database side), rights may
 * have changed unseen: each listen is told its URIs may have changed, then ends. */
START_TEST(listen_ends_after_a_gap_in_the_feed)
{
	struct sio s;
	sio_start_listening(&s, NULL);
	char *cut = it_sql(IT_CUT_FEED);
	ck_assert_str_eq(cut, "1");
	free(cut);
	json_t *j = sio_updated(&s);
	ck_assert_str_eq(sio_sub_id(j), "L1");
	json_decref(j);
	j = sio_next(&s, sio_wait_ms());
	ck_assert_msg(j != NULL, "the listen did not end");
	ck_assert_str_eq(json_string_value(json_object_get(j, "id")), "L1");
	json_decref(j);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

START_TEST(bad_lines_get_errors_and_the_stream_continues)
{
	struct sio s;
	const char *env[] = {"BIKAROO_MAX_BODY_BYTES=1024", NULL};
	sio_start(&s, env);
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":"); /* truncated JSON */
	json_t *j = sio_next(&s, sio_wait_ms());
	ck_assert_int_eq(sio_code(j), -32700);
	ck_assert(json_is_null(json_object_get(j, "id")));
	json_decref(j);
	char big[4096];
	int n = snprintf(
		big, sizeof big,
		"{\"jsonrpc\":\"2.0\",\"id\":2,\"method\":\"tools/list\",\"params\":{\"pad\":\"");
	memset(big + n, 'x', 3000);
	snprintf(big + n + 3000, sizeof big - (size_t)n - 3000, "\"," META "}}");
	sio_send(&s, big);
	j = sio_next(&s, sio_wait_ms());
	ck_assert_int_eq(sio_code(j), -32600);
	json_decref(j);
	sio_send(&s, "");
	sio_send(&s, "[]");
	j = sio_next(&s, sio_wait_ms());
	ck_assert_int_eq(sio_code(j), -32600);
	json_decref(j);
	/* Still serving, on the line after. */
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":3,\"method\":\"tools/list\",\"params\":{" META "}}");
	j = sio_response(&s, 3, NULL);
	ck_assert_ptr_nonnull(json_object_get(j, "result"));
	json_decref(j);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

START_TEST(cancelled_request_gets_no_response)
{
	/* Hold every bike read with a lock, so that the request is surely in flight when its
	 * cancellation arrives; release it afterwards and check the stream. */
	PGconn *pg = PQconnectdb(it_env("IT_SUPER_URL"));
	ck_assert_int_eq(PQstatus(pg), CONNECTION_OK);
	PQclear(PQexec(pg, "BEGIN"));
	PGresult *res = PQexec(pg, "LOCK TABLE fleet.bikes IN ACCESS EXCLUSIVE MODE");
	ck_assert_int_eq(PQresultStatus(res), PGRES_COMMAND_OK);
	PQclear(res);
	struct sio s;
	sio_start(&s, NULL);
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":7,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2048\"}," META "}}");
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":8,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"get_bike_status\",\"arguments\":{\"bikeId\":\"VL-2051\"}," META "}}");
	/* While both wait on the lock, an unrelated request is answered (workers run in
	 * parallel), and one of the two is cancelled. One that needs no database: reads go to
	 * the database in batches, and one that joins the batch held by the lock waits with it
	 * (a slow statement delays its own batch, domain/reads.h). */
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":9,\"method\":\"server/discover\",\"params\":{" META
		 "}}");
	unsigned long long seen = 0;
	json_decref(sio_response(&s, 9, &seen));
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
		     "\"requestId\":7,\"reason\":\"user pressed stop\"," META "}}");
	/* A cancellation for an unknown id is ignored. */
	sio_send(&s, "{\"jsonrpc\":\"2.0\",\"method\":\"notifications/cancelled\",\"params\":{"
		     "\"requestId\":\"nope\"," META "}}");
	struct timespec ts = {0, 300 * 1000 * 1000};
	nanosleep(&ts, NULL);
	PQclear(PQexec(pg, "COMMIT"));
	PQfinish(pg);
	json_t *j = sio_response(&s, 8, &seen);
	ck_assert(json_is_false(json_object_get(json_object_get(j, "result"), "isError")));
	json_decref(j);
	close(s.in);
	s.in = -1;
	/* Everything left on stdout until EOF: nothing may answer id 7. */
	while ((j = sio_next(&s, sio_wait_ms())) != NULL) {
		ck_assert_int_ne(json_integer_value(json_object_get(j, "id")), 7);
		json_decref(j);
	}
	ck_assert(!(seen & (1ull << 7)));
	int status = 0;
	ck_assert_int_eq(waitpid(s.pid, &status, 0), s.pid);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(s.out);
	/* The server saw the cancellation (its log is on stderr, never stdout). */
	FILE *f = fopen(s.log_file, "r");
	ck_assert_ptr_nonnull(f);
	static char logbuf[1 << 16];
	size_t n = fread(logbuf, 1, sizeof logbuf - 1, f);
	fclose(f);
	logbuf[n] = '\0';
	ck_assert_msg(strstr(logbuf, "cancelled; no response written") != NULL, "%s", logbuf);
	unlink(s.log_file);
}
END_TEST

START_TEST(many_in_flight_each_on_its_own_line_then_eof_exits)
{
	struct sio s;
	const char *env[] = {"BIKAROO_LOG_LEVEL=debug", NULL};
	sio_start(&s, env);
	/* Several requests without waiting: every answer arrives, each on its own line. */
	for (int id = 1; id <= 20; id++) {
		char line[512];
		snprintf(line, sizeof line,
			 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\",\"params\":{"
			 "\"uri\":\"bikaroo://fleet/bikes/VL-%d\"," META "}}",
			 id, 2048 + 3 * id);
		sio_send(&s, line);
	}
	unsigned long long seen = 0;
	for (int i = 0; i < 20; i++) {
		json_t *j = sio_next(&s, sio_wait_ms());
		ck_assert_ptr_nonnull(j);
		seen |= 1ull << json_integer_value(json_object_get(j, "id"));
		json_decref(j);
	}
	ck_assert_uint_eq(seen, ((1ull << 21) - 1) & ~1ull);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

/* Progress over stdio: one line per notification, before the response (the conformance server,
 * whose fixture tool reports progress; the same transport code as bikaroo-mcp stdio). */
START_TEST(progress_lines_come_before_the_response)
{
	char *dir = mem_strdup(it_env("BIKAROO_BIN")), *slash = strrchr(dir, '/');
	if (slash)
		*slash = '\0';
	char *bin = mem_printf("BIKAROO_BIN=%s/conformance-server", slash ? dir : ".");
	const char *env[] = {bin, NULL};
	struct sio s;
	sio_start(&s, env);
	sio_send(&s,
		 "{\"jsonrpc\":\"2.0\",\"id\":5,\"method\":\"tools/call\",\"params\":{"
		 "\"name\":\"test_tool_with_progress\",\"arguments\":{},\"_meta\":{"
		 "\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		 "\"io.modelcontextprotocol/clientCapabilities\":{},\"progressToken\":\"sp\"}}}");
	for (int i = 0; i < 3; i++) {
		json_t *n = sio_next(&s, sio_wait_ms());
		ck_assert_ptr_nonnull(n);
		ck_assert_str_eq(json_string_value(json_object_get(n, "method")),
				 "notifications/progress");
		ck_assert_str_eq(json_string_value(json_object_get(json_object_get(n, "params"),
								   "progressToken")),
				 "sp");
		json_decref(n);
	}
	json_t *r = sio_next(&s, sio_wait_ms());
	ck_assert_int_eq(json_integer_value(json_object_get(r, "id")), 5);
	json_decref(r);
	ck_assert_int_eq(sio_stop(&s), 0);
	free(bin);
	free(dir);
}
END_TEST

/* The volume limit over stdio: past the read budget, a JSON-RPC error whose data says when to
 * retry (stdio has no status line); nothing of the refused call reaches the audit log. */
START_TEST(tool_calls_past_the_budget_get_the_retry_delay)
{
	struct sio s;
	const char *env[] = {"BIKAROO_RATE_READS=1", "BIKAROO_RATE_READ_BURST=3", NULL};
	sio_start(&s, env);
	char *before = it_sql("SELECT count(*) FROM fleet.audit_log");
	for (long id = 1; id <= 5; id++)
		sio_tool_call(&s, id, "VL-2048");
	int answered = 0, limited = 0;
	for (int i = 0; i < 5; i++) { /* in any order */
		json_t *j = sio_next(&s, sio_wait_ms());
		ck_assert_ptr_nonnull(j);
		if (json_object_get(j, "result")) {
			answered++;
		} else {
			ck_assert_int_eq(sio_code(j), -32029);
			json_t *data = json_object_get(json_object_get(j, "error"), "data");
			ck_assert_int_ge(
				json_integer_value(json_object_get(data, "retryAfterSeconds")), 1);
			limited++;
		}
		json_decref(j);
	}
	ck_assert_int_eq(answered, 3);
	ck_assert_int_eq(limited, 2);
	char *after = it_sql("SELECT count(*) FROM fleet.audit_log");
	ck_assert_int_eq(strtol(after, NULL, 10) - strtol(before, NULL, 10), 3);
	free(before);
	free(after);
	ck_assert_int_eq(sio_stop(&s), 0);
}
END_TEST

/* SIGTERM with requests in flight (more than the workers, some still queued): every request
 * already read is answered, then the server exits 0. */
START_TEST(sigterm_answers_what_was_read_then_exits)
{
	struct sio s;
	sio_start(&s, NULL);
	enum { N = 40 };
	char *all = mem_strdup("");
	for (int id = 1; id <= N; id++) {
		char line[512];
		snprintf(line, sizeof line,
			 "{\"jsonrpc\":\"2.0\",\"id\":%d,\"method\":\"resources/read\",\"params\":{"
			 "\"uri\":\"bikaroo://fleet/bikes/VL-%d\"," META "}}\n",
			 id, 2048 + 3 * id);
		char *more = mem_printf("%s%s", all, line);
		free(all);
		all = more;
	}
	size_t n = strlen(all);
	ck_assert_int_eq(write(s.in, all, n), (ssize_t)n); /* one write: one read takes them all */
	free(all);
	json_t *first = sio_next(&s, sio_wait_ms());
	ck_assert_ptr_nonnull(first);
	json_decref(first);
	kill(s.pid, SIGTERM);
	int answered = 1;
	for (json_t *j; (j = sio_next(&s, sio_wait_ms())) != NULL; json_decref(j))
		answered += json_object_get(j, "result") != NULL;
	ck_assert_int_eq(answered, N);
	int status = 0;
	waitpid(s.pid, &status, 0);
	ck_assert(WIFEXITED(status) && WEXITSTATUS(status) == 0);
	close(s.in);
	close(s.out);
	unlink(s.log_file);
}
END_TEST

CHECK_SUITE(stdio)
{
	Suite *s = suite_create("stdio");
	TCase *tc = tcase_create("bikaroo-mcp stdio");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, discover_before_initialize_then_legacy_session);
	tcase_add_test(tc, legacy_ui_extension_holds_for_the_connection);
	tcase_add_test(tc, bad_lines_get_errors_and_the_stream_continues);
	tcase_add_test(tc, legacy_log_level_holds_for_the_connection);
	tcase_add_test(tc, legacy_subscriptions_follow_database_changes);
	tcase_add_test(tc, listen_streams_follow_database_changes);
	tcase_add_test(tc, listen_ends_when_the_identitys_rights_change);
	tcase_add_test(tc, listen_ends_after_a_gap_in_the_feed);
	tcase_add_test(tc, cancelled_request_gets_no_response);
	tcase_add_test(tc, many_in_flight_each_on_its_own_line_then_eof_exits);
	tcase_add_test(tc, progress_lines_come_before_the_response);
	tcase_add_test(tc, tool_calls_past_the_budget_get_the_retry_delay);
	tcase_add_test(tc, sigterm_answers_what_was_read_then_exits);
	suite_add_tcase(s, tc);
	return s;
}
