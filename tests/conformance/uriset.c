/* A bounded, thread-safe set of resource URIs (see uriset.h). Linear: it holds at most
 * URISET_MAX short strings, and is read once per change notification. */
#include "uriset.h"

#include <stdlib.h>
#include <string.h>

#include "common/mem.h"

int uriset_change(struct uriset *s, const char *uri, bool on)
{
	int rc = on ? -1 : 0;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < URISET_MAX; i++)
		if (s->uris[i] && strcmp(s->uris[i], uri) == 0) {
			if (!on) {
				free(s->uris[i]);
				s->uris[i] = NULL;
			}
			on = false; /* already a member */
			rc = 0;
		}
	for (size_t i = 0; on && i < URISET_MAX; i++)
		if (!s->uris[i]) {
			s->uris[i] = mem_strdup(uri);
			rc = 0;
			break;
		}
	pthread_mutex_unlock(&s->lock);
	return rc;
}

bool uriset_has(struct uriset *s, const char *uri)
{
	bool has = false;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < URISET_MAX && !has; i++)
		has = s->uris[i] && strcmp(s->uris[i], uri) == 0;
	pthread_mutex_unlock(&s->lock);
	return has;
}

size_t uriset_copy(struct uriset *s, char **out, size_t max)
{
	size_t n = 0;
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < URISET_MAX && n < max; i++)
		if (s->uris[i])
			out[n++] = mem_strdup(s->uris[i]);
	pthread_mutex_unlock(&s->lock);
	return n;
}

void uriset_clear(struct uriset *s)
{
	pthread_mutex_lock(&s->lock);
	for (size_t i = 0; i < URISET_MAX; i++) {
		free(s->uris[i]);
		s->uris[i] = NULL;
	}
	pthread_mutex_unlock(&s->lock);
}
