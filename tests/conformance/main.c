/* conformance-server: a test-only MCP server built from the same server/ objects as bikaroo-mcp:
 * the product's description (its name, version, instructions, extensions) serving the fixtures
 * the official conformance suite calls by name instead of the product's rows. It needs no
 * database and opens none, whatever DATABASE_URL says: the fixtures never reach domain/ (the
 * product itself is judged by the suite as itself, against a database). Configured like
 * bikaroo-mcp (server/cfg.c; BIKAROO_AUTH=local, loopback only). Subcommands: serve (HTTP),
 * stdio (newline-delimited JSON-RPC on stdin/stdout, as `bikaroo-mcp stdio`). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include "common/log.h"
#include "common/mem.h"
#include "fixtures.h"
#include "registries.h"
#include "taskstore.h"
#include "server/auth/identity.h"
#include "server/capabilities/catalog.h"
#include "server/cfg.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/reqstate.h"
#include "server/transport/http.h"
#include "server/transport/stdio.h"

static volatile sig_atomic_t conf_stop;

static void conf_on_signal(int sig)
{
	(void)sig;
	conf_stop = 1;
}

/* The product's description, the conformance server's made of it, the task store it serves
 * with, and the service loaded. */
struct conf_server {
	struct mcp_app app;
	struct mcp_server product;
	struct mcp_server desc;
	struct taskstore *tasks;
	struct mcp_service *svc;
};

/* The conformance server's description, loaded; 0, or -1 (logged). */
static int conf_open(const struct cfg *cfg, struct conf_server *server, struct fleet_actor *actor)
{
	if (identity_local(cfg->local_subject, cfg->local_client, cfg->local_scopes, actor) != 0)
		return -1;
	server->app.confirm_ttl_s = cfg->confirm_ttl;
	if (catalog_describe(&server->product, &server->app) != 0)
		return -1;
	server->tasks = taskstore_new(conf_task_finish());
	conf_describe(&server->desc, &server->product, taskstore_provider(server->tasks));
	struct mcp_service_config sc = {.resources_dir = cfg->resources_dir,
					.prompts_dir = cfg->prompts_dir};
	if (reqstate_init(cfg->state_secret) != 0 ||
	    (server->svc = mcp_service_new(&server->desc, &sc)) == NULL) {
		log_error("cannot load the conformance server's description");
		return -1;
	}
	return 0;
}

static void conf_close(struct conf_server *server)
{
	mcp_service_free(server->svc);
	taskstore_free(server->tasks);
	mcp_server_release(&server->product);
	conf_subscriptions_cleanup();
}

static int conf_serve(const struct cfg *cfg)
{
	struct fleet_actor actor;
	struct conf_server server = {0};
	if (strncmp(cfg->listen, "127.", 4) != 0) {
		log_error("the conformance server binds to loopback addresses only, not %s",
			  cfg->listen);
		return 1;
	}
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
	struct http_settings hset = cfg_http_settings(cfg);
	if (conf_open(cfg, &server, &actor) != 0 ||
	    http_start(&hset, server.svc, &actor, &srv, &port) != HTTP_OK) {
		conf_close(&server);
		return 1;
	}
	log_info("conformance server at http://%s:%u/mcp (%zu tools)", cfg->listen, port,
		 server.desc.ntools);
	while (!conf_stop)
		sigsuspend(&old);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	http_stop(srv);
	conf_close(&server);
	return 0;
}

/* The same fixtures over the stdio transport. */
static int conf_stdio(const struct cfg *cfg)
{
	struct fleet_actor actor;
	struct conf_server server = {0};
	int rc = 1;
	if (conf_open(cfg, &server, &actor) == 0)
		rc = stdio_serve(server.svc, &actor, (size_t)cfg->max_body);
	conf_close(&server);
	return rc;
}

int main(int argc, char **argv)
{
	mem_install_jansson();
	if (argc < 2 || (strcmp(argv[1], "serve") != 0 && strcmp(argv[1], "stdio") != 0)) {
		fprintf(stderr,
			"usage: conformance-server serve|stdio [--flag=value ...] (test only; no "
			"database)\n");
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
