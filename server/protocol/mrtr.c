/* Multi round-trip requests: validation of retries, sealing of requestState, the
 * InputRequiredResult (see mrtr.h). */
#include "mrtr.h"

#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "reqstate.h"
#include "tools.h"

static const char *const mrtr_methods[] = {"tools/call", "prompts/get", "resources/read"};

bool mrtr_method_allowed(const char *method)
{
	for (size_t i = 0; method && i < sizeof mrtr_methods / sizeof mrtr_methods[0]; i++)
		if (strcmp(method, mrtr_methods[i]) == 0)
			return true;
	return false;
}

/* The digest a requestState is bound to: the method's key parameters, so that the retry of
 * the same request matches and any other does not. tools/call and prompts/get: {name,
 * arguments} (arguments {} when absent, as the handlers see them); resources/read: {uri}. */
static void mrtr_params_digest(const char *method, json_t *params, char out[65])
{
	json_t *key;
	if (strcmp(method, "resources/read") == 0) {
		json_t *uri = json_object_get(params, "uri");
		key = json_pack("{s:o}", "uri", uri ? json_incref(uri) : json_null());
	} else {
		json_t *name = json_object_get(params, "name");
		json_t *args = json_object_get(params, "arguments");
		key = json_pack("{s:o, s:o}", "name", name ? json_incref(name) : json_null(),
				"arguments", args ? json_incref(args) : json_object());
	}
	reqstate_digest(key, out);
	json_decref(key);
}

int mrtr_prepare(struct mcp_ctx *ctx, json_t *params, struct mcp_error *err)
{
	ctx->mrtr->input_responses = NULL;
	ctx->mrtr->request_state = NULL;
	ctx->mrtr->nonce[0] = '\0';
	if (!ctx->modern || !mrtr_method_allowed(ctx->method))
		return 0;
	json_t *responses = json_object_get(params, "inputResponses");
	if (responses) {
		if (mcp_input_responses_check(responses, err) != 0)
			return -1;
		ctx->mrtr->input_responses = responses;
	}
	json_t *state = json_object_get(params, "requestState");
	if (state) {
		if (!json_is_string(state))
			return mcp_fail(err, MCP_INVALID_PARAMS, "requestState must be a string",
					NULL);
		char digest[65];
		mrtr_params_digest(ctx->method, params, digest);
		json_t *payload = NULL;
		enum reqstate_status st =
			reqstate_open(json_string_value(state), ctx->req->actor, ctx->method,
				      digest, &payload, ctx->mrtr->nonce);
		if (st != REQSTATE_OK) {
			log_msg(LOG_INFO, ctx->req->reqid, "requestState refused: %s",
				reqstate_status_text(st));
			/* The reason as the message: a client (or a model) can act on "expired". */
			return mcp_fail(err, MCP_INVALID_PARAMS, reqstate_status_text(st),
					json_pack("{s:s}", "reason", reqstate_status_text(st)));
		}
		ctx->mrtr->request_state = payload;
	}
	return 0;
}

void mrtr_finish(struct mcp_ctx *ctx)
{
	json_decref(ctx->mrtr->request_state);
	ctx->mrtr->request_state = NULL;
	ctx->mrtr->input_responses = NULL;
}

int mrtr_check_result(const struct mcp_ctx *ctx, json_t *result, struct mcp_error *err)
{
	const char *rt = json_string_value(json_object_get(result, "resultType"));
	if (!rt || strcmp(rt, "input_required") != 0)
		return 0;
	if (!ctx->modern || !mrtr_method_allowed(ctx->method)) {
		log_msg(LOG_ERROR, ctx->req->reqid, "bug: %s produced input_required",
			ctx->method ? ctx->method : "(none)");
		return mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error", NULL);
	}
	/* Interim results are never cached. */
	json_object_del(result, "ttlMs");
	json_object_del(result, "cacheScope");
	return 0;
}

const char *mrtr_capability_for(const char *method)
{
	if (!method)
		return NULL;
	if (strcmp(method, "elicitation/create") == 0)
		return "elicitation";
	if (strcmp(method, "sampling/createMessage") == 0)
		return "sampling";
	if (strcmp(method, "roots/list") == 0)
		return "roots";
	return NULL;
}

/* True when the request (an entry of inputRequests) may be sent to this client. URL-mode
 * elicitation needs elicitation.url, form mode elicitation.form or an empty object (form
 * only): a client that declared {"url": {}} alone has no form to show. */
static bool mrtr_declared(const struct mcp_ctx *ctx, json_t *request)
{
	const char *method = json_string_value(json_object_get(request, "method"));
	const char *cap = mrtr_capability_for(method);
	json_t *declared = cap ? json_object_get(ctx->client_caps, cap) : NULL;
	if (!json_is_object(declared))
		return false;
	const char *mode =
		json_string_value(json_object_get(json_object_get(request, "params"), "mode"));
	if (strcmp(cap, "elicitation") != 0)
		return true;
	if (mode && strcmp(mode, "url") == 0)
		return json_is_object(json_object_get(declared, "url"));
	return json_object_size(declared) == 0 || json_is_object(json_object_get(declared, "form"));
}

bool mrtr_can_ask(const struct mcp_ctx *ctx, const char *method)
{
	json_t *probe = json_pack("{s:s}", "method", method);
	bool ok = mrtr_declared(ctx, probe);
	json_decref(probe);
	return ok;
}

