/* subscriptions/listen over HTTP (2026-07-28) with the real server and a libcurl client that
 * keeps the stream open: the acknowledgement first, updates from PostgreSQL's change feed
 * tagged with the listen id, only for honoured URIs, and the request's result when the server
 * stops while the client is still listening, or when the caller's rights change. */
#include <check.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/mem.h"
#include "harness.h"
#include "tests/check_main.h"

#define LISTEN_BIKE "bikaroo://fleet/bikes/VL-2069"  /* FR-PAR, used by no other test */
#define LISTEN_OTHER "bikaroo://fleet/bikes/VL-2072" /* FR-PAR */
#define LISTEN_TOUCH(bike)                                                                         \
	"UPDATE fleet.bikes SET battery_pct = (coalesce(battery_pct, 0) + 1) % 100 WHERE bike_id " \
	"= "                                                                                       \
	"'" bike "'"

/* One client holding a listen stream on its own thread. */
struct listener {
	unsigned port;
	const char *stop_at; /* end the transfer once the stream holds this text (NULL: never) */
	pthread_mutex_t lock;
	char *got;
	size_t len;
	bool done;
	CURLcode rc;
	long status;
};

static size_t listener_write(char *p, size_t size, size_t n, void *arg)
{
	struct listener *l = arg;
	pthread_mutex_lock(&l->lock);
	l->got = mem_realloc(l->got, l->len + size * n + 1);
	memcpy(l->got + l->len, p, size * n);
	l->len += size * n;
	l->got[l->len] = '\0';
	bool stop = l->stop_at && strstr(l->got, l->stop_at);
	pthread_mutex_unlock(&l->lock);
	return stop ? 0 : size * n; /* 0 ends the transfer: the client closes the stream */
}

static void *listener_run(void *arg)
{
	struct listener *l = arg;
	char url[64];
	snprintf(url, sizeof url, "http://127.0.0.1:%u/mcp", l->port);
	struct curl_slist *h = NULL;
	h = curl_slist_append(h, "Content-Type: application/json");
	h = curl_slist_append(h, "Accept: application/json, text/event-stream");
	h = curl_slist_append(h, "MCP-Protocol-Version: 2026-07-28");
	h = curl_slist_append(h, "Mcp-Method: subscriptions/listen");
	const char *body =
		"{\"jsonrpc\":\"2.0\",\"id\":\"w1\",\"method\":\"subscriptions/"
		"listen\",\"params\":{"
		"\"notifications\":{\"promptsListChanged\":true,\"resourceSubscriptions\":["
		"\"" LISTEN_BIKE "\",\"bikaroo://fleet/bikes/VL-2047\"]},\"_meta\":{"
		"\"io.modelcontextprotocol/protocolVersion\":\"2026-07-28\","
		"\"io.modelcontextprotocol/clientCapabilities\":{}}}}";
	CURL *c = curl_easy_init();
	curl_easy_setopt(c, CURLOPT_URL, url);
	curl_easy_setopt(c, CURLOPT_HTTPHEADER, h);
	curl_easy_setopt(c, CURLOPT_POSTFIELDS, body);
	curl_easy_setopt(c, CURLOPT_WRITEFUNCTION, listener_write);
	curl_easy_setopt(c, CURLOPT_WRITEDATA, l);
	curl_easy_setopt(c, CURLOPT_TIMEOUT, 60L);
	CURLcode rc = curl_easy_perform(c);
	long status = 0;
	curl_easy_getinfo(c, CURLINFO_RESPONSE_CODE, &status);
	curl_easy_cleanup(c);
	curl_slist_free_all(h);
	pthread_mutex_lock(&l->lock);
	l->rc = rc;
	l->status = status;
	l->done = true;
	pthread_mutex_unlock(&l->lock);
	return NULL;
}

/* Waits (bounded) until the stream holds text; returns whether it does. */
static bool listener_wait(struct listener *l, const char *text)
{
	for (int i = 0; i < 3000; i++) {
		pthread_mutex_lock(&l->lock);
		bool found = l->got && strstr(l->got, text);
		bool done = l->done;
		pthread_mutex_unlock(&l->lock);
		if (found)
			return true;
		if (done)
			return false;
		struct timespec ts = {0, 10 * 1000 * 1000};
		nanosleep(&ts, NULL);
	}
	return false;
}

/* Whether the stream holds text now. */
static bool listener_has(struct listener *l, const char *text)
{
	pthread_mutex_lock(&l->lock);
	bool found = l->got && strstr(l->got, text);
	pthread_mutex_unlock(&l->lock);
	return found;
}

static void listener_start(struct listener *l, pthread_t *t, unsigned port, const char *stop_at)
{
	*l = (struct listener){.port = port, .stop_at = stop_at};
	pthread_mutex_init(&l->lock, NULL);
	pthread_create(t, NULL, listener_run, l);
}

static void listener_free(struct listener *l)
{
	free(l->got);
	pthread_mutex_destroy(&l->lock);
}

#define ACK "\"method\":\"notifications/subscriptions/acknowledged\""

