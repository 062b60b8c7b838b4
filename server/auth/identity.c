/* Identity: a configured local identity, and the identity of a stdio session from its
 * environment. */
#include "identity.h"

#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "auth.h"
#include "scopes.h"

int identity_local(const char *subject, const char *client, const char *scopes,
		   struct fleet_actor *out)
{
	memset(out, 0, sizeof *out);
	if (!*subject || !*client || strlen(subject) >= sizeof out->subject ||
	    strlen(client) >= sizeof out->client_id) {
		log_error("local identity: BIKAROO_LOCAL_SUBJECT and BIKAROO_LOCAL_CLIENT must be "
			  "set (1 to %zu characters)",
			  sizeof out->subject - 1);
		return -1;
	}
	snprintf(out->subject, sizeof out->subject, "%s", subject);
	snprintf(out->client_id, sizeof out->client_id, "%s", client);
	out->scopes = scopes_parse(scopes);
	return 0;
}

enum identity_status identity_from_environment(const struct identity_env *env,
					       struct fleet_actor *out, const char **why)
{
	memset(out, 0, sizeof *out);
	*why = NULL;
	if (auth_mode() != AUTH_MODE_LOCAL) {
		if (!*env->token) {
			*why = "BIKAROO_TOKEN is empty: set it to an access token for this server";
			return IDENTITY_NO_TOKEN;
		}
		enum auth_status st = auth_validate(env->token, strlen(env->token), true, out, why);
		if (st == AUTH_OK)
			return IDENTITY_OK;
		return st == AUTH_UNAVAILABLE ? IDENTITY_UNAVAILABLE : IDENTITY_INVALID;
	}
	bool dev = false;
	enum fleet_status ds = env->development_db(&dev);
	if (ds == FLEET_UNAVAILABLE && !env->any_database) {
		*why = "the database is unavailable";
		return IDENTITY_UNAVAILABLE;
	}
	if (ds != FLEET_OK && !env->any_database) {
		*why = "cannot tell whether the database is a development one (fleet.settings: is "
		       "it "
		       "migrated? bikaroo-mcp migrate)";
		return IDENTITY_REFUSED;
	}
	if (!dev && !env->any_database) {
		*why = "BIKAROO_AUTH=local acts without a token only against a development "
		       "database (fleet.settings environment = development); use a token "
		       "(BIKAROO_TOKEN, or BIKAROO_AUTH=jwt over HTTP), or, knowing that whoever "
		       "reaches this server then acts as that identity, set "
		       "BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1";
		return IDENTITY_REFUSED;
	}
	if (identity_local(env->local_subject, env->local_client, env->local_scopes, out) != 0) {
		*why = "the local identity is not configured";
		return IDENTITY_INVALID;
	}
	if (!dev)
		log_warn(
			"BIKAROO_AUTH=local on a database that is NOT a development one "
			"(BIKAROO_LOCAL_ALLOW_ANY_DATABASE=1): whoever reaches this server acts as "
			"subject %s via client %s, without a token",
			out->subject, out->client_id);
	return IDENTITY_OK;
}
