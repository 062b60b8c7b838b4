/* host-config: what an MCP host needs to launch or reach this server (host_config.h). */
#include "host_config.h"

#include <jansson.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/b64.h"
#include "common/mem.h"
#include "server/cfg.h"
#include "server/cli/cli.h"

/* The hosts host-config writes for: their file's shape (VS Code's `servers` with a type, or the
 * `mcpServers` of Cursor and Claude Desktop), and whether they launch the server (stdio) or
 * reach the running one (http). */
static const struct host_config_host {
	const char *name, *file, *note;
	bool vscode, http;
} host_config_hosts[] = {
	{"vscode", ".vscode/mcp.json (or the user mcp.json)", "VS Code, stdio", true, false},
	{"vscode-http", ".vscode/mcp.json", "VS Code, Streamable HTTP", true, true},
	{"cursor", ".cursor/mcp.json", "Cursor, stdio", false, false},
	{"cursor-http", ".cursor/mcp.json", "Cursor, Streamable HTTP", false, true},
	{"claude-desktop", "claude_desktop_config.json", "Claude Desktop, stdio", false, false},
};

#define HOST_CONFIG_N (sizeof host_config_hosts / sizeof host_config_hosts[0])
#define HOST_CONFIG_SERVER "bikaroo-fleet"    /* the server's name in every host file */
#define HOST_CONFIG_TOKEN "<an access token>" /* what the user pastes a token over */

/* A path setting for the env of a launched server: absolute (a host starts it from a folder of
 * its own); NULL when the binary finds it by itself (an installed binary's default directory).
 * New string. */
static char *host_config_path(const char *dir)
{
	if (dir[0] == '/')
		return NULL; /* absolute: the installed default, or set so by the caller */
	char *abs = realpath(dir, NULL);
	if (abs)
		return abs;
	/* Not below the working directory: a source tree's build/NAME finds it at ../dir. */
	char *self = realpath("/proc/self/exe", NULL);
	char *slash = self ? strrchr(self, '/') : NULL;
	if (slash) {
		*slash = '\0';
		char *guess = mem_printf("%s/../%s", self, dir);
		abs = realpath(guess, NULL);
		free(guess);
	}
	free(self);
	return abs ? abs : mem_strdup(dir);
}

/* Secret setting `name` of value `value` into env: as it is when it holds no secret, else as
 * NAME_FILE naming (absolute) the file it came from. -1 (said) when it was given otherwise:
 * host-config prints no secret. */
static int host_config_secret(json_t *env, const struct cfg *cfg, const char *name,
			      const char *value, bool secret)
{
	const char *file = cfg_file_of(cfg, name);
	if (file) {
		char *abs = file[0] == '/' ? NULL : realpath(file, NULL);
		char *var = mem_printf("%s_FILE", name);
		json_object_set_new(env, var, json_string(abs ? abs : file));
		free(var);
		free(abs);
		return 0;
	}
	if (!secret) {
		json_object_set_new(env, name, json_string(value));
		return 0;
	}
	fprintf(stderr,
		"host-config: %s holds a secret, and host-config prints none (the file would "
		"be as readable as wherever it is pasted). Put the value in a file only you can "
		"read (umask 077; printf '%%s' \"$%s\" >FILE), set %s_FILE=FILE instead of %s, "
		"and run host-config again: the file names it\n",
		name, name, name, name);
	return -1;
}

/* The launch of a stdio host: this very binary, the database and identity of cfg. -1 (said)
 * when a secret would have to be printed. */
