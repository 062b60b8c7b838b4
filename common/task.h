/* Calls that wait without holding a thread. A worker pool runs each call as a task: a stack of
 * its own on the worker's thread (task_start). When the call waits for work done elsewhere (the
 * database executor, domain/pg/exec.h) on a struct task_wait, the task parks and its worker goes
 * on with other calls; task_wake() makes it ready again, and the same worker resumes it
 * (task_run_ready), so that a call never changes threads (thread-local state, its deadline
 * included, stays its own). Code outside a task (a test, a start-up check, the stdio workers)
 * blocks its thread in task_wait() instead. The ready queues and counters are this module's
 * process-wide state. */
#ifndef BIKAROO_TASK_H
#define BIKAROO_TASK_H

#include <pthread.h>
#include <stdbool.h>

struct task;
struct task_worker;

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

/* A condition that tasks wait on without holding their thread (a pthread condition would block
 * the worker, and with it the calls parked on that worker, the one being waited for perhaps
 * among them). Guarded by the user's mutex, as a pthread condition is; zero-initialised. */
struct task_cond_waiter;
struct task_cond {
	struct task_cond_waiter *waiters;
};

/* With m held: releases m, waits for a task_cond_broadcast() of c, and takes m again. Only a
 * broadcast ends the wait: the one who is waited for must always broadcast. */
void task_cond_wait(struct task_cond *c, pthread_mutex_t *m);
/* With the mutex of c held: wakes every waiter of c. */
void task_cond_broadcast(struct task_cond *c);

/* Whether the calling code runs in a task. */
bool task_in(void);

/* How many calls are under way and not waiting right now: they may hand work over soon (a
 * batch former lingers only while there are some). */
long task_busy(void);

/* ---- for worker pools ------------------------------------------------------------------- */

/* Makes the calling thread a worker: notify(arg) is called (from any thread) whenever one of its
 * parked tasks becomes ready, so that the worker looks at task_ready() again. Once per thread,
 * before its first task_start(). */
void task_worker_begin(void (*notify)(void *arg), void *arg);
/* The thread stops being a worker: no task of its own may be left (task_live() says). */
void task_worker_end(void);

/* Runs fn(arg) as a new task on the calling worker until it returns or parks. */
void task_start(void (*fn)(void *arg), void *arg);
/* Whether a parked task of the calling worker is ready to go on. */
bool task_ready(void);
/* Resumes the calling worker's ready tasks, each until it returns or parks again. */
void task_run_ready(void);
/* The calling worker's tasks started and not returned yet (parked ones included). */
long task_live(void);

#endif
