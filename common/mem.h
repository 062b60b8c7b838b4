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

/* Installs mem_alloc/free into jansson so that JSON allocation follows the same policy. */
void mem_install_jansson(void);

#endif
