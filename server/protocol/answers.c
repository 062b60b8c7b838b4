/* Answers kept as text (see answers.h). Append-only: an entry is written whole, then published
 * by the count's release store, and never changed or freed before the store; so readers on
 * every loop scan without a lock, and writers, once per key for the service's life, take one.
 * The bound keeps a client that varies what it declares from growing the store. */
#include "answers.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "service.h"

struct answers {
	pthread_mutex_t lock; /* writers only */
	_Atomic size_t n;     /* entries published */
	struct {
		char *key, *text;
		size_t len;
	} kept[ANSWERS_MAX];
};

struct answers *answers_new(void)
{
	struct answers *a = mem_calloc(1, sizeof *a);
	pthread_mutex_init(&a->lock, NULL);
	atomic_init(&a->n, 0);
	return a;
}

void answers_free(struct answers *a)
{
	if (!a)
		return;
	size_t n = atomic_load(&a->n);
	for (size_t i = 0; i < n; i++) {
		free(a->kept[i].key);
		free(a->kept[i].text);
	}
	pthread_mutex_destroy(&a->lock);
	free(a);
}

const char *answers_find(const struct answers *a, const char *key, size_t *len)
{
	size_t n = atomic_load_explicit(&a->n, memory_order_acquire);
	for (size_t i = 0; i < n; i++)
		if (strcmp(a->kept[i].key, key) == 0) {
			*len = a->kept[i].len;
			return a->kept[i].text;
		}
	return NULL;
}

void answers_keep(struct answers *a, const char *key, const char *text)
{
	pthread_mutex_lock(&a->lock);
	size_t n = atomic_load_explicit(&a->n, memory_order_relaxed);
	size_t len;
	if (n < ANSWERS_MAX && !answers_find(a, key, &len)) {
		a->kept[n].key = mem_strdup(key);
		a->kept[n].text = mem_strdup(text);
		a->kept[n].len = strlen(text);
		atomic_store_explicit(&a->n, n + 1, memory_order_release);
	}
	pthread_mutex_unlock(&a->lock);
}

bool answers_known(struct mcp_ctx *ctx, const char *key)
{
	struct mcp_answer *ans = ctx->answer;
	if (!ans) /* not dispatched (nothing to keep it in) */
		return false;
	ans->text = NULL;
	if ((size_t)snprintf(ans->key, sizeof ans->key, "%s", key) >= sizeof ans->key) {
		ans->key[0] = '\0';
		return false;
	}
	ans->text = answers_find(ctx->service->answers, key, &ans->len);
	return ans->text != NULL;
}
