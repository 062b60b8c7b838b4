/* Sealed requestState: base64url(payload JSON) "." base64url(HMAC-SHA256(key, prefix+payload)),
 * the payload naming the sealing key's id ("k"). The keys are the process's key ring
 * (common/keyring.h); this file keeps no state of its own. */
#include "reqstate.h"

#include <openssl/crypto.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <openssl/rand.h>
#include <openssl/sha.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/b64.h"
#include "common/jsonw.h"
#include "common/keyring.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/trace.h"

#define REQSTATE_DOMAIN "mcp-requestState-v1."

int reqstate_init(const char *secret)
{
	return keyring_init(secret, NULL) == KEYRING_OK ? 0 : -1;
}

static void reqstate_hex(const unsigned char *in, size_t n, char *out)
{
	static const char hex[] = "0123456789abcdef";
	for (size_t i = 0; i < n; i++) {
		out[2 * i] = hex[in[i] >> 4];
		out[2 * i + 1] = hex[in[i] & 15];
	}
	out[2 * n] = '\0';
}

void reqstate_digest(const json_t *v, char out[65])
{
	char *canon = json_dumps(v, JSON_COMPACT | JSON_SORT_KEYS | JSON_ENCODE_ANY);
	unsigned char md[SHA256_DIGEST_LENGTH];
	SHA256((const unsigned char *)(canon ? canon : ""), canon ? strlen(canon) : 0, md);
	reqstate_hex(md, sizeof md, out);
	free(canon);
}

static void reqstate_mac(const struct keyring_key *k, const char *body, size_t n,
			 unsigned char mac[32])
{
	unsigned int len = 32;
	size_t dn = strlen(REQSTATE_DOMAIN);
	unsigned char *msg = mem_alloc(dn + n);
	memcpy(msg, REQSTATE_DOMAIN, dn);
	memcpy(msg + dn, body, n);
	HMAC(EVP_sha256(), k->key, sizeof k->key, msg, dn + n, mac, &len);
	free(msg);
}

char *reqstate_seal(const struct fleet_actor *actor, const char *method, const char *digest,
		    const json_t *payload, long ttl_s, char nonce_out[REQSTATE_NONCE_HEX + 1])
{
	unsigned char raw[REQSTATE_NONCE_HEX / 2];
	char nonce[REQSTATE_NONCE_HEX + 1];
	struct keyring ring;
	keyring_get(&ring);
	const struct keyring_key *key = ring.n ? &ring.keys[0] : NULL;
	if (!key || RAND_bytes(raw, sizeof raw) != 1)
		abort(); /* our bug (no key ring) or no entropy: never hand out weak state */
	reqstate_hex(raw, sizeof raw, nonce);
	/* "v" stays 1: a release before key rings ignores "k" and opens this state when its one
	 * secret is the current key (a rolling upgrade). */
	json_t *body =
		json_pack("{s:i, s:s, s:s, s:s, s:s, s:s, s:I, s:s, s:O}", "v", 1, "k", key->id,
			  "sub", actor->subject, "cid", actor->client_id, "m", method, "d", digest,
			  "exp", (json_int_t)(time(NULL) + ttl_s), "n", nonce, "p", payload);
	/* The span that asks, and when: its retry's span shows the round trip (reqstate_trace). */
	struct trace_span *asker = trace_current();
	if (asker) {
		char tp[TRACE_PARENT_LEN];
		struct trace_ctx c = trace_ctx_of(asker);
		trace_format(&c, tp);
		json_object_set_new(body, "tp", json_stringn(tp, TRACE_PARENT_LEN - 1));
		json_object_set_new(body, "at", json_integer(trace_now_ns() / 1000000));
	}
	char *text = jsonw_dump(body);
	json_decref(body);
	char *b = b64_encode((const unsigned char *)text, strlen(text), true);
	free(text);
	unsigned char mac[32];
	reqstate_mac(key, b, strlen(b), mac);
	char *m = b64_encode(mac, sizeof mac, true);
	char *state = mem_printf("%s.%s", b, m);
	free(b);
	free(m);
	if (nonce_out)
		memcpy(nonce_out, nonce, sizeof nonce);
	return state;
}

/* The retry of a request that asked for input (body: its state's, opened): a child of the
 * running span from the asking to now (the client's round trip: the user's answer included),
 * and a link to the span that asked. */
