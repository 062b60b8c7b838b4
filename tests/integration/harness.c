/* Integration-test harness: real binary, real PostgreSQL, real HTTP (libcurl). */
#define _GNU_SOURCE /* for close_range */
#include "harness.h"

#include <arpa/inet.h>
#include <check.h>
#include <curl/curl.h>
#include <errno.h>
#include <fcntl.h>
#include <libpq-fe.h>
#include <netinet/in.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"

/* libcurl's global state, once for the whole program, before Check forks its tests. */
__attribute__((constructor)) static void it_curl_init(void)
{
	curl_global_init(CURL_GLOBAL_DEFAULT);
}

__attribute__((destructor)) static void it_curl_cleanup(void)
{
	curl_global_cleanup();
}

extern char **environ;

const char *it_env(const char *name)
{
	const char *v = getenv(name);
	return v ? v : "";
}

/* Builds argv/envp for the binary, wrapped by BIKAROO_WRAPPER (e.g. valgrind) if set. */
static pid_t it_spawn(const char *subcommand, const char *const *extra_env, const char *log_file)
{
	pid_t pid = fork();
	if (pid != 0)
		return pid;
	for (const char *const *e = extra_env; e && *e; e++)
		putenv((char *)*e);
	if (log_file) {
		FILE *f = freopen(log_file, "w", stderr);
		(void)f;
	}
	const char *bin = it_env("BIKAROO_BIN");
	char *argv[32];
	int argc = 0;
	char *wrapper = mem_strdup(it_env("BIKAROO_WRAPPER"));
	for (char *tok = wrapper, *save = NULL; argc < 28; tok = NULL) {
		char *w = strtok_r(tok, " ", &save);
		if (!w)
			break;
		argv[argc++] = w;
	}
	argv[argc++] = (char *)bin;
	argv[argc++] = (char *)subcommand;
	argv[argc] = NULL;
	execvp(argv[0], argv);
	_exit(127);
}

static bool it_valgrind(void)
{
	return *it_env("BIKAROO_WRAPPER") != '\0';
}

