/* Bounded outbound HTTP with libcurl's multi interface, driven by the calling code's loop (see
 * fetch.h for the policy): libcurl's sockets in the loop's epoll set, its timer in a hook of the
 * loop, the caller's task parked until its transfer is done (libcurl's internals document MULTI-EV
 * and curl_multi_socket_action(3) describe this use). */
#include "fetch.h"

#include <curl/curl.h>
#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <sys/epoll.h>
#include <time.h>

#include "common/log.h"
#include "common/loop.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "common/trace.h"

struct fetch_buf {
	char *p;
	size_t n;
	bool too_large;
};

static size_t fetch_collect(char *data, size_t size, size_t nmemb, void *user)
{
	struct fetch_buf *b = user;
	size_t add = size * nmemb;
	if (b->n + add > FETCH_MAX_BYTES) {
		b->too_large = true;
		return 0; /* aborts the transfer */
	}
	b->p = mem_realloc(b->p, b->n + add + 1);
	memcpy(b->p + b->n, data, add);
	b->n += add;
	b->p[b->n] = '\0';
	return add;
}

static bool fetch_loopback_host(const char *host)
{
	return strcmp(host, "127.0.0.1") == 0 || strcasecmp(host, "localhost") == 0 ||
	       strcmp(host, "[::1]") == 0;
}

/* The URL as libcurl itself reads it (new handle, or NULL when policy refuses it): the scheme,
 * host and port are judged on libcurl's own parse, the one the transfer then uses, never on a
 * prefix of the text (http://localhost:1@127.0.0.2/ is user "localhost" at 127.0.0.2). No
 * userinfo, no fragment, a host; http only to a loopback host when allowed. */
static CURLU *fetch_parse(const struct fetch_policy *p, const char *url)
{
	const char *auth = url ? strstr(url, "://") : NULL;
	if (!auth || auth[3] == '/' || strlen(url) > 2048 || strpbrk(url, " \t\r\n"))
		return NULL; /* libcurl would read https:///x as host x */
	CURLU *u = curl_url();
	char *scheme = NULL, *host = NULL, *part = NULL;
	bool ok = false;
	if (!u || curl_url_set(u, CURLUPART_URL, url, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_SCHEME, &scheme, 0) != CURLUE_OK ||
	    curl_url_get(u, CURLUPART_HOST, &host, 0) != CURLUE_OK || !*host)
		goto out;
	static const CURLUPart absent[] = {CURLUPART_USER, CURLUPART_PASSWORD, CURLUPART_OPTIONS,
					   CURLUPART_FRAGMENT};
	for (size_t i = 0; i < sizeof absent / sizeof absent[0]; i++) {
		CURLUcode rc = curl_url_get(u, absent[i], &part, 0);
		curl_free(part);
		part = NULL;
		if (rc == CURLUE_OK)
			goto out; /* present */
	}
	if (strcmp(scheme, "https") == 0)
		ok = true;
	else if (strcmp(scheme, "http") == 0)
		ok = p->allow_loopback_http && fetch_loopback_host(host);
out:
	curl_free(scheme);
	curl_free(host);
	if (!ok) {
		curl_url_cleanup(u);
		return NULL;
	}
	return u;
}

bool fetch_url_allowed(const struct fetch_policy *p, const char *url)
{
	CURLU *u = fetch_parse(p, url);
	curl_url_cleanup(u);
	return u != NULL;
}

char *fetch_form_encode(const char *s)
{
	static const char hex[] = "0123456789ABCDEF";
	size_t n = strlen(s);
	char *out = mem_alloc(3 * n + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || *p == '-' || *p == '.' || *p == '_' || *p == '~') {
			*o++ = (char)*p;
		} else {
			*o++ = '%';
			*o++ = hex[*p >> 4];
			*o++ = hex[*p & 15];
		}
	}
	*o = '\0';
	return out;
}

/* ---- the loop's multi handle ------------------------------------------------------------ */

/* What a loop keeps for its fetches (a slot of the loop, made on its first fetch): one multi
 * handle (its connections to the issuer are reused from fetch to fetch), the sockets libcurl
 * asked it to watch, and libcurl's one timer, run by the loop's hook. Touched on the loop's
 * thread only. */
