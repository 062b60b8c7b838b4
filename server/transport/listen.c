/* Subscriptions held open by a transport (see listen.h). Locks: the feed's (it calls the sink),
 * then the hub's; the transport's own locks are taken inside its callbacks only. Tokens that
 * wake a connection are collected under the hub's lock and used after it is released. */
#include "listen.h"

#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"

#define LISTEN_SUB_ID "io.modelcontextprotocol/subscriptionId"

struct listen_entry {
	json_t *id; /* the listen request's id; NULL: a 2025-era subscription set */
	char **uris;
	size_t n, cap;
	json_t *tasks; /* the task ids its acknowledgement names (an array), or NULL */
	char subject[FLEET_ID_MAX], client_id[FLEET_ID_MAX];
	long expires_at; /* the caller's token's exp: the subscription ends then (0: never) */
	const struct listen_out_ops *ops;
	void *out;
	struct listen_entry *next;
};

/* Tokens to kick once the hub is unlocked. */
struct listen_kick {
	void (*kick)(void *token);
	void *token;
};

struct listen_kicks {
	struct listen_kick *k; /* owned */
	size_t n, cap;
};

struct listen_hub {
	pthread_mutex_t lock; /* guards what follows */
	struct listen_entry *entries;
	size_t nlistens, max, per_subject;
	long keepalive_s, last_ping;
	bool closed;
	const struct mcp_change_feed *feed;
	struct mcp_change_sink sink;
	bool joined;
};

/* Kicks what was collected (the hub unlocked). */
static void listen_kick_all(struct listen_kicks *ks)
{
	for (size_t i = 0; i < ks->n; i++)
		ks->k[i].kick(ks->k[i].token);
	free(ks->k);
	*ks = (struct listen_kicks){0};
}

/* Notes a token to kick later. */
static void listen_note(struct listen_kicks *ks, const struct listen_entry *e, void *token)
{
	if (!token || !e->ops->kick)
		return;
	if (ks->n == ks->cap) {
		ks->cap = ks->cap ? 2 * ks->cap : 8;
		ks->k = mem_realloc(ks->k, ks->cap * sizeof *ks->k);
	}
	ks->k[ks->n++] = (struct listen_kick){e->ops->kick, token};
}

static void listen_write(struct listen_entry *e, json_t *msg, struct listen_kicks *ks)
{
	listen_note(ks, e, e->ops->write(e->out, msg));
	json_decref(msg);
}

static void listen_entry_free(struct listen_entry *e)
{
	if (e->ops->release)
		e->ops->release(e->out);
	for (size_t i = 0; i < e->n; i++)
		free(e->uris[i]);
	free(e->uris);
	json_decref(e->tasks);
	json_decref(e->id);
	free(e);
}

/* Unlinks *p (under the lock) and frees it. */
static void listen_drop(struct listen_hub *h, struct listen_entry **p)
{
	struct listen_entry *e = *p;
	*p = e->next;
	if (e->id)
		h->nlistens--;
	listen_entry_free(e);
}

/* Ends *p gracefully: a listen's result, then the end of its stream; a 2025-era set is
 * dropped (it has no end to give). */
static void listen_finish(struct listen_hub *h, struct listen_entry **p, struct listen_kicks *ks)
{
	struct listen_entry *e = *p;
	if (e->id) {
		listen_write(e,
			     json_pack("{s:s, s:O, s:{s:s, s:{s:O}}}", "jsonrpc", "2.0", "id",
				       e->id, "result", "resultType", "complete", "_meta",
				       LISTEN_SUB_ID, e->id),
			     ks);
		if (e->ops->end)
			listen_note(ks, e, e->ops->end(e->out));
	}
	listen_drop(h, p);
}

/* notifications/resources/updated for uri on e (tagged with its subscription id). */
static void listen_updated(struct listen_entry *e, const char *uri, struct listen_kicks *ks)
{
	json_t *msg = json_pack("{s:s, s:s, s:{s:s}}", "jsonrpc", "2.0", "method",
				"notifications/resources/updated", "params", "uri", uri);
	if (e->id)
		json_object_set_new(json_object_get(msg, "params"), "_meta",
				    json_pack("{s:O}", LISTEN_SUB_ID, e->id));
	listen_write(e, msg, ks);
}

/* notifications/tasks on e when it follows the changed task: the DetailedTask its owner may see,
 * to the owner's listens only. */
