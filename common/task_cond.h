/* A condition that tasks wait on without holding their thread, whatever their loop, guarded by
 * the user's mutex as a pthread condition is (common/task.h: the waits it is made of). */
#ifndef BIKAROO_TASK_COND_H
#define BIKAROO_TASK_COND_H

#include <pthread.h>

/* Zero-initialised. */
struct task_cond_waiter;
struct task_cond {
	struct task_cond_waiter *waiters;
};
/* With m held: releases m, waits for a task_cond_broadcast() of c, and takes m again. Only a
 * broadcast ends the wait: the one who is waited for must always broadcast. */
void task_cond_wait(struct task_cond *c, pthread_mutex_t *m);
/* With the mutex of c held: wakes every waiter of c. */
void task_cond_broadcast(struct task_cond *c);

#endif
