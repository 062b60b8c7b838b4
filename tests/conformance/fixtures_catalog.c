/* Resource, template, prompt and completion fixtures of the conformance server, as the suite's
 * scenario descriptions specify them; registries.c registers them. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/mem.h"
#include "server/protocol/mrtr.h"
#include "fixtures.h"

#define CONF_PNG                                                                                   \
	"iVBORw0KGgoAAAANSUhEUgAAAAEAAAABCAYAAAAfFcSJAAAADUlEQVR42mP8z8DwHwAFBQIAX8jx0gAAAABJRU5E" \
	"rkJggg=="

static const struct conf_resource conf_resource_rows[] = {
	{.uri = "test://static-text",
	 .name = "static-text",
	 .title = "Static text",
	 .description = "A fixed text resource.",
	 .mime_type = "text/plain",
	 .text = "This is the content of the static text resource."},
	{.uri = "test://static-binary",
	 .name = "static-binary",
	 .title = "Static binary",
	 .description = "A fixed binary resource (a 1x1 PNG).",
	 .mime_type = "image/png",
	 .blob_b64 = CONF_PNG},
	{.uri = "test://watched-resource",
	 .name = "watched-resource",
	 .title = "Watched resource",
	 .description = "A resource clients may subscribe to.",
	 .mime_type = "text/plain",
	 .text = "Watched resource content."},
};

const struct conf_resource *conf_resources(size_t *n)
{
	*n = sizeof conf_resource_rows / sizeof conf_resource_rows[0];
	return conf_resource_rows;
}

static const struct conf_template conf_template_rows[] = {
	{.uri_template = "test://template/{id}/data",
	 .name = "template-data",
	 .title = "Template data",
	 .description = "Data for one id, substituted into the URI.",
	 .mime_type = "application/json"},
};

const struct conf_template *conf_templates(size_t *n)
{
	*n = sizeof conf_template_rows / sizeof conf_template_rows[0];
	return conf_template_rows;
}

int conf_template_read(const char *uri, json_t **contents)
{
	static const char prefix[] = "test://template/", suffix[] = "/data";
	size_t pl = sizeof prefix - 1, sl = sizeof suffix - 1, n = strlen(uri);
	if (n <= pl + sl || strncmp(uri, prefix, pl) != 0 || strcmp(uri + n - sl, suffix) != 0)
		return -1;
	size_t idlen = n - pl - sl;
	const char *id = uri + pl;
	if (idlen > 64 || memchr(id, '/', idlen))
		return -1;
	char idbuf[65], data[100];
	snprintf(idbuf, sizeof idbuf, "%.*s", (int)idlen, id);
	snprintf(data, sizeof data, "Data for ID: %s", idbuf);
	json_t *doc = json_pack("{s:s, s:b, s:s}", "id", idbuf, "templateTest", 1, "data", data);
	char *text = json_dumps(doc, JSON_COMPACT);
	json_decref(doc);
	*contents = json_pack("[{s:s, s:s, s:s}]", "uri", uri, "mimeType", "application/json",
			      "text", text);
	free(text);
	return 0;
}

/* ---- prompts ------------------------------------------------------------------------------ */

static json_t *conf_message_text(const char *text)
{
	return json_pack("{s:s, s:{s:s, s:s}}", "role", "user", "content", "type", "text", "text",
			 text);
}

static int conf_simple_prompt(struct mcp_ctx *ctx, json_t *params, json_t **result,
			      struct mcp_error *err)
{
	(void)ctx, (void)params, (void)err;
	*result = json_pack("{s:[o]}", "messages",
			    conf_message_text("This is a simple prompt for testing."));
	return 0;
}

static int conf_args_prompt(struct mcp_ctx *ctx, json_t *params, json_t **result,
			    struct mcp_error *err)
{
	(void)ctx;
	json_t *args = json_object_get(params, "arguments");
	const char *a1 = json_string_value(json_object_get(args, "arg1"));
	const char *a2 = json_string_value(json_object_get(args, "arg2"));
	if (!a1 || !a2)
		return mcp_fail(err, MCP_INVALID_PARAMS, "Missing required argument arg1 or arg2",
				NULL);
	char *text = mem_printf("Prompt with arguments: arg1='%s', arg2='%s'", a1, a2);
	*result = json_pack("{s:[o]}", "messages", conf_message_text(text));
	free(text);
	return 0;
}

