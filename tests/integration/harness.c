/* Integration-test harness: real binary, real PostgreSQL, real HTTP (libcurl). */
#include "harness.h"

#include <curl/curl.h>
#include <errno.h>
#include <libpq-fe.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
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
	if (WIFEXITED(status) && WEXITSTATUS(status) == 0)
		unlink(s->log_file);
	else
		it_log_tail(s->log_file);
	return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
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

void it_http(unsigned port, const char *method, const char *path, const char *const *headers,
	     const char *body, size_t body_len, struct it_response *r)
{
	memset(r, 0, sizeof *r);
	CURL *c = curl_easy_init();
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
	curl_easy_cleanup(c);
}

void it_mcp(unsigned port, const char *method, const char *name, const char *params,
	    struct it_response *r)
{
	char mh[128], nh[512];
	snprintf(mh, sizeof mh, "Mcp-Method: %s", method);
	snprintf(nh, sizeof nh, "Mcp-Name: %s", name ? name : "");
	const char *headers[] = {"Content-Type: application/json",
				 "Accept: application/json, text/event-stream",
				 "MCP-Protocol-Version: 2026-07-28",
				 mh,
				 name ? nh : NULL,
				 NULL};
	char *body = mem_printf(
		"{\"jsonrpc\":\"2.0\",\"id\":42,\"method\":\"%s\",\"params\":{%s%s\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}",
		method, params, *params ? "," : "");
	it_http(port, "POST", "/mcp", headers, body, strlen(body), r);
	free(body);
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
