/* The requestState key ring: the keys that seal and open sealed state (protocol/reqstate.c).
 *
 * A PROCESS SINGLETON, on purpose and only this: every instance of a deployment must hold the
 * same ring, so it is configuration of the process, like its listen address, not
 * per-server-description state. Set by keyring_init() at start and again on SIGHUP (a
 * rotation step without a restart): a new ring replaces the old one whole, under a lock, and a
 * reader works on its own copy (keyring_get), so a call in flight never sees half a ring.
 *
 * One current key seals every new state; the others (previous keys, or the next one announced
 * before it becomes current) are only accepted. A key is SHA-256 of its secret text (the same
 * derivation as before key rings, so a state sealed by a release without them verifies); its id
 * is the first 8 hex digits of SHA-256 of a fixed label and the key, the same on every instance
 * without any naming, carried in every sealed state. */
#ifndef BIKAROO_KEYRING_H
#define BIKAROO_KEYRING_H

#include <stddef.h>

#define KEYRING_MAX_PREVIOUS 4
#define KEYRING_ID_HEX 8
#define KEYRING_MIN_SECRET 32

struct keyring_key {
	char id[KEYRING_ID_HEX + 1];
	unsigned char key[32];
};

enum keyring_status {
	KEYRING_OK = 0,
	KEYRING_SHORT_SECRET, /* a secret of fewer than KEYRING_MIN_SECRET characters */
	KEYRING_TOO_MANY,     /* more than KEYRING_MAX_PREVIOUS previous secrets */
	KEYRING_NO_CURRENT,   /* previous secrets without a current one */
	KEYRING_NO_ENTROPY,   /* no random bytes for a process-only key */
};

/* The ring as it is at one moment: keys[0] the current key, then the accepted ones. */
struct keyring {
	size_t n; /* 0 before a successful keyring_init() */
	struct keyring_key keys[1 + KEYRING_MAX_PREVIOUS];
};

/* Sets the ring: current (borrowed; "" for a random key valid in this process only) and
 * previous (borrowed; NULL or "" for none, else secrets separated by newlines, blank lines and
 * a trailing CR ignored; a repeat of the current one or of another is dropped). Any thread, any
 * time: the new ring replaces the old one whole. On failure the ring stays as it was. */
enum keyring_status keyring_init(const char *current, const char *previous)
	__attribute__((warn_unused_result));

/* A copy of the ring as it is now. */
void keyring_get(struct keyring *out);

/* The key of r whose id is id, or NULL. Borrowed from r. */
const struct keyring_key *keyring_find(const struct keyring *r, const char *id);

/* Why keyring_init() refused, naming the setting, for a start-up error. Static. */
const char *keyring_status_text(enum keyring_status st);

#endif