static void listen_task(struct listen_entry *e, const struct mcp_task_change *t,
			struct listen_kicks *ks)
{
	size_t i;
	json_t *id;
	bool follows = false;
	json_array_foreach (e->tasks, i, id)
		follows = follows ||
			  (json_is_string(id) && strcmp(json_string_value(id), t->id) == 0);
	if (!follows || !e->id || strcmp(e->subject, t->subject) != 0 ||
	    strcmp(e->client_id, t->client) != 0)
		return;
	json_t *params = json_deep_copy(t->detail);
	json_object_set_new(params, "_meta", json_pack("{s:O}", LISTEN_SUB_ID, e->id));
	listen_write(e,
		     json_pack("{s:s, s:s, s:o}", "jsonrpc", "2.0", "method", "notifications/tasks",
			       "params", params),
		     ks);
}

/* Forgets the streams whose client went away (under the lock). */
static void listen_prune(struct listen_hub *h)
{
	for (struct listen_entry **p = &h->entries; *p;) {
		if ((*p)->ops->gone && (*p)->ops->gone((*p)->out))
			listen_drop(h, p);
		else
			p = &(*p)->next;
	}
}

static bool listen_has(const struct listen_entry *e, const char *uri)
{
	for (size_t i = 0; i < e->n; i++)
		if (strcmp(e->uris[i], uri) == 0)
			return true;
	return false;
}

/* mcp_change_sink.changed: see listen.h. */
static void listen_changed(const struct mcp_change *c, void *arg)
{
	struct listen_hub *h = arg;
	struct listen_kicks ks = {0};
	pthread_mutex_lock(&h->lock);
	listen_prune(h);
	for (struct listen_entry **p = &h->entries; *p;) {
		struct listen_entry *e = *p;
		if (c && c->task) {
			listen_task(e, c->task, &ks);
		} else if (c && !c->uri) {
			if (mcp_change_of_rights_of(c, e->subject, e->client_id)) {
				log_info("listen: the caller's rights changed; its subscription "
					 "ends");
				listen_finish(h, p, &ks);
				continue;
			}
		} else if (c) {
			if (listen_has(e, c->uri))
				listen_updated(e, c->uri, &ks);
		} else {
			for (size_t i = 0; i < e->n; i++)
				listen_updated(e, e->uris[i], &ks);
			if (e->id) {
				listen_finish(h, p, &ks);
				continue;
			}
		}
		if (e->id && e->ops->slow && e->ops->slow(e->out)) {
			listen_finish(h, p, &ks); /* the client reads too slowly: its result */
			continue;
		}
		p = &e->next;
	}
	pthread_mutex_unlock(&h->lock);
	listen_kick_all(&ks);
}

/* mcp_change_sink.tick: a subscription whose token expired ends; the others are kept alive
 * every keepalive_s seconds. */
static void listen_tick(void *arg)
{
	struct listen_hub *h = arg;
	struct listen_kicks ks = {0};
	long now = (long)time(NULL);
	pthread_mutex_lock(&h->lock);
	bool ping = h->keepalive_s > 0 && now - h->last_ping >= h->keepalive_s;
	if (ping)
		h->last_ping = now;
	listen_prune(h);
	for (struct listen_entry **p = &h->entries; *p;) {
		struct listen_entry *e = *p;
		if (e->expires_at && now >= e->expires_at) {
			listen_finish(h, p, &ks);
			continue;
		}
		if (ping && e->id && e->ops->ping)
			listen_note(&ks, e, e->ops->ping(e->out));
		p = &e->next;
	}
	pthread_mutex_unlock(&h->lock);
	listen_kick_all(&ks);
}

struct listen_hub *listen_hub_new(const struct mcp_change_feed *feed, size_t max,
				  size_t per_subject, long keepalive_s)
{
	struct listen_hub *h = mem_calloc(1, sizeof *h);
	pthread_mutex_init(&h->lock, NULL);
	h->max = max;
	h->per_subject = per_subject;
	h->keepalive_s = keepalive_s;
	h->last_ping = (long)time(NULL);
	h->feed = feed;
	h->sink =
		(struct mcp_change_sink){.changed = listen_changed, .tick = listen_tick, .arg = h};
	return h;
}

void listen_hub_free(struct listen_hub *h)
{
	if (!h)
		return;
	if (h->feed)
		h->feed->remove(&h->sink); /* no callback runs after this returns */
	while (h->entries)
		listen_drop(h, &h->entries);
	pthread_mutex_destroy(&h->lock);
	free(h);
}

/* Joins the feed before anything is acknowledged (LISTEN first, so nothing is missed). */
static void listen_join(struct listen_hub *h)
{
	if (h->feed)
		h->feed->add(&h->sink); /* adding twice is a no-op */
}

