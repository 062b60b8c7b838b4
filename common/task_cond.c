/* Conditions for tasks (task_cond.h): each waiter a task_wait on its own stack, in a list the
 * mutex guards. */
#include "task_cond.h"

#include "task.h"

struct task_cond_waiter {
	struct task_wait wait;
	struct task_cond_waiter *next;
};

void task_cond_wait(struct task_cond *c, pthread_mutex_t *m)
{
	struct task_cond_waiter me = {.next = c->waiters};
	task_wait_init(&me.wait);
	/* On this stack until woken: a broadcast unlinks every waiter before it wakes it. */
	c->waiters = &me; // cppcheck-suppress autoVariables
	pthread_mutex_unlock(m);
	task_wait(&me.wait);
	pthread_mutex_lock(m);
}

void task_cond_broadcast(struct task_cond *c)
{
	struct task_cond_waiter *x = c->waiters;
	c->waiters = NULL;
	while (x) {
		struct task_cond_waiter *next = x->next; /* x may be gone once woken */
		task_wake(&x->wait);
		x = next;
	}
}
