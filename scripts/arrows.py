#!/usr/bin/env python3
"""Check the layer arrows of server/README.md ("Allowed arrows") over server/, domain/ and common/.

1. Forbidden includes: each `#include "..."` is resolved (first next to the including file, then
   from the repository root) to a file whose folder gives its layer; the arrow must be in ALLOWED.
   An unresolvable quoted include, or a C file in no layer, counts as one too. Capabilities never
   include each other (X.c: its own X.h and the adapter header; only catalog.c sees them all).
   System includes are checked only for the headers in SYSTEM. Lines are read as written:
   includes inside comments or #if 0 are not told apart.
2. Include cycles between modules (a module is a path stem: mcp.c + mcp.h): one concrete cycle per
   strongly connected component, with the include lines that make it.
3. Business words in server/protocol/ (code, strings and comments alike), except inside the
   identifiers that domain/types.h defines (fleet_status, FLEET_BIKE_ID_MAX...) and the
   include-guard macros (BIKAROO_MCP_H).
4. File sizes (SIZES): a folder's files stay under its limit, so that a file keeps one concern
   (the transport's files under 600 lines; the protocol's headers, one per reader, under 200;
   server/'s root files: main.c, the composition root, under 300, any other (cfg.c) under 700;
   domain/pg/'s files under 700). A file past its limit is named with its count, the limit and
   the folder where the code to split off goes.
5. What product code must not use (FORBIDDEN_WORDS): e.g. the test fixtures' escape from schema
   checking. Generated headers (GENERATED, written by the build under its gen/ folder) count
   as includes of their own layer.
6. The concurrency model's rules (RESTRICTED, docs/concurrency.md): words allowed only in the
   files named, in code (not comments or strings): a thread-local, a wait that holds a thread.
tests/ and bench/ are not checked. Exit 1 on any finding. Usage: arrows.py [--root DIR] [--graph]
"""
import argparse
import fnmatch
import os
import re
import sys