json_t *mrtr_response(const struct mcp_ctx *ctx, const char *key)
{
	return ctx->mrtr ? json_object_get(ctx->mrtr->input_responses, key) : NULL;
}

json_t *mrtr_state(const struct mcp_ctx *ctx)
{
	return ctx->mrtr ? ctx->mrtr->request_state : NULL;
}

const char *mrtr_nonce(const struct mcp_ctx *ctx)
{
	return ctx->mrtr && ctx->mrtr->request_state ? ctx->mrtr->nonce : NULL;
}

int mrtr_missing(struct mcp_error *err, const char *capability)
{
	return mcp_fail(err, MCP_MISSING_CAPABILITY,
			"This request needs a client capability that was not declared",
			json_pack("{s:{s:{}}}", "requiredCapabilities", capability));
}

int mrtr_ask(struct mcp_ctx *ctx, json_t *requests, const json_t *state, long ttl_s,
	     json_t **result, struct mcp_error *err)
{
	int rc = -1;
	if (!mrtr_method_allowed(ctx->method)) {
		log_msg(LOG_ERROR, ctx->req->reqid, "bug: mrtr_ask from %s",
			ctx->method ? ctx->method : "(none)");
		mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error", NULL);
		goto out;
	}
	if (!ctx->modern) {
		static const char why[] =
			"This request needs input from the client (elicitation, sampling or "
			"roots). "
			"This server is stateless and asks for it only from 2026-07-28 clients.";
		if (strcmp(ctx->method, "tools/call") == 0) {
			*result = tools_result(why, NULL, true);
			rc = 0;
		} else {
			mcp_fail(err, MCP_INVALID_REQUEST, why, NULL);
		}
		goto out;
	}
	json_t *missing = json_object();
	const char *key;
	json_t *r;
	json_object_foreach (requests, key, r) {
		const char *cap =
			mrtr_capability_for(json_string_value(json_object_get(r, "method")));
		if (!cap) {
			log_msg(LOG_ERROR, ctx->req->reqid,
				"bug: input request %s has no known method", key);
			json_decref(missing);
			mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error", NULL);
			goto out;
		}
		if (!mrtr_declared(ctx, r))
			json_object_set_new(missing, cap, json_object());
	}
	if (json_object_size(missing)) {
		mcp_fail(err, MCP_MISSING_CAPABILITY,
			 "This request needs a client capability that was not declared",
			 json_pack("{s:o}", "requiredCapabilities", missing));
		goto out;
	}
	json_decref(missing);
	json_t *res =
		json_pack("{s:s, s:O}", "resultType", "input_required", "inputRequests", requests);
	if (state) {
		char digest[65];
		mrtr_params_digest(ctx->method, ctx->params, digest);
		char *sealed =
			reqstate_seal(ctx->req->actor, ctx->method, digest, state, ttl_s, NULL);
		json_object_set_new(res, "requestState", json_string(sealed));
		free(sealed);
	}
	*result = res;
	rc = 0;
out:
	json_decref(requests);
	return rc;
}

json_t *mrtr_form(const char *message, json_t *schema)
{
	return json_pack("{s:s, s:{s:s, s:s, s:o}}", "method", "elicitation/create", "params",
			 "mode", "form", "message", message, "requestedSchema", schema);
}

json_t *mrtr_elicit(const char *message, const char *schema_json)
{
	json_error_t e;
	json_t *schema = json_loads(schema_json, JSON_REJECT_DUPLICATES, &e);
	if (!schema)
		abort(); /* our bug: the schema is a literal in the code */
	return mrtr_form(message, schema);
}

json_t *mrtr_sample(const char *prompt, int max_tokens)
{
	return json_pack("{s:s, s:{s:[{s:s, s:{s:s, s:s}}], s:i}}", "method",
			 "sampling/createMessage", "params", "messages", "role", "user", "content",
			 "type", "text", "text", prompt, "maxTokens", max_tokens);
}

json_t *mrtr_roots(void)
{
	return json_pack("{s:s, s:{}}", "method", "roots/list", "params");
}

json_t *mrtr_confirmation(const char *key, const char *message, const char *title,
			  const char *description)
{
	return mrtr_form(message,
			 json_pack("{s:s, s:{s:{s:s, s:s, s:s, s:b}}, s:[s]}", "type", "object",
				   "properties", key, "type", "boolean", "title", title,
				   "description", description, "default", 0, "required", key));
}

enum mrtr_answer mrtr_confirmed(const struct mcp_ctx *ctx, const char *key)
{
	json_t *ans = mrtr_response(ctx, key);
	if (!ans)
		return MRTR_UNANSWERED;
	const char *action = json_string_value(json_object_get(ans, "action"));
	json_t *content = json_object_get(ans, "content");
	if (!mrtr_state(ctx) || !action || (content && !json_is_object(content)))
		return MRTR_MALFORMED;
	if (strcmp(action, "decline") == 0 || strcmp(action, "cancel") == 0)
		return MRTR_NO;
	if (strcmp(action, "accept") != 0)
		return MRTR_MALFORMED;
	return json_is_true(json_object_get(content, key)) ? MRTR_YES : MRTR_NO;
}
