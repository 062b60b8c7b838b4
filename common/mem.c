/* Allocation wrappers: abort on out-of-memory, the one policy of the whole program. */
#include "mem.h"

#include <jansson.h>
#include <stdarg.h>
#include <stdbool.h>
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

/* ---- arenas (mem.h) ------------------------------------------------------------------------ */

#define MEM_ARENA_BLOCK ((size_t)16 * 1024)
/* AddressSanitizer and valgrind see each allocation of an arena as a block of its own, freed at
 * the reset: a use of one after its arena's reset is a use after free they report. */
#if defined(__SANITIZE_ADDRESS__) || defined(TASK_VALGRIND)
#define MEM_ARENA_EACH 1
#else
#define MEM_ARENA_EACH 0
#endif

struct mem_chunk {
	struct mem_chunk *next;
	size_t size;
};

static _Thread_local struct mem_arena *mem_arena_on;

struct mem_arena *mem_arena_use(struct mem_arena *a)
{
	struct mem_arena *was = mem_arena_on;
	mem_arena_on = a;
	return was;
}

/* A block of its own for what the arena's room does not hold, freed by the reset. */
static char *mem_arena_chunk(struct mem_arena *a, size_t n)
{
	struct mem_chunk *c = mem_alloc(sizeof *c + n);
	*c = (struct mem_chunk){.next = a->chunks, .size = n};
	a->chunks = c;
	return (char *)(c + 1);
}

static void *mem_json_alloc(size_t n)
{
	struct mem_arena *a = mem_arena_on;
	if (!a)
		return mem_alloc(n);
	size_t need = (n + 15) & ~(size_t)15; /* malloc's alignment */
	if (MEM_ARENA_EACH || need > (size_t)(a->end - a->p)) {
		if (MEM_ARENA_EACH || a->block || need > MEM_ARENA_BLOCK / 4)
			return mem_arena_chunk(a, need);
		a->p = a->block = mem_alloc(MEM_ARENA_BLOCK);
		a->end = a->block + MEM_ARENA_BLOCK;
	}
	char *p = a->p;
	a->p += need;
	return p;
}

static bool mem_arena_has(const struct mem_arena *a, const char *p)
{
	if (a->block && p >= a->block && p < a->block + MEM_ARENA_BLOCK)
		return true;
	for (const struct mem_chunk *c = a->chunks; c; c = c->next)
		if (p >= (const char *)(c + 1) && p < (const char *)(c + 1) + c->size)
			return true;
	return false;
}

/* jansson's free: nothing for the thread's arena's memory (its reset frees it). */
static void mem_json_free(void *p)
{
	if (p && !(mem_arena_on && mem_arena_has(mem_arena_on, p)))
		free(p);
}

void mem_json_text_free(char *text)
{
	mem_json_free(text);
}

void mem_arena_reset(struct mem_arena *a)
{
	while (a->chunks) {
		struct mem_chunk *c = a->chunks;
		a->chunks = c->next;
		free(c);
	}
	a->p = a->block;
	a->end = a->block ? a->block + MEM_ARENA_BLOCK : NULL;
}

void mem_arena_free(struct mem_arena *a)
{
	mem_arena_reset(a);
	free(a->block);
	*a = (struct mem_arena){0};
}

void mem_install_jansson(void)
{
	json_set_alloc_funcs(mem_json_alloc, mem_json_free);
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
