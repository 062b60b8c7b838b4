/* libFuzzer target: sealed requestState (server/protocol/reqstate.c), which comes back from
 * clients as they like. The first byte chooses the input's use: a state as a client sends it
 * (base64url, the dot, the MAC: every decoding path, refused unless sealed here); a state body
 * (any bytes, taken for the JSON a state carries) that the harness seals with the ring's current
 * key as reqstate.c does, so that every check behind the MAC runs on arbitrary but authentic
 * content; or a payload (JSON) sealed by reqstate_seal itself, which must open again, equal,
 * for its own caller and request only. Build and run: make fuzz. */
#include <jansson.h>
#include <openssl/evp.h>
#include <openssl/hmac.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/keyring.h"
#include "common/mem.h"
#include "server/protocol/reqstate.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static const struct fleet_actor fz_actor = {
	"marie", "customer-care-assistant", FLEET_SCOPE_READ | FLEET_SCOPE_REPORT, false, 0, ""};
static const struct fleet_actor fz_other = {
	"olivia", "customer-care-assistant", FLEET_SCOPE_READ | FLEET_SCOPE_REPORT, false, 0, ""};
#define FZ_METHOD "tools/call"
#define FZ_DIGEST "8f434346648f6b96df89dda901c5176b10a6d83961dd3c1ac88b59b2dc327aa4"

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mem_install_jansson();
	/* A current key and a previous one: states naming either, or a third, all reach their
	 * paths. */
	if (keyring_init("the current fuzzing secret, long enough for the ring",
			 "a previous fuzzing secret, as long as the current one") != KEYRING_OK)
		abort();
	return 0;
}

static void fz_open(const char *state)
{
	json_t *payload = NULL;
	char nonce[REQSTATE_NONCE_HEX + 1];
	enum reqstate_status st =
		reqstate_open(state, &fz_actor, FZ_METHOD, FZ_DIGEST, &payload, nonce);
	if ((st == REQSTATE_OK) != (payload != NULL) ||
	    (st == REQSTATE_OK && strlen(nonce) != REQSTATE_NONCE_HEX))
		abort();
	(void)reqstate_status_text(st);
	json_decref(payload);
}

/* body (any bytes) sealed with the current key, as reqstate_seal would seal its JSON. */
static void fz_seal_body(const uint8_t *body, size_t n)
{
	char *b = b64_encode(body, n, true);
	struct keyring ring;
	keyring_get(&ring);
	const struct keyring_key *k = &ring.keys[0];
	static const char domain[] = "mcp-requestState-v1.";
	size_t bl = strlen(b);
	unsigned char *msg = mem_alloc(sizeof domain - 1 + bl), mac[32];
	memcpy(msg, domain, sizeof domain - 1);
	memcpy(msg + sizeof domain - 1, b, bl);
	unsigned int len = sizeof mac;
	HMAC(EVP_sha256(), k->key, sizeof k->key, msg, sizeof domain - 1 + bl, mac, &len);
	char *m = b64_encode(mac, sizeof mac, true);
	char *state = mem_printf("%s.%s", b, m);
	fz_open(state);
	free(state);
	free(m);
	free(msg);
	free(b);
}

/* A payload sealed here opens to the same payload for its caller and request, and for no other
 * caller, method or digest. */
static void fz_round_trip(const uint8_t *text, size_t n, long ttl)
{
	json_error_t e;
	json_t *p = json_loadb((const char *)text, n, JSON_DECODE_ANY | JSON_REJECT_DUPLICATES, &e);
	if (!p)
		return;
	char sealed_nonce[REQSTATE_NONCE_HEX + 1], nonce[REQSTATE_NONCE_HEX + 1];
	char *state = reqstate_seal(&fz_actor, FZ_METHOD, FZ_DIGEST, p, ttl, sealed_nonce);
	json_t *back = NULL;
	enum reqstate_status st =
		reqstate_open(state, &fz_actor, FZ_METHOD, FZ_DIGEST, &back, nonce);
	if (strlen(state) > REQSTATE_MAX_LEN) {
		if (st != REQSTATE_MALFORMED) /* too long to be opened: refused, never read */
			abort();
	} else if (ttl > 0 ? st != REQSTATE_OK || !json_equal(p, back) ||
				     strcmp(nonce, sealed_nonce) != 0
			   : ttl < 0 && st != REQSTATE_EXPIRED) {
		abort(); /* (a ttl of 0 ends within the second: either answer is right) */
	}
	json_decref(back);
	json_t *none = NULL;
	if (reqstate_open(state, &fz_other, FZ_METHOD, FZ_DIGEST, &none, NULL) == REQSTATE_OK ||
	    reqstate_open(state, &fz_actor, "prompts/get", FZ_DIGEST, &none, NULL) == REQSTATE_OK ||
	    reqstate_open(state, &fz_actor, FZ_METHOD, "0", &none, NULL) == REQSTATE_OK)
		abort();
	/* One byte of its body changed and it is refused: the MAC is over the body's text. */
	size_t len = (size_t)(strchr(state, '.') - state);
	if (len) {
		size_t at = (size_t)(ttl + 8) % len;
		state[at] = state[at] == 'A' ? 'B' : 'A';
		if (reqstate_open(state, &fz_actor, FZ_METHOD, FZ_DIGEST, &none, NULL) ==
		    REQSTATE_OK)
			abort();
	}
	free(state);
	json_decref(p);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > 2 * REQSTATE_MAX_LEN)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	switch (data[0] % 3) {
	case 0: {
		char *state = mem_strndup((const char *)p, n);
		fz_open(state);
		free(state);
		break;
	}
	case 1: fz_seal_body(p, n); break;
	default: fz_round_trip(p, n, (long)(data[0] / 3) - 8); break;
	}
	return 0;
}