struct fetch_loop {
	struct loop *loop;
	CURLM *multi;
	struct loop_hook hook;
	long long timer_at; /* CLOCK_MONOTONIC ms when libcurl wants its timeout run; 0: none */
	struct fetch_sock *socks;
};

/* A socket of a transfer, watched by the loop for libcurl. */
struct fetch_sock {
	struct loop_fd fd;
	struct fetch_loop *fl;
	struct fetch_sock *next;
};

/* One transfer, on its waiter's stack until it ends. */
struct fetch_xfer {
	struct task_wait wait;
	CURLcode rc;
	struct fetch_buf buf;
};

static const char fetch_key[] = "fetch"; /* the loop's slot */

/* Ends the transfers that are done: each one's waiter is woken (it reads its result and frees
 * its handle). After each libcurl call that may end one. */
static void fetch_reap(struct fetch_loop *fl)
{
	CURLMsg *m;
	int left;
	while ((m = curl_multi_info_read(fl->multi, &left))) {
		if (m->msg != CURLMSG_DONE)
			continue;
		CURL *e = m->easy_handle;
		char *priv = NULL;
		curl_easy_getinfo(e, CURLINFO_PRIVATE, &priv);
		struct fetch_xfer *x = (struct fetch_xfer *)priv;
		x->rc = m->data.result; /* m is libcurl's until the handle is removed */
		curl_multi_remove_handle(fl->multi, e);
		task_wake(&x->wait);
	}
}

static void fetch_act(struct fetch_loop *fl, curl_socket_t s, int flags)
{
	int running;
	curl_multi_socket_action(fl->multi, s, flags, &running);
	fetch_reap(fl);
}

static void fetch_ready(struct loop_fd *f, uint32_t events)
{
	struct fetch_sock *fs = (struct fetch_sock *)((char *)f - offsetof(struct fetch_sock, fd));
	int flags = (events & EPOLLIN ? CURL_CSELECT_IN : 0) |
		    (events & EPOLLOUT ? CURL_CSELECT_OUT : 0) |
		    (events & (EPOLLERR | EPOLLHUP) ? CURL_CSELECT_ERR : 0);
	fetch_act(fs->fl, f->fd, flags);
}

/* CURLMOPT_SOCKETFUNCTION: what to watch on s changed. */
static int fetch_socket(CURL *e, curl_socket_t s, int what, void *clientp, void *socketp)
{
	(void)e;
	struct fetch_loop *fl = clientp;
	struct fetch_sock *fs = socketp;
	if (what == CURL_POLL_REMOVE) {
		if (!fs)
			return 0;
		loop_unwatch(fl->loop, &fs->fd);
		for (struct fetch_sock **p = &fl->socks; *p; p = &(*p)->next)
			if (*p == fs) {
				*p = fs->next;
				break;
			}
		free(fs);
		return 0;
	}
	if (!fs) {
		fs = mem_calloc(1, sizeof *fs);
		fs->fd = (struct loop_fd){.fd = s, .ready = fetch_ready};
		fs->fl = fl;
		fs->next = fl->socks;
		fl->socks = fs;
		curl_multi_assign(fl->multi, s, fs);
	}
	uint32_t ev = (what & CURL_POLL_IN ? EPOLLIN : 0) | (what & CURL_POLL_OUT ? EPOLLOUT : 0);
	if (loop_watch(fl->loop, &fs->fd, ev) != 0) {
		log_error("fetch: cannot watch a socket: %s", strerror(errno));
		return -1; /* libcurl fails the transfers: their waiters answer "unavailable" */
	}
	return 0;
}

/* CURLMOPT_TIMERFUNCTION: libcurl's one timer, run by the loop's hook (never from here). */
static int fetch_timer(CURLM *m, long timeout_ms, void *clientp)
{
	(void)m;
	struct fetch_loop *fl = clientp;
	fl->timer_at = timeout_ms < 0 ? 0 : loop_now_ms() + timeout_ms;
	return 0;
}

