/* The version of bikaroo-mcp: the one place it is written. serverInfo.version, --version, the
 * bikaroo_build_info metric, the man page and the Debian package all read it from here (the
 * Makefile's VERSION too). */
#ifndef BIKAROO_VERSION_H
#define BIKAROO_VERSION_H

#ifndef BIKAROO_VERSION
#define BIKAROO_VERSION "0.9.0"
#endif
/* The revision: set by the Makefile, from git when there is one. */
#ifndef BIKAROO_REVISION
#define BIKAROO_REVISION "unknown"
#endif

#endif
