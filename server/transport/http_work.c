/* The HTTP workers and their admission (http_work.h). One mutex guards the queue; a worker
 * takes the oldest call, so the waiting time it checks is the longest in the queue. Each call
 * runs as a task (common/task.h): one that waits for the database parks, and its worker takes
 * the next call meanwhile, or resumes one of its own parked calls that became ready. */
#include "http_work.h"

#include <pthread.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"

struct http_work_item {
	struct http_work *w;
	void *arg;
	bool run;
	long long queued_ms; /* CLOCK_MONOTONIC */
	struct http_work_item *next;
};

/* One worker thread: it sleeps on a condition of its own, so that a call queued or a parked
 * call made ready wakes the one worker it concerns. */
struct http_worker {
	struct http_work *w;
	pthread_t thread;
	pthread_cond_t wake;
	bool idle; /* waiting on wake (guarded by the pool's lock) */
};

struct http_work {
	struct http_work_settings set;
	pthread_mutex_t lock; /* guards what follows */
	struct http_work_item *head, **tail;
	long queued, reserved;
	bool stopping;
	struct http_worker *workers;
	long nthreads;
	atomic_long running; /* calls started and not ended (parked ones included) */
};

static long long http_work_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

/* One call, as a task: it may park in set.run and be resumed later by its worker (which then
 * looks at the queue again: no one else need be told that a place is free). */
static void http_work_call(void *arg)
{
	struct http_work_item *it = arg;
	struct http_work *w = it->w;
	w->set.run(it->arg, it->run);
	free(it);
	atomic_fetch_sub(&w->running, 1);
}

/* A parked call of this worker is ready: wake it if it sleeps. */
static void http_work_poke(void *arg)
{
	struct http_worker *me = arg;
	pthread_mutex_lock(&me->w->lock);
	if (me->idle) {
		me->idle = false;
		pthread_cond_signal(&me->wake);
	}
	pthread_mutex_unlock(&me->w->lock);
}

/* Wakes one sleeping worker for a call queued (with the lock held). */
static void http_work_wake_one(struct http_work *w)
{
	for (long i = 0; i < w->nthreads; i++)
		if (w->workers[i].idle) {
			w->workers[i].idle = false;
			pthread_cond_signal(&w->workers[i].wake);
			return;
		}
}

static void *http_work_loop(void *p)
{
	struct http_worker *me = p;
	struct http_work *w = me->w;
	task_worker_begin(http_work_poke, me);
	pthread_mutex_lock(&w->lock);
	for (;;) {
		/* Its own ready calls first, then a new one while there is room for it; when
		 * stopping, it ends once the queue and its own calls are done. */
		bool ready = task_ready();
		bool room = w->head && atomic_load(&w->running) < w->set.calls_max;
		if (!ready && !room) {
			if (w->stopping && !w->head && task_live() == 0)
				break;
			me->idle = true;
			pthread_cond_wait(&me->wake, &w->lock);
			me->idle = false;
			continue;
		}
		if (ready) {
			pthread_mutex_unlock(&w->lock);
			task_run_ready();
			pthread_mutex_lock(&w->lock);
			continue;
		}
		struct http_work_item *it = w->head;
		w->head = it->next;
		if (!w->head)
			w->tail = &w->head;
		w->queued--;
		atomic_fetch_add(&w->running, 1);
		bool stopping = w->stopping;
		/* More waiting and room for them: another worker may start one meanwhile. */
		if (w->head && atomic_load(&w->running) < w->set.calls_max)
			http_work_wake_one(w);
		pthread_mutex_unlock(&w->lock);
		long long waited = http_work_now_ms() - it->queued_ms;
		it->run = !stopping && waited <= w->set.queue_wait_ms;
		if (!it->run && !stopping) {
			const char *reason[] = {"queue_wait"};
			metrics_add(&metrics_http_shed, reason, 1);
		}
		task_start(http_work_call, it);
		pthread_mutex_lock(&w->lock);
	}
	pthread_mutex_unlock(&w->lock);
	task_worker_end();
	return NULL;
}

struct http_work *http_work_new(const struct http_work_settings *set)
{
	struct http_work *w = mem_calloc(1, sizeof *w);
	w->set = *set;
	pthread_mutex_init(&w->lock, NULL);
	w->tail = &w->head;
	w->nthreads = set->threads > 0 ? set->threads : 1;
	w->workers = mem_calloc((size_t)w->nthreads, sizeof *w->workers);
	for (long i = 0; i < w->nthreads; i++) {
		w->workers[i].w = w;
		pthread_cond_init(&w->workers[i].wake, NULL);
	}
	for (long i = 0; i < w->nthreads; i++)
		mem_thread(&w->workers[i].thread, http_work_loop, &w->workers[i], "http worker");
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
	it->w = w;
	it->arg = arg;
	it->queued_ms = http_work_now_ms();
	pthread_mutex_lock(&w->lock);
	w->reserved--;
	*w->tail = it;
	w->tail = &it->next;
	w->queued++;
	http_work_wake_one(w);
	pthread_mutex_unlock(&w->lock);
}

long http_work_queued(struct http_work *w)
{
	pthread_mutex_lock(&w->lock);
	long n = w->queued + w->reserved + atomic_load(&w->running);
	pthread_mutex_unlock(&w->lock);
	return n;
}

void http_work_free(struct http_work *w)
{
	if (!w)
		return;
	pthread_mutex_lock(&w->lock);
	w->stopping = true;
	for (long i = 0; i < w->nthreads; i++) {
		w->workers[i].idle = false;
		pthread_cond_signal(&w->workers[i].wake);
	}
	pthread_mutex_unlock(&w->lock);
	for (long i = 0; i < w->nthreads; i++) {
		pthread_join(w->workers[i].thread, NULL);
		pthread_cond_destroy(&w->workers[i].wake);
	}
	free(w->workers);
	pthread_mutex_destroy(&w->lock);
	free(w);
}
