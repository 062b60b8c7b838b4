/* The resource-server side of OAuth 2.1: bearer parsing, JWT validation against a cached JWKS
 * (issuer metadata discovered lazily), RFC 7662 introspection, one short cache of validation
 * results for both (server/auth/tokcache.c), RFC 9728 metadata and WWW-Authenticate challenges.
 * Every fetch from the issuer waits through the caller's loop (fetch.h), one per purpose at a
 * time (struct auth_once). Tokens are never logged or stored: the cache keys are SHA-256
 * digests. */
#include "auth.h"

#include <cjose/cjose.h>
#include <curl/curl.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <time.h>

#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/task.h"
#include "common/task_cond.h"
#include "common/trace.h"
#include "fetch.h"
#include "jwt.h"
#include "scopes.h"
#include "tokcache.h"

#define AUTH_JWKS_TTL 3600 /* seconds before a key set is refreshed in the background of use */
/* Introspections under way at once, all loops together: past it a token never seen gets 503 +
 * Retry-After at once (a flood of made-up tokens must not become a flood at the issuer). */
#define AUTH_INTROSPECTIONS_MAX 64

/* A key set shared by the requests that use it; freed when the last one lets go. gen numbers
 * the sets in the order they were installed: a cached token verified with an older set is
 * verified again (the key that signed it may be gone). */
struct auth_keys {
	struct jwt_keyset *ks;
	long fetched;
	int refs;
	unsigned long gen;
};

/* One fetch at a time per purpose (the issuer's metadata, its key set, one token's
 * introspection): the first call that needs it runs it; the others wait for its end, their
 * tasks parked and their loops free (task_cond_wait), and use what it left. Under auth.lock. */
struct auth_once {
	bool running;
	unsigned long round; /* fetches ended */
	struct task_cond landed;
	struct trace_ctx span; /* of the last fetch's span (invalid: not recorded) */
};

/* An introspection under way, and its verdict for the calls that present the same token. */
struct auth_flight {
	unsigned char d[TOKCACHE_DIGEST]; /* of the token */
	struct auth_once once;
	int refs; /* the call that runs it and those that wait for it */
	enum auth_status st;
	struct fleet_actor actor;
	const char *why; /* static, or auth.audience_why */
	struct auth_flight *next;
};

static struct {
	enum auth_mode mode;
	char *issuer, *resource, *prm_url, *prm_local;
	char *audience_why;              /* the audience refusal, naming the audience expected */
	char *client_id, *client_secret; /* introspection: the server's own client */
	struct jwt_policy policy;
	struct fetch_policy fetch;
	long refresh_cooldown, cache_ttl;
	pthread_mutex_t lock; /* guards everything below */
	struct auth_once meta_once, keys_once;
	bool discovered; /* the issuer's metadata was read: the two URIs below are set for good */
	char *jwks_uri, *introspection_uri;
	long last_attempt; /* of a key-set fetch */
	bool keys_failed;  /* the last key-set fetch failed: a key it would name is not known absent
			    */
	struct auth_keys *keys;
	long intro_down_until; /* introspection failed: answer 503 at once until then */
	struct auth_flight *flights;
	int nflights;
	long flights_full_said; /* when the cap of introspections was last logged */
	/* Outside the lock: read on every request. */
	atomic_ulong keys_gen;  /* gen of auth.keys (0: none yet) */
	struct tokcache *cache; /* validated tokens (JWT) or introspection answers */
} auth = {.lock = PTHREAD_MUTEX_INITIALIZER};

static long auth_now(void)
{
	return (long)time(NULL);
}

enum auth_mode auth_mode(void)
{
	return auth.mode;
}

/* Splits an absolute URL into origin ("https://host:port") and path ("" or "/..."). */
static bool auth_split_url(const char *url, char **origin, char **path)
{
	const char *s = strstr(url, "://");
	if (!s || s == url)
		return false;
	const char *p = strchr(s + 3, '/');
	size_t olen = p ? (size_t)(p - url) : strlen(url);
	if (olen == (size_t)(s + 3 - url))
		return false;
	*origin = mem_strndup(url, olen);
	*path = mem_strdup(p && strcmp(p, "/") != 0 ? p : "");
	return true;
}

