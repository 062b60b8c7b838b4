/* bikaroo-mcp: the Bikaroo fleet MCP server, and its composition root: the configuration, the
 * authorization module, the database, Bikaroo's server description (the catalogue), the
 * transport. The commands other than serving live in server/cli/ (host-config, admin, usage,
 * the serve command's checks, readiness and reload). */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <time.h>

#include "common/keyring.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/metrics.h"
#include "common/service.h"
#include "common/trace.h"
#include "common/version.h"
#include "domain/budgets.h"
#include "domain/changes.h"
#include "domain/pg/db.h"
#include "domain/pg/migrate.h"
#include "server/auth/auth.h"
#include "server/auth/identity.h"
#include "server/capabilities/catalog.h"
#include "server/cfg.h"
#include "server/cli/admin.h"
#include "server/cli/help.h"
#include "server/cli/cli.h"
#include "server/cli/host_config.h"
#include "server/cli/serve.h"
#include "server/protocol/dispatch.h"
#include "server/protocol/ratelimit.h"
#include "server/transport/http.h"
#include "server/transport/stdio.h"

/* Set by the signal handler, read by serve's loop (sigsuspend). */
static volatile sig_atomic_t main_stop, main_reload;

static void main_on_signal(int sig)
{
	if (sig == SIGHUP)
		main_reload = 1;
	else
		main_stop = 1;
}

static int main_migrate(const struct cfg *cfg)
{
	const char *url = *cfg->migrate_url ? cfg->migrate_url : cfg->database_url;
	if (cli_check_database_url(url, "BIKAROO_MIGRATE_URL (or DATABASE_URL)") != 0 ||
	    cli_check_dir("BIKAROO_MIGRATIONS_DIR", cfg->migrations_dir) != 0)
		return 1;
	struct migrate_count applied;
	enum fleet_status st = migrate_run(url, cfg->migrations_dir, migrate_capabilities,
					   migrate_capabilities_count, &applied);
	if (st != FLEET_OK) {
		log_error("migrate failed (%s)", fleet_status_name(st));
		return 1;
	}
	log_info("migrate: %d migration(s) applied (numbered files), %d function file(s) applied "
		 "(new or changed), schema up to date",
		 applied.numbered, applied.functions);
	return 0;
}

/* The volume limits' budget store (ratelimit.h): buckets shared in the database. */
static int main_budget_take(void *ctx, struct fleet_budget_lease *l, size_t n)
{
	(void)ctx;
	return budgets_take(l, n) == FLEET_OK ? 0 : -1;
}

static const struct ratelimit_store main_budget_store = {main_budget_take, NULL};

/* What the transports serve: Bikaroo's server description (immutable once built), the settings
 * its handlers read, the volume limits, and the service loading them made. */
struct main_product {
	struct mcp_server desc;
	struct mcp_app app;
	struct ratelimit *limits;
	struct mcp_service *svc;
};

/* Bikaroo's server description, loaded (documents, templates, schemas), with the requestState
 * key ring; 0, or -1 (logged, naming the setting). */
static int main_server_open(const struct cfg *cfg, struct main_product *p)
{
	*p = (struct main_product){.app = {.confirm_ttl_s = cfg->confirm_ttl}};
	if (catalog_describe(&p->desc, &p->app) != 0)
		return -1;
	struct ratelimit_settings rset = cfg_ratelimit_settings(cfg);
	if (strcmp(cfg->rate_store, "database") == 0) {
		rset.store = &main_budget_store;
	} else if (strcmp(cfg->rate_store, "local") != 0) {
		log_error("BIKAROO_RATE_STORE must be database or local, not %s", cfg->rate_store);
		return -1;
	}
	p->limits = ratelimit_new(&rset);
	if (cli_check_dir("BIKAROO_RESOURCES_DIR", cfg->resources_dir) != 0 ||
	    cli_check_dir("BIKAROO_PROMPTS_DIR", cfg->prompts_dir) != 0)
		return -1;
	enum keyring_status ks = keyring_init(cfg->state_secret, cfg->state_secret_previous);
	if (ks != KEYRING_OK) {
		log_error("%s", keyring_status_text(ks));
		return -1;
	}
	struct mcp_service_config sc = {.resources_dir = cfg->resources_dir,
					.prompts_dir = cfg->prompts_dir,
					.limits = p->limits};
	changes_watch(); /* the rights generation, for the lists' rights (domain/rights.h) */
	p->svc = mcp_service_new(&p->desc, &sc);
	if (!p->svc) {
		log_error("cannot load the documents and prompts (BIKAROO_RESOURCES_DIR=%s, "
			  "BIKAROO_PROMPTS_DIR=%s)",
			  cfg->resources_dir, cfg->prompts_dir);
		return -1;
	}
	return 0;
}

