/* bikaroo-mcp: the Bikaroo fleet MCP server. Subcommands: serve (HTTP), migrate, help. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>

#include "../common/log.h"
#include "../common/mem.h"
#include "../domain/db.h"
#include "../domain/migrate.h"
#include "cfg.h"
#include "http.h"
#include "identity.h"
#include "reqstate.h"
#include "tool_report.h"
#include "tools.h"

static volatile sig_atomic_t main_stop;

static void main_on_signal(int sig)
{
	(void)sig;
	main_stop = 1;
}

static int main_usage(void)
{
	printf("usage: bikaroo-mcp serve|migrate|help [--flag=value ...]\n\n"
	       "  serve    serve MCP over Streamable HTTP at http://LISTEN:PORT/mcp\n"
	       "  migrate  apply the SQL migrations (as the owner role)\n\n"
	       "Configuration (environment variable or flag):\n");
	cfg_print_help();
	return 0;
}

static int main_migrate(const struct cfg *cfg)
{
	const char *url = *cfg->migrate_url ? cfg->migrate_url : cfg->database_url;
	int applied = 0;
	enum fleet_status st = migrate_run(url, cfg->migrations_dir, &applied);
	if (st != FLEET_OK) {
		log_error("migrate failed (%s)", fleet_status_name(st));
		return 1;
	}
	log_info("migrate: %d migration(s) applied, schema up to date", applied);
	return 0;
}

static bool main_is_loopback(const char *addr)
{
	return strncmp(addr, "127.", 4) == 0;
}

static int main_write_ready(const char *path, unsigned port)
{
	if (!*path)
		return 0;
	char tmp[4096];
	snprintf(tmp, sizeof tmp, "%s.tmp", path);
	FILE *f = fopen(tmp, "w");
	if (!f)
		return -1;
	fprintf(f, "%u\n", port);
	if (fclose(f) != 0)
		return -1;
	return rename(tmp, path);
}

static int main_serve(const struct cfg *cfg)
{
	struct fleet_actor actor;
	if (strcmp(cfg->auth, "local") == 0 && !main_is_loopback(cfg->listen)) {
		log_error("BIKAROO_AUTH=local acts as one configured identity: it only binds to "
			  "loopback addresses, not %s",
			  cfg->listen);
		return 1;
	}
	if (identity_local(cfg, &actor) != 0)
		return 1;
	db_configure(cfg->database_url);
	const char *why = NULL;
	enum fleet_status st = db_check_login_role(&why);
	if (st != FLEET_OK) {
		log_error("refusing to serve: %s", why ? why : fleet_status_name(st));
		db_shutdown();
		return 1;
	}
	tool_report_configure(cfg->confirm_ttl);
	if (reqstate_init(cfg->state_secret) != 0 || tools_init() != 0) {
		db_shutdown();
		return 1;
	}
	/* Block the stop signals before the worker threads exist, so that they inherit the mask
	 * and only sigsuspend() below receives them (a handler run on a worker would set
	 * main_stop without waking the main thread). */
	sigset_t block, old;
	sigemptyset(&block);
	sigaddset(&block, SIGINT);
	sigaddset(&block, SIGTERM);
	pthread_sigmask(SIG_BLOCK, &block, &old);
	struct http_server *srv = NULL;
	unsigned port = 0;
	if (http_start(cfg, &actor, &srv, &port) != HTTP_OK) {
		tools_cleanup();
		db_shutdown();
		return 1;
	}
	log_info("serving MCP at http://%s:%u/mcp acting as subject %s via client %s", cfg->listen,
		 port, actor.subject, actor.client_id);
	if (main_write_ready(cfg->ready_file, port) != 0)
		log_warn("cannot write the ready file %s", cfg->ready_file);
	while (!main_stop)
		sigsuspend(&old); /* no window between the test and the wait */
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	log_info("stopping");
	http_stop(srv);
	tools_cleanup();
	db_shutdown();
	return 0;
}

int main(int argc, char **argv)
{
	mem_install_jansson();
	const char *cmd = argc > 1 ? argv[1] : "help";
	if (strcmp(cmd, "help") == 0 || strcmp(cmd, "--help") == 0 || strcmp(cmd, "-h") == 0)
		return main_usage();
	struct cfg cfg;
	if (cfg_load(&cfg, argc - 1, argv + 1) != CFG_OK)
		return 2;
	struct sigaction sa = {.sa_handler = main_on_signal};
	sigemptyset(&sa.sa_mask);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	int rc;
	if (strcmp(cmd, "migrate") == 0) {
		rc = main_migrate(&cfg);
	} else if (strcmp(cmd, "serve") == 0) {
		cfg_log(&cfg);
		rc = main_serve(&cfg);
	} else {
		fprintf(stderr, "unknown command %s (try: bikaroo-mcp help)\n", cmd);
		rc = 2;
	}
	cfg_free(&cfg);
	return rc;
}
