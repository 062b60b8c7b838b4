/* Allocation wrappers with one out-of-memory policy: abort. Call sites never branch on NULL. */
#ifndef BIKAROO_MEM_H
#define BIKAROO_MEM_H

#include <pthread.h>
#include <stddef.h>

/* All return new memory the caller frees with free(). Never NULL. */
void *mem_alloc(size_t n);
void *mem_calloc(size_t count, size_t size);
void *mem_realloc(void *p, size_t n);
char *mem_strdup(const char *s);
char *mem_strndup(const char *s, size_t n);
/* printf into a new string (caller frees). */
char *mem_printf(const char *fmt, ...) __attribute__((format(printf, 1, 2)));

/* A growing text buffer: p is new memory (NUL-terminated once anything was put), freed by the
 * owner with free(p). Start from {0}. */
struct mem_buf {
	char *p;
	size_t len, cap;
};
/* Appends s[0..n) and a NUL. */
void mem_buf_put(struct mem_buf *b, const char *s, size_t n);

/* pthread_create with the same policy: a thread the program needs and cannot have (out of
 * memory or of the process's thread limit) is fatal, named by what (e.g. "stdio worker"). */
void mem_thread(pthread_t *t, void *(*run)(void *), void *arg, const char *what);

/* An arena: while it is its thread's (mem_arena_use), what jansson allocates comes from its
 * blocks, bumped, and jansson's frees of it do nothing; mem_arena_reset frees it all at once.
 * For JSON that never outlives a stretch of work, a call's: what must outlive it (a listen's
 * request id, a cache) is made with the arena put aside (mem_arena_use(NULL), then back).
 * Start from {0}. json_dumps' text made under an arena is freed by mem_json_text_free. */
struct mem_chunk;
struct mem_arena {
	char *p, *end;            /* the room left in the block */
	char *block;              /* the block kept from one reset to the next */
	struct mem_chunk *chunks; /* the rest, freed by the reset */
};
/* Makes a (NULL: none, the heap) the calling thread's arena; returns the one it replaces. */
struct mem_arena *mem_arena_use(struct mem_arena *a);
void mem_arena_reset(struct mem_arena *a);
void mem_arena_free(struct mem_arena *a); /* reset, and its kept block freed */
void mem_json_text_free(char *text);

/* Installs jansson's allocation: mem_alloc's policy, and the thread's arena when it has one. */
void mem_install_jansson(void);

#endif