enum auth_status auth_init(const struct auth_settings *set)
{
	if (strcmp(set->mode, "jwt") == 0)
		auth.mode = AUTH_MODE_JWT;
	else if (strcmp(set->mode, "introspection") == 0)
		auth.mode = AUTH_MODE_INTROSPECTION;
	else {
		auth.mode = AUTH_MODE_LOCAL;
		return AUTH_OK;
	}
	cjose_set_alloc_funcs(mem_alloc, mem_realloc, free);
	curl_global_init(CURL_GLOBAL_DEFAULT);
	auth.fetch.allow_loopback_http = set->insecure_loopback;
	auth.fetch.timeout_ms = set->timeout_ms;
	auth.refresh_cooldown = set->refresh_seconds;
	auth.cache_ttl = set->cache_seconds;
	char *origin = NULL, *path = NULL;
	if (!fetch_url_allowed(&auth.fetch, set->issuer) || strchr(set->issuer, '?')) {
		log_error(
			"BIKAROO_AUTH_ISSUER must be the issuer's https URL (http only to loopback "
			"with BIKAROO_AUTH_INSECURE_LOOPBACK=1)");
		return AUTH_CONFIG;
	}
	if (!fetch_url_allowed(&auth.fetch, set->resource_uri) || strchr(set->resource_uri, '?') ||
	    !auth_split_url(set->resource_uri, &origin, &path)) {
		log_error(
			"BIKAROO_RESOURCE_URI must be this server's canonical https URI (no query, "
			"no fragment), e.g. https://mcp.example.com/mcp");
		return AUTH_CONFIG;
	}
	auth.policy.algs = jwt_parse_algs(set->algs);
	if (!auth.policy.algs) {
		free(origin);
		free(path);
		log_error("BIKAROO_AUTH_ALGS may only list RS256 and ES256");
		return AUTH_CONFIG;
	}
	if (auth.mode == AUTH_MODE_INTROSPECTION && (!*set->client_id || !*set->client_secret)) {
		free(origin);
		free(path);
		log_error("BIKAROO_AUTH=introspection needs BIKAROO_AUTH_CLIENT_ID and "
			  "BIKAROO_AUTH_CLIENT_SECRET (the server's own client at the issuer)");
		return AUTH_CONFIG;
	}
	auth.issuer = mem_strdup(set->issuer);
	auth.resource = mem_strdup(set->resource_uri);
	auth.prm_url = mem_printf("%s/.well-known/oauth-protected-resource%s", origin, path);
	auth.prm_local = mem_printf("/.well-known/oauth-protected-resource%s", path);
	auth.client_id = fetch_form_encode(set->client_id);
	auth.client_secret = fetch_form_encode(set->client_secret);
	auth.policy.issuer = auth.issuer;
	auth.policy.audience = auth.resource;
	auth.audience_why =
		mem_printf("token audience is not this server: it must name %s", auth.resource);
	auth.policy.audience_why = auth.audience_why;
	auth.policy.skew = set->skew;
	auth.policy.max_lifetime = set->max_lifetime;
	auth.cache = tokcache_new(auth.cache_ttl);
	free(origin);
	free(path);
	return AUTH_OK;
}

static void auth_keys_release(struct auth_keys *k)
{
	if (!k)
		return;
	pthread_mutex_lock(&auth.lock);
	bool last = --k->refs == 0;
	pthread_mutex_unlock(&auth.lock);
	if (last) {
		jwt_keyset_free(k->ks);
		free(k);
	}
}

void auth_cleanup(void)
{
	if (auth.mode == AUTH_MODE_LOCAL)
		return;
	auth_keys_release(auth.keys);
	auth.keys = NULL;
	free(auth.issuer);
	free(auth.resource);
	free(auth.audience_why);
	auth.audience_why = NULL;
	free(auth.prm_url);
	free(auth.prm_local);
	free(auth.client_id);
	free(auth.client_secret);
	free(auth.jwks_uri);
	free(auth.introspection_uri);
	tokcache_free(auth.cache);
	auth.cache = NULL;
	atomic_store(&auth.keys_gen, 0);
	auth.issuer = auth.resource = auth.prm_url = auth.prm_local = NULL;
	auth.client_id = auth.client_secret = auth.jwks_uri = auth.introspection_uri = NULL;
	if (auth.meta_once.running || auth.keys_once.running || auth.flights) {
		log_error("auth_cleanup: a fetch from the issuer is under way");
		abort(); /* our bug: its caller waits for it, and the server has stopped */
	}
	auth.discovered = false;
	auth.last_attempt = auth.intro_down_until = 0;
	auth.keys_failed = false;
	auth.mode = AUTH_MODE_LOCAL;
	curl_global_cleanup();
}

