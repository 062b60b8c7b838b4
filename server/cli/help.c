/* bikaroo-mcp's usage, whole or one command's (help.h). */
#include "help.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "server/cfg.h"
#include "server/cli/cli.h"
#include "server/cli/admin.h"
#include "server/cli/host_config.h"

/* The commands as the usage shows them: the words after the name, and what it does (lines);
 * settings: whether the configuration table belongs to its usage. */
static const struct cli_command {
	const char *name, *args, *help;
	bool settings;
} cli_commands[] = {
	{"serve", "[--flag=value ...]",
	 "serve MCP over Streamable HTTP at http://LISTEN:PORT/mcp\n"
	 "(GET /healthz, /readyz; GET /metrics on BIKAROO_METRICS_LISTEN;\n"
	 "SIGHUP reloads the settings marked [reloadable] below)",
	 true},
	{"stdio", "[--flag=value ...]",
	 "serve MCP over stdin/stdout (for IDEs that launch the server)", true},
	{"migrate", "[--flag=value ...]", "apply the SQL migrations (as the owner role)", true},
	{"admin", "COMMAND ...",
	 "an operator's changes: the database roles, regions, stations and\n"
	 "bikes from CSV, principals, client applications (bikaroo-mcp admin\n"
	 "help lists them)",
	 false},
	{"config-help", "[--format=text|man|markdown]",
	 "print the configuration table: --format=text|man|markdown", false},
	{"host-config", "HOST [--link]",
	 "print the configuration file of an MCP host (vscode, vscode-http,\n"
	 "cursor, cursor-http, claude-desktop) that launches this binary with\n"
	 "this DATABASE_URL and identity, or reaches this server; --link:\n"
	 "its install link (VS Code, Cursor)",
	 true},
	{"help", "[COMMAND]", "print this usage, or one command's (also: COMMAND --help)", false},
	{"--version", NULL, "print the version and source revision", false},
};

#define CLI_NCOMMANDS (sizeof cli_commands / sizeof cli_commands[0])

/* c's paragraph of the usage: its name (with its words when they are not all optional), then
 * what it does. */
static void cli_paragraph(const struct cli_command *c)
{
	char label[64];
	bool words = c->args && c->args[0] != '[';
	snprintf(label, sizeof label, "%s%s%s", c->name, words ? " " : "", words ? c->args : "");
	bool apart = strlen(label) > 12;
	printf(apart ? "  %s\n" : "  %-12s", label);
	for (const char *h = c->help; *h;) {
		size_t n = strcspn(h, "\n");
		printf("%*s%.*s\n", apart || h != c->help ? 15 : 1, "", (int)n, h);
		h += n + (h[n] == '\n');
	}
}

static void cli_settings(void)
{
	printf("\nConfiguration (environment variable or flag):\n");
	if (cli_print_table("text") != 0)
		abort(); /* "text" is always a format */
}

int cli_usage(void)
{
	printf("usage: bikaroo-mcp ");
	for (size_t i = 0; i < CLI_NCOMMANDS; i++)
		printf("%s%s", i ? "|" : "", cli_commands[i].name);
	printf(" [--flag=value ...]\n\n");
	for (size_t i = 0; i < CLI_NCOMMANDS; i++)
		cli_paragraph(&cli_commands[i]);
	cli_settings();
	return 0;
}

/* Whether word asks for help. */
static bool cli_help_word(const char *word)
{
	return strcmp(word, "--help") == 0 || strcmp(word, "-h") == 0 || strcmp(word, "help") == 0;
}

bool cli_asks_help(int argc, char **argv)
{
	if (argc < 2 || cli_help_word(argv[1]))
		return true;
	for (int a = 2; a < argc; a++)
		if (strcmp(argv[a], "--help") == 0 || strcmp(argv[a], "-h") == 0)
			return true;
	/* help as the first word of a command that takes words: admin help, host-config help */
	return argc > 2 && strcmp(argv[2], "help") == 0 &&
	       (strcmp(argv[1], "admin") == 0 || strcmp(argv[1], "host-config") == 0);
}

int cli_help(int argc, char **argv)
{
	/* help [COMMAND [WORD]], or COMMAND [WORD...] with --help, -h or help among them */
	int at = argc > 1 && cli_help_word(argv[1]) ? 2 : 1;
	const char *cmd = at < argc ? argv[at] : NULL;
	if (!cmd)
		return cli_usage();
	if (cli_help_word(cmd))
		cmd = "help";    /* help --help */
	const char *word = NULL; /* the first word after the command that is no help nor flag */
	for (int a = at + 1; a < argc && !word; a++)
		if (!cli_help_word(argv[a]) && argv[a][0] != '-')
			word = argv[a];
	if (strcmp(cmd, "admin") == 0)
		return cli_admin_help(word);
	for (size_t i = 0; i < CLI_NCOMMANDS; i++) {
		const struct cli_command *c = &cli_commands[i];
		if (strcmp(c->name, cmd) != 0)
			continue;
		printf("usage: bikaroo-mcp %s%s%s\n\n", c->name, c->args ? " " : "",
		       c->args ? c->args : "");
		for (const char *h = c->help; *h;) {
			size_t n = strcspn(h, "\n");
			printf("  %.*s\n", (int)n, h);
			h += n + (h[n] == '\n');
		}
		if (strcmp(c->name, "host-config") == 0) {
			printf("\n");
			host_config_hosts_help(stdout);
		}
		if (c->settings)
			cli_settings();
		return 0;
	}
	fprintf(stderr, "unknown command %s (try: bikaroo-mcp help)\n", cmd);
	return 2;
}
