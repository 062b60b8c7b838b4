#!/usr/bin/env bash
# install.sh DESTDIR PREFIX BINARY: what `make install` does (FHS layout under DESTDIR):
#   PREFIX/bin/bikaroo-mcp                       the binary (built for PREFIX/share/bikaroo-mcp)
#   PREFIX/share/bikaroo-mcp/{resources,prompts,migrations}
#   PREFIX/share/bikaroo-mcp/monitoring          Prometheus alerting rules, Grafana dashboard
#   PREFIX/share/doc/bikaroo-mcp/*.md            the documents (docs/), which the installed files
#                                                cite by this path
#   PREFIX/share/man/man1/bikaroo-mcp.1.gz       generated from the configuration table
#   UNITDIR/bikaroo-mcp.service                  default PREFIX/lib/systemd/system
#   SYSCONFDIR/bikaroo-mcp/bikaroo-mcp.env       default /etc; never overwritten
# Creates no user and starts nothing (the Debian package's postinst creates the user).
# install.sh --uninstall DESTDIR PREFIX: what `make uninstall` does: removes what install put
# there, except the settings file (the operator's: said, and kept, as a package's conffile is).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
uninstall=0
if [[ ${1:-} == --uninstall ]]; then
  uninstall=1
  shift
fi
dest=$1 prefix=$2 bin=${3:-}
unitdir=${UNITDIR:-$prefix/lib/systemd/system}
sysconfdir=${SYSCONFDIR:-/etc}
share=$dest$prefix/share/bikaroo-mcp
docdir=$prefix/share/doc/bikaroo-mcp

if ((uninstall)); then
  removed=0
  for f in "$dest$prefix/bin/bikaroo-mcp" "$dest$prefix/share/man/man1/bikaroo-mcp.1.gz" \
    "$dest$unitdir/bikaroo-mcp.service"; do
    if [[ -e $f ]]; then
      rm -f "$f"
      removed=$((removed + 1))
    fi
  done
  if [[ -d $share ]]; then
    removed=$((removed + $(find "$share" -type f | wc -l)))
    rm -rf "$share"
  fi
  for f in docs/*.md; do
    if [[ -e $dest$docdir/${f#docs/} ]]; then
      rm -f "$dest$docdir/${f#docs/}"
      removed=$((removed + 1))
    fi
  done
  rmdir "$dest$docdir" 2>/dev/null || true
  echo "install.sh: removed $removed files from ${dest:-/}$prefix (binary, documents, prompts, migrations, man page, unit, docs)" >&2
  if [[ -e $dest$sysconfdir/bikaroo-mcp/bikaroo-mcp.env ]]; then
    echo "install.sh: kept your settings $dest$sysconfdir/bikaroo-mcp/bikaroo-mcp.env (remove it by hand if you want it gone)" >&2
  fi
  exit 0
fi

install -d "$dest$prefix/bin" "$share" "$dest$prefix/share/man/man1" "$dest$unitdir" \
  "$dest$sysconfdir/bikaroo-mcp" "$dest$docdir"
install -m 0755 "$bin" "$dest$prefix/bin/bikaroo-mcp"
# Documents, prompts, migrations (numbered files, functions/, the demo data): no READMEs.
rm -rf "$share/resources" "$share/prompts" "$share/migrations"
for d in resources prompts migrations; do
  while IFS= read -r f; do
    install -D -m 0644 "$f" "$share/$f"
  done < <(find "$d" -type f ! -name README.md | LC_ALL=C sort)
done
# The documents, and the files that cite them by their place in the source tree (in docs/)
# installed citing them where they are installed.
install -m 0644 docs/*.md "$dest$docdir/"
cite() { # cite FILE MODE TARGET: FILE, its documents named where they are installed, at TARGET
  sed -e "s|docs/\([a-z-]*\.md\)|$docdir/\1|g" -e "s|@BINDIR@|$prefix/bin|g" \
    -e "s|@SYSCONFDIR@|$sysconfdir|g" "$1" >"$3"
  chmod "$2" "$3"
}
install -d "$share/monitoring"
for f in bikaroo-mcp-alerts.yml bikaroo-mcp-dashboard.json; do
  cite "packaging/monitoring/$f" 0644 "$share/monitoring/$f"
done
scripts/manpage.sh "$bin" "$docdir" | gzip -9n >"$dest$prefix/share/man/man1/bikaroo-mcp.1.gz"
chmod 0644 "$dest$prefix/share/man/man1/bikaroo-mcp.1.gz"
cite packaging/bikaroo-mcp.service.in 0644 "$dest$unitdir/bikaroo-mcp.service"
env=$dest$sysconfdir/bikaroo-mcp/bikaroo-mcp.env
if [[ ! -e $env ]]; then cite packaging/bikaroo-mcp.env 0640 "$env"; fi
echo "install.sh: installed under ${dest:-/}$prefix (unit $unitdir, settings $sysconfdir/bikaroo-mcp)" >&2
