/* completion/complete: finds the completer of a prompt argument or of a resource template's
 * variable in the registries and shapes its answer (at most 100 values, total, hasMore). */
#include "completion.h"

#include <string.h>

#include "budget.h"
#include "prompts.h"
#include "resources.h"
#include "server.h"

#define COMPLETION_MAX_VALUES 100

/* Finds the completer for ref + argument name, and the scope of the row it belongs to; -1 with
 * err for an unknown ref or argument. */
static int completion_find(const struct mcp_server *s, json_t *ref, const char *arg,
			   completion_fn *fn, unsigned *scope, const char **scope_name,
			   struct mcp_error *err)
{
	const char *type = json_string_value(json_object_get(ref, "type"));
	*fn = NULL;
	*scope = 0;
	*scope_name = NULL;
	if (type && strcmp(type, "ref/prompt") == 0) {
		const char *name = json_string_value(json_object_get(ref, "name"));
		const struct prompt_desc *p = name ? prompts_find(s, name) : NULL;
		if (!p)
			return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown prompt",
					json_pack("{s:s}", "name", name ? name : ""));
		*scope = p->scope;
		*scope_name = p->scope_name;
		for (size_t i = 0; i < p->nargs; i++)
			if (strcmp(p->args[i].name, arg) == 0) {
				*fn = p->args[i].complete;
				return 0;
			}
		return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown prompt argument",
				json_pack("{s:s}", "argument", arg));
	}
	if (type && strcmp(type, "ref/resource") == 0) {
		const char *uri = json_string_value(json_object_get(ref, "uri"));
		const struct resource_template_desc *t =
			uri ? resources_template_find(s, uri) : NULL;
		if (!t)
			return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown resource template",
					json_pack("{s:s}", "uri", uri ? uri : ""));
		if (strcmp(t->var, arg) != 0)
			return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown template variable",
					json_pack("{s:s}", "argument", arg));
		*scope = t->scope;
		*scope_name = t->scope_name;
		*fn = t->complete;
		return 0;
	}
	return mcp_fail(err, MCP_INVALID_PARAMS,
			"completion/complete needs ref of type ref/prompt or ref/resource", NULL);
}

int completion_complete(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	json_t *ref = json_object_get(params, "ref");
	json_t *argument = json_object_get(params, "argument");
	json_t *jname = json_object_get(argument, "name");
	json_t *jvalue = json_object_get(argument, "value");
	if (!json_is_object(ref) || !json_is_string(jname) || !json_is_string(jvalue))
		return mcp_fail(err, MCP_INVALID_PARAMS,
				"completion/complete needs 'ref' and 'argument' {name, value}",
				NULL);
	if (json_string_length(jvalue) > COMPLETION_VALUE_MAX ||
	    strlen(json_string_value(jvalue)) != json_string_length(jvalue))
		return mcp_fail(err, MCP_INVALID_PARAMS, "argument.value is too long",
				json_pack("{s:i}", "maxLength", COMPLETION_VALUE_MAX));
	completion_fn fn;
	unsigned scope;
	const char *scope_name;
	if (completion_find(ctx->server, ref, json_string_value(jname), &fn, &scope, &scope_name,
			    err) != 0 ||
	    mcp_require_scope(ctx, scope, scope_name, err) != 0)
		return -1;
	json_t *values = NULL;
	long total = 0;
	/* A completer reads the business: the read budget pays, like a read. */
	if (fn && (mcp_budget_take(ctx, false, "completion/complete", err) != 0 ||
		   fn(ctx, json_string_value(jvalue), &values, &total, err) != 0))
		return -1;
	if (!values)
		values = json_array();
	while (json_array_size(values) > COMPLETION_MAX_VALUES)
		json_array_remove(values, json_array_size(values) - 1);
	size_t n = json_array_size(values);
	if (total < (long)n)
		total = (long)n;
	*result = json_pack("{s:{s:o, s:I, s:b}}", "completion", "values", values, "total",
			    (json_int_t)total, "hasMore", total > (long)n);
	return 0;
}