static int conf_embedded_prompt(struct mcp_ctx *ctx, json_t *params, json_t **result,
				struct mcp_error *err)
{
	(void)ctx;
	const char *uri = json_string_value(
		json_object_get(json_object_get(params, "arguments"), "resourceUri"));
	if (!uri)
		return mcp_fail(err, MCP_INVALID_PARAMS, "Missing required argument resourceUri",
				NULL);
	*result =
		json_pack("{s:[{s:s, s:{s:s, s:{s:s, s:s, s:s}}}, o]}", "messages", "role", "user",
			  "content", "type", "resource", "resource", "uri", uri, "mimeType",
			  "text/plain", "text", "Embedded resource content for testing.",
			  conf_message_text("Please process the embedded resource above."));
	return 0;
}

static int conf_image_prompt(struct mcp_ctx *ctx, json_t *params, json_t **result,
			     struct mcp_error *err)
{
	(void)ctx, (void)params, (void)err;
	*result = json_pack("{s:[{s:s, s:{s:s, s:s, s:s}}, o]}", "messages", "role", "user",
			    "content", "type", "image", "data", CONF_PNG, "mimeType", "image/png",
			    conf_message_text("Please analyze the image above."));
	return 0;
}

/* MRTR on prompts/get: asks for the context first. */
static int conf_ir_prompt(struct mcp_ctx *ctx, json_t *params, json_t **result,
			  struct mcp_error *err)
{
	(void)params;
	json_t *r = mrtr_response(ctx, "user_context");
	if (!r)
		return mrtr_ask(ctx,
				json_pack("{s:o}", "user_context",
					  mrtr_elicit("What context should the prompt use?",
						      "{\"type\":\"object\",\"properties\":{"
						      "\"context\":{\"type\":\"string\"}},"
						      "\"required\":[\"context\"]}")),
				NULL, MRTR_STATE_TTL_S, result, err);
	const char *c =
		json_string_value(json_object_get(json_object_get(r, "content"), "context"));
	char *text = mem_printf("Use this context: %s", c ? c : "(none given)");
	*result = json_pack("{s:[o]}", "messages", conf_message_text(text));
	free(text);
	return 0;
}

static const struct conf_prompt_arg conf_args2[] = {
	{"arg1", "First test argument", true},
	{"arg2", "Second test argument", true},
};
static const struct conf_prompt_arg conf_arg_uri[] = {
	{"resourceUri", "URI of the resource to embed", true},
};

static const struct conf_prompt conf_prompt_rows[] = {
	{"test_simple_prompt", "Simple prompt", "A prompt without arguments.", NULL, 0,
	 conf_simple_prompt},
	{"test_prompt_with_arguments", "Prompt with arguments", "A prompt with two arguments.",
	 conf_args2, 2, conf_args_prompt},
	{"test_prompt_with_embedded_resource", "Prompt with a resource",
	 "A prompt embedding a resource.", conf_arg_uri, 1, conf_embedded_prompt},
	{"test_prompt_with_image", "Prompt with an image", "A prompt with an image.", NULL, 0,
	 conf_image_prompt},
	{"test_input_required_result_prompt", "MRTR prompt",
	 "Asks for the context through an elicitation first.", NULL, 0, conf_ir_prompt},
};

const struct conf_prompt *conf_prompts(size_t *n)
{
	*n = sizeof conf_prompt_rows / sizeof conf_prompt_rows[0];
	return conf_prompt_rows;
}

json_t *conf_complete(const char *prompt, const char *argument, const char *value)
{
	static const char *const words[] = {"test", "testValue1", "testValue2", "hello", "world"};
	if (strcmp(prompt, "test_prompt_with_arguments") != 0 ||
	    (strcmp(argument, "arg1") != 0 && strcmp(argument, "arg2") != 0))
		return NULL;
	json_t *values = json_array();
	for (size_t i = 0; i < sizeof words / sizeof words[0]; i++)
		if (strncmp(words[i], value, strlen(value)) == 0)
			json_array_append_new(values, json_string(words[i]));
	return values;
}
