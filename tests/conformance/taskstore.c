/* The conformance server's task provider and change feed (see taskstore.h). Locks: the store's,
 * never held while the feed's is taken (changes are published once the store is unlocked); the
 * feed's while its sinks are told. */
#include "taskstore.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"

struct taskstore_task {
	struct mcp_task t; /* its status, times and payloads (input_requests: what is pending) */
	char subject[FLEET_ID_MAX], client[FLEET_ID_MAX]; /* whose it is */
	json_t *work;                                     /* the job (owned) */
	json_t *answers;                                  /* the responses received (owned) */
	long long due_ms; /* working: when the next step is due (0: none) */
	bool asked;       /* its questions went out already */
};

struct taskstore {
	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t wake;
	struct taskstore_task *tasks[TASKSTORE_MAX];
	size_t n;
	bool stop;
	pthread_t worker;
	taskstore_finish_fn finish;
	struct mcp_task_provider provider;
};

/* Changes to publish once the store is unlocked. */
struct taskstore_news {
	struct mcp_task_change *c; /* owned, and what each points to */
	size_t n, cap;
};

/* ---- the feed ------------------------------------------------------------------------------ */

static pthread_mutex_t feed_lock = PTHREAD_MUTEX_INITIALIZER;
static struct mcp_change_sink *feed_sinks[64];
static size_t feed_n;

static void feed_add(struct mcp_change_sink *s)
{
	pthread_mutex_lock(&feed_lock);
	bool known = false;
	for (size_t i = 0; i < feed_n; i++)
		known = known || feed_sinks[i] == s;
	if (!known && feed_n < sizeof feed_sinks / sizeof feed_sinks[0])
		feed_sinks[feed_n++] = s;
	else if (!known)
		log_error("task feed: too many sinks; one hears of no task");
	pthread_mutex_unlock(&feed_lock);
}

static void feed_remove(struct mcp_change_sink *s)
{
	pthread_mutex_lock(&feed_lock); /* no callback of s runs once this is held */
	for (size_t i = 0; i < feed_n; i++)
		if (feed_sinks[i] == s)
			feed_sinks[i] = feed_sinks[--feed_n];
	pthread_mutex_unlock(&feed_lock);
}

const struct mcp_change_feed taskstore_feed = {.add = feed_add, .remove = feed_remove};

/* Tells every sink of the changes in news, and releases them. */
static void feed_publish(struct taskstore_news *news)
{
	if (!news->n)
		return;
	pthread_mutex_lock(&feed_lock);
	for (size_t k = 0; k < news->n; k++) {
		struct mcp_change c = {.task = &news->c[k]};
		for (size_t i = 0; i < feed_n; i++)
			feed_sinks[i]->changed(&c, feed_sinks[i]->arg);
	}
	pthread_mutex_unlock(&feed_lock);
	for (size_t k = 0; k < news->n; k++) {
		free((char *)news->c[k].id);
		free((char *)news->c[k].subject);
		free((char *)news->c[k].client);
		json_decref((json_t *)news->c[k].detail);
	}
	free(news->c);
	*news = (struct taskstore_news){0};
}

/* ---- the tasks ----------------------------------------------------------------------------- */

/* Notes x's new state for the feed (under the store's lock). */
static void store_note(struct taskstore_news *news, struct taskstore_task *x)
{
	if (news->n == news->cap) {
		news->cap = news->cap ? 2 * news->cap : 4;
		news->c = mem_realloc(news->c, news->cap * sizeof *news->c);
	}
	news->c[news->n++] = (struct mcp_task_change){.id = mem_strdup(x->t.id),
						      .subject = mem_strdup(x->subject),
						      .client = mem_strdup(x->client),
						      .detail = mcp_task_detail(&x->t)};
}

static void store_task_free(struct taskstore_task *x)
{
	mcp_task_clear(&x->t);
	json_decref(x->work);
	json_decref(x->answers);
	free(x);
}

static void store_set(struct taskstore_task *x, enum mcp_task_status st, const char *message,
		      long long now)
{
	x->t.status = st;
	snprintf(x->t.message, sizeof x->t.message, "%s", message);
	x->t.updated_ms = now;
}

static long long work_ms(struct taskstore_task *x, const char *key)
{
	json_int_t v = json_integer_value(json_object_get(x->work, key));
	return v > 0 ? (long long)v : 0;
}

/* The job's end: finish() says how (under the store's lock). */
static void store_finish(struct taskstore *s, struct taskstore_task *x, long long now)
{
	json_t *result = NULL, *error = NULL;
	s->finish(x->work, x->answers, &result, &error);
	x->due_ms = 0;
	if (error) {
		x->t.error = error;
		json_decref(result);
		store_set(x, MCP_TASK_FAILED, "The job failed", now);
	} else {
		x->t.result = result;
		store_set(x, MCP_TASK_COMPLETED, "", now);
	}
}

/* Moves x along to now (under the lock): its questions when their time has come, its end when
 * its work is done. */
