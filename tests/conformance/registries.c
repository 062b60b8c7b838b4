/* The conformance server's description: the product's, serving the fixtures (fixtures.h) the
 * official suite calls by name in place of its rows (registries.h). */
#include <string.h>

#include "server/protocol/prompts.h"
#include "server/protocol/resources.h"
#include "fixtures.h"
#include "registries.h"

#define CONF_MAX 8
#define CONF_ROWS 32

static struct tool_desc conf_all_tools[CONF_ROWS * 2];
static struct resource_desc conf_res[CONF_ROWS];
static struct resource_template_desc conf_tpl[CONF_ROWS];
static struct prompt_desc conf_pr[CONF_ROWS];

static enum resource_status conf_read_fixed(struct mcp_ctx *ctx, const char *uri, const char *value,
					    json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)value, (void)err;
	size_t n;
	const struct conf_resource *r = conf_resources(&n);
	for (size_t i = 0; i < n; i++) {
		if (strcmp(r[i].uri, uri) != 0)
			continue;
		json_t *c = json_pack("{s:s, s:s}", "uri", uri, "mimeType", r[i].mime_type);
		if (r[i].text)
			json_object_set_new(c, "text", json_string(r[i].text));
		else
			json_object_set_new(c, "blob", json_string(r[i].blob_b64));
		*result = json_pack("{s:[o]}", "contents", c);
		mcp_cacheable(*result, 60000, false);
		return RESOURCE_OK;
	}
	return RESOURCE_NOT_FOUND;
}

static enum resource_status conf_read_tpl(struct mcp_ctx *ctx, const char *uri, const char *value,
					  json_t **result, struct mcp_error *err)
{
	(void)ctx, (void)value, (void)err;
	json_t *contents;
	if (conf_template_read(uri, &contents) != 0)
		return RESOURCE_NOT_FOUND;
	*result = json_pack("{s:o}", "contents", contents);
	mcp_cacheable(*result, 60000, false);
	return RESOURCE_OK;
}

static int conf_render(struct mcp_ctx *ctx, const struct prompt_desc *p, json_t *args,
		       json_t **result, struct mcp_error *err)
{
	size_t n;
	const struct conf_prompt *cp = conf_prompts(&n);
	for (size_t i = 0; i < n; i++)
		if (strcmp(cp[i].name, p->name) == 0) {
			json_t *params =
				json_pack("{s:O}", "arguments", args ? args : json_object());
			int rc = cp[i].get(ctx, params, result, err);
			json_decref(params);
			return rc;
		}
	return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown prompt", NULL);
}

static int conf_complete_arg(const char *arg, const char *prefix, json_t **values, long *total)
{
	*values = conf_complete("test_prompt_with_arguments", arg, prefix);
	*total = (long)json_array_size(*values);
	return 0;
}

static int conf_complete_arg1(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			      struct mcp_error *err)
{
	(void)ctx, (void)err;
	return conf_complete_arg("arg1", prefix, values, total);
}

static int conf_complete_arg2(struct mcp_ctx *ctx, const char *prefix, json_t **values, long *total,
			      struct mcp_error *err)
{
	(void)ctx, (void)err;
	return conf_complete_arg("arg2", prefix, values, total);
}

/* Copies n rows of size sz from src after *count rows of dst (at most cap in all). */
static void conf_append(void *dst, size_t *count, size_t cap, const void *src, size_t n, size_t sz)
{
	for (size_t i = 0; i < n && *count < cap; i++, (*count)++)
		memcpy((char *)dst + *count * sz, (const char *)src + i * sz, sz);
}

void conf_describe(struct mcp_server *out, const struct mcp_server *product,
		   const struct mcp_task_provider *tasks)
{
	*out = *product;
	/* No business database behind the fixtures: every row shown, nothing audited. */
	out->caller = NULL;
	out->audit = NULL;
	out->changes = &taskstore_feed;
	out->tasks = tasks;
	out->default_subscriptions = &conf_subscriptions;
	/* The suite's 2025-era logging scenarios expect the fixtures' info messages unasked. */
	out->legacy_log_level = "info";
	size_t ntools = 0, nres = 0, ntpl = 0, npr = 0, nf;
	const struct tool_desc *ft = conf_tools(&nf);
	conf_append(conf_all_tools, &ntools, CONF_ROWS * 2, ft, nf, sizeof *conf_all_tools);
	ft = conf_task_tools(&nf);
	conf_append(conf_all_tools, &ntools, CONF_ROWS * 2, ft, nf, sizeof *conf_all_tools);
	size_t n;
	const struct conf_resource *r = conf_resources(&n);
	for (size_t i = 0; i < n && i < CONF_MAX; i++)
		conf_res[nres++] = (struct resource_desc){.uri = r[i].uri,
							  .name = r[i].name,
							  .title = r[i].title,
							  .description = r[i].description,
							  .mime_type = r[i].mime_type,
							  .read = conf_read_fixed,
							  .ttl_ms = 60000};
	size_t nt;
	const struct conf_template *t = conf_templates(&nt);
	for (size_t i = 0; i < nt && i < CONF_MAX; i++)
		conf_tpl[ntpl++] =
			(struct resource_template_desc){.uri_template = t[i].uri_template,
							.name = t[i].name,
							.title = t[i].title,
							.description = t[i].description,
							.mime_type = t[i].mime_type,
							.prefix = "test://template/",
							.var = "id",
							.suffix = "/data",
							.read = conf_read_tpl};
	size_t np;
	const struct conf_prompt *p = conf_prompts(&np);
	for (size_t i = 0; i < np && i < CONF_MAX; i++, npr++) {
		conf_pr[npr] = (struct prompt_desc){.name = p[i].name,
						    .title = p[i].title,
						    .description = p[i].description,
						    .render = conf_render,
						    .nargs = p[i].nargs};
		for (size_t a = 0; a < p[i].nargs && a < PROMPTS_MAX_ARGS; a++) {
			conf_pr[npr].args[a] =
				(struct prompt_arg_desc){.name = p[i].args[a].name,
							 .description = p[i].args[a].description,
							 .required = p[i].args[a].required,
							 .max_len = 256};
			if (strcmp(p[i].name, "test_prompt_with_arguments") == 0)
				conf_pr[npr].args[a].complete =
					a == 0 ? conf_complete_arg1 : conf_complete_arg2;
		}
	}
	out->tools = conf_all_tools;
	out->ntools = ntools;
	out->resources = conf_res;
	out->nresources = nres;
	out->templates = conf_tpl;
	out->ntemplates = ntpl;
	out->prompts = conf_pr;
	out->nprompts = npr;
}
