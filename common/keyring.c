/* The requestState key ring (keyring.h): a process singleton, written by keyring_init() only. */
#include "keyring.h"

#include <openssl/rand.h>
#include <openssl/sha.h>
#include <pthread.h>
#include <stdbool.h>
#include <string.h>

#define KEYRING_ID_LABEL "bikaroo requestState key id v1:"

/* The ring, current key first; replaced whole and copied out under the lock (keyring.h). */
static struct keyring keyring_ring;
static pthread_mutex_t keyring_lock = PTHREAD_MUTEX_INITIALIZER;

static void keyring_derive(const char *secret, size_t n, struct keyring_key *k)
{
	static const char hex[] = "0123456789abcdef";
	SHA256((const unsigned char *)secret, n, k->key);
	unsigned char in[sizeof KEYRING_ID_LABEL - 1 + sizeof k->key], md[SHA256_DIGEST_LENGTH];
	memcpy(in, KEYRING_ID_LABEL, sizeof KEYRING_ID_LABEL - 1);
	memcpy(in + sizeof KEYRING_ID_LABEL - 1, k->key, sizeof k->key);
	SHA256(in, sizeof in, md);
	for (size_t i = 0; i < KEYRING_ID_HEX / 2; i++) {
		k->id[2 * i] = hex[md[i] >> 4];
		k->id[2 * i + 1] = hex[md[i] & 15];
	}
	k->id[KEYRING_ID_HEX] = '\0';
}

/* Adds the key of secret[0..n) unless the ring holds it already. */
static enum keyring_status keyring_add(struct keyring_key *ring, size_t *n, const char *secret,
				       size_t len)
{
	if (len < KEYRING_MIN_SECRET)
		return KEYRING_SHORT_SECRET;
	struct keyring_key k;
	keyring_derive(secret, len, &k);
	for (size_t i = 0; i < *n; i++)
		if (memcmp(ring[i].key, k.key, sizeof k.key) == 0)
			return KEYRING_OK;
	if (*n == 1 + KEYRING_MAX_PREVIOUS)
		return KEYRING_TOO_MANY;
	ring[(*n)++] = k;
	return KEYRING_OK;
}

enum keyring_status keyring_init(const char *current, const char *previous)
{
	struct keyring r = {0};
	enum keyring_status st = KEYRING_OK;
	bool has_previous = previous && strspn(previous, "\r\n") < strlen(previous);
	if (current && *current) {
		st = keyring_add(r.keys, &r.n, current, strlen(current));
	} else if (has_previous) {
		st = KEYRING_NO_CURRENT;
	} else {
		/* A random key: states are valid in this process only. */
		if (RAND_bytes(r.keys[0].key, sizeof r.keys[0].key) != 1)
			return KEYRING_NO_ENTROPY;
		keyring_derive((const char *)r.keys[0].key, sizeof r.keys[0].key, &r.keys[0]);
		r.n = 1;
	}
	for (const char *p = previous; st == KEYRING_OK && p && *p;) {
		size_t len = strcspn(p, "\n");
		size_t use = len > 0 && p[len - 1] == '\r' ? len - 1 : len;
		if (use > 0)
			st = keyring_add(r.keys, &r.n, p, use);
		p += len + (p[len] == '\n');
	}
	if (st != KEYRING_OK)
		return st;
	pthread_mutex_lock(&keyring_lock);
	keyring_ring = r;
	pthread_mutex_unlock(&keyring_lock);
	return KEYRING_OK;
}

void keyring_get(struct keyring *out)
{
	pthread_mutex_lock(&keyring_lock);
	*out = keyring_ring;
	pthread_mutex_unlock(&keyring_lock);
}

const struct keyring_key *keyring_find(const struct keyring *r, const char *id)
{
	for (size_t i = 0; id && i < r->n; i++)
		if (strcmp(r->keys[i].id, id) == 0)
			return &r->keys[i];
	return NULL;
}

const char *keyring_status_text(enum keyring_status st)
{
	switch (st) {
	case KEYRING_OK: return "ok";
	case KEYRING_SHORT_SECRET:
		return "BIKAROO_STATE_SECRET and every BIKAROO_STATE_SECRET_PREVIOUS line must be "
		       "at "
		       "least 32 characters";
	case KEYRING_TOO_MANY: return "BIKAROO_STATE_SECRET_PREVIOUS holds more than 4 secrets";
	case KEYRING_NO_CURRENT:
		return "BIKAROO_STATE_SECRET_PREVIOUS is set but BIKAROO_STATE_SECRET is not: set "
		       "the "
		       "current secret too";
	case KEYRING_NO_ENTROPY: return "no random bytes for the requestState key";
	}
	return "invalid requestState keys";
}
