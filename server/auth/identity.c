/* Identity helpers: scope parsing and the configured local identity. */
#include "identity.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "auth.h"
#include "domain/rights.h"

unsigned identity_parse_scopes(const char *scope)
{
	unsigned bits = 0;
	for (const char *p = scope; p && *p;) {
		while (*p == ' ')
			p++;
		size_t n = strcspn(p, " ");
		if (n == 10 && strncmp(p, "fleet:read", n) == 0)
			bits |= FLEET_SCOPE_READ;
		else if (n == 12 && strncmp(p, "fleet:report", n) == 0)
			bits |= FLEET_SCOPE_REPORT;
		p += n;
	}
	return bits;
}

int identity_local(const struct cfg *cfg, struct fleet_actor *out)
{
	memset(out, 0, sizeof *out);
	if (!*cfg->local_subject || !*cfg->local_client ||
	    strlen(cfg->local_subject) >= sizeof out->subject ||
	    strlen(cfg->local_client) >= sizeof out->client_id) {
		log_error("local identity: BIKAROO_LOCAL_SUBJECT and BIKAROO_LOCAL_CLIENT must be "
			  "set "
			  "(1 to %zu characters)",
			  sizeof out->subject - 1);
		return -1;
	}
	snprintf(out->subject, sizeof out->subject, "%s", cfg->local_subject);
	snprintf(out->client_id, sizeof out->client_id, "%s", cfg->local_client);
	out->scopes = identity_parse_scopes(cfg->local_scopes);
	return 0;
}

enum identity_status identity_from_environment(const struct cfg *cfg, struct fleet_actor *out,
					       const char **why)
{
	memset(out, 0, sizeof *out);
	if (auth_mode() != AUTH_MODE_LOCAL) {
		if (!*cfg->token) {
			*why = "BIKAROO_TOKEN is empty: set it to an access token for this server";
			return IDENTITY_NO_TOKEN;
		}
		enum auth_status st = auth_validate(cfg->token, strlen(cfg->token), out, why);
		if (st == AUTH_OK)
			return IDENTITY_OK;
		return st == AUTH_UNAVAILABLE ? IDENTITY_UNAVAILABLE : IDENTITY_INVALID;
	}
	bool dev = false;
	if (rights_development_db(&dev) != FLEET_OK) {
		*why = "the database is unavailable";
		return IDENTITY_UNAVAILABLE;
	}
	if (!dev) {
		*why = "BIKAROO_AUTH=local acts without a token only against a development "
		       "database "
		       "(fleet.settings environment = development); use a token (BIKAROO_TOKEN)";
		return IDENTITY_REFUSED;
	}
	if (identity_local(cfg, out) != 0) {
		*why = "the local identity is not configured";
		return IDENTITY_INVALID;
	}
	*why = NULL;
	return IDENTITY_OK;
}
