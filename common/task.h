/* Waiting for work done elsewhere (the database executor, domain/pg/exec.h) without owning a
 * thread's time: a call waits on a struct task_wait until whoever did the work wakes it. A call
 * run as a task (task_run: on a stack of its own, by a worker pool) parks there and its worker
 * thread goes on with other calls; code outside a task (a test, a start-up check) blocks its
 * thread instead. The process-wide state (the pool's ready queue, counters) is this module's. */
#ifndef BIKAROO_TASK_H
#define BIKAROO_TASK_H

#include <pthread.h>
#include <stdbool.h>

/* One wait, on its waiter's stack. Initialise, wait once, then destroy. */
struct task_wait {
	pthread_mutex_t lock;
	pthread_cond_t cond;
	bool done;
	struct task *task; /* the task parked on it, or NULL: a blocked thread */
};

void task_wait_init(struct task_wait *w);
/* Returns once task_wake(w) has been called (at once if it already was). */
void task_wait(struct task_wait *w);
/* Wakes w's waiter; from any thread, once per wait. Nothing of w may be touched after it: the
 * waiter may have returned and gone. */
void task_wake(struct task_wait *w);
void task_wait_destroy(struct task_wait *w);

/* How many calls are under way and not waiting right now: they may hand work over soon (a
 * batch former lingers only while there are some). */
long task_busy(void);

#endif