static int host_config_launch(const struct host_config_host *h, const struct cfg *cfg, json_t *e)
{
	char *self = realpath("/proc/self/exe", NULL);
	if (h->vscode)
		json_object_set_new(e, "type", json_string("stdio"));
	json_object_set_new(e, "command", json_string(self ? self : "bikaroo-mcp"));
	free(self);
	json_object_set_new(e, "args", json_pack("[s]", "stdio"));
	json_t *env = json_object();
	json_object_set_new(e, "env", env);
	if (host_config_secret(env, cfg, "DATABASE_URL", cfg->database_url,
			       cli_has_password(cfg->database_url)) != 0)
		return -1;
	json_object_set_new(env, "BIKAROO_AUTH", json_string(cfg->auth));
	if (strcmp(cfg->auth, "local") == 0) {
		json_object_set_new(env, "BIKAROO_LOCAL_SUBJECT", json_string(cfg->local_subject));
		json_object_set_new(env, "BIKAROO_LOCAL_CLIENT", json_string(cfg->local_client));
		json_object_set_new(env, "BIKAROO_LOCAL_SCOPES", json_string(cfg->local_scopes));
	} else {
		json_object_set_new(env, "BIKAROO_AUTH_ISSUER", json_string(cfg->auth_issuer));
		json_object_set_new(env, "BIKAROO_RESOURCE_URI", json_string(cfg->resource_uri));
		/* A development issuer over plain http on loopback: without it the launched
		 * server refuses the issuer, whatever the token. */
		if (cfg->auth_insecure_loopback)
			json_object_set_new(env, "BIKAROO_AUTH_INSECURE_LOOPBACK",
					    json_string("1"));
		if (strcmp(cfg->auth, "introspection") == 0) {
			json_object_set_new(env, "BIKAROO_AUTH_CLIENT_ID",
					    json_string(cfg->auth_client_id));
			if (host_config_secret(env, cfg, "BIKAROO_AUTH_CLIENT_SECRET",
					       cfg->auth_client_secret, true) != 0)
				return -1;
		}
		/* A token from a file is passed on as that file; else a place to paste one. */
		if (!cfg_file_of(cfg, "BIKAROO_TOKEN"))
			json_object_set_new(env, "BIKAROO_TOKEN", json_string(HOST_CONFIG_TOKEN));
		else
			host_config_secret(env, cfg, "BIKAROO_TOKEN", "", true);
	}
	const char *const dirs[][2] = {{"BIKAROO_RESOURCES_DIR", cfg->resources_dir},
				       {"BIKAROO_PROMPTS_DIR", cfg->prompts_dir}};
	for (size_t i = 0; i < 2; i++) {
		char *d = host_config_path(dirs[i][1]);
		if (d)
			json_object_set_new(env, dirs[i][0], json_string(d));
		free(d);
	}
	return 0;
}

/* The server entry of host h (new reference, NULL when it would print a secret): the launch, or
 * the URL of the server this configuration serves. */
static json_t *host_config_entry(const struct host_config_host *h, const struct cfg *cfg)
{
	json_t *e = json_object();
	if (!h->http) {
		if (host_config_launch(h, cfg, e) == 0)
			return e;
		json_decref(e);
		return NULL;
	}
	bool v6 = strchr(cfg->listen, ':') && cfg->listen[0] != '[';
	char *url = *cfg->resource_uri ? mem_strdup(cfg->resource_uri)
				       : mem_printf("http://%s%s%s:%ld/mcp", v6 ? "[" : "",
						    cfg->listen, v6 ? "]" : "", cfg->port);
	if (h->vscode)
		json_object_set_new(e, "type", json_string("http"));
	json_object_set_new(e, "url", json_string(url));
	free(url);
	return e;
}

/* Percent-encodes s for a URL's query (RFC 3986 unreserved characters kept). New string. */
static char *host_config_url_encode(const char *s)
{
	size_t n = strlen(s);
	char *out = mem_alloc(3 * n + 1), *o = out;
	for (const unsigned char *p = (const unsigned char *)s; *p; p++) {
		if ((*p >= 'A' && *p <= 'Z') || (*p >= 'a' && *p <= 'z') ||
		    (*p >= '0' && *p <= '9') || strchr("-._~", *p))
			*o++ = (char)*p;
		else
			o += snprintf(o, 4, "%%%02X", *p);
	}
	*o = '\0';
	return out;
}