# ---- The rules, in one place ------------------------------------------------------------------
SCANNED = ("server", "domain", "common")
LAYERS = [  # (layer, path prefixes): the first match wins
    ("main", ("server/main.c", "server/cfg.c", "server/cfg.h")),
    ("cli", ("server/cli/",)),  # the commands besides serving, and serve's parts (main's own)
    ("transport", ("server/transport/",)),
    ("protocol", ("server/protocol/",)),
    ("auth", ("server/auth/",)),
    ("capabilities", ("server/capabilities/",)),
    ("types", ("domain/types.h",)),  # the domain's types-only header: every layer may include it
    ("pg", ("domain/pg/",)),  # libpq plumbing
    ("domain", ("domain/",)),
    ("common", ("common/",)),
]
ALLOWED = {  # layer -> what it may include: layer names or exact paths
    "main": {"main", "cli", "transport", "protocol", "auth", "capabilities", "types", "domain",
             "common", "domain/pg/db.h", "domain/pg/migrate.h"},
    "cli": {"main", "cli", "transport", "protocol", "auth", "capabilities", "types", "domain",
            "common", "domain/pg/db.h", "domain/pg/migrate.h"},
    "transport": {"transport", "protocol", "auth", "types", "common"},
    "protocol": {"protocol", "types", "common"},
    "auth": {"auth", "types", "common"},
    "capabilities": {"capabilities", "protocol", "types", "domain", "common"},
    "types": {"common"},  # it pulls in no domain header, or protocol/ and auth/ would see them
    "pg": {"pg", "domain", "types", "common"},
    "domain": {"domain", "pg", "types", "common"},
    "common": {"common"},
}
CAPS_ADAPTER = "server/capabilities/adapter.h"  # the one capability header every capability sees
CAPS_CATALOG = "server/capabilities/catalog.c"  # the one file that sees every capability
SYSTEM = {  # <header or prefix/> -> (label, layers or paths (fnmatch patterns) that may include it)
    "libpq-fe.h": ("libpq", {"pg", "domain", "types"}),
    "microhttpd.h": ("libmicrohttpd", {"server/transport/http*"}),  # the HTTP adapter's files
    "curl/": ("libcurl", {"auth", "server/main.c", "common/otlp.c"}),  # otlp.c: the span exporter
}
GENERATED = {  # include name -> layers that may include it (the build writes it: B/gen/...)
    "gen/capabilities.h": {"capabilities"},  # the declared capabilities (scripts/capgen.c)
    "gen/schema_version.h": {"pg"},  # the highest numbered migration (scripts/schema-version.sh)
}
SIZES = [  # (path pattern, what it names, most lines, where the code split off goes): first match
    (r"server/transport/.*\.[ch]", "a file of server/transport/", 600,
     "a module of its own in server/transport/"),
    (r"server/protocol/.*\.h", "a header of server/protocol/", 200,
     "a header of its own in server/protocol/, one per reader"),
    (r"server/main\.c", "server/main.c", 300,  # the composition root
     "a command, or a part of serve, in server/cli/"),
    (r"server/[^/]*\.c", "a .c file at the root of server/", 700,  # cfg.c: the settings table
     "a command's code in server/cli/, a layer's in its folder of server/"),
    (r"domain/pg/[^/]*\.[ch]", "a file of domain/pg/", 700,
     "a module of its own in domain/pg/ (libpq plumbing), the business in domain/"),
]
FORBIDDEN_WORDS = [  # (path prefix, word, why)
    ("server/", "schema_listed_only", "test fixtures only: product schemas are checked"),
    # A span goes from its loop to the exporter's queue without waiting (docs/concurrency.md).
    ("common/trace.c", "pthread_mutex", "a span's functions never wait: the loop's calls call them"),
    ("common/otlp.c", "pthread_mutex",
     "the span queue is lock-free: an ended span is pushed or dropped, never waits for the exporter"),
]
RESTRICTED = [  # (word, the only files where code may use it, why)
    ("_Thread_local", ("common/loop.c", "common/task.c", "common/trace.c",
                       "server/transport/http_frame.c"),
     "what belongs to a call lives in its task (task_deadline_in, struct db_error), not in its "
     "thread, which runs other calls between two of its waits (http_frame.c's is a daemon's: "
     "the request lines its thread read, libmicrohttpd refusing one within that thread's run)"),
    ("pthread_cond_wait", (),
     "a call waits with task_wait or task_cond_wait, which park its task and leave its loop free"),
    ("pthread_cond_timedwait", ("common/service.c",),
     "the watchdog's thread is the only wait that holds a thread"),
    ("curl_easy_perform", ("common/otlp.c",),
     "an outbound fetch runs in the loop's libcurl multi handle (server/auth/fetch.c): its "
     "sockets in the loop's epoll set, the caller's task parked (the span exporter posts from "
     "a thread of its own, which serves no call)"),
    ("curl_multi_perform", (), "libcurl is driven by the loop's events (curl_multi_socket_action)"),
    ("curl_multi_wait", (), "a wait in libcurl holds the loop: the loop's epoll set waits"),
    ("curl_multi_poll", (), "a wait in libcurl holds the loop: the loop's epoll set waits"),
]
PROTOCOL = "server/protocol/"
TYPES_HEADER = "domain/types.h"
BUSINESS_WORDS = re.compile(r"bikaroo|bike|fleet:", re.IGNORECASE)
INCLUDE_GUARD = re.compile(r"^BIKAROO_\w+_H$")  # the project's include-guard macros are no word
# -------------------------------------------------------------------------------------------------

INCLUDE = re.compile(r'^\s*#\s*include\s*([<"])([^>"]+)[>"]')
IDENT = re.compile(r"[A-Za-z_]\w*")
COMMENT_OR_STRING = re.compile(r'/\*.*?\*/|//[^\n]*|"(?:\\.|[^"\\\n])*"|\'(?:\\.|[^\'\\\n])*\'',
                               re.DOTALL)


def layer_of(path):
    for layer, prefixes in LAYERS:
        if any(path == p or (p.endswith("/") and path.startswith(p)) for p in prefixes):
            return layer
    return None


def stem(path):
    return os.path.splitext(path)[0]


def read(root, rel):
    with open(os.path.join(root, rel), encoding="utf-8", errors="replace") as f:
        return f.read()


def source_files(root):
    found = []
    for top in SCANNED:
        for folder, _, names in os.walk(os.path.join(root, top)):
            for name in names:
                if name.endswith((".c", ".h")):
                    found.append(os.path.relpath(os.path.join(folder, name), root))
    return sorted(p.replace(os.sep, "/") for p in found)