int it_server_start(struct it_server *s, const char *const *extra_env)
{
	static unsigned seq;
	memset(s, 0, sizeof *s);
	snprintf(s->ready_file, sizeof s->ready_file, "%s/ready-%d-%u", it_env("IT_TMP"),
		 (int)getpid(), ++seq);
	snprintf(s->log_file, sizeof s->log_file, "%s/server-%d-%u.log", it_env("IT_TMP"),
		 (int)getpid(), seq);
	unlink(s->ready_file);
	char ready_env[300];
	snprintf(ready_env, sizeof ready_env, "BIKAROO_READY_FILE=%s", s->ready_file);
	const char *env[40];
	int n = 0;
	env[n++] = ready_env;
	env[n++] = "BIKAROO_PORT=0";
	env[n++] = "BIKAROO_THREADS=4";
	for (const char *const *e = extra_env; e && *e && n < 38; e++)
		env[n++] = *e;
	env[n] = NULL;
	s->pid = it_spawn("serve", env, s->log_file);
	int limit_ms = it_valgrind() ? 60000 : 10000;
	for (int waited = 0; waited < limit_ms; waited += 20) {
		FILE *f = fopen(s->ready_file, "r");
		if (f) {
			int ok = fscanf(f, "%u", &s->port) == 1;
			fclose(f);
			if (ok)
				return 0;
		}
		int status;
		if (waitpid(s->pid, &status, WNOHANG) == s->pid) {
			s->pid = 0;
			return -1;
		}
		struct timespec ts = {0, 20 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	kill(s->pid, SIGKILL);
	waitpid(s->pid, NULL, 0);
	s->pid = 0;
	return -1;
}

/* An abnormal exit's log goes with IT_TMP when the run ends: its last lines are printed now, so
 * that a failure seen once in CI (an abort's message, the last request) can be read later. */
static void it_log_tail(const char *path)
{
	fprintf(stderr, "server exited abnormally; the end of its log %s:\n", path);
	FILE *f = fopen(path, "r");
	if (!f)
		return;
	char *lines[40] = {0};
	char line[1024];
	size_t n = 0;
	while (fgets(line, sizeof line, f)) {
		free(lines[n % 40]);
		lines[n % 40] = mem_strdup(line);
		n++;
	}
	fclose(f);
	for (size_t i = n > 40 ? n - 40 : 0; i < n; i++) {
		fprintf(stderr, "  | %s", lines[i % 40]);
		free(lines[i % 40]);
	}
}

/* What the server logs when a batch of reads falls back to its calls run alone (domain/reads.c). */
#define IT_FALLBACK "run again call by call"

int it_server_stop(struct it_server *s)
{
	if (!s->pid)
		return -1;
	kill(s->pid, SIGTERM);
	int status = 0;
	while (waitpid(s->pid, &status, 0) < 0 && errno == EINTR)
		;
	s->pid = 0;
	unlink(s->ready_file);
	int rc = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
	if (rc == 0 && !s->reads_may_fall_back && it_log_count(s, IT_FALLBACK) > 0) {
		fprintf(stderr,
			"%s: a batch of reads fell back to its calls run alone, which no read "
			"of this test should make the database do:\n",
			s->log_file);
		rc = 97;
	}
	if (rc == 0)
		unlink(s->log_file);
	else
		it_log_tail(s->log_file);
	return rc;
}

unsigned it_metrics_port(const struct it_server *s)
{
	FILE *f = fopen(s->log_file, "r");
	if (!f)
		return 0;
	static const char mark[] = "metrics at http://127.0.0.1:";
	char line[2048];
	unsigned port = 0;
	while (!port && fgets(line, sizeof line, f)) {
		const char *m = strstr(line, mark);
		if (m)
			port = (unsigned)strtoul(m + strlen(mark), NULL, 10);
	}
	fclose(f);
	return port;
}

long it_metric(const struct it_server *s, const char *series)
{
	unsigned port = it_metrics_port(s);
	ck_assert_msg(port != 0, "no metrics listener in %s", s->log_file);
	struct it_response r;
	it_http(port, "GET", "/metrics", NULL, NULL, 0, &r);
	ck_assert_int_eq(r.status, 200);
	long v = -1;
	size_t n = strlen(series);
	for (const char *p = r.body; p && *p; p = strchr(p, '\n'), p = p ? p + 1 : NULL)
		if (strncmp(p, series, n) == 0 && p[n] == ' ')
			v = strtol(p + n + 1, NULL, 10);
	it_response_free(&r);
	return v;
}

int it_run(const char *subcommand, const char *const *extra_env)
{
	pid_t pid = it_spawn(subcommand, extra_env, NULL);
	int status = 0;
	while (waitpid(pid, &status, 0) < 0 && errno == EINTR)
		;
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

struct it_buf {
	char *p;
	size_t n;
};

static size_t it_collect(char *data, size_t size, size_t nmemb, void *user)
{
	struct it_buf *b = user;
	size_t add = size * nmemb;
	b->p = mem_realloc(b->p, b->n + add + 1);
	memcpy(b->p + b->n, data, add);
	b->n += add;
	b->p[b->n] = '\0';
	return add;
}

/* One request on c (a new handle, or a connection's: curl keeps its connection alive). */
static void it_perform(CURL *c, unsigned port, const char *method, const char *path,
		       const char *const *headers, const char *body, size_t body_len,
		       struct it_response *r)
{
	memset(r, 0, sizeof *r);
	char url[256];
	snprintf(url, sizeof url, "http://127.0.0.1:%u%s", port, path);
	struct curl_slist *h = NULL;
	for (const char *const *p = headers; p && *p; p++)
		h = curl_slist_append(h, *p);
	struct it_buf b = {0}, hb = {0};
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_CUSTOMREQUEST, method);
	if (strcmp(method, "HEAD") == 0)
		curl_easy_setopt(c, CURLOPT_NOBODY, 1L);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	if (body) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
		curl_easy_setopt(c, CURLOPT_POSTFIELDSIZE_LARGE, (curl_off_t)body_len);
	}
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, it_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_HEADERFUNCTION, it_collect);
	curl_easy_setopt(c, CURLOPT_HEADERDATA, &hb);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, it_valgrind() ? 60L : 15L);
	CURLcode rc = curl_easy_perform(c);
	if (rc == CURLE_OK)
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &r->status);
	else
		r->status = -1;
	r->body = b.p ? b.p : mem_strdup("");
	r->headers = hb.p ? hb.p : mem_strdup("");
	json_error_t e;
	r->json = json_loads(r->body, 0, &e);
	curl_slist_free_all(h);
}

