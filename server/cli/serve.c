/* serve's checks, readiness, database wait and reload (serve.h). */
#include "serve.h"

#include <pthread.h>
#include <signal.h>
#include <stdatomic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "common/keyring.h"
#include "common/log.h"
#include "common/mem.h"
#include "common/task.h"
#include "common/task_cond.h"
#include "common/metrics.h"
#include "domain/pg/db.h"
#include "domain/pg/migrate.h"
#include "server/auth/auth.h"
#include "server/auth/identity.h"
#include "server/cli/cli.h"

/* The database answered that this server must not serve (set by serve_wait_run). */
static atomic_bool serve_refused_flag;

bool serve_refused(void)
{
	return atomic_load(&serve_refused_flag);
}

/* In local mode, whether the database allows the configured identity (identity.h: a
 * development database, or BIKAROO_LOCAL_ALLOW_ANY_DATABASE). */
static enum identity_status serve_local_allowed(const struct cfg *cfg, const char **why)
{
	struct identity_env env = cli_identity_env(cfg);
	struct fleet_actor actor;
	return identity_from_environment(&env, &actor, why);
}

int serve_prepare(const struct cfg *cfg, struct serve_start *s)
{
	*s = (struct serve_start){0};
	struct auth_settings aset = cfg_auth_settings(cfg);
	if (auth_init(&aset) != AUTH_OK)
		return -1;
	s->local = auth_mode() == AUTH_MODE_LOCAL;
	if (s->local && !cli_is_loopback(cfg->listen)) {
		log_error("BIKAROO_AUTH=local acts as one configured identity: it only binds to "
			  "loopback addresses, not %s",
			  cfg->listen);
		goto fail;
	}
	if (s->local && identity_local(cfg->local_subject, cfg->local_client, cfg->local_scopes,
				       &s->actor) != 0)
		goto fail;
	if (cli_check_database_url(cfg->database_url, "DATABASE_URL") != 0 ||
	    cli_db_configure(cfg) != 0)
		goto fail;
	const char *why = NULL;
	enum fleet_status st = db_check_login_role(&why);
	s->db_down = st == FLEET_UNAVAILABLE;
	if (st != FLEET_OK && !s->db_down) {
		log_error("refusing to serve: %s", why ? why : fleet_status_name(st));
		goto fail_db;
	}
	enum identity_status is =
		s->local && !s->db_down ? serve_local_allowed(cfg, &why) : IDENTITY_OK;
	if (is == IDENTITY_UNAVAILABLE) {
		s->db_down = true; /* gone since the check: judged again once it answers */
	} else if (is != IDENTITY_OK) {
		log_error("refusing to serve: %s", why ? why : "the local identity is refused");
		goto fail_db;
	}
	if (s->db_down) {
		char shown[512];
		cli_hide_password(cfg->database_url, shown, sizeof shown);
		log_error(
			"database: cannot connect with DATABASE_URL=%s (the reason is above). "
			"Check "
			"that PostgreSQL runs at that host and port (or socket folder), that the "
			"role and the database exist, the password, and that pg_hba.conf admits "
			"this role from here. Until it answers the server serves what needs no "
			"database and answers 503 for the rest, trying again every %ld ms at most "
			"(BIKAROO_DB_RETRY_MAX_MS); this is said again at most once a minute",
			shown, cfg->db_retry_max_ms);
		db_hold_until_checked();
	}
	return 0;
fail_db:
	db_shutdown();
fail:
	auth_cleanup();
	return -1;
}

/* The database part of readiness, one check at a time: /readyz is public, and probes that come
 * while a check runs share its answer instead of each running a query (a flood of probes costs
 * the database one query at a time, never one per probe). Probes run as tasks of the HTTP loops
 * (and the watchdog on a thread of its own): they wait for the check in progress with a
 * task_cond, which holds no loop. */
static enum fleet_status serve_ready_db(int *version)
{
	static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
	static struct task_cond done;
	static bool running;
	static unsigned long round;
	static enum fleet_status last_st;
	static int last_version;
	pthread_mutex_lock(&lock);
	if (running) {
		for (unsigned long r = round; running && round == r;)
			task_cond_wait(&done, &lock);
		enum fleet_status st = last_st;
		*version = last_version;
		pthread_mutex_unlock(&lock);
		return st;
	}
	running = true;
	pthread_mutex_unlock(&lock);
	int v = 0;
	enum fleet_status st = db_held() ? FLEET_UNAVAILABLE : migrate_schema_version(&v);
	pthread_mutex_lock(&lock);
	last_st = st;
	last_version = v;
	round++;
	running = false;
	task_cond_broadcast(&done);
	pthread_mutex_unlock(&lock);
	*version = v;
	return st;
}

