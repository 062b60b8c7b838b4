/* conformance-server: a test-only MCP server built from the same server/ objects as bikaroo-mcp,
 * with the fixture tools the official conformance suite calls by name registered next to the
 * product's. It needs no database: the fixtures never reach domain/. When DATABASE_URL is set,
 * the product's own rows listed next to the fixtures can be used too (the suite's caching
 * scenario reads the first resource listed). Configured like bikaroo-mcp (server/cfg.c;
 * BIKAROO_AUTH=local, loopback only). Subcommands: serve (HTTP), stdio (newline-delimited
 * JSON-RPC on stdin/stdout, as `bikaroo-mcp stdio`). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "domain/pg/db.h"
#include "server/cfg.h"
#include "server/transport/http.h"
#include "server/auth/identity.h"
#include "server/protocol/methods.h"
#include "server/protocol/notify.h"
#include "server/protocol/reqstate.h"
#include "server/protocol/tools.h"
#include "server/protocol/prompts.h"
#include "server/protocol/resources.h"
#include "server/transport/stdio.h"
#include "fixtures.h"
#include "registries.h"

static volatile sig_atomic_t conf_stop;

static void conf_on_signal(int sig)
{
	(void)sig;
	conf_stop = 1;
}

/* Registers every fixture with the server's registries; returns the number of fixture tools. */
static size_t conf_register(void)
{
	size_t nt;
	const struct tool_desc *tools = conf_tools(&nt);
	tools_set_extra(tools, nt);
	resources_set_default_subscriptions(&conf_subscriptions);
	/* The suite's 2025-era logging scenarios expect the fixtures' info messages unasked. */
	notify_set_legacy_default(NOTIFY_INFO);
	conf_register_catalog();
	return nt;
}

static int conf_serve(const struct cfg *cfg)
{
	struct fleet_actor actor;
	if (strncmp(cfg->listen, "127.", 4) != 0) {
		log_error("the conformance server binds to loopback addresses only, not %s",
			  cfg->listen);
		return 1;
	}
	if (identity_local(cfg, &actor) != 0)
		return 1;
	if (*cfg->database_url)
		db_configure(cfg->database_url);
	size_t nt = conf_register();
	/* SIGINT/SIGTERM blocked before the HTTP threads start, so that they inherit the mask and
	 * only the main thread's sigsuspend() below receives the signal (otherwise it can land in
	 * a worker thread, as it does under valgrind, and the server never stops). */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	struct http_server *srv = NULL;
	unsigned port = 0;
	if (reqstate_init(cfg->state_secret) != 0 || tools_init() != 0 ||
	    resources_init(cfg->resources_dir) != 0 || prompts_init(cfg->prompts_dir) != 0 ||
	    http_start(cfg, &actor, &srv, &port) != HTTP_OK) {
		prompts_cleanup();
		resources_cleanup();
		tools_cleanup();
		if (*cfg->database_url)
			db_shutdown();
		return 1;
	}
	log_info("conformance server at http://%s:%u/mcp (%zu fixture tools)", cfg->listen, port,
		 nt);
	while (!conf_stop)
		sigsuspend(&old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	http_stop(srv);
	prompts_cleanup();
	resources_cleanup();
	tools_cleanup();
	conf_subscriptions_cleanup();
	if (*cfg->database_url)
		db_shutdown();
	return 0;
}

/* The same fixtures over the stdio transport. */
static int conf_stdio(const struct cfg *cfg)
{
	struct fleet_actor actor;
	if (identity_local(cfg, &actor) != 0)
		return 1;
	if (*cfg->database_url)
		db_configure(cfg->database_url);
	conf_register();
	int rc = 1;
	if (reqstate_init(cfg->state_secret) == 0 && tools_init() == 0 &&
	    resources_init(cfg->resources_dir) == 0 && prompts_init(cfg->prompts_dir) == 0)
		rc = stdio_serve(cfg, &actor);
	prompts_cleanup();
	resources_cleanup();
	tools_cleanup();
	conf_subscriptions_cleanup();
	if (*cfg->database_url)
		db_shutdown();
	return rc;
}

int main(int argc, char **argv)
{
	mem_install_jansson();
	if (argc < 2 || (strcmp(argv[1], "serve") != 0 && strcmp(argv[1], "stdio") != 0)) {
		fprintf(stderr,
			"usage: conformance-server serve|stdio [--flag=value ...] (test only)\n");
		return 2;
	}
	struct cfg cfg;
	if (cfg_load(&cfg, argc - 1, argv + 1) != CFG_OK)
		return 2;
	struct sigaction sa = {.sa_handler = conf_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc = strcmp(argv[1], "stdio") == 0 ? conf_stdio(&cfg) : conf_serve(&cfg);
	cfg_free(&cfg);
	return rc;
}