static void store_advance(struct taskstore *s, struct taskstore_task *x, long long now,
			  struct taskstore_news *news)
{
	if (x->t.status != MCP_TASK_WORKING || !x->due_ms || now < x->due_ms)
		return;
	json_t *ask = json_object_get(x->work, "ask");
	if (json_object_size(ask) && !x->asked) {
		x->asked = true;
		x->due_ms = 0;
		x->t.input_requests = json_deep_copy(ask);
		store_set(x, MCP_TASK_INPUT_REQUIRED, "Waiting for the client's answers", now);
	} else {
		store_finish(s, x, now);
	}
	store_note(news, x);
}

/* Moves every task along and forgets the expired ones (under the lock); the earliest step due
 * next into *next (0: none). */
static void store_tick(struct taskstore *s, long long now, struct taskstore_news *news,
		       long long *next)
{
	*next = 0;
	for (size_t i = 0; i < s->n;) {
		struct taskstore_task *x = s->tasks[i];
		if (now >= x->t.created_ms + x->t.ttl_ms) {
			store_task_free(x);
			s->tasks[i] = s->tasks[--s->n];
			continue;
		}
		store_advance(s, x, now, news);
		if (x->due_ms && (!*next || x->due_ms < *next))
			*next = x->due_ms;
		i++;
	}
}

static void *store_worker(void *arg)
{
	struct taskstore *s = arg;
	struct taskstore_news news = {0};
	pthread_mutex_lock(&s->lock);
	while (!s->stop) {
		long long next;
		store_tick(s, mcp_task_now_ms(), &news, &next);
		if (news.n) {
			pthread_mutex_unlock(&s->lock);
			feed_publish(&news);
			pthread_mutex_lock(&s->lock);
			continue;
		}
		long long until = next ? next : mcp_task_now_ms() + 1000;
		struct timespec ts = {.tv_sec = (time_t)(until / 1000),
				      .tv_nsec = (long)(until % 1000) * 1000000L};
		int rc = pthread_cond_timedwait(&s->wake, &s->lock, &ts);
		if (rc != 0 && rc != ETIMEDOUT)
			log_warn("task store: timed wait: %s", strerror(rc));
	}
	pthread_mutex_unlock(&s->lock);
	return NULL;
}

/* The live task id of who (under the lock, the store moved along to now first), or NULL. */
static struct taskstore_task *store_find(struct taskstore *s, const struct fleet_actor *who,
					 const char *id, struct taskstore_news *news)
{
	long long next;
	store_tick(s, mcp_task_now_ms(), news, &next);
	for (size_t i = 0; i < s->n; i++) {
		struct taskstore_task *x = s->tasks[i];
		if (strcmp(x->t.id, id) == 0)
			return strcmp(x->subject, who->subject) == 0 &&
					       strcmp(x->client, who->client_id) == 0
				       ? x
				       : NULL; /* another's: as if there were none */
	}
	return NULL;
}

/* A copy of x's task for the core (the json members new references). */
static void store_copy(const struct taskstore_task *x, struct mcp_task *out)
{
	*out = x->t;
	out->input_requests = json_deep_copy(x->t.input_requests);
	out->result = json_deep_copy(x->t.result);
	out->error = json_deep_copy(x->t.error);
}

static struct taskstore *store_of(const struct mcp_task_provider *p)
{
	return p->state;
}

static enum mcp_task_rc store_create(const struct mcp_task_provider *p,
				     const struct fleet_actor *who, const char *tool, json_t *work,
				     struct mcp_task *out, struct mcp_error *err)
{
	struct taskstore *s = store_of(p);
	struct taskstore_news news = {0};
	long long now = mcp_task_now_ms(), next;
	pthread_mutex_lock(&s->lock);
	store_tick(s, now, &news, &next);
	enum mcp_task_rc rc = MCP_TASK_OK;
	if (s->n == TASKSTORE_MAX) {
		rc = MCP_TASK_ERROR;
		mcp_limited_as(err, 503, "The task store is full: retry later", 5);
	} else {
		struct taskstore_task *x = mem_calloc(1, sizeof *x);
		mcp_task_id_new(x->t.id);
		snprintf(x->t.tool, sizeof x->t.tool, "%s", tool);
		snprintf(x->subject, sizeof x->subject, "%s", who->subject);
		snprintf(x->client, sizeof x->client, "%s", who->client_id);
		x->work = json_deep_copy(work);
		x->answers = json_object();
		x->t.created_ms = now;
		x->t.ttl_ms = TASKSTORE_TTL_MS;
		x->t.poll_ms = TASKSTORE_POLL_MS;
		bool asks = json_object_size(json_object_get(work, "ask")) > 0;
		x->due_ms = now + work_ms(x, asks ? "askAfterMs" : "runMs");
		char said[MCP_TASK_MESSAGE_MAX];
		snprintf(said, sizeof said, "%s is working", tool);
		store_set(x, MCP_TASK_WORKING, said, now);
		s->tasks[s->n++] = x;
		store_copy(x, out); /* durable before the answer: a get finds it from now on */
		pthread_cond_signal(&s->wake);
	}
	pthread_mutex_unlock(&s->lock);
	feed_publish(&news);
	return rc;
}

