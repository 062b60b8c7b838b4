#!/usr/bin/env bash
# deb.sh BUILD_DIR: what `make deb` does after building BUILD_DIR/install_usr/bikaroo-mcp:
# stages `make install` (PREFIX=/usr) in BUILD_DIR/deb/root, adds the control files
# (packaging/debian: the maintainer scripts create the system user), builds
# BUILD_DIR/bikaroo-mcp_VERSION_ARCH.deb with dpkg-deb and runs lintian on it. Prints the
# package's path last. Lintian's findings go to BUILD_DIR/deb/lintian.txt (docs/operating.md:
# Install lists the ones left, with why); an error-level finding fails the build.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
B=${1:-build}
bin=$B/install_usr/bikaroo-mcp
stage=$B/deb
root=$stage/root
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct 2>/dev/null || date +%s)}
# The binary's own version (bikaroo-mcp --version: "bikaroo-mcp 0.9.0 (revision abc1234)"), with
# the commit's time and revision: a later commit sorts after an earlier one, also on the same day
# (the date alone left two builds of one day ordered by their hashes: an upgrade could be a
# downgrade for dpkg).
rev=$(git rev-parse --short HEAD 2>/dev/null || echo 0)
upstream=$("$bin" --version 2>/dev/null | awk '$1 == "bikaroo-mcp" && $2 ~ /^[0-9]/ { print $2 }' || true)
version=${DEB_VERSION:-${upstream:-0.1.0}+git$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y%m%d%H%M%S).$rev}
arch=$(dpkg --print-architecture)

rm -rf "$stage"
mkdir -p "$root/DEBIAN"
UNITDIR=/lib/systemd/system SYSCONFDIR=/etc scripts/install.sh "$PWD/$root" /usr "$bin" 2>/dev/null
strip --strip-unneeded --remove-section=.comment --remove-section=.note "$root/usr/bin/bikaroo-mcp"
# Debian's documentation files.
doc=$root/usr/share/doc/bikaroo-mcp
install -d "$doc"
install -m 0644 packaging/debian/copyright "$doc/copyright"
printf 'bikaroo-mcp (%s) unstable; urgency=medium\n\n  * Built from the repository (make deb).\n\n -- Bikaroo Fleet Platform <fleet-platform@bikaroo.example>  %s\n' \
  "$version" "$(date -u -R -d "@$SOURCE_DATE_EPOCH")" | gzip -9n >"$doc/changelog.gz"

# Shared-library dependencies as dpkg-shlibdeps computes them (it wants a debian/control).
shl=$stage/shlibdeps
mkdir -p "$shl/debian"
printf 'Source: bikaroo-mcp\n\nPackage: bikaroo-mcp\nArchitecture: any\n' >"$shl/debian/control"
depends=$(cd "$shl" && dpkg-shlibdeps -O "$OLDPWD/$root/usr/bin/bikaroo-mcp" 2>/dev/null | sed -n 's/^shlibs:Depends=//p')
[[ -n $depends ]] || { echo "deb.sh: dpkg-shlibdeps found no dependencies" >&2; exit 1; }
size=$(du -sk --exclude=DEBIAN "$root" | cut -f1)
cat >"$root/DEBIAN/control" <<CONTROL
Package: bikaroo-mcp
Version: $version
Architecture: $arch
Maintainer: Bikaroo Fleet Platform <fleet-platform@bikaroo.example>
Installed-Size: $size
Depends: adduser, $depends
Suggests: postgresql (>= 15)
Section: net
Priority: optional
Homepage: https://bikaroo.example/fleet-mcp
Description: Bikaroo fleet MCP (Model Context Protocol) server
 Serves Bikaroo's bike-fleet capabilities (bike status, damage reports,
 cases) to MCP hosts over Streamable HTTP and stdio, acting as the calling
 user and client application, with the business state in PostgreSQL 15.
 .
 Includes the systemd unit bikaroo-mcp.service (not enabled on install)
 and the SQL migrations (bikaroo-mcp migrate).
CONTROL
printf '/etc/bikaroo-mcp/bikaroo-mcp.env\n' >"$root/DEBIAN/conffiles"
# 0640 root:bikaroo-mcp once the group exists (postinst): shipped 0644, it holds no secret yet.
chmod 0644 "$root/etc/bikaroo-mcp/bikaroo-mcp.env"
install -m 0755 packaging/debian/postinst packaging/debian/prerm packaging/debian/postrm "$root/DEBIAN/"
(cd "$root" && find . -path ./DEBIAN -prune -o -path ./etc -prune -o -type f -printf '%P\0' |
  LC_ALL=C sort -z | xargs -0 md5sum) >"$root/DEBIAN/md5sums"
chmod 0644 "$root/DEBIAN/md5sums" "$root/DEBIAN/control" "$root/DEBIAN/conffiles"
find "$root" -type d -exec chmod 0755 {} +
deb=$B/bikaroo-mcp_${version}_$arch.deb
rm -f "$B"/bikaroo-mcp_*.deb
dpkg-deb --root-owner-group -Zxz --build "$root" "$deb" >/dev/null
if command -v lintian >/dev/null; then
  lintian --tag-display-limit 0 "$deb" >"$stage/lintian.txt" 2>&1 || true
  sed 's/^/deb.sh: lintian: /' "$stage/lintian.txt" >&2
  if grep -q '^E: ' "$stage/lintian.txt"; then echo "deb.sh: lintian reports errors" >&2; exit 1; fi
fi
echo "$deb"