static void main_server_close(struct main_product *p)
{
	changes_stop();
	mcp_service_free(p->svc);
	p->svc = NULL;
	ratelimit_free(p->limits);
	p->limits = NULL;
	mcp_server_release(&p->desc);
}

/* The principal of a stdio session (identity.h), the database judging whether a local
 * identity may be used. 0, or -1 (logged). */
static int main_stdio_identity(const struct cfg *cfg, struct fleet_actor *out)
{
	if (strcmp(cfg->auth, "local") != 0 && !*cfg->token) {
		log_error(
			"stdio: no identity to act as. For a development database set "
			"BIKAROO_AUTH=local (with BIKAROO_LOCAL_SUBJECT and BIKAROO_LOCAL_CLIENT); "
			"otherwise set BIKAROO_TOKEN to an access token (with BIKAROO_AUTH_ISSUER "
			"and BIKAROO_RESOURCE_URI)");
		return -1;
	}
	struct auth_settings set = cfg_auth_settings(cfg);
	if (auth_init(&set) != AUTH_OK)
		return -1;
	struct identity_env env = cli_identity_env(cfg);
	const char *why = NULL;
	if (identity_from_environment(&env, out, &why) == IDENTITY_OK)
		return 0;
	log_error("stdio: no usable identity: %s", why ? why : "refused");
	return -1;
}

/* stdio: the same description and database checks as serve, the identity from the environment. */
static int main_stdio(const struct cfg *cfg)
{
	struct fleet_actor actor;
	struct main_product product = {0};
	int rc = 1;
	if (cli_check_database_url(cfg->database_url, "DATABASE_URL") != 0 ||
	    cli_db_configure(cfg) != 0)
		goto out;
	const char *why = NULL;
	enum fleet_status st = db_check_login_role(&why);
	if (st != FLEET_OK) {
		log_error("refusing to serve: %s", why ? why : fleet_status_name(st));
		goto out;
	}
	if (main_stdio_identity(cfg, &actor) != 0)
		goto out;
	if (main_server_open(cfg, &product) != 0)
		goto close;
	log_info("serving MCP over stdio acting as subject %s via client %s", actor.subject,
		 actor.client_id);
	rc = stdio_serve(product.svc, &actor, (size_t)cfg->max_body);
close:
	main_server_close(&product);
out:
	db_shutdown();
	auth_cleanup();
	return rc;
}

/* serve: the checks (server/cli/serve.c), the product, HTTP; then signals until the end: SIGHUP
 * reloads, SIGTERM or SIGINT drain and stop. argc and argv are read again on each reload. */
