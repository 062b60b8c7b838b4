/* Prompts: the generic registry over a server description's prompt table: the template loader
 * and renderer, prompts/list and prompts/get.
 * A template is split into messages by header lines "=== user ===", "=== assistant ===" or
 * "=== user embed URI ===" (the message is the fixed resource URI, embedded). Text before the
 * first header is a comment for maintainers. */
#include "prompts.h"

#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "pager.h"
#include "resources.h"
#include "service.h"

#define PROMPTS_LIST_TTL_MS 3600000L
#define PROMPTS_MAX_MESSAGES 16

struct prompts_msg {
	char role[16];
	char *embed_uri; /* NULL: text message */
	char *text;      /* template text */
};

/* A parsed template. */
struct prompts_tpl {
	struct prompts_msg msgs[PROMPTS_MAX_MESSAGES];
	size_t n;
};

/* Parsed templates, parallel to the server's prompt rows. */
struct prompts_loaded {
	struct prompts_tpl *tpls;
};

const struct prompt_desc *prompts_find(const struct mcp_server *s, const char *name)
{
	for (size_t i = 0; i < s->nprompts; i++)
		if (strcmp(s->prompts[i].name, name) == 0)
			return &s->prompts[i];
	return NULL;
}

static const struct prompt_arg_desc *prompts_arg(const struct prompt_desc *p, const char *name)
{
	for (size_t i = 0; i < p->nargs; i++)
		if (strcmp(p->args[i].name, name) == 0)
			return &p->args[i];
	return NULL;
}

/* ---- rendering ------------------------------------------------------------------------- */

