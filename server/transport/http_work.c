/* The HTTP workers and their admission (http_work.h). One mutex guards the queue; a worker
 * takes the oldest call, so the waiting time it checks is the longest in the queue. */
#include "http_work.h"

#include <pthread.h>
#include <stdlib.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"

struct http_work_item {
	void *arg;
	long long queued_ms; /* CLOCK_MONOTONIC */
	struct http_work_item *next;
};

struct http_work {
	struct http_work_settings set;
	pthread_mutex_t lock; /* guards what follows */
	pthread_cond_t more;
	struct http_work_item *head, **tail;
	long queued, reserved, running;
	bool stopping;
	pthread_t *threads;
	long nthreads;
};

static long long http_work_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

static void *http_work_loop(void *p)
{
	struct http_work *w = p;
	pthread_mutex_lock(&w->lock);
	for (;;) {
		while (!w->head && !w->stopping)
			pthread_cond_wait(&w->more, &w->lock);
		struct http_work_item *it = w->head;
		if (!it)
			break; /* stopping, and nothing left */
		w->head = it->next;
		if (!w->head)
			w->tail = &w->head;
		w->queued--;
		w->running++;
		bool stopping = w->stopping;
		pthread_mutex_unlock(&w->lock);
		long long waited = http_work_now_ms() - it->queued_ms;
		bool run = !stopping && waited <= w->set.queue_wait_ms;
		if (!run && !stopping) {
			const char *reason[] = {"queue_wait"};
			metrics_add(&metrics_http_shed, reason, 1);
		}
		w->set.run(it->arg, run);
		free(it);
		pthread_mutex_lock(&w->lock);
		w->running--;
	}
	pthread_mutex_unlock(&w->lock);
	return NULL;
}

struct http_work *http_work_new(const struct http_work_settings *set)
{
	struct http_work *w = mem_calloc(1, sizeof *w);
	w->set = *set;
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->more, NULL);
	w->tail = &w->head;
	w->nthreads = set->threads > 0 ? set->threads : 1;
	w->threads = mem_calloc((size_t)w->nthreads, sizeof *w->threads);
	for (long i = 0; i < w->nthreads; i++)
		mem_thread(&w->threads[i], http_work_loop, w, "http worker");
	return w;
}

bool http_work_reserve(struct http_work *w)
{
	pthread_mutex_lock(&w->lock);
	bool ok = !w->stopping && w->queued + w->reserved < w->set.queue_max;
	if (ok)
		w->reserved++;
	pthread_mutex_unlock(&w->lock);
	if (!ok) {
		const char *reason[] = {"queue_full"};
		metrics_add(&metrics_http_shed, reason, 1);
	}
	return ok;
}

void http_work_push(struct http_work *w, void *arg)
{
	struct http_work_item *it = mem_calloc(1, sizeof *it);
	it->arg = arg;
	it->queued_ms = http_work_now_ms();
	pthread_mutex_lock(&w->lock);
	w->reserved--;
	*w->tail = it;
	w->tail = &it->next;
	w->queued++;
	pthread_cond_signal(&w->more);
	pthread_mutex_unlock(&w->lock);
}

long http_work_queued(struct http_work *w)
{
	pthread_mutex_lock(&w->lock);
	long n = w->queued + w->reserved + w->running;
	pthread_mutex_unlock(&w->lock);
	return n;
}

void http_work_free(struct http_work *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	pthread_cond_broadcast(&w->more);
	pthread_mutex_unlock(&w->lock);
	for (long i = 0; i < w->nthreads; i++)
		pthread_join(w->threads[i], NULL);
	free(w->threads);
	pthread_cond_destroy(&w->more);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