void it_http(unsigned port, const char *method, const char *path, const char *const *headers,
	     const char *body, size_t body_len, struct it_response *r)
{
	CURL *c = curl_easy_init();
	it_perform(c, port, method, path, headers, body, body_len, r);
	curl_easy_cleanup(c);
}

/* A 2026-07-28 request on c: JSON-RPC id (JSON text), method, Mcp-Name (or NULL), params without
 * _meta, the client capabilities caps (JSON object text; NULL: {}), with `Authorization: Bearer
 * token` unless token is NULL. */
static void it_mcp_on(CURL *c, unsigned port, const char *token, const char *id, const char *method,
		      const char *name, const char *params, const char *caps, struct it_response *r)
{
	char mh[128], nh[512], auth[4096];
	snprintf(mh, sizeof mh, "Mcp-Method: %s", method);
	snprintf(nh, sizeof nh, "Mcp-Name: %s", name ? name : "");
	snprintf(auth, sizeof auth, "Authorization: Bearer %s", token ? token : "");
	const char *headers[7] = {"Content-Type: application/json",
				  "Accept: application/json, text/event-stream",
				  "MCP-Protocol-Version: 2026-07-28", mh};
	size_t n = 4;
	if (name)
		headers[n++] = nh;
	if (token)
		headers[n++] = auth;
	headers[n] = NULL;
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":%s,\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":%s}}}",
		id, method, params, *params ? "," : "", caps ? caps : "{}");
	it_perform(c, port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
}

void it_mcp(unsigned port, const char *method, const char *name, const char *params,
	    struct it_response *r)
{
	CURL *c = curl_easy_init();
	it_mcp_on(c, port, NULL, "42", method, name, params, NULL, r);
	curl_easy_cleanup(c);
}

void it_mcp_caps(unsigned port, const char *method, const char *name, const char *params,
		 const char *caps, struct it_response *r)
{
	CURL *c = curl_easy_init();
	it_mcp_on(c, port, NULL, "42", method, name, params, caps, r);
	curl_easy_cleanup(c);
}

json_t *it_tool(unsigned port, const char *tool, const char *args, const char *caps,
		const char *extra, struct it_response *r)
{
	static int seq; /* a Check test is a process of its own: ids unique by pid and count */
	char id[64], *params = mem_printf("\"name\":\"%s\",%s%s\"arguments\":%s", tool,
					  extra ? extra : "", extra ? "," : "", args);
	snprintf(id, sizeof id, "\"it-%d-%d\"", (int)getpid(), ++seq);
	CURL *c = curl_easy_init();
	it_mcp_on(c, port, NULL, id, "tools/call", tool, params, caps, r);
	curl_easy_cleanup(c);
	free(params);
	json_t *res = json_object_get(r->json, "result");
	ck_assert_msg(res != NULL, "%s %s: HTTP %ld %s", tool, args, r->status, r->body);
	char *sql = mem_printf("SELECT count(*) FROM fleet.audit_log WHERE request_id = '%s'", id);
	long rows = it_count(sql);
	free(sql);
	ck_assert_msg(rows == 1, "%s %s left %ld audit rows, not one: %s", tool, args, rows,
		      r->body);
	return res;
}

#define IT_CAPS_FORM "{\"elicitation\":{\"form\":{}}}"

char *it_tool_ask(unsigned port, const char *tool, const char *args, char **question)
{
	struct it_response r;
	json_t *asked = it_tool(port, tool, args, IT_CAPS_FORM, NULL, &r);
	const char *state = json_string_value(json_object_get(asked, "requestState"));
	json_t *confirm = json_object_get(json_object_get(asked, "inputRequests"), "confirm");
	ck_assert_msg(state && confirm, "%s did not ask for a confirmation: %s", tool, r.body);
	ck_assert_str_eq(json_string_value(json_object_get(asked, "resultType")), "input_required");
	if (question)
		*question = mem_strdup(json_string_value(
			json_object_get(json_object_get(confirm, "params"), "message")));
	char *sealed = mem_strdup(state);
	it_response_free(&r);
	return sealed;
}

json_t *it_tool_answer(unsigned port, const char *tool, const char *args, const char *state,
		       bool accept, struct it_response *r)
{
	char *extra =
		mem_printf("\"requestState\":\"%s\",\"inputResponses\":{\"confirm\":%s}", state,
			   accept ? "{\"action\":\"accept\",\"content\":{\"confirm\":true}}"
				  : "{\"action\":\"decline\"}");
	json_t *res = it_tool(port, tool, args, IT_CAPS_FORM, extra, r);
	free(extra);
	return res;
}