void serve_ready(json_t *missing)
{
	int version = 0, needed = migrate_schema_needed();
	/* While statements time out, say so without one more query that would wait too. */
	enum fleet_status st = db_stalled() ? FLEET_UNAVAILABLE : serve_ready_db(&version);
	if (db_stalled())
		json_array_append_new(missing,
				      json_string("database: statements time out (no answer within "
						  "BIKAROO_CALL_TIMEOUT_MS); calls get 503"));
	else if (st == FLEET_UNAVAILABLE && db_held())
		json_array_append_new(
			missing, json_string("database: unavailable since the start, retrying "
					     "(DATABASE_URL); nothing that needs it is served"));
	else if (st == FLEET_UNAVAILABLE)
		json_array_append_new(missing,
				      json_string("database: cannot connect (DATABASE_URL)"));
	else if (st != FLEET_OK)
		json_array_append_new(missing,
				      json_sprintf("database schema: not migrated or older than "
						   "version 9, this binary needs %d (run "
						   "bikaroo-mcp migrate)",
						   needed));
	else if (version < needed)
		json_array_append_new(
			missing,
			json_sprintf("database schema: at version %d, this binary needs %d "
				     "(run bikaroo-mcp migrate)",
				     version, needed));
	const char *auth = auth_ready();
	if (auth)
		json_array_append_new(missing, json_string(auth));
	const char *db[] = {"database"}, *keys[] = {"issuer_keys"};
	metrics_set(&metrics_ready, db, st == FLEET_OK && version >= needed);
	metrics_set(&metrics_ready, keys, auth == NULL);
}

/* The loop's thread keeps no database connection between two checks: a server holds one per
 * worker. */
bool serve_ready_now(void)
{
	json_t *missing = json_array();
	serve_ready(missing);
	bool ready = json_array_size(missing) == 0;
	json_decref(missing);
	db_release();
	return ready;
}

const char *serve_probe_host(const char *listen, char *buf, size_t cap)
{
	if (strcmp(listen, "0.0.0.0") == 0)
		return "127.0.0.1";
	if (strcmp(listen, "::") == 0 || strcmp(listen, "[::]") == 0)
		return "::1";
	snprintf(buf, cap, "%s", listen + (listen[0] == '['));
	buf[strcspn(buf, "]")] = '\0';
	return buf;
}

void serve_log_serving(const struct cfg *cfg, const struct serve_start *s, unsigned port)
{
	/* An IPv6 address is written in brackets in a URL. */
	bool v6 = strchr(cfg->listen, ':') && cfg->listen[0] != '[';
	char host[80];
	snprintf(host, sizeof host, "%s%s%s", v6 ? "[" : "", cfg->listen, v6 ? "]" : "");
	if (s->db_down)
		log_warn("serving at http://%s:%u/mcp without its database for now: 503 for "
			 "what needs it",
			 host, port);
	if (s->local)
		log_info("serving MCP at http://%s:%u/mcp acting as subject %s via client %s "
			 "(BIKAROO_AUTH=local: no authorization%s)",
			 host, port, s->actor.subject, s->actor.client_id,
			 cfg->local_any_database ? ", on any database: see the warning above"
						 : ", development databases only");
	else
		log_info("serving MCP at http://%s:%u/mcp for resource %s: bearer tokens from %s "
			 "required (%s)",
			 host, port, cfg->resource_uri, cfg->auth_issuer, cfg->auth);
}

void serve_log_keys(void)
{
	struct keyring r;
	keyring_get(&r);
	char accepted[(KEYRING_ID_HEX + 1) * KEYRING_MAX_PREVIOUS + 1] = "";
	for (size_t i = 1; i < r.n; i++)
		snprintf(accepted + strlen(accepted), sizeof accepted - strlen(accepted), "%s%s",
			 i > 1 ? " " : "", r.keys[i].id);
	log_info("requestState: sealed with key %s%s%s", r.n ? r.keys[0].id : "(none)",
		 *accepted ? ", also accepted: " : "", accepted);
}

struct serve_wait {
	const struct cfg *cfg;
	atomic_bool stop;
	pthread_t thread;
};

