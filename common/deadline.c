/* The deadline of a thread's call (deadline.h). */
#include "deadline.h"

#include <time.h>

/* CLOCK_MONOTONIC milliseconds of this thread's deadline; 0: none. */
static _Thread_local long long deadline_at_ms;

static long long deadline_now_ms(void)
{
	struct timespec ts;
	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (long long)ts.tv_sec * 1000 + ts.tv_nsec / 1000000;
}

void deadline_start(long ms)
{
	deadline_at_ms = ms > 0 ? deadline_now_ms() + ms : 0;
}

void deadline_clear(void)
{
	deadline_at_ms = 0;
}

long deadline_left_ms(long cap)
{
	if (!deadline_at_ms)
		return cap;
	long long left = deadline_at_ms - deadline_now_ms();
	if (left <= 0)
		return 0;
	return left < cap ? (long)left : cap;
}

bool deadline_passed(void)
{
	return deadline_at_ms && deadline_now_ms() >= deadline_at_ms;
}

long long deadline_save(void)
{
	return deadline_at_ms;
}

void deadline_restore(long long at_ms)
{
	deadline_at_ms = at_ms;
}