/* ---- bearer parsing ----------------------------------------------------------------- */

enum auth_status auth_bearer(const char *const *values, size_t n, const char **token, size_t *len)
{
	*token = NULL;
	*len = 0;
	if (n == 0)
		return AUTH_NO_TOKEN;
	if (n > 1)
		return AUTH_BAD_REQUEST;
	const char *v = values[0];
	size_t scheme = strcspn(v, " ");
	if (scheme != 6 || strncasecmp(v, "Bearer", 6) != 0)
		return AUTH_NO_TOKEN; /* another scheme (Basic...): no Bearer credentials (RFC 6750
					 section 3: 401 with the plain challenge) */
	if (v[6] != ' ')
		return AUTH_BAD_REQUEST; /* "Bearer" without credentials */
	const char *t = v + 6;
	while (*t == ' ')
		t++;
	/* token68 = 1*( ALPHA / DIGIT / "-" / "." / "_" / "~" / "+" / "/" ) *"=" */
	size_t i = 0;
	while ((t[i] >= 'A' && t[i] <= 'Z') || (t[i] >= 'a' && t[i] <= 'z') ||
	       (t[i] >= '0' && t[i] <= '9') || (t[i] && strchr("-._~+/", t[i])))
		i++;
	if (i == 0)
		return AUTH_BAD_REQUEST;
	while (t[i] == '=')
		i++;
	size_t end = i;
	while (t[end] == ' ')
		end++;
	if (t[end] != '\0' || i > JWT_MAX_TOKEN)
		return AUTH_BAD_REQUEST;
	*token = t;
	*len = i;
	return AUTH_OK;
}

/* ---- principal -------------------------------------------------------------------- */

/* The token's reference for the audit (fleet_actor.token_ref): its jti when it has a printable
 * one of at most 128 bytes, else the digest d of the token. */
static void auth_token_ref(const json_t *claims, const unsigned char d[TOKCACHE_DIGEST],
			   struct fleet_actor *out)
{
	const char *jti = json_string_value(json_object_get(claims, "jti"));
	size_t n = jti ? strlen(jti) : 0;
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)jti[i] < 0x21 || (unsigned char)jti[i] > 0x7e)
			n = 0; /* not printable ASCII: the digest says as much, and safely */
	if (n && n <= 128) {
		snprintf(out->token_ref, sizeof out->token_ref, "jti:%s", jti);
		return;
	}
	static const char hex[] = "0123456789abcdef";
	char h[2 * TOKCACHE_DIGEST + 1];
	for (size_t i = 0; i < TOKCACHE_DIGEST; i++) {
		h[2 * i] = hex[d[i] >> 4];
		h[2 * i + 1] = hex[d[i] & 15];
	}
	h[2 * TOKCACHE_DIGEST] = '\0';
	snprintf(out->token_ref, sizeof out->token_ref, "sha256:%s", h);
}

/* Fills the actor from validated claims (JWT payload or introspection answer) of the token
 * whose digest is d. */
static bool auth_actor_from(const json_t *claims, const unsigned char d[TOKCACHE_DIGEST],
			    struct fleet_actor *out)
{
	memset(out, 0, sizeof *out);
	const char *sub = json_string_value(json_object_get(claims, "sub"));
	const char *client = json_string_value(json_object_get(claims, "client_id"));
	if (!client || !*client)
		client = json_string_value(json_object_get(claims, "azp"));
	if (!sub || !*sub || !client || !*client || strlen(sub) >= sizeof out->subject ||
	    strlen(client) >= sizeof out->client_id)
		return false;
	snprintf(out->subject, sizeof out->subject, "%s", sub);
	snprintf(out->client_id, sizeof out->client_id, "%s", client);
	out->scopes = scopes_parse(json_string_value(json_object_get(claims, "scope")));
	/* Client credentials: the client acts on its own authority, never as a person. */
	out->machine = strcmp(sub, client) == 0;
	auth_token_ref(claims, d, out);
	return true;
}