/* The install link of entry e (borrowed) for h: VS Code's vscode:mcp/install?{JSON with the
 * name}, Cursor's cursor://anysphere.cursor-deeplink/mcp/install?name=..&config={base64 JSON}.
 * New string, or NULL for a host without install links. */
static char *host_config_link(const struct host_config_host *h, const json_t *e)
{
	char *link = NULL;
	if (h->vscode) {
		json_t *named = json_pack("{s:s}", "name", HOST_CONFIG_SERVER);
		json_object_update(named, (json_t *)e);
		char *text = json_dumps(named, JSON_COMPACT | JSON_PRESERVE_ORDER);
		char *q = host_config_url_encode(text);
		link = mem_printf("vscode:mcp/install?%s", q);
		free(q);
		free(text);
		json_decref(named);
	} else if (strncmp(h->name, "cursor", 6) == 0) {
		char *text = json_dumps(e, JSON_COMPACT | JSON_PRESERVE_ORDER);
		char *b64 = b64_encode((const unsigned char *)text, strlen(text), false);
		char *q = host_config_url_encode(b64);
		link = mem_printf(
			"cursor://anysphere.cursor-deeplink/mcp/install?name=%s&config=%s",
			HOST_CONFIG_SERVER, q);
		free(q);
		free(b64);
		free(text);
	}
	return link;
}

/* Prints h's file, or with link its install link, for entry e (stolen); 0, or 2 (said). */
static int host_config_print(const struct host_config_host *h, json_t *e, bool link)
{
	int rc = 0;
	if (link) {
		char *l = host_config_link(h, e);
		if (l)
			printf("%s\n", l);
		else {
			fprintf(stderr,
				"host-config: %s has no install link (vscode, vscode-http, "
				"cursor and cursor-http have)\n",
				h->name);
			rc = 2;
		}
		free(l);
		json_decref(e);
		return rc;
	}
	json_t *file =
		json_pack("{s:{s:o}}", h->vscode ? "servers" : "mcpServers", HOST_CONFIG_SERVER, e);
	char *text = json_dumps(file, JSON_INDENT(2) | JSON_PRESERVE_ORDER);
	printf("%s\n", text);
	free(text);
	json_decref(file);
	return 0;
}

void host_config_hosts_help(FILE *out)
{
	fprintf(out, "HOST is one of:\n");
	for (size_t i = 0; i < HOST_CONFIG_N; i++)
		fprintf(out, "  %-15s %s: %s\n", host_config_hosts[i].name,
			host_config_hosts[i].note, host_config_hosts[i].file);
}

int host_config_main(int argc, char **argv)
{
	const char *name = argc > 2 ? argv[2] : "";
	bool link = false;
	for (int a = 3; a < argc; a++)
		link |= strcmp(argv[a], "--link") == 0;
	const struct host_config_host *h = NULL;
	for (size_t i = 0; i < HOST_CONFIG_N; i++)
		if (strcmp(host_config_hosts[i].name, name) == 0)
			h = &host_config_hosts[i];
	if (!h) {
		fprintf(stderr,
			"usage: bikaroo-mcp host-config HOST [--link] [--flag=value ...]; ");
		host_config_hosts_help(stderr);
		return 2;
	}
	/* The settings as serve and stdio read them; --link is ours, not a setting. */
	char **rest = mem_calloc((size_t)argc, sizeof *rest);
	int n = 0;
	for (int a = 2; a < argc; a++)
		if (strcmp(argv[a], "--link") != 0)
			rest[n++] = argv[a];
	struct cfg cfg;
	enum cfg_status cs = cfg_load(&cfg, n, rest);
	free(rest);
	if (cs != CFG_OK)
		return 2;
	int rc = 2;
	if (!h->http && !*cfg.database_url) {
		fprintf(stderr,
			"host-config %s: DATABASE_URL is not set: give the database the "
			"host's server is to use (make run prints its own)\n",
			h->name);
		goto out;
	}
	json_t *entry = host_config_entry(h, &cfg);
	if (entry)
		rc = host_config_print(h, entry, link);
out:
	cfg_free(&cfg);
	return rc;
}