static bool prompts_name_ok(const char *s, size_t n)
{
	if (n == 0 || n > 64)
		return false;
	for (size_t i = 0; i < n; i++)
		if (!((s[i] >= 'A' && s[i] <= 'Z') || (s[i] >= 'a' && s[i] <= 'z') ||
		      (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return false;
	return true;
}

/* The value of argument name[0..n) in args, or "" (borrowed). */
static const char *prompts_value(json_t *args, const char *name, size_t n)
{
	char key[65];
	memcpy(key, name, n);
	key[n] = '\0';
	const char *v = json_string_value(json_object_get(args, key));
	return v ? v : "";
}

/* One pass over tpl; when p is set, every placeholder must name one of p's arguments. */
static char *prompts_render_checked(const char *tpl, json_t *args, const struct prompt_desc *p)
{
	struct mem_buf b = {0};
	const char *open = NULL; /* name of the open section */
	size_t open_n = 0;
	mem_buf_put(&b, "", 0);
	for (const char *s = tpl; *s;) {
		if (s[0] != '{' || s[1] != '{') {
			size_t n = strcspn(s + 1, "{") + 1;
			mem_buf_put(&b, s, n);
			s += n;
			continue;
		}
		const char *end = strstr(s + 2, "}}");
		if (!end)
			goto bad;
		const char *name = s + 2;
		char kind = (*name == '#' || *name == '/') ? *name++ : '=';
		size_t n = (size_t)(end - name);
		if (!prompts_name_ok(name, n))
			goto bad;
		if (p) {
			char key[65];
			memcpy(key, name, n);
			key[n] = '\0';
			if (!prompts_arg(p, key))
				goto bad;
		}
		s = end + 2;
		if (kind == '=') {
			const char *v = prompts_value(args, name, n);
			mem_buf_put(&b, v, strlen(v)); /* literal: never scanned again */
		} else if (kind == '#') {
			if (open)
				goto bad; /* no nesting */
			char close[80];
			snprintf(close, sizeof close, "{{/%.*s}}", (int)n, name);
			const char *c = strstr(s, close);
			if (!c)
				goto bad;
			if (!*prompts_value(args, name, n) && !p) {
				s = c + strlen(close); /* section dropped */
			} else {
				open = name;
				open_n = n;
			}
		} else {
			if (!open || open_n != n || strncmp(open, name, n) != 0)
				goto bad;
			open = NULL;
		}
	}
	if (open)
		goto bad;
	return b.p;
bad:
	free(b.p);
	return NULL;
}

char *prompts_render_text(const char *tpl, json_t *args)
{
	return prompts_render_checked(tpl, args, NULL);
}

/* ---- loading --------------------------------------------------------------------------- */

static void prompts_free_tpl(struct prompts_tpl *t)
{
	for (size_t i = 0; i < t->n; i++) {
		free(t->msgs[i].embed_uri);
		free(t->msgs[i].text);
	}
	memset(t, 0, sizeof *t);
}

/* Trims blank lines around a message body in place. */
static char *prompts_trim(char *s)
{
	while (*s == '\n' || *s == '\r')
		s++;
	size_t n = strlen(s);
	while (n && (s[n - 1] == '\n' || s[n - 1] == '\r' || s[n - 1] == ' '))
		s[--n] = '\0';
	return s;
}

static int prompts_parse(const struct mcp_service *svc, const struct prompt_desc *p, char *text,
			 struct prompts_tpl *t)
{
	struct prompts_msg *cur = NULL;
	char *body = NULL;
	for (char *line = text; line && *line;) {
		char *nl = strchr(line, '\n');
		size_t len = nl ? (size_t)(nl - line) : strlen(line);
		if (len >= 8 && strncmp(line, "=== ", 4) == 0 &&
		    strncmp(line + len - 4, " ===", 4) == 0) {
			if (cur) {
				*line = '\0';
				cur->text = mem_strdup(prompts_trim(body));
			}
			if (t->n == PROMPTS_MAX_MESSAGES)
				return -1;
			cur = &t->msgs[t->n++];
			char head[256];
			snprintf(head, sizeof head, "%.*s", (int)(len - 8), line + 4);
			char uri[200] = "";
			if (sscanf(head, "%15s embed %199s", cur->role, uri) < 1)
				return -1;
			if (strcmp(cur->role, "user") != 0 && strcmp(cur->role, "assistant") != 0)
				return -1;
			if (*uri) {
				if (!resources_document(svc, uri, NULL)) {
					log_error("prompt %s embeds %s, which is not a loaded "
						  "document",
						  p->name, uri);
					return -1;
				}
				cur->embed_uri = mem_strdup(uri);
			}
			body = nl ? nl + 1 : line + len;
		}
		line = nl ? nl + 1 : NULL;
	}
	if (!cur)
		return -1;
	cur->text = mem_strdup(prompts_trim(body));
	/* Every placeholder must name a declared argument and every section must close. */
	for (size_t i = 0; i < t->n; i++) {
		char *probe = prompts_render_checked(t->msgs[i].text, NULL, p);
		if (!probe)
			return -1;
		free(probe);
		if (!t->msgs[i].embed_uri && !*t->msgs[i].text)
			return -1;
	}
	return 0;
}

int prompts_load(struct mcp_service *svc, const char *dir)
{
	const struct mcp_server *s = svc->server;
	struct prompts_loaded *l = mem_calloc(1, sizeof *l);
	svc->prompts = l;
	l->tpls = mem_calloc(s->nprompts + 1, sizeof *l->tpls);
	for (size_t i = 0; i < s->nprompts; i++) {
		const struct prompt_desc *p = &s->prompts[i];
		if (!p->file)
			continue;
		char path[4096];
		if ((size_t)snprintf(path, sizeof path, "%s/%s", dir, p->file) >= sizeof path)
			return -1;
		FILE *f = fopen(path, "rb");
		if (!f) {
			log_error("prompts: cannot open %s: %s", path, strerror(errno));
			return -1;
		}
		char *buf = mem_alloc(PROMPTS_FILE_MAX + 1);
		size_t n = fread(buf, 1, PROMPTS_FILE_MAX + 1, f);
		fclose(f);
		buf[n <= PROMPTS_FILE_MAX ? n : 0] = '\0';
		json_t *utf8 = json_string(buf);
		int rc = (n == 0 || n > PROMPTS_FILE_MAX || strlen(buf) != n || !utf8)
				 ? -1
				 : prompts_parse(svc, p, buf, &l->tpls[i]);
		json_decref(utf8);
		free(buf);
		if (rc != 0) {
			log_error(
				"prompts: %s is not a valid prompt template (UTF-8 text under %zu "
				"bytes, '=== user|assistant ===' headers, placeholders naming the "
				"prompt's arguments)",
				path, PROMPTS_FILE_MAX);
			return -1;
		}
	}
	return 0;
}

void prompts_unload(struct mcp_service *svc)
{
	struct prompts_loaded *l = svc->prompts;
	if (!l)
		return;
	for (size_t i = 0; i < svc->server->nprompts; i++)
		prompts_free_tpl(&l->tpls[i]);
	free(l->tpls);
	free(l);
	svc->prompts = NULL;
}

/* ---- methods --------------------------------------------------------------------------- */

int prompts_list(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	bool titles = mcp_version_at_least(ctx, "2025-06-18");
	struct mcp_caller who;
	if (mcp_caller(ctx, &who, err) != 0)
		return -1;
	const struct mcp_server *s = ctx->server;
	json_t *all = json_array();
	for (size_t i = 0; i < s->nprompts; i++) {
		const struct prompt_desc *p = &s->prompts[i];
		if (!MCP_MAY(&who, p))
			continue;
		json_t *o = json_pack("{s:s, s:s}", "name", p->name, "description", p->description);
		if (titles && p->title)
			json_object_set_new(o, "title", json_string(p->title));
		json_t *args = json_array();
		for (size_t a = 0; a < p->nargs; a++) {
			const struct prompt_arg_desc *d = &p->args[a];
			json_t *ao = json_pack("{s:s, s:s, s:b}", "name", d->name, "description",
					       d->description, "required", d->required);
			if (titles && d->title)
				json_object_set_new(ao, "title", json_string(d->title));
			json_array_append_new(args, ao);
		}
		json_object_set_new(o, "arguments", args);
		mcp_describe_governance(ctx, ctx->server->governance_key, o, p->governance);
		json_array_append_new(all, o);
	}
	return pager_page(ctx, params, all, "prompts", PROMPTS_LIST_TTL_MS, ctx->req->per_principal,
			  result, err);
}

/* Length in characters (UTF-8 code points; jansson has checked the encoding). */
static size_t prompts_chars(const char *s)
{
	size_t n = 0;
	for (; *s; s++)
		n += ((unsigned char)*s & 0xC0) != 0x80;
	return n;
}

/* Checks arguments against the descriptor: only declared names, strings, within bounds,
 * required ones present and valid. */
static int prompts_check_args(const struct prompt_desc *p, json_t *args, struct mcp_error *err)
{
	const char *key;
	json_t *v;
	json_object_foreach (args, key, v) {
		const struct prompt_arg_desc *d = prompts_arg(p, key);
		if (!d)
			return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown prompt argument",
					json_pack("{s:s}", "argument", key));
		if (!json_is_string(v))
			return mcp_fail(err, MCP_INVALID_PARAMS, "Prompt arguments must be strings",
					json_pack("{s:s}", "argument", key));
		if (prompts_chars(json_string_value(v)) > d->max_len)
			return mcp_fail(err, MCP_INVALID_PARAMS, "Prompt argument too long",
					json_pack("{s:s, s:I}", "argument", key, "maxLength",
						  (json_int_t)d->max_len));
		if (strlen(json_string_value(v)) != json_string_length(v))
			return mcp_fail(err, MCP_INVALID_PARAMS,
					"Prompt arguments must not contain NUL",
					json_pack("{s:s}", "argument", key));
	}
	for (size_t i = 0; i < p->nargs; i++) {
		const struct prompt_arg_desc *d = &p->args[i];
		const char *s = json_string_value(json_object_get(args, d->name));
		if (d->required && (!s || !*s))
			return mcp_fail(err, MCP_INVALID_PARAMS, "Missing required argument",
					json_pack("{s:s}", "argument", d->name));
		if (s && *s && d->valid && !d->valid(s))
			return mcp_fail(err, MCP_INVALID_PARAMS, d->invalid_message,
					json_pack("{s:s}", "argument", d->name));
	}
	return 0;
}

int prompts_get(struct mcp_ctx *ctx, json_t *params, json_t **result, struct mcp_error *err)
{
	const char *name = json_string_value(json_object_get(params, "name"));
	if (!name)
		return mcp_fail(err, MCP_INVALID_PARAMS, "prompts/get needs a string 'name'", NULL);
	const struct mcp_server *s = ctx->server;
	const struct prompt_desc *p = prompts_find(s, name);
	size_t row = p ? (size_t)(p - s->prompts) : 0;
	ctx->label = p ? p->name : NULL;
	if (!p)
		return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown prompt",
				json_pack("{s:s}", "name", name));
	/* The token's scope (403 otherwise), then the database's rights: without them, the
	 * prompt does not exist for this caller (the list shows it none either). */
	struct mcp_caller who = {.scopes = ~0u, .person = true};
	bool judged = p->scope || p->roles || p->people_only;
	if (mcp_require_scope(ctx, p->scope, p->scope_name, err) != 0 ||
	    (judged && mcp_caller(ctx, &who, err) != 0))
		return -1;
	if (judged && !MCP_MAY(&who, p)) {
		ctx->outcome = "not_found";
		return mcp_fail(err, MCP_INVALID_PARAMS, "Unknown prompt",
				json_pack("{s:s}", "name", name));
	}
	json_t *args = json_object_get(params, "arguments");
	json_t *empty = NULL;
	if (!args || json_is_null(args))
		args = empty = json_object();
	int rc;
	if (!json_is_object(args))
		rc = mcp_fail(err, MCP_INVALID_PARAMS, "prompts/get 'arguments' must be an object",
			      NULL);
	else
		rc = prompts_check_args(p, args, err);
	if (rc == 0 && p->render) {
		rc = p->render(ctx, p, args, result, err);
	} else if (rc == 0) {
		const struct prompts_tpl *t = &ctx->service->prompts->tpls[row];
		json_t *msgs = json_array();
		for (size_t i = 0; i < t->n && rc == 0; i++) {
			json_t *content;
			if (t->msgs[i].embed_uri) {
				const char *mime = NULL;
				const char *doc = resources_document(ctx->service,
								     t->msgs[i].embed_uri, &mime);
				content = json_pack("{s:s, s:{s:s, s:s, s:s}}", "type", "resource",
						    "resource", "uri", t->msgs[i].embed_uri,
						    "mimeType", mime, "text", doc ? doc : "");
			} else {
				char *text = prompts_render_text(t->msgs[i].text, args);
				if (!text) {
					rc = mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error",
						      NULL);
					break;
				}
				content = json_pack("{s:s, s:s}", "type", "text", "text", text);
				free(text);
			}
			json_array_append_new(msgs, json_pack("{s:s, s:o}", "role", t->msgs[i].role,
							      "content", content));
		}
		if (rc == 0 && t->n == 0)
			rc = mcp_fail(err, MCP_INTERNAL_ERROR, "Internal error: prompt not loaded",
				      NULL);
		if (rc == 0)
			*result = json_pack("{s:s, s:o}", "description", p->description, "messages",
					    msgs);
		else
			json_decref(msgs);
	}
	json_decref(empty);
	return rc;
}