def resolve(root, src, name):
    """The root-relative path of a quoted include: next to the includer first, then the root."""
    for base in (os.path.dirname(src), ""):
        rel = os.path.normpath(os.path.join(base, name)).replace(os.sep, "/")
        if not rel.startswith("../") and os.path.isfile(os.path.join(root, rel)):
            return rel
    return None


def arrow_ok(src, target):
    src_layer, dst_layer = layer_of(src), layer_of(target)
    if target not in ALLOWED[src_layer] and dst_layer not in ALLOWED[src_layer]:
        return False, "layer %s -> layer %s" % (src_layer, dst_layer or target.split("/")[0])
    if src_layer == dst_layer == "capabilities" and src != CAPS_CATALOG:
        if stem(target) != stem(src) and (target != CAPS_ADAPTER or stem(src) == stem(CAPS_ADAPTER)):
            return False, "layer capabilities -> layer capabilities: capabilities never include each other"
    return True, ""


def system_ok(src, name):
    for key, (label, allowed) in SYSTEM.items():
        if name == key or (key.endswith("/") and name.startswith(key)):
            if not any(fnmatch.fnmatchcase(src, a) for a in allowed) and layer_of(src) not in allowed:
                return False, "layer %s -> %s" % (layer_of(src), label)
    return True, ""


def check_includes(root, files, findings, edges):
    """Forbidden and unresolved includes; fills edges[(module, module)] = first (file, line, target)."""
    for src in files:
        if layer_of(src) is None:
            findings.append("%s:1: in no layer of the rules table (scripts/arrows.py LAYERS)" % src)
            continue
        for n, text in enumerate(read(root, src).splitlines(), 1):
            m = INCLUDE.match(text)
            if not m:
                continue
            kind, name = m.groups()
            if kind == "<":
                ok, why = system_ok(src, name)
                if not ok:
                    findings.append("%s:%d: forbidden include of <%s> (%s)" % (src, n, name, why))
                continue
            if name in GENERATED:
                if layer_of(src) not in GENERATED[name]:
                    findings.append("%s:%d: forbidden include of generated %s" % (src, n, name))
                continue
            target = resolve(root, src, name)
            if target is None:
                findings.append('%s:%d: unresolved include "%s" (not next to the file, not from the root)'
                                % (src, n, name))
                continue
            ok, why = arrow_ok(src, target)
            if not ok:
                findings.append("%s:%d: forbidden include of %s (%s)" % (src, n, target, why))
            if target in files and stem(target) != stem(src):
                edges.setdefault((stem(src), stem(target)), (src, n, target))


def reachable(graph, start):
    seen, stack = set(), [start]
    while stack:
        for child in graph[stack.pop()]:
            if child not in seen:
                seen.add(child)
                stack.append(child)
    return seen


def components(nodes, graph):
    """Strongly connected components (mutual reachability: the graph is a few dozen modules)."""
    reach = {n: reachable(graph, n) for n in nodes}
    out, done = [], set()
    for n in nodes:
        if n not in done:
            comp = sorted({n} | {m for m in reach[n] if n in reach[m]})
            done.update(comp)
            out.append(comp)
    return out


def shortest_cycle(start, members, graph):
    """A shortest path start -> ... -> start inside one component (breadth first)."""
    parent, queue = {}, [start]
    for node in queue:
        for child in graph[node]:
            if child == start:
                path = [node]
                while path[-1] != start:
                    path.append(parent[path[-1]])
                return path[::-1] + [start]
            if child in members and child not in parent:
                parent[child] = node
                queue.append(child)
    return [start]


def check_cycles(modules, edges, findings):
    graph = {m: sorted(b for a, b in edges if a == m) for m in modules}
    cycles = 0
    for comp in components(modules, graph):
        if len(comp) < 2:
            continue
        cycles += 1
        path = shortest_cycle(comp[0], set(comp), graph)
        line = "include cycle: " + " -> ".join(path)
        if len(path) - 1 < len(comp):
            line += " (one of the cycles among: %s)" % ", ".join(comp)
        findings.append(line)
        for a, b in zip(path, path[1:]):
            findings.append("    %s:%d includes %s" % edges[(a, b)])
    return cycles, graph


