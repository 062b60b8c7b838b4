/* Waits handed to other threads (task.h). */
#include "task.h"

#include <stdatomic.h>
#include <stddef.h>

/* Calls under way, and how many of them wait (task_busy). */
static atomic_long task_running, task_waiting;

void task_wait_init(struct task_wait *w)
{
	pthread_mutex_init(&w->lock, NULL);
	pthread_cond_init(&w->cond, NULL);
	w->done = false;
	w->task = NULL;
}

void task_wait(struct task_wait *w)
{
	atomic_fetch_add(&task_waiting, 1);
	pthread_mutex_lock(&w->lock);
	while (!w->done)
		pthread_cond_wait(&w->cond, &w->lock);
	pthread_mutex_unlock(&w->lock);
	atomic_fetch_sub(&task_waiting, 1);
}

void task_wake(struct task_wait *w)
{
	pthread_mutex_lock(&w->lock);
	w->done = true;
	/* Signalled with the lock held: the waiter cannot return (and destroy w) before. */
	pthread_cond_signal(&w->cond);
	pthread_mutex_unlock(&w->lock);
}

void task_wait_destroy(struct task_wait *w)
{
	pthread_cond_destroy(&w->cond);
	pthread_mutex_destroy(&w->lock);
}

long task_busy(void)
{
	long n = atomic_load(&task_running) - atomic_load(&task_waiting);
	return n > 0 ? n : 0;
}