/* ---- one fetch per purpose ------------------------------------------------------------------ */

/* With auth.lock held: true when the caller is to run o's fetch (auth_once_end once it ended);
 * false when one was under way: the caller waited for its end (the lock held again), and the
 * span it runs in links to that fetch's (its trace shows what it waited for). */
static bool auth_once_begin(struct auth_once *o)
{
	if (!o->running) {
		o->running = true;
		return true;
	}
	for (unsigned long r = o->round; o->round == r;)
		task_cond_wait(&o->landed, &auth.lock);
	(void)trace_link(trace_current(), &o->span, "waited");
	return false;
}

/* With auth.lock held: o's fetch ended (span: its span's context); the calls that waited for
 * it go on. */
static void auth_once_end(struct auth_once *o, const struct trace_ctx *span)
{
	o->span = *span;
	o->running = false;
	o->round++;
	task_cond_broadcast(&o->landed);
}

/* ---- discovery and keys ----------------------------------------------------------------- */

/* Fetches the issuer's metadata (RFC 8414, then OpenID Connect discovery) and sets
 * *jwks_uri and *introspection (new strings, may stay NULL); *span: its last fetch's. Runs
 * without the lock. */
static enum auth_status auth_discover(char **jwks_uri, char **introspection, struct trace_ctx *span)
{
	char *origin = NULL, *path = NULL;
	if (!auth_split_url(auth.issuer, &origin, &path))
		return AUTH_UNAVAILABLE;
	char *urls[3] = {
		mem_printf("%s/.well-known/oauth-authorization-server%s", origin, path),
		mem_printf("%s/.well-known/openid-configuration%s", origin, path),
		*path ? mem_printf("%s%s/.well-known/openid-configuration", origin, path) : NULL,
	};
	enum auth_status st = AUTH_UNAVAILABLE;
	for (size_t i = 0; i < 3 && urls[i] && st != AUTH_OK; i++) {
		char *body = NULL;
		long code = 0;
		struct fetch_note note = {.purpose = "metadata"};
		enum fetch_status fs =
			fetch_http(&auth.fetch, urls[i], NULL, NULL, NULL, &note, &body, &code);
		*span = note.span;
		if (fs != FETCH_OK) {
			log_warn("issuer metadata %s: %s", urls[i],
				 fs == FETCH_HTTP_ERROR ? "not found" : "unavailable");
			continue;
		}
		json_error_t e;
		json_t *m = json_loads(body, JSON_REJECT_DUPLICATES, &e);
		free(body);
		const char *iss = json_string_value(json_object_get(m, "issuer"));
		const char *ju = json_string_value(json_object_get(m, "jwks_uri"));
		const char *iu = json_string_value(json_object_get(m, "introspection_endpoint"));
		if (!iss || strcmp(iss, auth.issuer) != 0) {
			/* RFC 8414 3.3: metadata for another issuer must not be used. */
			log_error("issuer metadata at %s names another issuer", urls[i]);
		} else {
			*jwks_uri =
				ju && fetch_url_allowed(&auth.fetch, ju) ? mem_strdup(ju) : NULL;
			*introspection =
				iu && fetch_url_allowed(&auth.fetch, iu) ? mem_strdup(iu) : NULL;
			st = AUTH_OK;
		}
		json_decref(m);
	}
	for (size_t i = 0; i < 3; i++)
		free(urls[i]);
	free(origin);
	free(path);
	return st;
}

/* The issuer's jwks_uri (jwks) or introspection endpoint (new string), its metadata fetched
 * the first time: the calls that need it meanwhile wait for that one fetch. NULL when the
 * metadata cannot be read or names none. Without the lock. */
static char *auth_endpoint(bool jwks)
{
	pthread_mutex_lock(&auth.lock);
	if (!auth.discovered && auth_once_begin(&auth.meta_once)) {
		pthread_mutex_unlock(&auth.lock);
		char *ju = NULL, *iu = NULL;
		struct trace_ctx span = {0};
		enum auth_status st = auth_discover(&ju, &iu, &span);
		pthread_mutex_lock(&auth.lock);
		if (st == AUTH_OK) {
			auth.jwks_uri = ju;
			auth.introspection_uri = iu;
			auth.discovered = true;
		}
		auth_once_end(&auth.meta_once, &span);
	}
	const char *uri = jwks ? auth.jwks_uri : auth.introspection_uri;
	char *out = uri ? mem_strdup(uri) : NULL;
	pthread_mutex_unlock(&auth.lock);
	if (!out)
		log_error("cannot discover the issuer's %s",
			  jwks ? "jwks_uri" : "introspection_endpoint");
	return out;
}