static void reqstate_trace(json_t *body)
{
	struct trace_span *s = trace_current();
	struct trace_ctx asker;
	json_t *at = json_object_get(body, "at");
	if (!s || !trace_parse(json_string_value(json_object_get(body, "tp")), &asker) ||
	    !json_is_integer(at) || !trace_link(s, &asker, "input_request"))
		return; /* not traced, or seen already (the core and the handler both open it) */
	struct trace_span *trip = trace_child(s, "input round trip", TRACE_INTERNAL,
					      json_integer_value(at) * 1000000);
	trace_link(trip, &asker, "input_request");
	trace_end(trip, 0);
}

enum reqstate_status reqstate_open(const char *state, const struct fleet_actor *actor,
				   const char *method, const char *digest, json_t **payload,
				   char nonce_out[REQSTATE_NONCE_HEX + 1])
{
	enum reqstate_status st = REQSTATE_MALFORMED;
	unsigned char *mac = NULL, *text = NULL;
	json_t *body = NULL;
	*payload = NULL;
	size_t len = state ? strlen(state) : 0;
	const char *dot = state ? strchr(state, '.') : NULL;
	struct keyring ring; /* one ring for the whole check, whatever a reload does meanwhile */
	keyring_get(&ring);
	if (!ring.n || !dot || len > REQSTATE_MAX_LEN)
		goto out;
	size_t blen = (size_t)(dot - state), mlen = 0, tlen = 0;
	mac = b64_decode(dot + 1, len - blen - 1, true, &mlen);
	/* Every accepted key, each compared in constant time, before anything else is looked at
	 * (a ring holds at most 5 keys). */
	const struct keyring_key *by = NULL;
	for (size_t i = 0; mac && mlen == 32 && i < ring.n; i++) {
		unsigned char want[32];
		reqstate_mac(&ring.keys[i], state, blen, want);
		if (CRYPTO_memcmp(mac, want, sizeof want) == 0)
			by = &ring.keys[i];
	}
	text = b64_decode(state, blen, true, &tlen);
	json_error_t e;
	body = text ? json_loadb((const char *)text, tlen, JSON_REJECT_DUPLICATES, &e) : NULL;
	const char *kid = json_string_value(json_object_get(body, "k"));
	if (!by) {
		/* Refused whatever it says. Only the reason is read from it: a state naming a key
		 * this ring no longer holds was most likely sealed before a rotation. */
		if (kid && !keyring_find(&ring, kid))
			st = REQSTATE_RETIRED_KEY;
		goto out;
	}
	/* A state names the key that sealed it; one without ("k" came with key rings) was sealed
	 * by an earlier release with the key that verified it. */
	if (json_object_get(body, "k") && (!kid || strcmp(kid, by->id) != 0))
		goto out;
	const char *sub = json_string_value(json_object_get(body, "sub"));
	const char *cid = json_string_value(json_object_get(body, "cid"));
	const char *m = json_string_value(json_object_get(body, "m"));
	const char *d = json_string_value(json_object_get(body, "d"));
	const char *n = json_string_value(json_object_get(body, "n"));
	json_t *exp = json_object_get(body, "exp");
	if (json_integer_value(json_object_get(body, "v")) != 1 || !sub || !cid || !m || !d || !n ||
	    strlen(n) != REQSTATE_NONCE_HEX || !json_is_integer(exp) || !json_object_get(body, "p"))
		goto out;
	if (strcmp(sub, actor->subject) != 0 || strcmp(cid, actor->client_id) != 0) {
		st = REQSTATE_WRONG_CALLER;
		goto out;
	}
	if (strcmp(m, method) != 0 || strcmp(d, digest) != 0) {
		st = REQSTATE_WRONG_REQUEST;
		goto out;
	}
	if (json_integer_value(exp) < (json_int_t)time(NULL)) {
		st = REQSTATE_EXPIRED;
		goto out;
	}
	*payload = json_incref(json_object_get(body, "p"));
	reqstate_trace(body);
	if (nonce_out)
		snprintf(nonce_out, REQSTATE_NONCE_HEX + 1, "%s", n);
	st = REQSTATE_OK;
out:
	json_decref(body);
	free(text);
	free(mac);
	return st;
}

const char *reqstate_status_text(enum reqstate_status st)
{
	switch (st) {
	case REQSTATE_OK: return "ok";
	case REQSTATE_MALFORMED: return "requestState is not valid";
	case REQSTATE_EXPIRED: return "requestState has expired";
	case REQSTATE_WRONG_CALLER: return "requestState was issued to another caller";
	case REQSTATE_WRONG_REQUEST: return "requestState was issued for another request";
	case REQSTATE_RETIRED_KEY:
		return "requestState was sealed with a key this server does not accept (its secret "
		       "was rotated out, or it comes from another deployment): start the request "
		       "again";
	}
	return "requestState is not valid";
}
