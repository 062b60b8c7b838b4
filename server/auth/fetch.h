/* Outbound HTTP for the authorization module (issuer metadata, JWKS, introspection), with
 * libcurl: https only (http only to a loopback host when the test configuration allows it),
 * no redirects, short timeouts, a response size cap. Never called with a URL a client chose.
 *
 * A fetch waits the way a call waits: its transfer runs in libcurl's multi interface driven by
 * the calling code's loop (common/loop.h), its sockets in that loop's epoll set and its timer in
 * that loop's hooks, while the caller's task is parked (common/task.h); a thread that serves no
 * loop turns its private loop meanwhile. Nothing else on the loop waits for it. A serving loop's
 * thread outside a task cannot fetch (task_wait aborts): run the code that fetches as a task. */
#ifndef BIKAROO_FETCH_H
#define BIKAROO_FETCH_H

#include <stdbool.h>
#include <stddef.h>

#include "common/span.h"

enum fetch_status {
	FETCH_OK = 0,
	FETCH_REFUSED_URL, /* scheme or host not allowed by policy */
	FETCH_UNAVAILABLE, /* connection failed, timed out, or a 5xx answer */
	FETCH_HTTP_ERROR,  /* a 4xx (or other non-2xx, non-5xx) answer */
	FETCH_TOO_LARGE,   /* the answer passed FETCH_MAX_BYTES */
};

#define FETCH_MAX_BYTES ((size_t)256 * 1024)

struct fetch_policy {
	bool allow_loopback_http; /* test configuration only */
	long timeout_ms;          /* whole transfer */
};

/* True when url may be fetched under policy (absolute https URL, or http to 127.0.0.1,
 * localhost or [::1] when allowed). */
bool fetch_url_allowed(const struct fetch_policy *p, const char *url);

/* A fetch's account: what it was for (in: static text, its span's bikaroo.auth.fetch) and the
 * context of its span (out: invalid when it was not recorded). */
struct fetch_note {
	const char *purpose; /* "metadata", "keys" or "introspection" */
	struct trace_ctx span;
};

/* GET url; on FETCH_OK *body is new memory (caller frees, NUL-terminated) and *http_code set.
 * form (may be NULL): POSTs it as application/x-www-form-urlencoded instead. user/password
 * (may be NULL): HTTP Basic credentials (already form-encoded as RFC 6749 2.3.1 wants). The one
 * place where an outbound transfer starts and ends; it waits through the caller's loop (above),
 * at most p->timeout_ms. Each transfer is timed in http.client.request.duration and, when the
 * calling task runs in a span (trace_current), recorded as its CLIENT child under OpenTelemetry's
 * HTTP client conventions, kept with it (trace_keep): the URL with its query values redacted,
 * never the form or the credentials. */
enum fetch_status fetch_http(const struct fetch_policy *p, const char *url, const char *form,
			     const char *user, const char *password, struct fetch_note *note,
			     char **body, long *http_code) __attribute__((warn_unused_result));

/* url as a span's url.full may show it: every query value replaced by REDACTED, as the HTTP
 * conventions do for the ones they know to be secret (a URL an issuer published may carry a
 * signature or a key there); new string. */
char *fetch_url_redacted(const char *url);

/* Percent-encodes s for an application/x-www-form-urlencoded value (new string). */
char *fetch_form_encode(const char *s);

#endif
