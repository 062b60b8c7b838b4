/* The rules of an event loop and its tasks (common/loop.h, common/task.h) are checks, not
 * comments: a loop touched from a thread that does not turn it, a job posted again before it
 * ran, a wait woken twice, a parked task woken by two waits, a wait outside a task inside a
 * loop's callback or on a serving loop's thread, a task started inside a task: each aborts the
 * process with a line saying which rule broke. Each is broken in a forked child; the parent
 * sees SIGABRT and the line. The rules' ordinary uses go on working beside them. */
#include <check.h>
#include <pthread.h>

#include "common/loop.h"
#include "common/task.h"
#include "tests/check_main.h"

static void lp_nothing(struct loop_job *j)
{
	(void)j;
}

static int lp_ran;
static void lp_count(struct loop_job *j)
{
	(void)j;
	lp_ran++;
}

/* ---- a loop's state is its thread's ------------------------------------------------------ */

static struct loop *lp_loop;

static void *lp_touch(void *arg)
{
	static struct loop_hook h;
	(void)arg;
	loop_hook(lp_loop, &h);
	return NULL;
}

static void lp_other_thread_touches(void)
{
	lp_loop = loop_new();
	loop_turn(lp_loop, false); /* this thread turns it: it owns it */
	pthread_t t;
	pthread_create(&t, NULL, lp_touch, NULL);
	pthread_join(t, NULL);
}

START_TEST(a_loop_touched_from_another_thread_aborts)
{
	check_aborts(lp_other_thread_touches,
		     "loop_hook from a thread that does not turn this loop");
}
END_TEST

static long long lp_hooked(struct loop_hook *h, long long now)
{
	(void)h, (void)now;
	lp_ran++;
	return 0;
}

/* The loop's thread: one turn, then the loop ends on its thread. */
static void *lp_turn_and_free(void *arg)
{
	loop_turn(arg, false);
	loop_free(arg);
	return NULL;
}

/* What the rules allow: the thread that makes a loop sets it up before it first turns, another
 * thread turns it from then on, and any thread posts to it. */
START_TEST(a_loop_is_set_up_by_its_maker_and_posted_to_from_anywhere)
{
	struct loop *l = loop_new();
	struct loop_hook h = {.due = lp_hooked};
	struct loop_job j = {.run = lp_count};
	loop_hook(l, &h);
	loop_post(l, &j);
	lp_ran = 0;
	pthread_t t;
	pthread_create(&t, NULL, lp_turn_and_free, l);
	pthread_join(t, NULL);
	ck_assert_int_eq(lp_ran, 2); /* the job, then the hook */
}
END_TEST

/* ---- a job is posted once ---------------------------------------------------------------- */

static void lp_post_twice(void)
{
	struct loop *l = loop_new();
	static struct loop_job j = {.run = lp_nothing};
	loop_post(l, &j);
	loop_post(l, &j);
}

START_TEST(a_job_posted_again_before_it_ran_aborts)
{
	check_aborts(lp_post_twice, "a job posted again before it ran");
}
END_TEST

START_TEST(a_job_that_ran_may_be_posted_again)
{
	struct loop *l = loop_new();
	struct loop_job j = {.run = lp_count};
	lp_ran = 0;
	loop_post(l, &j);
	loop_turn(l, false);
	loop_post(l, &j);
	loop_turn(l, false);
	ck_assert_int_eq(lp_ran, 2);
	loop_free(l);
}
END_TEST

/* ---- a task is woken once ---------------------------------------------------------------- */

static void lp_wake_twice(void)
{
	struct task_wait w;
	task_wait_init(&w);
	task_wake(&w);
	task_wake(&w);
}

START_TEST(a_wait_woken_twice_aborts)
{
	check_aborts(lp_wake_twice, "a wait woken twice");
}
END_TEST

static struct task_wait lp_w1, lp_w2;
static int lp_resumed;

static void lp_parks(void *arg)
{
	(void)arg;
	task_wait_init(&lp_w1);
	task_wait(&lp_w1);
	lp_resumed++;
}

/* A task parked on one wait, and a stale wait still naming it: both wake it. */
static void lp_task_woken_by_two(void)
{
	struct loop *l = loop_new();
	loop_turn(l, false);
	task_start(l, lp_parks, NULL);
	task_wait_init(&lp_w2);
	lp_w2.task = lp_w1.task;
	task_wake(&lp_w1);
	task_wake(&lp_w2);
}

START_TEST(a_parked_task_woken_twice_aborts)
{
	check_aborts(lp_task_woken_by_two, "a parked task woken twice");
}
END_TEST

START_TEST(a_task_woken_once_runs_on)
{
	struct loop *l = loop_new();
	loop_turn(l, false);
	lp_resumed = 0;
	task_start(l, lp_parks, NULL);
	ck_assert_int_eq(lp_resumed, 0);
	task_wake(&lp_w1);
	loop_turn(l, false);
	ck_assert_int_eq(lp_resumed, 1);
	ck_assert_int_eq(task_live(), 0);
	task_idle_free();
	loop_free(l);
}
END_TEST

/* ---- nothing waits for the loop it holds ------------------------------------------------- */

static void lp_waits(struct loop_job *j)
{
	(void)j;
	struct task_wait w;
	task_wait_init(&w);
	task_wait(&w);
}

/* A private loop (the thread's own, as start-up and the admin commands have) whose job waits
 * outside a task. */
static void lp_callback_waits(void)
{
	struct loop *l = loop_private();
	static struct loop_job j = {.run = lp_waits};
	loop_post(l, &j);
	loop_turn(l, false);
}

START_TEST(a_wait_in_a_loop_callback_aborts)
{
	check_aborts(lp_callback_waits, "outside a task, a loop's callback waits");
}
END_TEST

static void lp_serving_waits(void)
{
	struct loop *l = loop_new();
	loop_turn(l, false); /* this thread serves l */
	struct task_wait w;
	task_wait_init(&w);
	task_wait(&w);
}

START_TEST(a_wait_outside_a_task_on_a_serving_loop_aborts)
{
	check_aborts(lp_serving_waits, "outside a task, a serving loop's thread waits");
}
END_TEST

static void lp_start_inner(void *arg)
{
	(void)arg;
}

static void lp_start_outer(void *arg)
{
	task_start(arg, lp_start_inner, NULL);
}

static void lp_task_starts_task(void)
{
	struct loop *l = loop_new();
	loop_turn(l, false);
	task_start(l, lp_start_outer, l);
}

START_TEST(a_task_started_inside_a_task_aborts)
{
	check_aborts(lp_task_starts_task, "task_start: not at the top level");
}
END_TEST

CHECK_SUITE(loop)
{
	Suite *s = suite_create("loop");
	TCase *tc = tcase_create("rules");
	tcase_add_test(tc, a_loop_touched_from_another_thread_aborts);
	tcase_add_test(tc, a_loop_is_set_up_by_its_maker_and_posted_to_from_anywhere);
	tcase_add_test(tc, a_job_posted_again_before_it_ran_aborts);
	tcase_add_test(tc, a_job_that_ran_may_be_posted_again);
	tcase_add_test(tc, a_wait_woken_twice_aborts);
	tcase_add_test(tc, a_parked_task_woken_twice_aborts);
	tcase_add_test(tc, a_task_woken_once_runs_on);
	tcase_add_test(tc, a_wait_in_a_loop_callback_aborts);
	tcase_add_test(tc, a_wait_outside_a_task_on_a_serving_loop_aborts);
	tcase_add_test(tc, a_task_started_inside_a_task_aborts);
	suite_add_tcase(s, tc);
	return s;
}