/* Fetches the key set (its URI discovered the first time); *span: its fetch's. Runs without
 * the lock. */
static struct jwt_keyset *auth_fetch_keys(struct trace_ctx *span)
{
	char *uri = auth_endpoint(true);
	if (!uri)
		return NULL;
	char *body = NULL;
	long code = 0;
	struct jwt_keyset *ks = NULL;
	struct fetch_note note = {.purpose = "keys"};
	enum fetch_status fs = fetch_http(&auth.fetch, uri, NULL, NULL, NULL, &note, &body, &code);
	*span = note.span;
	if (fs != FETCH_OK || jwt_keyset_parse(body, strlen(body), &ks) != JWT_OK ||
	    !jwt_keyset_size(ks)) {
		log_error("cannot fetch a usable key set from the issuer's jwks_uri");
		jwt_keyset_free(ks);
		ks = NULL;
	} else {
		log_info("issuer key set loaded (%zu keys)", jwt_keyset_size(ks));
	}
	free(body);
	free(uri);
	return ks;
}

/* A referenced key set to verify with (release with auth_keys_release). refresh: the current
 * set lacks a key the token names. Without a set, or for a key it lacks, the call waits for the
 * fetch under way, or runs one when the cool-down allows; a set merely old is refreshed by the
 * call that sees it first while the others use it. wait false: AUTH_PENDING instead of a fetch
 * or a wait. */
static enum auth_status auth_keys_get(bool refresh, bool wait, struct auth_keys **out)
{
	*out = NULL;
	struct auth_keys *old = NULL;
	pthread_mutex_lock(&auth.lock);
	long now = auth_now();
	struct auth_keys *k = auth.keys;
	bool need = !k || refresh, stale = k && now - k->fetched > AUTH_JWKS_TTL;
	bool may = auth.last_attempt == 0 || now - auth.last_attempt >= auth.refresh_cooldown;
	bool fetch = auth.keys_once.running ? need : (need || stale) && may;
	if (fetch && !wait) {
		pthread_mutex_unlock(&auth.lock);
		return AUTH_PENDING;
	}
	if (fetch && auth_once_begin(&auth.keys_once)) {
		auth.last_attempt = now;
		pthread_mutex_unlock(&auth.lock);
		struct trace_ctx span = {0};
		struct jwt_keyset *ks = auth_fetch_keys(&span); /* no lock held */
		pthread_mutex_lock(&auth.lock);
		if (ks) {
			k = mem_calloc(1, sizeof *k);
			k->ks = ks;
			k->fetched = auth_now();
			k->refs = 1; /* the cache's own reference */
			k->gen = (old = auth.keys) ? old->gen + 1 : 1;
			auth.keys = k;
			atomic_store(&auth.keys_gen, k->gen);
		}
		auth.keys_failed = ks == NULL;
		auth_once_end(&auth.keys_once, &span);
	}
	if (auth.keys) {
		auth.keys->refs++;
		*out = auth.keys;
	}
	pthread_mutex_unlock(&auth.lock);
	auth_keys_release(old);
	return *out ? AUTH_OK : AUTH_UNAVAILABLE;
}

