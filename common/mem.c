/* Allocation wrappers: abort on out-of-memory, the one policy of the whole program. */
#include "mem.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

static void mem_die(size_t n)
{
	fprintf(stderr, "fatal: out of memory allocating %zu bytes\n", n);
	abort();
}

void mem_thread(pthread_t *t, void *(*run)(void *), void *arg, const char *what)
{
	int rc = pthread_create(t, NULL, run, arg);
	if (rc != 0) {
		fprintf(stderr, "fatal: cannot start a thread (%s): %s\n", what, strerror(rc));
		abort();
	}
}

void *mem_alloc(size_t n)
{
	void *p = malloc(n ? n : 1);
	if (!p)
		mem_die(n);
	return p;
}

void *mem_calloc(size_t count, size_t size)
{
	void *p = calloc(count ? count : 1, size ? size : 1);
	if (!p)
		mem_die(count * size);
	return p;
}

void *mem_realloc(void *p, size_t n)
{
	void *q = realloc(p, n ? n : 1);
	if (!q)
		mem_die(n);
	return q;
}

char *mem_strndup(const char *s, size_t n)
{
	char *d = mem_alloc(n + 1);
	memcpy(d, s, n);
	d[n] = '\0';
	return d;
}

char *mem_strdup(const char *s)
{
	return mem_strndup(s, strlen(s));
}

char *mem_printf(const char *fmt, ...)
{
	va_list ap;
	va_start(ap, fmt);
	int n = vsnprintf(NULL, 0, fmt, ap);
	va_end(ap);
	if (n < 0)
		abort(); /* a bad format string is our bug */
	char *s = mem_alloc((size_t)n + 1);
	va_start(ap, fmt);
	vsnprintf(s, (size_t)n + 1, fmt, ap);
	va_end(ap);
	return s;
}

void mem_install_jansson(void)
{
	json_set_alloc_funcs(mem_alloc, free);
}

void mem_buf_put(struct mem_buf *b, const char *s, size_t n)
{
	if (b->len + n + 1 > b->cap) {
		b->cap = (b->len + n + 1) * 2;
		b->p = mem_realloc(b->p, b->cap);
	}
	memcpy(b->p + b->len, s, n);
	b->len += n;
	b->p[b->len] = '\0';
}