json_t *it_tool_confirmed(unsigned port, const char *tool, const char *args, bool accept,
			  struct it_response *r)
{
	char *state = it_tool_ask(port, tool, args, NULL);
	json_t *res = it_tool_answer(port, tool, args, state, accept, r);
	free(state);
	return res;
}

long it_count(const char *sql)
{
	char *v = it_sql(sql);
	ck_assert_msg(v != NULL, "SQL failed: %s", sql);
	long n = strtol(v, NULL, 10);
	free(v);
	return n;
}

void it_response_free(struct it_response *r)
{
	free(r->body);
	free(r->headers);
	json_decref(r->json);
	memset(r, 0, sizeof *r);
}

char *it_sql_url(const char *url, const char *sql)
{
	PGconn *pg = PQconnectdb(url);
	char *out = NULL;
	if (PQstatus(pg) == CONNECTION_OK) {
		PGresult *res = PQexec(pg, sql);
		ExecStatusType st = PQresultStatus(res);
		if (st == PGRES_TUPLES_OK)
			out = mem_strdup(PQntuples(res) ? PQgetvalue(res, 0, 0) : "");
		else if (st == PGRES_COMMAND_OK)
			out = mem_strdup("");
		else
			fprintf(stderr, "it_sql: %s", PQresultErrorMessage(res));
		PQclear(res);
	} else {
		fprintf(stderr, "it_sql: %s", PQerrorMessage(pg));
	}
	PQfinish(pg);
	return out;
}

char *it_sql_as_app_then(const char *first, const char *second)
{
	PGconn *pg = PQconnectdb(it_env("DATABASE_URL"));
	char *out = NULL;
	PGresult *r1 = PQexec(pg, first);
	if (PQresultStatus(r1) == PGRES_TUPLES_OK || PQresultStatus(r1) == PGRES_COMMAND_OK) {
		PGresult *r2 = PQexec(pg, second);
		if (PQresultStatus(r2) == PGRES_TUPLES_OK)
			out = mem_strdup(PQntuples(r2) ? PQgetvalue(r2, 0, 0) : "");
		PQclear(r2);
	}
	PQclear(r1);
	PQfinish(pg);
	return out;
}

char *it_sql(const char *sql)
{
	return it_sql_url(it_env("IT_SUPER_URL"), sql);
}

char *it_sql_as_app(const char *sql)
{
	return it_sql_url(it_env("DATABASE_URL"), sql);
}

void it_sleep_ms(long ms)
{
	struct timespec ts = {ms / 1000, (ms % 1000) * 1000000L};
	while (nanosleep(&ts, &ts) != 0 && errno == EINTR)
		;
}

/* What a process that will not get ready is doing, from /proc/PID/stat: its state (R running,
 * S sleeping, D in the kernel) and the CPU time it has had, for the failure message. */
static void it_as_state(pid_t pid, char *out, size_t outlen)
{
	char path[64], buf[1024];
	snprintf(path, sizeof path, "/proc/%d/stat", (int)pid);
	FILE *f = fopen(path, "r");
	size_t n = f ? fread(buf, 1, sizeof buf - 1, f) : 0;
	if (f)
		fclose(f);
	buf[n] = '\0';
	const char *p = strrchr(buf, ')'); /* the command name may hold spaces */
	char st = '?';
	unsigned long utime = 0, stime = 0;
	if (!p || sscanf(p + 2, "%c %*d %*d %*d %*d %*d %*u %*u %*u %*u %*u %lu %lu", &st, &utime,
			 &stime) != 3) {
		snprintf(out, outlen, "no /proc/%d/stat", (int)pid);
		return;
	}
	long hz = sysconf(_SC_CLK_TCK);
	snprintf(out, outlen, "state %c, %.2f s user and %.2f s system CPU", st,
		 (double)utime / (double)hz, (double)stime / (double)hz);
}

/* The child gets /dev/null as stdin and stdout and none of this process's other descriptors
 * (sockets, Check's files); its stderr goes to IT_TMP/as-PID-N.log, where tests/auth/as.mjs says
 * any start of the provider it had to try again (scripts/test.sh repeats those lines). It
 * starts in about a second; as.mjs itself gives up after three tries of 30 s, so the wait here
 * (6000 polls of 20 ms, counted rather than read from a clock that may jump when a paused
 * machine resumes) is only for as.mjs not starting at all. */