static long long fetch_due(struct loop_hook *h, long long now)
{
	struct fetch_loop *fl =
		(struct fetch_loop *)((char *)h - offsetof(struct fetch_loop, hook));
	if (fl->timer_at && now >= fl->timer_at) {
		fl->timer_at = 0;
		fetch_act(fl, CURL_SOCKET_TIMEOUT, 0);
	}
	return fl->timer_at;
}

/* The loop is freed: no transfer is under way (each one's waiter holds the loop's thread). */
static void fetch_end(struct loop_hook *h)
{
	struct fetch_loop *fl =
		(struct fetch_loop *)((char *)h - offsetof(struct fetch_loop, hook));
	curl_multi_cleanup(fl->multi); /* its cached connections close: their sockets go */
	while (fl->socks) {
		struct fetch_sock *fs = fl->socks;
		fl->socks = fs->next;
		free(fs);
	}
	free(fl);
}

/* The calling code's loop's (task_loop()), made on first use. */
static struct fetch_loop *fetch_loop_here(void)
{
	struct loop *l = task_loop();
	struct fetch_loop *fl = loop_get(l, fetch_key);
	if (fl)
		return fl;
	fl = mem_calloc(1, sizeof *fl);
	fl->loop = l;
	fl->multi = curl_multi_init();
	if (!fl->multi) {
		log_error("fetch: libcurl has no multi handle (out of memory)");
		abort(); /* the one out-of-memory policy */
	}
	curl_multi_setopt(fl->multi, CURLMOPT_SOCKETFUNCTION, fetch_socket);
	curl_multi_setopt(fl->multi, CURLMOPT_SOCKETDATA, fl);
	curl_multi_setopt(fl->multi, CURLMOPT_TIMERFUNCTION, fetch_timer);
	curl_multi_setopt(fl->multi, CURLMOPT_TIMERDATA, fl);
	fl->hook = (struct loop_hook){.due = fetch_due, .end = fetch_end};
	loop_hook(l, &fl->hook);
	loop_set(l, fetch_key, fl);
	return fl;
}

/* ---- its account ------------------------------------------------------------------------- */

char *fetch_url_redacted(const char *url)
{
	const char *q = strchr(url, '?');
	char *out = mem_alloc(strlen(url) * 5 + 16), *o = out;
	size_t head = q ? (size_t)(q - url) + 1 : strlen(url);
	memcpy(o, url, head);
	o += head;
	for (const char *p = q ? q + 1 : ""; *p;) {
		size_t n = strcspn(p, "&"), k = strcspn(p, "=&");
		memcpy(o, p, k < n ? k + 1 : n); /* the name, and "=" when a value follows */
		o += k < n ? k + 1 : n;
		if (k < n) {
			memcpy(o, "REDACTED", 8);
			o += 8;
		}
		p += n;
		if (*p == '&')
			*o++ = *p++;
	}
	*o = '\0';
	return out;
}

/* error.type of a transfer that ended with rc (and the answer's status code, 0: none): the
 * status code of an answer of 400 or more, a word for a transfer that failed, else NULL. */
static const char *fetch_error_type(CURLcode rc, bool too_large, long code, char buf[8])
{
	if (too_large || rc == CURLE_FILESIZE_EXCEEDED)
		return "response_too_large";
	if (rc == CURLE_OK && code < 400)
		return NULL;
	if (rc == CURLE_OK) {
		snprintf(buf, 8, "%ld", code);
		return buf;
	}
	switch (rc) {
	case CURLE_OPERATION_TIMEDOUT: return "timeout";
	case CURLE_COULDNT_RESOLVE_HOST: return "name_resolution";
	case CURLE_COULDNT_CONNECT: return "connection_refused";
	case CURLE_PEER_FAILED_VERIFICATION:
	case CURLE_SSL_CONNECT_ERROR: return "tls";
	default: return "_OTHER"; /* the conventions' word for the others */
	}
}

