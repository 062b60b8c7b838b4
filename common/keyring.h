/* The requestState key ring: the keys that seal and open sealed state (protocol/reqstate.c).
 *
 * A PROCESS SINGLETON, on purpose and only this: set once at start by keyring_init(), before
 * any thread that seals or opens state exists, and read-only from then on (tests set it again
 * between single-threaded cases). Every instance of a deployment must hold the same ring, so it
 * is configuration of the process, like its listen address, not per-server-description state.
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

/* Sets the ring: current (borrowed; "" for a random key valid in this process only) and
 * previous (borrowed; NULL or "" for none, else secrets separated by newlines, blank lines and
 * a trailing CR ignored; a repeat of the current one or of another is dropped). On failure the
 * ring is left empty: nothing seals or opens. */
enum keyring_status keyring_init(const char *current, const char *previous)
	__attribute__((warn_unused_result));

/* The key that seals, or NULL before a successful keyring_init(). Borrowed. */
const struct keyring_key *keyring_current(void);

/* The i-th accepted key, the current one first; NULL past the last. Borrowed. */
const struct keyring_key *keyring_at(size_t i);

/* The accepted key whose id is id, or NULL. Borrowed. */
const struct keyring_key *keyring_find(const char *id);

/* Why keyring_init() refused, naming the setting, for a start-up error. Static. */
const char *keyring_status_text(enum keyring_status st);

#endif