static enum mcp_task_rc store_get(const struct mcp_task_provider *p, const struct fleet_actor *who,
				  const char *id, struct mcp_task *out, struct mcp_error *err)
{
	(void)err;
	struct taskstore *s = store_of(p);
	struct taskstore_news news = {0};
	pthread_mutex_lock(&s->lock);
	struct taskstore_task *x = store_find(s, who, id, &news);
	if (x)
		store_copy(x, out);
	pthread_mutex_unlock(&s->lock);
	feed_publish(&news);
	return x ? MCP_TASK_OK : MCP_TASK_NOT_FOUND;
}

/* Takes the responses to what x asks (under the lock); when none is left, the work goes on. */
static void store_answer(struct taskstore_task *x, json_t *responses, long long now,
			 struct taskstore_news *news)
{
	if (x->t.status != MCP_TASK_INPUT_REQUIRED)
		return; /* waiting for nothing: ignored */
	const char *key;
	json_t *v;
	bool took = false;
	json_object_foreach (responses, key, v) {
		if (!json_object_get(x->t.input_requests, key))
			continue; /* never asked, or answered already */
		/* A copy: the answer is the call's. */
		json_object_set_new(x->answers, key, json_deep_copy(v));
		json_object_del(x->t.input_requests, key);
		took = true;
	}
	if (!took)
		return;
	if (json_object_size(x->t.input_requests) == 0) {
		json_decref(x->t.input_requests);
		x->t.input_requests = NULL;
		x->due_ms = now + work_ms(x, "runMs");
		store_set(x, MCP_TASK_WORKING, "Working with the client's answers", now);
	} else {
		x->t.updated_ms = now;
	}
	store_note(news, x);
}

/* update and cancel: x found for who, then act (under the lock), then publish. */
static enum mcp_task_rc store_change(const struct mcp_task_provider *p,
				     const struct fleet_actor *who, const char *id,
				     json_t *responses)
{
	struct taskstore *s = store_of(p);
	struct taskstore_news news = {0};
	long long now = mcp_task_now_ms();
	pthread_mutex_lock(&s->lock);
	struct taskstore_task *x = store_find(s, who, id, &news);
	if (x && responses) {
		store_answer(x, responses, now, &news);
	} else if (x &&
		   (x->t.status == MCP_TASK_WORKING || x->t.status == MCP_TASK_INPUT_REQUIRED)) {
		/* The fixtures' jobs stop at once; a terminal task stays as it is. */
		json_decref(x->t.input_requests);
		x->t.input_requests = NULL;
		x->due_ms = 0;
		store_set(x, MCP_TASK_CANCELLED, "Cancelled at the client's request", now);
		store_note(&news, x);
	}
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	feed_publish(&news);
	return x ? MCP_TASK_OK : MCP_TASK_NOT_FOUND;
}

static enum mcp_task_rc store_update(const struct mcp_task_provider *p,
				     const struct fleet_actor *who, const char *id,
				     json_t *responses, struct mcp_error *err)
{
	(void)err;
	return store_change(p, who, id, responses);
}

static enum mcp_task_rc store_cancel(const struct mcp_task_provider *p,
				     const struct fleet_actor *who, const char *id,
				     struct mcp_error *err)
{
	(void)err;
	return store_change(p, who, id, NULL);
}

struct taskstore *taskstore_new(taskstore_finish_fn finish)
{
	struct taskstore *s = mem_calloc(1, sizeof *s);
	pthread_mutex_init(&s->lock, NULL);
	pthread_condattr_t ca;
	pthread_condattr_init(&ca);
	pthread_cond_init(&s->wake, &ca); /* CLOCK_REALTIME: deadlines are epoch milliseconds */
	pthread_condattr_destroy(&ca);
	s->finish = finish;
	s->provider = (struct mcp_task_provider){.create = store_create,
						 .get = store_get,
						 .update = store_update,
						 .cancel = store_cancel,
						 .state = s};
	if (pthread_create(&s->worker, NULL, store_worker, s) != 0) {
		log_error("task store: cannot start its worker");
		abort();
	}
	return s;
}

void taskstore_free(struct taskstore *s)
{
	if (!s)
		return;
	pthread_mutex_lock(&s->lock);
	s->stop = true;
	pthread_cond_signal(&s->wake);
	pthread_mutex_unlock(&s->lock);
	pthread_join(s->worker, NULL);
	for (size_t i = 0; i < s->n; i++)
		store_task_free(s->tasks[i]);
	pthread_cond_destroy(&s->wake);
	pthread_mutex_destroy(&s->lock);
	free(s);
}

const struct mcp_task_provider *taskstore_provider(const struct taskstore *s)
{
	return &s->provider;
}