static enum auth_status auth_validate_jwt(const char *token, size_t len, bool wait,
					  struct fleet_actor *out, const char **why, bool *hit)
{
	unsigned char d[TOKCACHE_DIGEST];
	tokcache_digest(token, len, d);
	bool active = false;
	*hit = tokcache_get(auth.cache, d, atomic_load(&auth.keys_gen), auth_now(), out, &active) &&
	       active;
	if (*hit) {
		*why = NULL;
		return AUTH_OK;
	}
	struct auth_keys *k = NULL;
	enum auth_status st = auth_keys_get(false, wait, &k);
	if (st != AUTH_OK) {
		*why = "the authorization server is unavailable";
		return st;
	}
	json_t *claims = NULL;
	unsigned long gen = k->gen; /* of the set that verified the token */
	enum jwt_status js = jwt_verify(k->ks, &auth.policy, token, len, auth_now(), &claims, why);
	if (js == JWT_UNKNOWN_KEY) {
		/* Perhaps the issuer rotated its keys: one refresh, rate-limited, that every token
		 * naming a new key waits for. The old set stays referenced meanwhile, so a new set
		 * can never reuse its address. */
		struct auth_keys *fresh = NULL;
		st = auth_keys_get(true, wait, &fresh);
		if (st == AUTH_OK && fresh != k) {
			gen = fresh->gen;
			js = jwt_verify(fresh->ks, &auth.policy, token, len, auth_now(), &claims,
					why);
		}
		auth_keys_release(fresh);
		pthread_mutex_lock(&auth.lock);
		bool failed = auth.keys_failed;
		pthread_mutex_unlock(&auth.lock);
		if (st == AUTH_OK && js == JWT_UNKNOWN_KEY && failed) {
			/* The issuer's current key set could not be had: whether it holds the key
			 * is not known, so the token is neither refused nor accepted (503). */
			*why = "the authorization server is unavailable";
			st = AUTH_UNAVAILABLE;
		}
		if (st != AUTH_OK) {
			auth_keys_release(k);
			return st;
		}
	}
	auth_keys_release(k);
	if (js != JWT_OK)
		return AUTH_INVALID_TOKEN;
	bool ok = auth_actor_from(claims, d, out);
	/* jwt_verify made sure exp is a usable time: it bounds the cache entry (refusals are never
	 * cached: a bad token costs a verification each time, as before). */
	long exp = 0;
	(void)jwt_time(claims, "exp", &exp);
	json_decref(claims);
	if (!ok) {
		*why = "token names no usable subject or client";
		return AUTH_INVALID_TOKEN;
	}
	out->expires_at = exp;
	log_debug("bearer token verified (signature and claims)");
	tokcache_put(auth.cache, d, gen, auth_now(), exp, true, out);
	return AUTH_OK;
}

/* ---- introspection ---------------------------------------------------------------------- */

/* Remembers that the introspection endpoint failed, for one cool-down. */
static void auth_introspection_down(void)
{
	pthread_mutex_lock(&auth.lock);
	auth.intro_down_until = auth_now() + auth.refresh_cooldown;
	pthread_mutex_unlock(&auth.lock);
}

/* Asks the issuer about the token whose digest is d (RFC 7662) and caches its answer; the
 * verdict in *out and *why, its fetch's span in *span. Without the lock. */
static enum auth_status auth_introspect(const char *token, size_t len,
					const unsigned char d[TOKCACHE_DIGEST],
					struct fleet_actor *out, const char **why,
					struct trace_ctx *span)
{
	char *uri = auth_endpoint(false);
	if (!uri) {
		auth_introspection_down();
		*why = "the authorization server is unavailable";
		return AUTH_UNAVAILABLE;
	}
	char *tok = mem_strndup(token, len);
	char *enc = fetch_form_encode(tok);
	char *form = mem_printf("token=%s&token_type_hint=access_token", enc);
	char *body = NULL;
	long code = 0;
	struct fetch_note note = {.purpose = "introspection"};
	enum fetch_status fs = fetch_http(&auth.fetch, uri, form, auth.client_id,
					  auth.client_secret, &note, &body, &code);
	*span = note.span;
	memset(tok, 0, len);
	memset(enc, 0, strlen(enc));
	memset(form, 0, strlen(form));
	free(tok);
	free(enc);
	free(form);
	free(uri);
	if (fs == FETCH_HTTP_ERROR && code == 400) {
		/* The issuer cannot make sense of this token (e.g. oidc-provider will not
		 * introspect a JWT): it is not an active token of this issuer. */
		*why = "token is not active";
		long now = auth_now();
		tokcache_put(auth.cache, d, 0, now, now + auth.cache_ttl, false, NULL);
		return AUTH_INVALID_TOKEN;
	}
	if (fs != FETCH_OK) {
		/* 401/403 mean our own client credentials are refused: not the caller's fault. */
		log_error("token introspection failed (%s)",
			  fs == FETCH_HTTP_ERROR ? "refused" : "unavailable");
		auth_introspection_down();
		*why = "the authorization server is unavailable";
		return AUTH_UNAVAILABLE;
	}
	json_error_t e;
	json_t *r = json_loads(body, JSON_REJECT_DUPLICATES, &e);
	free(body);
	long now = auth_now(), exp = 0;
	(void)jwt_time(r, "exp", &exp); /* none, or unusable: stays 0, refused below */
	*why = NULL;
	if (!json_is_true(json_object_get(r, "active")))
		*why = "token is not active";
	else if (!json_is_string(json_object_get(r, "iss")) ||
		 strcmp(json_string_value(json_object_get(r, "iss")), auth.issuer) != 0)
		*why = "token issuer is not trusted";
	else if (!jwt_audience_matches(json_object_get(r, "aud"), auth.resource))
		*why = auth.audience_why;
	else if (!exp || now >= exp + auth.policy.skew)
		*why = "token expired";
	else if (!jwt_lifetime_ok(r, exp, now, auth.policy.max_lifetime))
		*why = "token lifetime is longer than this server accepts";
	else if (!auth_actor_from(r, d, out))
		*why = "token names no usable subject or client";
	else
		out->expires_at = exp;
	json_decref(r);
	/* Answers, refusals included, stand for the cache's max age; an active one not past exp. */
	tokcache_put(auth.cache, d, 0, now, *why ? now + auth.cache_ttl : exp, *why == NULL,
		     *why ? NULL : out);
	return *why ? AUTH_INVALID_TOKEN : AUTH_OK;
}