/* One check of a database that was down: the local identity's database first (while statements
 * are still held: nothing is served as it before), then the login role, which lifts the hold.
 * FLEET_OK, FLEET_UNAVAILABLE (try again), or another status with *why: refused. */
static enum fleet_status serve_wait_check(const struct cfg *cfg, const char **why)
{
	if (auth_mode() == AUTH_MODE_LOCAL) {
		enum identity_status is = serve_local_allowed(cfg, why);
		if (is == IDENTITY_UNAVAILABLE)
			return FLEET_UNAVAILABLE;
		if (is != IDENTITY_OK)
			return FLEET_FORBIDDEN;
	}
	return db_check_login_role(why);
}

static void *serve_wait_run(void *arg)
{
	struct serve_wait *w = arg;
	static struct log_limit limit;
	time_t since = time(NULL);
	long delay = 250, max_ms = w->cfg->db_retry_max_ms;
	for (unsigned attempt = 1;; attempt++) {
		for (long slept = 0; slept < delay && !atomic_load(&w->stop); slept += 50) {
			struct timespec ts = {0, 50 * 1000 * 1000};
			nanosleep(&ts, NULL);
		}
		if (atomic_load(&w->stop))
			return NULL;
		const char *why = NULL;
		enum fleet_status st = serve_wait_check(w->cfg, &why);
		if (st == FLEET_OK) {
			log_info("database: reachable, login role checked: serving everything");
			return NULL;
		}
		if (st != FLEET_UNAVAILABLE) {
			log_error("refusing to serve: %s", why ? why : fleet_status_name(st));
			atomic_store(&serve_refused_flag, true);
			kill(getpid(), SIGTERM);
			return NULL;
		}
		delay = delay * 2 > max_ms ? max_ms : delay * 2;
		unsigned long skipped;
		if (log_due(&limit, 60, &skipped) && attempt > 1)
			log_warn("database: still unavailable after %u tries in %lds "
				 "(DATABASE_URL); "
				 "trying every %ld ms, said once a minute",
				 attempt, (long)(time(NULL) - since), delay);
	}
}

struct serve_wait *serve_wait_start(const struct cfg *cfg)
{
	struct serve_wait *w = mem_calloc(1, sizeof *w);
	w->cfg = cfg;
	mem_thread(&w->thread, serve_wait_run, w, "database wait");
	return w;
}

void serve_wait_stop(struct serve_wait *w)
{
	if (!w)
		return;
	atomic_store(&w->stop, true);
	pthread_join(w->thread, NULL);
	free(w);
}

/* One setting that changed since the start: applied again, or waiting for a restart. */
static void serve_changed(const char *env, bool reloadable, void *ctx)
{
	struct mem_buf *later = ctx;
	if (reloadable) {
		log_info("reload: %s changed since the start: in effect now", env);
		return;
	}
	if (later->len)
		mem_buf_put(later, ", ", 2);
	mem_buf_put(later, env, strlen(env));
}

void serve_reload(const struct cfg *started, int argc, char **argv)
{
	struct cfg now;
	/* cfg_load sets the logging as it reads: a reload it then refuses must not change it. */
	enum log_level level = log_get_level();
	bool json = log_get_json();
	log_info("reload (SIGHUP): reading the configuration again");
	if (cfg_load(&now, argc, argv) != CFG_OK) {
		log_set_level(level);
		log_set_json(json);
		log_error("reload: the configuration does not load (the reason is above): "
			  "nothing changed");
		return;
	}
	enum keyring_status ks = keyring_init(now.state_secret, now.state_secret_previous);
	if (ks != KEYRING_OK) {
		log_set_level(level);
		log_set_json(json);
		log_error("reload: %s: nothing changed, the key ring in use stays",
			  keyring_status_text(ks));
		cfg_free(&now);
		return;
	}
	if (!*now.state_secret)
		log_warn("reload: BIKAROO_STATE_SECRET is not set: a new random key seals from now "
			 "on, valid on this process only");
	struct mem_buf later = {0};
	cfg_each_change(started, &now, serve_changed, &later);
	if (later.len)
		log_warn("reload: %s changed but take%s effect only at the next start (not "
			 "reloadable)",
			 later.p, strchr(later.p, ',') ? "" : "s");
	serve_log_keys();
	log_info("reload: done (log level %s)", now.log_level);
	free(later.p);
	cfg_free(&now);
}