void it_as_start(struct it_as *as, const char *format)
{
	static unsigned seq;
	char ready[256], log[256];
	snprintf(ready, sizeof ready, "%s/as-%d-%u.port", it_env("IT_TMP"), (int)getpid(), ++seq);
	snprintf(log, sizeof log, "%s/as-%d-%u.log", it_env("IT_TMP"), (int)getpid(), seq);
	memset(as, 0, sizeof *as);
	unlink(ready);
	as->pid = fork();
	if (as->pid == 0) {
		int null = open("/dev/null", O_RDWR);
		int err = open(log, O_WRONLY | O_CREAT | O_TRUNC, 0600);
		if (null < 0 || err < 0 || dup2(null, 0) < 0 || dup2(null, 1) < 0 ||
		    dup2(err, 2) < 0)
			_exit(126);
		close_range(3, ~0U, 0);
		execlp("node", "node", "tests/auth/as.mjs", "--ready", ready, "--resource",
		       IT_AS_RESOURCE, "--format", format, (char *)NULL);
		_exit(127);
	}
	bool exited = false;
	for (int poll = 0; poll < 6000 && !exited && !as->port; poll++) {
		FILE *f = fopen(ready, "r");
		if (f) {
			if (fscanf(f, "%u", &as->port) != 1)
				as->port = 0;
			fclose(f);
		}
		exited = !as->port && waitpid(as->pid, NULL, WNOHANG) == as->pid;
		if (!as->port)
			it_sleep_ms(20);
	}
	unlink(ready);
	if (!as->port) {
		char state[160] = "", tail[2048] = "";
		if (!exited) {
			it_as_state(as->pid, state, sizeof state);
			kill(as->pid, SIGKILL);
			waitpid(as->pid, NULL, 0);
		}
		as->pid = 0;
		FILE *f = fopen(log, "r");
		if (f) {
			size_t n = fread(tail, 1, sizeof tail - 1, f);
			tail[n] = '\0';
			fclose(f);
		}
		ck_abort_msg("the test authorization server did not start (%s; %s): %s",
			     exited ? "it exited" : "not ready after 6000 polls", state, tail);
	}
	snprintf(as->issuer, sizeof as->issuer, "http://127.0.0.1:%u", as->port);
}

void it_as_stop(struct it_as *as)
{
	if (as->pid > 0) {
		kill(as->pid, SIGTERM);
		while (waitpid(as->pid, NULL, 0) < 0 && errno == EINTR)
			;
	}
	as->pid = 0;
}

char *it_as_mint(const struct it_as *as, const char *sub, const char *client, const char *scope)
{
	CURL *c = curl_easy_init();
	char *esc[3] = {curl_easy_escape(c, sub, 0), curl_easy_escape(c, client, 0),
			curl_easy_escape(c, scope, 0)};
	char *path = mem_printf("/mint?sub=%s&client=%s&scope=%s", esc[0], esc[1], esc[2]);
	for (size_t i = 0; i < 3; i++)
		curl_free(esc[i]);
	struct it_response r;
	it_perform(c, as->port, "GET", path, NULL, NULL, 0, &r);
	curl_easy_cleanup(c);
	const char *t = json_string_value(json_object_get(r.json, "access_token"));
	char *out = r.status == 200 && t ? mem_strdup(t) : NULL;
	if (!out)
		fprintf(stderr, "it_as_mint %s: HTTP %ld %s\n", path, r.status, r.body);
	free(path);
	it_response_free(&r);
	return out;
}

/* ---- loads ------------------------------------------------------------------------------- */

long long it_now_us(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000000LL + ts.tv_nsec / 1000;
}

void it_conn_open(struct it_conn *c, unsigned port)
{
	c->curl = curl_easy_init();
	c->port = port;
}

void it_conn_close(struct it_conn *c)
{
	curl_easy_cleanup(c->curl);
	c->curl = NULL;
}