/* With auth.lock held: one call of f is done with it. */
static void auth_flight_release(struct auth_flight *f)
{
	if (--f->refs == 0)
		free(f);
}

static enum auth_status auth_validate_introspection(const char *token, size_t len, bool wait,
						    struct fleet_actor *out, const char **why,
						    bool *hit)
{
	unsigned char d[TOKCACHE_DIGEST];
	tokcache_digest(token, len, d);
	bool active = false;
	*hit = tokcache_get(auth.cache, d, 0, auth_now(), out, &active);
	if (*hit) {
		*why = active ? NULL : "token is not active for this server";
		return active ? AUTH_OK : AUTH_INVALID_TOKEN;
	}
	*why = "the authorization server is unavailable";
	pthread_mutex_lock(&auth.lock);
	if (auth_now() < auth.intro_down_until) {
		/* The issuer failed moments ago: do not make this call wait for another timeout. */
		pthread_mutex_unlock(&auth.lock);
		return AUTH_UNAVAILABLE;
	}
	if (!wait) {
		pthread_mutex_unlock(&auth.lock);
		return AUTH_PENDING;
	}
	struct auth_flight *f = auth.flights;
	while (f && memcmp(f->d, d, sizeof f->d) != 0)
		f = f->next;
	enum auth_status st;
	if (f) {
		/* The same token is being introspected: its verdict is this call's too. */
		f->refs++;
		(void)auth_once_begin(&f->once);
		st = f->st;
		*out = f->actor;
		*why = f->why;
		auth_flight_release(f);
		pthread_mutex_unlock(&auth.lock);
		return st;
	}
	if (auth.nflights >= AUTH_INTROSPECTIONS_MAX) {
		long now = auth_now();
		bool say = now != auth.flights_full_said; /* once a second at most */
		auth.flights_full_said = now;
		pthread_mutex_unlock(&auth.lock);
		if (say)
			log_warn("%d token introspections under way: a token never seen is refused "
				 "(503) until one ends",
				 AUTH_INTROSPECTIONS_MAX);
		return AUTH_UNAVAILABLE;
	}
	f = mem_calloc(1, sizeof *f);
	memcpy(f->d, d, sizeof f->d);
	f->refs = 1;
	(void)auth_once_begin(&f->once); /* never under way yet: this call runs it */
	f->next = auth.flights;
	auth.flights = f;
	auth.nflights++;
	pthread_mutex_unlock(&auth.lock);

	struct trace_ctx span = {0};
	st = auth_introspect(token, len, d, out, why, &span); /* no lock held */

	pthread_mutex_lock(&auth.lock);
	f->st = st;
	f->actor = *out;
	f->why = *why;
	for (struct auth_flight **p = &auth.flights; *p; p = &(*p)->next)
		if (*p == f) {
			*p = f->next;
			break;
		}
	auth.nflights--;
	auth_once_end(&f->once, &span);
	auth_flight_release(f);
	pthread_mutex_unlock(&auth.lock);
	return st;
}

