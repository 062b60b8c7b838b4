/* requestState for multi round-trip requests (input_required): an opaque, integrity-protected
 * (HMAC-SHA256), expiring token bound to the acting subject and client, the method and a digest
 * of the request's key parameters. Whatever comes back from a client is attacker-controlled:
 * reqstate_open() refuses anything that was not sealed here for exactly this request. */
#ifndef BIKAROO_REQSTATE_H
#define BIKAROO_REQSTATE_H

#include <jansson.h>
#include <stdbool.h>

#include "domain/types.h"

#define REQSTATE_MAX_LEN 8192
#define REQSTATE_NONCE_HEX 32

enum reqstate_status {
	REQSTATE_OK = 0,
	REQSTATE_MALFORMED, /* not ours, tampered or truncated */
	REQSTATE_EXPIRED,
	REQSTATE_WRONG_CALLER,  /* sealed for another subject or client */
	REQSTATE_WRONG_REQUEST, /* sealed for another method or other parameters */
	REQSTATE_RETIRED_KEY,   /* sealed with a key the ring no longer holds (rotated out) */
};

/* States are sealed with the current key of the process's key ring (common/keyring.h) and
 * opened with any key it accepts. This sets a ring of one key, from a secret of at least 32
 * bytes (any text), or, when secret is empty, from 32 random bytes: then states are valid on
 * this process only. 0 on success. The server sets its ring with keyring_init(). */
int reqstate_init(const char *secret) __attribute__((warn_unused_result));

/* Writes the SHA-256 (hex) of v's canonical JSON (sorted keys, compact) into out[65]. */
void reqstate_digest(const json_t *v, char out[65]);

/* Seals payload (borrowed) for actor/method/digest, valid ttl_s seconds, with a fresh random
 * nonce (copied to nonce_out when not NULL). Returns new memory (caller frees). */
char *reqstate_seal(const struct fleet_actor *actor, const char *method, const char *digest,
		    const json_t *payload, long ttl_s, char nonce_out[REQSTATE_NONCE_HEX + 1]);

/* Verifies state for this actor/method/digest. On REQSTATE_OK, *payload is a new reference and
 * nonce_out (when not NULL) receives the nonce sealed in it. */
enum reqstate_status reqstate_open(const char *state, const struct fleet_actor *actor,
				   const char *method, const char *digest, json_t **payload,
				   char nonce_out[REQSTATE_NONCE_HEX + 1])
	__attribute__((warn_unused_result));

const char *reqstate_status_text(enum reqstate_status st);

#endif