/* A transfer's span attributes and its http.client.request.duration observation. */
static void fetch_account(struct trace_span *span, CURLU *u, const char *method, const char *what,
			  const struct fetch_xfer *x, long code, double seconds)
{
	char *host = NULL, *port = NULL, ebuf[8], status[8] = "";
	curl_url_get(u, CURLUPART_HOST, &host, 0);
	curl_url_get(u, CURLUPART_PORT, &port, CURLU_DEFAULT_PORT);
	const char *error = fetch_error_type(x->rc, x->buf.too_large, code, ebuf);
	if (code)
		snprintf(status, sizeof status, "%ld", code);
	const char *labels[] = {method, host ? host : "", port ? port : "", status,
				error ? error : ""};
	metrics_observe(&metrics_http_client_seconds, labels, seconds);
	if (span) {
		trace_str(span, "http.request.method", method);
		char *url = NULL, *full = NULL;
		if (curl_url_get(u, CURLUPART_URL, &url, 0) == CURLUE_OK)
			full = fetch_url_redacted(url);
		trace_str(span, "url.full", full);
		free(full);
		curl_free(url);
		trace_str(span, "server.address", host);
		trace_int(span, "server.port", port ? strtol(port, NULL, 10) : 0);
		if (code)
			trace_int(span, "http.response.status_code", code);
		trace_str(span, "error.type", error);
		if (error)
			trace_fail(span, NULL);
		trace_str(span, "bikaroo.auth.fetch", what);
	}
	curl_free(host);
	curl_free(port);
}

static double fetch_seconds(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + (double)ts.tv_nsec / 1e9;
}

/* ---- one fetch ------------------------------------------------------------------------------ */

enum fetch_status fetch_http(const struct fetch_policy *p, const char *url, const char *form,
			     const char *user, const char *password, struct fetch_note *note,
			     char **body, long *http_code)
{
	*body = NULL;
	*http_code = 0;
	note->span = (struct trace_ctx){0};
	const char *method = form ? "POST" : "GET";
	struct trace_span *span = NULL;
	double t0 = 0;
	bool sent = false; /* the transfer was handed to libcurl: it is accounted for */
	enum fetch_status st = FETCH_UNAVAILABLE;
	struct fetch_xfer x = {0};
	struct curl_slist *h = NULL;
	CURL *c = NULL;
	CURLU *u = fetch_parse(p, url);
	if (!u)
		return FETCH_REFUSED_URL;
	c = curl_easy_init();
	if (!c)
		goto out;
	h = curl_slist_append(NULL, "Accept: application/json");
	curl_easy_setopt(c, CURLOPT_CURLU, u); /* what fetch_parse judged, not the text again */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, p->allow_loopback_http ? "http,https" : "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* threads: no SIGALRM for timeouts */
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)FETCH_MAX_BYTES);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fetch_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &x.buf);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "bikaroo-mcp");
	curl_easy_setopt(c, CURLOPT_PRIVATE, (char *)&x);
	if (form)
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, form);
	if (user) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERNAME, user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, password ? password : "");
	}
	struct fetch_loop *fl = fetch_loop_here();
	task_wait_init(&x.wait);
	span = trace_child(trace_current(), method, TRACE_CLIENT, 0);
	note->span = trace_ctx_of(span);
	t0 = fetch_seconds();
	sent = true;
	if (curl_multi_add_handle(fl->multi, c) != CURLM_OK) {
		x.rc = CURLE_FAILED_INIT;
		goto out;
	}
	task_wait(&x.wait); /* fetch_reap ends it, within p->timeout_ms */
	if (x.buf.too_large || x.rc == CURLE_FILESIZE_EXCEEDED) {
		st = FETCH_TOO_LARGE;
	} else if (x.rc == CURLE_OK) {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, http_code);
		if (*http_code >= 200 && *http_code < 300)
			st = FETCH_OK;
		else if (*http_code < 500)
			st = FETCH_HTTP_ERROR;
	}
out:
	if (sent) {
		fetch_account(span, u, method, note->purpose, &x, *http_code, fetch_seconds() - t0);
		trace_keep(trace_current(), span, 0);
	}
	if (st == FETCH_OK)
		*body = x.buf.p ? x.buf.p : mem_strdup("");
	else
		free(x.buf.p);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	curl_url_cleanup(u);
	return st;
}