static struct listen_entry *listen_entry_new(const struct fleet_actor *actor,
					     const struct listen_out_ops *ops, void *out)
{
	struct listen_entry *e = mem_calloc(1, sizeof *e);
	snprintf(e->subject, sizeof e->subject, "%s", actor->subject);
	snprintf(e->client_id, sizeof e->client_id, "%s", actor->client_id);
	e->expires_at = actor->expires_at;
	e->ops = ops;
	e->out = out;
	return e;
}

static void listen_add_uri(struct listen_entry *e, const char *uri)
{
	if (e->n == e->cap) {
		e->cap = e->cap ? 2 * e->cap : 4;
		e->uris = mem_realloc(e->uris, e->cap * sizeof *e->uris);
	}
	e->uris[e->n++] = mem_strdup(uri);
}

/* Under the lock: the listens subject holds. */
static size_t listen_held_by(const struct listen_hub *h, const char *subject)
{
	size_t n = 0;
	for (const struct listen_entry *e = h->entries; e; e = e->next)
		n += e->id && strcmp(e->subject, subject) == 0;
	return n;
}

enum mcp_listen_status listen_hub_open(struct listen_hub *h, const struct fleet_actor *actor,
				       const json_t *id, const json_t *ack, const char *const *uris,
				       size_t n, const struct listen_out_ops *ops, void *out)
{
	listen_join(h);
	struct listen_kicks ks = {0};
	pthread_mutex_lock(&h->lock);
	listen_prune(h);
	enum mcp_listen_status st = MCP_LISTEN_OK;
	if (h->closed || h->nlistens >= h->max)
		st = MCP_LISTEN_FULL;
	else if (h->per_subject && listen_held_by(h, actor->subject) >= h->per_subject)
		st = MCP_LISTEN_SHARE_SPENT;
	if (st != MCP_LISTEN_OK) {
		pthread_mutex_unlock(&h->lock);
		return st;
	}
	struct listen_entry *e = listen_entry_new(actor, ops, out);
	e->id = json_deep_copy(id);
	for (size_t i = 0; i < n; i++)
		listen_add_uri(e, uris[i]);
	json_t *tasks = json_object_get(
		json_object_get(json_object_get(ack, "params"), "notifications"), "taskIds");
	if (json_is_array(tasks))
		e->tasks = json_deep_copy(tasks);
	listen_note(&ks, e, ops->write(out, ack)); /* first, under the lock */
	e->next = h->entries;
	h->entries = e;
	h->nlistens++;
	pthread_mutex_unlock(&h->lock);
	listen_kick_all(&ks);
	return MCP_LISTEN_OK;
}

int listen_hub_subscribe(struct listen_hub *h, const struct fleet_actor *actor, const char *uri,
			 bool on, const struct listen_out_ops *ops, void *out)
{
	if (on)
		listen_join(h);
	int rc = 0;
	pthread_mutex_lock(&h->lock);
	struct listen_entry **p = &h->entries;
	while (*p && !((*p)->id == NULL && (*p)->out == out &&
		       strcmp((*p)->subject, actor->subject) == 0 &&
		       strcmp((*p)->client_id, actor->client_id) == 0))
		p = &(*p)->next;
	struct listen_entry *e = *p;
	if (!on) {
		for (size_t i = 0; e && i < e->n; i++)
			if (strcmp(e->uris[i], uri) == 0) {
				free(e->uris[i]);
				e->uris[i] = e->uris[--e->n];
				break;
			}
	} else if (e && listen_has(e, uri)) {
		/* already subscribed */
	} else if (e && e->n >= LISTEN_MAX_URIS) {
		rc = -1;
	} else {
		if (!e) {
			e = listen_entry_new(actor, ops, out);
			e->next = h->entries;
			h->entries = e;
		}
		listen_add_uri(e, uri);
	}
	pthread_mutex_unlock(&h->lock);
	return rc;
}

void listen_hub_cancel(struct listen_hub *h, const json_t *id)
{
	pthread_mutex_lock(&h->lock);
	for (struct listen_entry **p = &h->entries; *p;) {
		if ((*p)->id && json_equal((*p)->id, id))
			listen_drop(h, p);
		else
			p = &(*p)->next;
	}
	pthread_mutex_unlock(&h->lock);
}

void listen_hub_end_all(struct listen_hub *h, bool closing)
{
	struct listen_kicks ks = {0};
	pthread_mutex_lock(&h->lock);
	if (closing)
		h->closed = true;
	listen_prune(h);
	while (h->entries)
		listen_finish(h, &h->entries, &ks);
	pthread_mutex_unlock(&h->lock);
	listen_kick_all(&ks);
}