static int main_serve(const struct cfg *cfg, int argc, char **argv)
{
	struct serve_start start;
	if (serve_prepare(cfg, &start) != 0)
		return 1;
	struct main_product product;
	struct http_server *srv = NULL;
	unsigned port = 0;
	int rc = 1;
	if (main_server_open(cfg, &product) != 0)
		goto close;
	serve_log_keys();
	if (!*cfg->state_secret)
		log_warn("BIKAROO_STATE_SECRET is not set: requestState tokens are valid on this "
			 "process only (set one shared secret for several instances)");
	/* Block the signals before the HTTP threads exist: they inherit the mask, so a signal can
	 * only be taken here, by sigsuspend(), never lost in a worker. */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	sigaddset(&block, SIGHUP);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	struct http_settings hset = cfg_http_settings(cfg);
	hset.ready = serve_ready;
	if (http_start(&hset, product.svc, start.local ? &start.actor : NULL, &srv, &port) !=
	    HTTP_OK) {
		pthread_sigmask(SIG_SETMASK, &old, NULL);
		goto close;
	}
	serve_log_serving(cfg, &start, port);
	struct serve_wait *wait = start.db_down ? serve_wait_start(cfg) : NULL;
	/* systemd: READY=1 once the database and the keys are, the watchdog fed by the workers. */
	char probe[64];
	struct service_settings sset = {.notify_socket = cfg->notify_socket,
					.watchdog_usec = cfg->watchdog_usec,
					.probe_host =
						serve_probe_host(cfg->listen, probe, sizeof probe),
					.probe_port = port,
					.ready = serve_ready_now};
	metrics_set(&metrics_drain_limit, NULL, cfg->drain_ms / 1000);
	struct service *svc = service_start(&sset);
	for (;;) { /* the signals are blocked but in sigsuspend: none is taken between the tests */
		if (main_reload) {
			main_reload = 0;
			serve_reload(cfg, argc, argv);
		}
		if (main_stop)
			break;
		sigsuspend(&old);
	}
	service_stopping(svc);
	metrics_set(&metrics_drain_started, NULL, (long)time(NULL));
	serve_wait_stop(wait);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	log_info("stopping: draining (at most %ld ms)", cfg->drain_ms);
	long took = http_drain(srv, cfg->drain_ms);
	log_info("drained in %ld ms", took);
	service_stop(svc);
	http_stop(srv);
	rc = serve_refused() ? 1 : 0;
close:
	main_server_close(&product);
	db_shutdown();
	auth_cleanup();
	return rc;
}

int main(int argc, char **argv)
{
	mem_install_jansson();
	if (cli_asks_help(argc, argv))
		return cli_help(argc, argv);
	const char *cmd = argv[1];
	if (strcmp(cmd, "--version") == 0 || strcmp(cmd, "version") == 0) {
		printf("bikaroo-mcp %s (revision %s)\n", BIKAROO_VERSION, BIKAROO_REVISION);
		return 0;
	}
	if (strcmp(cmd, "config-help") == 0)
		return cli_config_help(argc, argv);
	if (strcmp(cmd, "host-config") == 0)
		return host_config_main(argc, argv);
	if (strcmp(cmd, "admin") == 0)
		return cli_admin_main(argc, argv);
	metrics_set_build(BIKAROO_VERSION, BIKAROO_REVISION);
	struct cfg cfg;
	if (cfg_load(&cfg, argc - 1, argv + 1) != CFG_OK)
		return 2;
	struct sigaction sa = {.sa_handler = main_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc = 2;
	if (strcmp(cmd, "migrate") == 0) {
		rc = main_migrate(&cfg);
	} else if (strcmp(cmd, "serve") == 0 || strcmp(cmd, "stdio") == 0) {
		bool serve = strcmp(cmd, "serve") == 0;
		sigaction(SIGHUP, serve ? &sa : NULL, NULL); /* serve only: a hang-up ends stdio */
		cfg_log(&cfg); /* stderr only: stdio's stdout carries nothing but JSON-RPC */
		rc = cli_trace_start(&cfg) != 0 ? 2
		     : serve                    ? main_serve(&cfg, argc - 1, argv + 1)
						: main_stdio(&cfg);
		trace_stop(cfg.drain_ms < 5000 ? cfg.drain_ms : 5000); /* what waits is sent */
	} else {
		fprintf(stderr, "unknown command %s (try: bikaroo-mcp help)\n", cmd);
	}
	cfg_free(&cfg);
	return rc;
}