def check_words(root, files, findings):
    allowed = set()
    if os.path.isfile(os.path.join(root, TYPES_HEADER)):
        allowed = set(IDENT.findall(COMMENT_OR_STRING.sub(" ", read(root, TYPES_HEADER))))
    count = 0
    for src in (f for f in files if f.startswith(PROTOCOL)):
        for n, text in enumerate(read(root, src).splitlines(), 1):
            words = []
            for m in BUSINESS_WORDS.finditer(text):
                i, j = m.start(), m.end()
                while i > 0 and (text[i - 1].isalnum() or text[i - 1] == "_"):
                    i -= 1
                while j < len(text) and (text[j].isalnum() or text[j] == "_"):
                    j += 1
                if text[i:j] in allowed or INCLUDE_GUARD.match(text[i:j]):
                    continue  # an identifier types.h defines, or an include guard
                shown = re.match(r"[\w:/.-]*", text[i:]).group()
                shown = shown.rstrip(".:") if len(shown.rstrip(".:")) >= j - i else shown
                words.append(shown)
            if words:
                count += len(words)
                findings.append("%s:%d: protocol knows a business word: %s" % (src, n, ", ".join(words)))
    return count


def check_sizes(root, files, findings):
    count = 0
    for src in files:
        rule = next((r for r in SIZES if re.fullmatch(r[0], src)), None)
        if rule is None:
            continue
        _, what, most, where = rule
        lines = read(root, src).count("\n")
        if lines > most:
            count += 1
            findings.append("%s: %d lines, over the %d of %s (split it along its concerns: %s)"
                            % (src, lines, most, what, where))
    return count


def check_forbidden(root, files, findings):
    count = 0
    for src in files:
        for prefix, word, why in FORBIDDEN_WORDS:
            if not src.startswith(prefix):
                continue
            for n, text in enumerate(read(root, src).splitlines(), 1):
                if word in text and not src.startswith("server/protocol/"):
                    count += 1
                    findings.append("%s:%d: %s (%s)" % (src, n, word, why))
    return count


def check_restricted(root, files, findings):
    count = 0
    for src in files:
        code = COMMENT_OR_STRING.sub(lambda m: re.sub(r"[^\n]", " ", m.group(0)), read(root, src))
        for word, allowed, why in RESTRICTED:
            if src in allowed:
                continue
            for n, text in enumerate(code.splitlines(), 1):
                if re.search(r"\b%s\b" % re.escape(word), text):
                    count += 1
                    findings.append("%s:%d: %s outside %s (%s)" % (
                        src, n, word, ", ".join(allowed) or "anywhere", why))
    return count


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--root", default=os.path.dirname(here), help="repository root (default: ..)")
    ap.add_argument("--graph", action="store_true", help="print the module graph (Graphviz dot)")
    args = ap.parse_args()
    root = os.path.abspath(args.root)
    files = source_files(root)
    modules = sorted({stem(f) for f in files})

    include_findings, cycle_findings, word_findings, edges = [], [], [], {}
    check_includes(root, files, include_findings, edges)
    cycles, graph = check_cycles(modules, edges, cycle_findings)
    words = check_words(root, files, word_findings)
    size_findings, forbidden_findings = [], []
    sizes = check_sizes(root, files, size_findings)
    forbidden = check_forbidden(root, files, forbidden_findings)
    restricted_findings = []
    restricted = check_restricted(root, files, restricted_findings)

    if args.graph:
        print("digraph modules {")
        for a in modules:
            for b in graph[a]:
                print('  "%s" -> "%s";' % (a, b))
        print("}")
    for line in (include_findings + cycle_findings + word_findings + size_findings +
                 forbidden_findings + restricted_findings):
        print(line)
    print("arrows: %d files, %d modules, %d forbidden includes, %d cycles, %d business words in "
          "protocol/, %d files over their size, %d forbidden words, %d concurrency rules broken"
          % (len(files), len(modules), len(include_findings), cycles, words, sizes, forbidden,
             restricted))
    return 1 if include_findings or cycles or words or sizes or forbidden or restricted else 0


if __name__ == "__main__":
    sys.exit(main())
