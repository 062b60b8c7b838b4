/* The change feed for the protocol core (see change_feed.h): each sink follows the domain's
 * changes (domain/changes.h) as its own listener, which maps entity keys to resource URIs. */
#include "change_feed.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "adapter.h"
#include "common/log.h"
#include "common/mem.h"
#include "domain/case_tasks.h"
#include "domain/changes.h"
#include "server/protocol/tasks.h"

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

/* A task's step changed: read it (whoever owns it), and its owner's listens that named it hear
 * of it. */
static void feed_task(struct mcp_change_sink *sink, const char *id)
{
	struct case_task f;
	enum fleet_status st = case_tasks_notice(id, &f);
	if (st == FLEET_OK) {
		struct mcp_task t;
		adapter_task(&f, &t);
		json_t *detail = mcp_task_detail(&t);
		mcp_task_clear(&t);
		struct mcp_task_change tc = {
			.id = f.id, .subject = f.subject, .client = f.client, .detail = detail};
		sink->changed(&(struct mcp_change){.task = &tc}, sink->arg);
		json_decref(detail);
	} else if (st != FLEET_NOT_FOUND) {
		log_warn("change feed: task %.40s not read (%s)", id, fleet_status_name(st));
	}
	case_tasks_free(&f);
}

/* A domain change as the protocol sees it, for one sink: the URI of the resource showing the
 * entity, or whose rights changed; NULL stays a gap. */
static void feed_tell(const struct change *c, void *arg)
{
	struct mcp_change_sink *sink = arg;
	if (!c) {
		sink->changed(NULL, sink->arg);
		return;
	}
	char uri[512];
	struct mcp_change mc = {.subject = c->subject, .client = c->client};
	if (c->entity && strncmp(c->entity, "task:", 5) == 0) {
		feed_task(sink, c->entity + 5);
		return;
	}
	if (c->entity) {
		if (!feed_uri_of(c->entity, uri, sizeof uri)) {
			log_warn("change feed: no resource shows %.64s", c->entity);
			return;
		}
		mc.uri = uri;
	}
	sink->changed(&mc, sink->arg);
}

static void feed_tick(void *arg)
{
	struct mcp_change_sink *sink = arg;
	if (sink->tick)
		sink->tick(sink->arg);
}

static void feed_add(struct mcp_change_sink *s)
{
	struct changes_listener *l = mem_calloc(1, sizeof *l);
	*l = (struct changes_listener){.changed = feed_tell, .tick = feed_tick, .arg = s};
	if (!changes_follow(l))
		free(l); /* added before */
}

static void feed_remove(struct mcp_change_sink *s)
{
	free(changes_unfollow(s));
}

const struct mcp_change_feed change_feed = {.add = feed_add, .remove = feed_remove};