static void auth_count_cache(bool hit)
{
	static const char *const hit_label[] = {"hit"}, *const miss_label[] = {"miss"};
	metrics_add(&metrics_token_cache, hit ? hit_label : miss_label, 1);
}

enum auth_status auth_validate(const char *token, size_t len, bool wait, struct fleet_actor *out,
			       const char **why)
{
	memset(out, 0, sizeof *out);
	*why = "malformed token";
	if (!token || len == 0 || len > JWT_MAX_TOKEN)
		return AUTH_INVALID_TOKEN;
	enum auth_status st = AUTH_INVALID_TOKEN;
	bool hit = false;
	switch (auth.mode) {
	case AUTH_MODE_JWT: st = auth_validate_jwt(token, len, wait, out, why, &hit); break;
	case AUTH_MODE_INTROSPECTION:
		st = auth_validate_introspection(token, len, wait, out, why, &hit);
		break;
	case AUTH_MODE_LOCAL: *why = "token validation is not configured"; break;
	}
	if (st == AUTH_PENDING)
		return st; /* counted once, when the call asks again and waits */
	if (auth.mode != AUTH_MODE_LOCAL)
		auth_count_cache(hit);
	const char *labels[] = {auth.mode == AUTH_MODE_JWT             ? "jwt"
				: auth.mode == AUTH_MODE_INTROSPECTION ? "introspection"
								       : "local",
				st == AUTH_OK            ? "ok"
				: st == AUTH_UNAVAILABLE ? "unavailable"
							 : "invalid"};
	metrics_add(&metrics_token_validations, labels, 1);
	return st;
}

const char *auth_ready(void)
{
	if (auth.mode != AUTH_MODE_JWT || atomic_load(&auth.keys_gen) != 0)
		return NULL;
	struct auth_keys *k = NULL;
	enum auth_status st = auth_keys_get(false, true, &k);
	auth_keys_release(k);
	return st == AUTH_OK ? NULL : "issuer keys: the issuer's key set is not loaded";
}

/* ---- metadata and challenges ------------------------------------------------------------- */

bool auth_prm_path(const char *path)
{
	if (auth.mode == AUTH_MODE_LOCAL)
		return false;
	return strcmp(path, auth.prm_local) == 0 ||
	       strcmp(path, "/.well-known/oauth-protected-resource") == 0 ||
	       strcmp(path, "/.well-known/oauth-protected-resource/mcp") == 0;
}

json_t *auth_prm_document(void)
{
	return json_pack("{s:s, s:[s], s:[s,s], s:[s], s:s}", "resource", auth.resource,
			 "authorization_servers", auth.issuer, "scopes_supported", "fleet:read",
			 "fleet:report", "bearer_methods_supported", "header", "resource_name",
			 "Bikaroo Fleet MCP server");
}

char *auth_challenge(enum auth_status st, const char *missing_scope, const char *why)
{
	const char *url = auth.prm_url ? auth.prm_url : "";
	switch (st) {
	case AUTH_NO_TOKEN: return mem_printf("Bearer resource_metadata=\"%s\"", url);
	case AUTH_BAD_REQUEST:
		return mem_printf("Bearer error=\"invalid_request\", resource_metadata=\"%s\"",
				  url);
	case AUTH_INVALID_TOKEN:
		if (why)
			return mem_printf(
				"Bearer error=\"invalid_token\", error_description=\"%s\", "
				"resource_metadata=\"%s\"",
				why, url);
		return mem_printf("Bearer error=\"invalid_token\", resource_metadata=\"%s\"", url);
	default: break;
	}
	if (auth.mode == AUTH_MODE_LOCAL)
		return mem_printf("Bearer error=\"insufficient_scope\", scope=\"%s\"",
				  missing_scope ? missing_scope : "");
	return mem_printf(
		"Bearer error=\"insufficient_scope\", scope=\"%s\", resource_metadata=\"%s\"",
		missing_scope ? missing_scope : "", url);
}
