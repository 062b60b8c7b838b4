/* The resource change feed's follower (see feed.h). */
#include "change_feed.h"

#include <errno.h>
#include <stdio.h>
#include <poll.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "domain/changes.h"

static pthread_mutex_t feed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mcp_change_sink *feed_sinks;
static struct changes *feed_changes; /* opened by the first feed_add, then the thread's */
static bool feed_running;
static pthread_t feed_thread;
static int feed_wake[2];
/* Sinks are ticked every second: each decides what is due (keep-alives, expiries). */
#define FEED_TICK_SECONDS 1

/* Tells every sink of one change (NULL: a gap), as the protocol sees it. */
static void feed_tell_all(const struct mcp_change *c)
{
	pthread_mutex_lock(&feed_lock);
	for (struct mcp_change_sink *s = feed_sinks; s; s = s->next)
		s->changed(c, s->arg);
	pthread_mutex_unlock(&feed_lock);
}

/* Which resource shows which entity: a key prefix (with an id after it) or a whole key. */
static const struct {
	const char *key;
	bool prefix;
	const char *uri;
} feed_resources[] = {
	{"bike:", true, "bikaroo://fleet/bikes/"},
	{"case:", true, "bikaroo://cases/"},
	{"status_codes", false, "bikaroo://fleet/status-codes"},
};

/* The URI of the resource that shows entity, into buf; false for an entity no resource shows. */
static bool feed_uri_of(const char *entity, char *buf, size_t cap)
{
	for (size_t i = 0; i < sizeof feed_resources / sizeof feed_resources[0]; i++) {
		size_t n = strlen(feed_resources[i].key);
		if (feed_resources[i].prefix
			    ? strncmp(entity, feed_resources[i].key, n) != 0 || !entity[n]
			    : strcmp(entity, feed_resources[i].key) != 0)
			continue;
		const char *id = feed_resources[i].prefix ? entity + n : "";
		return (size_t)snprintf(buf, cap, "%s%s", feed_resources[i].uri, id) < cap;
	}
	return false;
}

/* A domain change as the protocol sees it: the URI of the resource showing the entity, or whose
 * rights changed. */
static void feed_tell(const struct change *c, void *arg)
{
	(void)arg;
	char uri[512];
	struct mcp_change mc = {.subject = c->subject, .client = c->client};
	if (c->entity) {
		if (!feed_uri_of(c->entity, uri, sizeof uri)) {
			log_warn("change feed: no resource shows %.64s", c->entity);
			return;
		}
		mc.uri = uri;
	}
	feed_tell_all(&mc);
}

static void feed_tick(void)
{
	pthread_mutex_lock(&feed_lock);
	for (struct mcp_change_sink *s = feed_sinks; s; s = s->next)
		if (s->tick)
			s->tick(s->arg);
	pthread_mutex_unlock(&feed_lock);
}

static void *feed_run(void *arg)
{
	(void)arg;
	struct changes *ch = feed_changes;
	bool gap = !ch;
	time_t last_tick = time(NULL);
	for (;;) {
		if (!ch && (ch = changes_open()) != NULL && gap) {
			log_info("change feed back: subscribers are told to read again");
			feed_tell_all(NULL);
		}
		struct pollfd p[2] = {{.fd = feed_wake[0], .events = POLLIN},
				      {.fd = ch ? changes_fd(ch) : -1, .events = POLLIN}};
		/* Without a feed, try again every second. */
		if (poll(p, 2, ch ? 1000 * FEED_TICK_SECONDS : 1000) < 0 && errno != EINTR)
			break;
		if (p[0].revents)
			break;
		if (ch && p[1].revents && changes_drain(ch, feed_tell, NULL) != 0) {
			log_warn("change feed lost; reconnecting");
			changes_close(ch);
			ch = NULL;
			gap = true;
		}
		if (time(NULL) - last_tick >= FEED_TICK_SECONDS) {
			last_tick = time(NULL);
			feed_tick();
		}
	}
	changes_close(ch);
	return NULL;
}

static void feed_add(struct mcp_change_sink *s)
{
	pthread_mutex_lock(&feed_lock);
	bool known = false;
	for (struct mcp_change_sink *k = feed_sinks; k && !known; k = k->next)
		known = k == s;
	if (!known) {
		s->next = feed_sinks;
		feed_sinks = s;
	}
	/* Created from a worker, the thread inherits its blocked SIGINT/SIGTERM. */
	if (!feed_running && pipe(feed_wake) == 0) {
		feed_changes = changes_open();
		feed_running = pthread_create(&feed_thread, NULL, feed_run, NULL) == 0;
		if (!feed_running) {
			changes_close(feed_changes);
			close(feed_wake[0]);
			close(feed_wake[1]);
		}
	}
	pthread_mutex_unlock(&feed_lock);
}

static void feed_remove(struct mcp_change_sink *s)
{
	pthread_mutex_lock(&feed_lock);
	for (struct mcp_change_sink **p = &feed_sinks; *p; p = &(*p)->next)
		if (*p == s) {
			*p = s->next;
			break;
		}
	pthread_mutex_unlock(&feed_lock);
}

void change_feed_stop(void)
{
	pthread_mutex_lock(&feed_lock);
	bool running = feed_running;
	feed_running = false;
	pthread_mutex_unlock(&feed_lock);
	if (!running)
		return;
	if (write(feed_wake[1], "x", 1) != 1)
		log_warn("cannot stop the change feed: %s", strerror(errno));
	pthread_join(feed_thread, NULL);
	close(feed_wake[0]);
	close(feed_wake[1]);
}

const struct mcp_change_feed change_feed = {.add = feed_add, .remove = feed_remove};
