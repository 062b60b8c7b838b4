/* libFuzzer target: bearer-token validation (jwt_verify) against a fixed ES256 key set. The
 * first byte chooses the input's use: the token itself (header, base64url, JSON and signature
 * parsing), or claims (then a header) that this harness signs with the key, so that every claim
 * check runs on arbitrary but validly signed JSON. Build and run: make fuzz. */
#include <cjose/cjose.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/auth/jwt.h"

int LLVMFuzzerInitialize(int *argc, char ***argv);
int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

static cjose_jwk_t *fuzz_key;
static struct jwt_keyset *fuzz_ks;
static const struct jwt_policy fuzz_policy = {"https://as.example",
					      "https://fleet.example/mcp",
					      NULL,
					      JWT_ALG_RS256 | JWT_ALG_ES256,
					      60,
					      3600};

int LLVMFuzzerInitialize(int *argc, char ***argv)
{
	(void)argc;
	(void)argv;
	mem_install_jansson();
	cjose_err err;
	fuzz_key = cjose_jwk_create_EC_random(CJOSE_JWK_EC_P_256, &err);
	if (!fuzz_key || !cjose_jwk_set_kid(fuzz_key, "k1", 2, &err))
		abort();
	char *pub = cjose_jwk_to_json(fuzz_key, false, &err);
	char *jwks = mem_printf("{\"keys\":[%s]}", pub);
	if (jwt_keyset_parse(jwks, strlen(jwks), &fuzz_ks) != JWT_OK)
		abort();
	free(jwks);
	free(pub);
	return 0;
}

static void fuzz_verify(const char *token, size_t len)
{
	json_t *claims = NULL;
	const char *why = NULL;
	(void)jwt_verify(fuzz_ks, &fuzz_policy, token, len, 1800000000L, &claims, &why);
	json_decref(claims);
}

/* Signs claims (any bytes) with the key; hdr_json (a JSON object, or NULL) replaces the
 * default header {"alg":"ES256","kid":"k1","typ":"at+jwt"}. */
static void fuzz_signed(const uint8_t *claims, size_t n, const char *hdr_json)
{
	cjose_err err;
	cjose_header_t *h = NULL;
	if (hdr_json) {
		json_error_t je;
		json_t *j = json_loads(hdr_json, 0, &je);
		if (!json_is_object(j) || !json_is_string(json_object_get(j, "alg"))) {
			json_decref(j);
			return;
		}
		h = (cjose_header_t *)j; /* cjose headers are jansson objects */
	} else {
		h = cjose_header_new(&err);
		cjose_header_set(h, CJOSE_HDR_ALG, CJOSE_HDR_ALG_ES256, &err);
		cjose_header_set(h, CJOSE_HDR_KID, "k1", &err);
		cjose_header_set(h, "typ", "at+jwt", &err);
	}
	cjose_jws_t *jws = cjose_jws_sign(fuzz_key, h, claims, n, &err);
	const char *ser = NULL;
	if (jws && cjose_jws_export(jws, &ser, &err))
		fuzz_verify(ser, strlen(ser));
	cjose_jws_release(jws);
	cjose_header_release(h);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < 1 || size > JWT_MAX_TOKEN)
		return 0;
	const uint8_t *p = data + 1;
	size_t n = size - 1;
	switch (data[0] % 3) {
	case 0: {
		char *token = mem_strndup((const char *)p, n);
		fuzz_verify(token, n);
		free(token);
		break;
	}
	case 1: fuzz_signed(p, n, NULL); break;
	default: {
		/* claims, NUL, header */
		const uint8_t *nul = memchr(p, '\0', n);
		if (!nul)
			return 0;
		char *hdr = mem_strndup((const char *)nul + 1, n - (size_t)(nul + 1 - p));
		fuzz_signed(p, (size_t)(nul - p), hdr);
		free(hdr);
		break;
	}
	}
	return 0;
}
