#!/usr/bin/env bash
# manpage.sh BINARY [DOCDIR]: prints the man page bikaroo-mcp(1) in roff, its ENVIRONMENT section
# generated from the binary's own configuration table (server/cfg.c) and its ADMIN COMMANDS from
# the binary's own `admin` usage, so the page cannot drift from what the binary reads and does.
# DOCDIR: where the documents (docs/*.md) are installed, which SEE ALSO names (default: the
# docs/ folder of the source tree).
set -euo pipefail
bin=$1
docs=${2:-docs}
date=$(date -u -d "@${SOURCE_DATE_EPOCH:-$(date +%s)}" +%Y-%m-%d)
# `bikaroo-mcp admin` alone prints its usage (exit 2): its lines as roff text, as printed.
admin_usage=$("$bin" admin 2>&1 || true)
[[ $admin_usage == *usage:* ]] || {
  echo "manpage.sh: $bin admin printed no usage" >&2
  exit 1
}
roff_lines() { sed -e 's/\\/\\e/g' -e 's/-/\\-/g' -e 's/^/\\\&/'; }
cat <<MAN
.TH BIKAROO-MCP 1 "$date" "$("$bin" --version | cut -d" " -f1-2)" "User Commands"
.SH NAME
bikaroo-mcp \- the Bikaroo fleet MCP (Model Context Protocol) server
.SH SYNOPSIS
.B bikaroo-mcp
.RB { serve | stdio | migrate | config-help | help | \-\-version }
.RI [ \-\-flag = value " ...]"
.br
.B bikaroo-mcp admin
.I COMMAND
.RI [ ARG " ...]"
.br
.B bikaroo-mcp host-config
.I HOST
.RB [ \-\-link ]
.RI [ \-\-flag = value " ...]"
.SH DESCRIPTION
.B bikaroo-mcp
serves Bikaroo's bike-fleet capabilities to MCP hosts, acting as the calling user and client
application, with the business state in PostgreSQL.
.TP
.B serve
serves MCP over Streamable HTTP at http://LISTEN:PORT/mcp (bearer tokens from the configured
identity provider unless BIKAROO_AUTH=local), with GET /healthz and /readyz, and GET /metrics
on BIKAROO_METRICS_LISTEN.
.TP
.B stdio
serves MCP over standard input and output, for IDEs that launch the server; logs go to
standard error.
.TP
.B migrate
applies the SQL migrations as the schema owner (BIKAROO_MIGRATE_URL, else DATABASE_URL).
.TP
.BI "admin " COMMAND
an operator's changes as the owner role (BIKAROO_MIGRATE_URL), each audited in
fleet.admin_log: the database roles, regions, stations and bikes from CSV, principals and
client applications (see
.BR "ADMIN COMMANDS" ).
.TP
.B config-help
prints the configuration table (\-\-format=text, man or markdown).
.TP
.BI "host-config " HOST
prints the configuration file of an MCP host that launches this binary over stdio with this
DATABASE_URL and identity (HOST
.BR vscode ", " cursor ", " claude-desktop ),
or that reaches this server's URL over Streamable HTTP
.RB ( vscode-http ", " cursor-http );
with \-\-link, the host's install link instead (VS Code, Cursor).
.TP
.BI "help " \fR[\fPCOMMAND\fR]\fP
prints the subcommands and the configuration table, or one command's usage (also
.IB COMMAND " \-\-help"
or
.BR "admin help " [\fICOMMAND\fP]);
exit status 0.
.TP
.B \-\-version
prints the version and the source revision.
.SH ENVIRONMENT
Every setting is an environment variable, or a
.BI \-\-flag= value
argument after the subcommand, which wins. Settings marked secret are never logged, and may
instead be read from the file that the variable of the same name with \fB_FILE\fP appended
names (the whole file less trailing newlines; Docker secrets, systemd credentials): setting both,
or naming an unreadable or empty file, stops the start with exit status 2.
MAN
# The binary's own table, one .TP paragraph per setting.
"$bin" config-help --format=man
cat <<MAN
.SH SIGNALS
.TP
.B SIGHUP
(serve) reads the configuration again (the environment, BIKAROO_SETTINGS_FILE, each
.IR NAME _FILE,
the flags) and applies the settings marked [reloadable]: the requestState key ring and the log
level and format; any other that changed is named as waiting for a restart. Nothing in flight is
dropped; a configuration that does not load changes nothing.
.TP
.BR SIGTERM ", " SIGINT
stop accepting, answer what has begun (at most BIKAROO_DRAIN_MS), exit.
.SH ADMIN COMMANDS
As
.B bikaroo\-mcp admin
alone prints them:
.PP
.nf
.RS
$(roff_lines <<<"$admin_usage")
.RE
.fi
.SH FILES
.TP
.I /etc/bikaroo-mcp/bikaroo-mcp.env
the settings of the systemd unit bikaroo-mcp.service (installed packages).
.TP
.I share/bikaroo-mcp/
resources, prompts and migrations, found by default below the installation prefix.
.SH EXAMPLES
Migrate a database as its owner role, then serve it with tokens from an identity provider:
.PP
.nf
.RS
BIKAROO_MIGRATE_URL=postgresql://fleet_owner@db.example/bikaroo bikaroo\-mcp migrate
DATABASE_URL=postgresql://fleet_app@db.example/bikaroo \\e
BIKAROO_AUTH_ISSUER=https://login.example.com \\e
BIKAROO_RESOURCE_URI=https://mcp.example.com/mcp bikaroo\-mcp serve
.RE
.fi
.PP
Write VS Code's configuration for a development database (the host starts this binary):
.PP
.nf
.RS
DATABASE_URL=postgresql://fleet_app@localhost/bikaroo BIKAROO_AUTH=local \\e
BIKAROO_LOCAL_SUBJECT=dev BIKAROO_LOCAL_CLIENT=developer\-ide \\e
BIKAROO_LOCAL_SCOPES=fleet:read bikaroo\-mcp host\-config vscode > .vscode/mcp.json
.RE
.fi
.PP
Print Cursor's install link of a server on 127.0.0.1:8080, and the settings as a table:
.PP
.nf
.RS
bikaroo\-mcp host\-config cursor\-http \-\-link
bikaroo\-mcp config\-help
.RE
.fi
.SH EXIT STATUS
0 after a clean stop (SIGTERM, SIGINT, or end of input for stdio); 1 when the server cannot
start or a migration fails; 2 for an invalid setting, an unknown subcommand or host.
.SH SEE ALSO
The documents in
.IR ${docs//-/\\-} :
operating.md (install, upgrade, publish, run), fleet.md (several instances, alerts and
dashboard), configuration.md, limits.md, security.md, hosts.md (the host configurations
.BR "bikaroo\-mcp host\-config vscode" ,
.BR vscode\-http ,
.BR cursor ,
.BR cursor\-http " and"
.BR claude\-desktop ),
using.md (what a host sees on the wire);
.BR systemd.exec (5),
.BR psql (1)
MAN