START_TEST(listen_stream_over_http)
{
	struct it_server s;
	ck_assert_int_eq(it_server_start(&s, NULL), 0);
	struct listener l;
	pthread_t t;
	/* The client leaves once it has seen the update for the bike it listens to. */
	listener_start(&l, &t, s.port, "\"uri\":\"" LISTEN_BIKE "\"");
	ck_assert_msg(listener_wait(&l, ACK), "no acknowledgement: %s", l.got ? l.got : "");
	free(it_sql(LISTEN_TOUCH("VL-2072"))); /* not subscribed */
	free(it_sql(LISTEN_TOUCH("VL-2069")));
	pthread_join(t, NULL);
	/* The ack came first, with the subset honoured: the readable URI only, no list changes. */
	const char *ack = strstr(l.got, ACK);
	ck_assert_ptr_nonnull(ack);
	ck_assert(strncmp(l.got, "event: message\ndata: ", 21) == 0 && ack - l.got < 40);
	ck_assert_ptr_nonnull(strstr(
		l.got, "\"notifications\":{\"resourceSubscriptions\":[\"" LISTEN_BIKE "\"]}"));
	ck_assert_ptr_null(strstr(l.got, "promptsListChanged"));
	ck_assert_ptr_null(strstr(l.got, "VL-2047"));
	ck_assert_ptr_null(strstr(l.got, LISTEN_OTHER));
	const char *upd = strstr(l.got, "\"method\":\"notifications/resources/updated\"");
	ck_assert_ptr_nonnull(upd);
	ck_assert_ptr_nonnull(strstr(upd, "\"io.modelcontextprotocol/subscriptionId\":\"w1\""));
	listener_free(&l);

	/* A client still listening when the server stops gets the request's result, and the
	 * stream ends cleanly; the server exits 0. */
	listener_start(&l, &t, s.port, NULL);
	ck_assert(listener_wait(&l, ACK));
	ck_assert_int_eq(it_server_stop(&s), 0);
	pthread_join(t, NULL);
	ck_assert_int_eq(l.rc, CURLE_OK);
	ck_assert_int_eq(l.status, 200);
	ck_assert_ptr_nonnull(
		strstr(l.got, "\"id\":\"w1\",\"result\":{\"resultType\":\"complete\""));
	listener_free(&l);
}
END_TEST

#define RESULT "\"id\":\"w1\",\"result\":{\"resultType\":\"complete\""

/* Starts a server (extra env) and a client that listens until the stream ends, acknowledged. */
static void listen_open(struct it_server *s, const char *const *env, struct listener *l,
			pthread_t *t)
{
	ck_assert_int_eq(it_server_start(s, env), 0);
	listener_start(l, t, s->port, NULL);
	ck_assert_msg(listener_wait(l, ACK), "no acknowledgement");
}

START_TEST(listen_ends_when_the_callers_rights_change)
{
	free(it_sql(IT_RIGHTS_SETUP));
	const char *env[] = {"BIKAROO_LOCAL_SUBJECT=rights-probe", NULL};
	struct it_server s;
	struct listener l;
	pthread_t t;
	listen_open(&s, env, &l, &t);
	ck_assert(listener_has(&l, "\"resourceSubscriptions\":[\"" LISTEN_BIKE "\"]"));
	/* Someone else's rights change: this stream goes on (the update after it still comes). */
	free(it_sql("INSERT INTO fleet.principal_regions VALUES ('rights-bystander', 'BE-BRU')"));
	free(it_sql(LISTEN_TOUCH("VL-2069")));
	ck_assert_msg(listener_wait(&l, "\"uri\":\"" LISTEN_BIKE "\""), "no update");
	ck_assert(!listener_has(&l, RESULT));
	/* The caller loses FR-PAR: the stream ends with the request's result. */
	free(it_sql("DELETE FROM fleet.principal_regions WHERE subject = 'rights-probe'"));
	pthread_join(t, NULL);
	ck_assert_int_eq(l.rc, CURLE_OK);
	ck_assert_int_eq(l.status, 200);
	ck_assert_msg(strstr(l.got, RESULT) != NULL, "no result: %s", l.got);
	listener_free(&l);
	/* Listening again, the bike is no longer honoured: it is outside the new perimeter. */
	listener_start(&l, &t, s.port, NULL);
	ck_assert(listener_wait(&l, ACK));
	ck_assert(!listener_has(&l, LISTEN_BIKE));
	ck_assert_int_eq(it_server_stop(&s), 0);
	pthread_join(t, NULL);
	listener_free(&l);
	free(it_sql(IT_RIGHTS_TEARDOWN));
}
END_TEST

/* After a gap in the change feed anything may have changed, rights included: the stream is
 * told its URI was updated, then ends with the request's result (the client listens again). */
START_TEST(listen_ends_after_a_gap_in_the_feed)
{
	struct it_server s;
	struct listener l;
	pthread_t t;
	listen_open(&s, NULL, &l, &t);
	char *cut = it_sql(IT_CUT_FEED);
	ck_assert_str_eq(cut, "1");
	free(cut);
	pthread_join(t, NULL);
	ck_assert_int_eq(l.rc, CURLE_OK);
	ck_assert_int_eq(l.status, 200);
	const char *upd = strstr(l.got, "\"uri\":\"" LISTEN_BIKE "\"");
	const char *end = strstr(l.got, RESULT);
	ck_assert_msg(upd && end && upd < end, "no update, then result: %s", l.got);
	listener_free(&l);
	/* The feed is back: a new listen hears changes again. */
	listener_start(&l, &t, s.port, "\"uri\":\"" LISTEN_BIKE "\"");
	ck_assert(listener_wait(&l, ACK));
	free(it_sql(LISTEN_TOUCH("VL-2069")));
	pthread_join(t, NULL);
	ck_assert_msg(strstr(l.got, "\"uri\":\"" LISTEN_BIKE "\"") != NULL, "%s", l.got);
	listener_free(&l);
	ck_assert_int_eq(it_server_stop(&s), 0);
}
END_TEST

CHECK_SUITE(listen)
{
	Suite *s = suite_create("listen");
	TCase *tc = tcase_create("subscriptions/listen over HTTP");
	tcase_set_timeout(tc, 120);
	tcase_add_test(tc, listen_stream_over_http);
	tcase_add_test(tc, listen_ends_when_the_callers_rights_change);
	tcase_add_test(tc, listen_ends_after_a_gap_in_the_feed);
	suite_add_tcase(s, tc);
	return s;
}
