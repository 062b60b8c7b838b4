/* Multi round-trip requests (MRTR): the InputRequiredResult of 2026-07-28.
 * A tools/call, prompts/get or resources/read handler that needs an elicitation, a sampling or
 * the client's roots returns {"resultType":"input_required","inputRequests":{...},
 * "requestState":"..."}; the client retries the same request with inputResponses and the echoed
 * requestState. The core (mrtr_prepare) validates the retry before the handler runs:
 * inputResponses must be an object of objects and requestState must open
 * (server/protocol/reqstate.c: integrity-protected, expiring, bound to the caller, the method
 * and the request's parameters); anything else is -32602. Handlers then read the responses and
 * the state payload from ctx. */
#ifndef BIKAROO_MRTR_H
#define BIKAROO_MRTR_H

#include "mcp.h"
#include "reqstate.h"

/* How long a requestState stays valid when its handler has no reason to say otherwise. */
#define MRTR_STATE_TTL_S 600

/* The MRTR state of one request, owned by the core for the request's life. */
struct mrtr_state {
	json_t *input_responses; /* borrowed: the retry's inputResponses object, or NULL */
	json_t *request_state;   /* new reference: the verified requestState payload, or NULL */
	char nonce[REQSTATE_NONCE_HEX + 1]; /* the verified requestState's nonce, or "" */
};

/* True for the methods that may answer input_required. */
bool mrtr_method_allowed(const char *method);

/* Core, before the handler: fills ctx->mrtr (input_responses, request_state) from params
 * (borrowed) for the MRTR methods of a modern request. Returns 0, or -1 with *err set (-32602). */
int mrtr_prepare(struct mcp_ctx *ctx, json_t *params, struct mcp_error *err)
	__attribute__((warn_unused_result));
/* Core, after the handler: releases what mrtr_prepare took. */
void mrtr_finish(struct mcp_ctx *ctx);

/* Core, on every result: an input_required result from a method that may not send one becomes
 * -32603 (our bug, logged); one that may has ttlMs/cacheScope removed. Returns 0 or -1. */
int mrtr_check_result(const struct mcp_ctx *ctx, json_t *result, struct mcp_error *err)
	__attribute__((warn_unused_result));

/* Handlers. The client capability an input request method needs ("elicitation", "sampling",
 * "roots"), or NULL for a method that is not an input request. */
const char *mrtr_capability_for(const char *method);
/* True when this request declared the capability method needs. */
bool mrtr_can_ask(const struct mcp_ctx *ctx, const char *method);
/* The response the retry carries for key (borrowed), or NULL. */
json_t *mrtr_response(const struct mcp_ctx *ctx, const char *key);
/* The verified requestState payload of this retry (borrowed), or NULL. */
json_t *mrtr_state(const struct mcp_ctx *ctx);
/* The nonce sealed in this retry's verified requestState (one per question asked: a handler can
 * key what the answer does on it), or NULL. */
const char *mrtr_nonce(const struct mcp_ctx *ctx);
/* Fails with -32021 MissingRequiredClientCapability naming capability (e.g. "sampling"). */
int mrtr_missing(struct mcp_error *err, const char *capability);

/* Builds the InputRequiredResult. requests (stolen) maps keys to {method, params}; state
 * (borrowed, may be NULL) is sealed into requestState for this caller, method and parameters,
 * valid ttl_s seconds (MRTR_STATE_TTL_S unless the handler has its own); what a handler must
 * find again on the retry (what the question was about, a version) goes in state.
 * Refuses, with -32021 naming what is missing, a request for a capability the client did not
 * declare. A legacy (2025-era) client cannot be asked on a stateless server: tools/call gets an
 * isError result saying so, other methods -32600. Returns 0 with *result, or -1 with *err. */
int mrtr_ask(struct mcp_ctx *ctx, json_t *requests, const json_t *state, long ttl_s,
	     json_t **result, struct mcp_error *err) __attribute__((warn_unused_result));

/* A yes/no question asked as key (the inputRequests key and the form's one boolean, unticked
 * until the user ticks it): a form elicitation of message, the box titled and described so. */
json_t *mrtr_confirmation(const char *key, const char *message, const char *title,
			  const char *description);
/* The answer to the question asked as key. Yes only when accepted with the box ticked; an answer
 * without a verified requestState, or not an elicitation result, is malformed. */
enum mrtr_answer { MRTR_UNANSWERED, MRTR_YES, MRTR_NO, MRTR_MALFORMED };
enum mrtr_answer mrtr_confirmed(const struct mcp_ctx *ctx, const char *key);

/* Helpers to write input requests. All return new references. A form elicitation of message
 * and requestedSchema (stolen; mrtr_elicit: a literal in the code). */
json_t *mrtr_form(const char *message, json_t *schema);
json_t *mrtr_elicit(const char *message, const char *schema_json);
json_t *mrtr_sample(const char *prompt, int max_tokens);
json_t *mrtr_roots(void);

#endif
