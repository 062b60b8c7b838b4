/* A bounded, thread-safe set of resource URIs: a connection's subscriptions. */
#ifndef BIKAROO_URISET_H
#define BIKAROO_URISET_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

#define URISET_MAX 256

struct uriset {
	pthread_mutex_t lock;
	char *uris[URISET_MAX];
};

#define URISET_INIT                                                                                \
	{                                                                                          \
		.lock = PTHREAD_MUTEX_INITIALIZER                                                  \
	}

/* Adds (on) or removes uri (copied). 0, or -1 when adding to a full set; adding what is
 * there and removing what is not are no-ops. */
int uriset_change(struct uriset *s, const char *uri, bool on);
bool uriset_has(struct uriset *s, const char *uri);
/* Copies of the members into out (at most max; free each); returns how many. */
size_t uriset_copy(struct uriset *s, char **out, size_t max);
/* Empties the set. */
void uriset_clear(struct uriset *s);

#endif
