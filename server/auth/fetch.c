/* Bounded outbound HTTP with libcurl (see fetch.h for the policy). */
#include "fetch.h"

#include <curl/curl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/mem.h"

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

enum fetch_status fetch_http(const struct fetch_policy *p, const char *url, const char *form,
			     const char *user, const char *password, char **body, long *http_code)
{
	*body = NULL;
	*http_code = 0;
	CURLU *u = fetch_parse(p, url);
	if (!u)
		return FETCH_REFUSED_URL;
	CURL *c = curl_easy_init();
	if (!c) {
		curl_url_cleanup(u);
		return FETCH_UNAVAILABLE;
	}
	struct fetch_buf b = {0};
	struct curl_slist *h = curl_slist_append(NULL, "Accept: application/json");
	curl_easy_setopt(c, CURLOPT_CURLU, u); /* what fetch_parse judged, not the text again */
	curl_easy_setopt(c, CURLOPT_PROTOCOLS_STR, p->allow_loopback_http ? "http,https" : "https");
	curl_easy_setopt(c, CURLOPT_FOLLOWLOCATION, 0L);
	curl_easy_setopt(c, CURLOPT_NOSIGNAL, 1L); /* worker threads: no SIGALRM for timeouts */
	curl_easy_setopt(c, CURLOPT_TIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_CONNECTTIMEOUT_MS, p->timeout_ms);
	curl_easy_setopt(c, CURLOPT_MAXFILESIZE_LARGE, (curl_off_t)FETCH_MAX_BYTES);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, fetch_collect);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, &b);
	curl_easy_setopt(c, CURLOPT_USERAGENT, "bikaroo-mcp");
	if (form) {
		curl_easy_setopt(c, CURLOPT_POSTFIELDS, form);
	}
	if (user) {
		curl_easy_setopt(c, CURLOPT_HTTPAUTH, (long)CURLAUTH_BASIC);
		curl_easy_setopt(c, CURLOPT_USERNAME, user);
		curl_easy_setopt(c, CURLOPT_PASSWORD, password ? password : "");
	}
	CURLcode rc = curl_easy_perform(c);
	enum fetch_status st;
	if (b.too_large || rc == CURLE_FILESIZE_EXCEEDED) {
		st = FETCH_TOO_LARGE;
	} else if (rc != CURLE_OK) {
		st = FETCH_UNAVAILABLE;
	} else {
		curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, http_code);
		if (*http_code >= 200 && *http_code < 300)
			st = FETCH_OK;
		else if (*http_code >= 500)
			st = FETCH_UNAVAILABLE;
		else
			st = FETCH_HTTP_ERROR;
	}
	if (st == FETCH_OK)
		*body = b.p ? b.p : mem_strdup("");
	else
		free(b.p);
	curl_slist_free_all(h);
	curl_easy_cleanup(c);
	curl_url_cleanup(u);
	return st;
}