int it_tcp_connect(unsigned port, const char *from)
{
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK, 0);
	if (fd < 0)
		return -1;
	struct sockaddr_in src = {.sin_family = AF_INET};
	if (from && (inet_pton(AF_INET, from, &src.sin_addr) != 1 ||
		     bind(fd, (struct sockaddr *)&src, sizeof src) != 0)) {
		close(fd);
		return -1;
	}
	struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons((uint16_t)port)};
	inet_pton(AF_INET, "127.0.0.1", &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

void it_conn_tool(struct it_conn *c, const char *token, const char *id, const char *tool,
		  const char *arguments, struct it_response *r)
{
	char *params = mem_printf("\"name\":\"%s\",\"arguments\":%s", tool, arguments);
	char *jid = mem_printf("\"%s\"", id);
	it_mcp_on(c->curl, c->port, token, jid, "tools/call", tool, params, NULL, r);
	free(jid);
	free(params);
}

struct it_load_worker {
	struct it_load *load;
	int caller;
};

static void *it_load_caller(void *arg)
{
	const struct it_load_worker *w = arg;
	struct it_load *l = w->load;
	struct it_conn conn;
	it_conn_open(&conn, l->port);
	for (long n = 0; l->calls == 0 || n < l->calls; n++) {
		struct it_load_call c = {.caller = w->caller, .n = n, .tool = "get_bike_status"};
		snprintf(c.id, sizeof c.id, "%s-%d-%ld", l->prefix, w->caller, n);
		l->prepare(l->ctx, &c);
		c.started_us = it_now_us();
		if (l->until_us && c.started_us >= l->until_us)
			break;
		it_conn_tool(&conn, c.token, c.id, c.tool, c.arguments, &c.r);
		c.ended_us = it_now_us();
		l->check(l->ctx, &c);
		long status = c.r.status;
		it_response_free(&c.r);
		if (status <= 0 && l->calls == 0)
			break; /* the server is gone */
	}
	it_conn_close(&conn);
	return NULL;
}

int it_load_start(struct it_load *l)
{
	if (l->callers < 1 || l->callers > IT_LOAD_CALLERS || (!l->calls && !l->until_us))
		return -1;
	l->workers = mem_calloc((size_t)l->callers, sizeof *l->workers);
	l->threads = mem_calloc((size_t)l->callers, sizeof *l->threads);
	for (int i = 0; i < l->callers; i++) {
		l->workers[i] = (struct it_load_worker){l, i};
		if (pthread_create(&l->threads[i], NULL, it_load_caller, &l->workers[i]) != 0)
			abort();
	}
	return 0;
}

void it_load_wait(struct it_load *l)
{
	for (int i = 0; i < l->callers; i++)
		pthread_join(l->threads[i], NULL);
	free(l->threads);
	free(l->workers);
	l->threads = NULL;
	l->workers = NULL;
}

int it_audit_count(const char *prefix, char *const *ids, size_t n, struct it_audit_count *out)
{
	struct it_buf arr = {0};
	it_collect("{", 1, 1, &arr);
	for (size_t i = 0; i < n; i++) {
		if (i)
			it_collect(",", 1, 1, &arr);
		it_collect(ids[i], 1, strlen(ids[i]), &arr);
	}
	it_collect("}", 1, 1, &arr);
	char *like = mem_printf("\"%s-%%", prefix);
	const char *params[] = {arr.p, like};
	PGconn *pg = PQconnectdb(it_env("IT_SUPER_URL"));
	PGresult *r = PQexecParams(
		pg,
		"SELECT (SELECT count(*) FROM fleet.audit_log WHERE btrim(request_id, '\"') = ANY "
		"($1::text[])), (SELECT count(*) FROM fleet.audit_log WHERE request_id LIKE $2), "
		"(SELECT count(*) FROM (SELECT FROM fleet.audit_log WHERE request_id LIKE $2 GROUP "
		"BY "
		"request_id HAVING count(*) > 1) d)",
		2, NULL, params, NULL, NULL, 0);
	int rc = -1;
	if (PQresultStatus(r) == PGRES_TUPLES_OK && PQntuples(r) == 1) {
		out->of_ids = strtol(PQgetvalue(r, 0, 0), NULL, 10);
		out->all = strtol(PQgetvalue(r, 0, 1), NULL, 10);
		out->doubled = strtol(PQgetvalue(r, 0, 2), NULL, 10);
		rc = 0;
	} else {
		fprintf(stderr, "it_audit_count: %s", PQerrorMessage(pg));
	}
	PQclear(r);
	PQfinish(pg);
	free(like);
	free(arr.p);
	return rc;
}

long it_log_count(const struct it_server *s, const char *needle)
{
	FILE *f = fopen(s->log_file, "r");
	if (!f)
		return -1;
	char line[4096];
	long n = 0;
	while (fgets(line, sizeof line, f))
		if (strstr(line, needle))
			n++;
	fclose(f);
	return n;
}
