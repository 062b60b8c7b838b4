#!/usr/bin/env python3
"""The dependency tiers of scripts/deps.sh against what this Debian machine has installed.

  tiers.py check TRACE TIER...   every file that the traced run opened or executed (an strace -f
                                 log) belongs to a package of the tiers' closure or of the base
                                 system (Essential or Priority required); prints each outsider
                                 with the file that needed it and exits 1 when there is one
  tiers.py sizes                 per tier: the packages it adds to a fresh Debian 12 (to the run
                                 tier for the others), their installed and download sizes
                                 (Markdown), from Debian's archives as apt's lists hold them
                                 (apt-get update first)
  tiers.py docs                  the figures README.md and docs/contributing.md give for each tier
                                 have one place (the table; README.md's run tier is its row) and
                                 are what `sizes` counts, within 10 % (`ok - ` / `not ok - ` lines;
                                 a `skip - ` line when apt has no list of Debian's archives)

The closure of a tier: its packages and, recursively, their Depends and Pre-Depends (of an
alternative, the first that exists; of a virtual package, its providers). For the sizes, as apt
installs: an alternative or a virtual package that is already satisfied adds nothing, else its
first alternative or provider. A fresh Debian 12 is what `debootstrap --variant=minbase` makes
(the required packages and apt) with git, make and ca-certificates and what they recommend
added: what the README's "fresh Debian 12" has.
"""
import glob
import os
import re
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
TIERS = ["run", "idp", "test", "bench", "fuzz"]


def tier_packages(tier):
    out = subprocess.run([os.path.join(ROOT, "scripts/deps.sh"), "--list", tier],
                         check=True, capture_output=True, text=True).stdout
    return [p for p in out.split() if p]


def records(text, keep):
    """name -> fields of each package record of text that keep(fields) accepts."""
    pkgs = {}
    if True:
        for block in text.split("\n\n"):
            fields, key = {}, None
            for line in block.splitlines():
                if line.startswith((" ", "\t")) and key:
                    fields[key] += "\n" + line
                elif ":" in line:
                    key, _, value = line.partition(":")
                    fields[key] = value.strip()
            if "Package" in fields and keep(fields):
                pkgs.setdefault(fields["Package"], fields)
    return pkgs


def installed():
    """name -> fields of each installed package (dpkg's status file)."""
    with open("/var/lib/dpkg/status", encoding="utf-8", errors="replace") as f:
        return records(f.read(), lambda r: r.get("Status", "").endswith(" installed"))


def newer(a, b):
    return subprocess.run(["dpkg", "--compare-versions", a, "gt", b]).returncode == 0


def available():
    """name -> fields of the newest version of each package in Debian's own archives, as apt's
    lists hold them (the sources whose Release says Origin: Debian; apt-helper reads them however
    compressed). Not apt's candidates: a package installed from elsewhere (Node from another
    repository) would stand in for Debian's."""
    lists = []
    for release in glob.glob("/var/lib/apt/lists/*Release"):
        with open(release, encoding="utf-8", errors="replace") as f:
            if re.search(r"^Origin: Debian$", f.read(), re.M):
                prefix = re.sub(r"_(In)?Release$", "", release)
                lists += glob.glob(prefix + "_*_binary-*_Packages*")
    pkgs = {}
    for path in sorted(lists):
        out = subprocess.run(["/usr/lib/apt/apt-helper", "cat-file", path], check=True,
                             capture_output=True, text=True, errors="replace").stdout
        for name, f in records(out, lambda r: True).items():
            if name not in pkgs or (f.get("Version") != pkgs[name].get("Version") and
                                    newer(f.get("Version", ""), pkgs[name].get("Version", ""))):
                pkgs[name] = f
    return pkgs


def providers(pkgs):
    prov = {}
    for name, f in pkgs.items():
        for item in f.get("Provides", "").split(","):
            item = re.sub(r"\(.*?\)|:any", "", item).strip()
            if item:
                prov.setdefault(item, set()).add(name)
    return prov


def closure(roots, pkgs, prov, have=None, fields=("Depends", "Pre-Depends")):
    """The closure of roots; with have (a set), as apt installs on a machine that has those
    packages: the new packages only, a satisfied alternative or virtual package adding none."""
    seen, todo = set(), list(roots)

    def satisfied(name):
        return have is not None and (name in have or name in seen or
                                     any(p in have or p in seen for p in prov.get(name, ())))

    while todo:
        name = re.sub(r":(any|amd64|native)$", "", todo.pop())
        if name in seen or (have is not None and name in have):
            continue
        if name not in pkgs:
            provs = sorted(prov.get(name, ()))  # a virtual package
            if have is None:
                todo.extend(provs)
            elif provs and not satisfied(name):
                todo.append(provs[0])
            continue
        seen.add(name)
        f = pkgs[name]
        for field in fields:
            for group in f.get(field, "").split(","):
                alts = [re.sub(r"\(.*?\)", "", a).strip() for a in group.split("|")]
                alts = [re.sub(r":(any|amd64|native)$", "", a) for a in alts if a]
                if any(satisfied(a) for a in alts):
                    continue
                exist = [a for a in alts if a in pkgs or a in prov]
                todo.extend(exist[:1])
    return seen


def base(pkgs):
    return {n for n, f in pkgs.items()
            if f.get("Essential") == "yes" or f.get("Priority") == "required"}


def owners():
    """path -> package, from dpkg's file lists; /usr-merged spellings of a path count too."""
    own = {}
    for lst in glob.glob("/var/lib/dpkg/info/*.list"):
        pkg = os.path.basename(lst)[:-5].split(":")[0]
        with open(lst, encoding="utf-8", errors="replace") as f:
            for path in f.read().splitlines():
                own.setdefault(path, pkg)
    return own


def owner_of(path, own):
    cands = [path, os.path.realpath(path)]
    for p in list(cands):
        for a, b in (("/usr/lib/", "/lib/"), ("/usr/bin/", "/bin/"), ("/usr/sbin/", "/sbin/"),
                     ("/usr/lib64/", "/lib64/")):
            if p.startswith(a):
                cands.append(b + p[len(a):])
            elif p.startswith(b):
                cands.append(a + p[len(b):])
    for p in cands:
        if p in own and not os.path.isdir(p):
            return own[p]
    return None


# Files a run opens only because their package happens to be installed: loaders that take
# whatever a folder or a configuration lists. Their packages are not needed (a machine without
# them runs the same), so they are not held against a tier.
OPPORTUNISTIC = [
    (re.compile(r"^/etc/ld\.so\.conf\.d/"), "the dynamic linker's configuration fragments"),
    (re.compile(r"/bfd-plugins/"), "binutils loads every linker plugin present"),
    (re.compile(r"/security/pam_[a-z_]+\.so$"), "PAM modules the configuration names (runuser)"),
    (re.compile(r"/libnss_[a-z]+\.so"), "NSS modules nsswitch.conf names"),
    (re.compile(r"^/usr/bin/git$"), "the Makefile's revision, 'unknown' without git"),
]


def trace_paths(trace):
    """Files the traced processes opened or executed successfully (not directories)."""
    pat = re.compile(r'(?:execve|openat|open)\((?:AT_FDCWD, )?"([^"]+)".*\) = (\d+)')
    paths = set()
    with open(trace, encoding="utf-8", errors="replace") as f:
        for line in f:
            m = pat.search(line)
            if m and m.group(1).startswith("/") and not m.group(1).startswith(("/proc/", "/sys/", "/dev/")):
                paths.add(m.group(1))
    return paths


def check(trace, tiers):
    pkgs = installed()
    prov = providers(pkgs)
    allowed = base(pkgs) | closure([p for t in tiers for p in tier_packages(t)], pkgs, prov)
    own = owners()
    needed, outside = {}, {}
    for path in sorted(trace_paths(trace)):
        if any(pat.search(path) for pat, _ in OPPORTUNISTIC):
            continue
        pkg = owner_of(path, own)
        if pkg is None:
            continue
        needed.setdefault(pkg, path)
        if pkg not in allowed:
            outside.setdefault(pkg, path)
    for pkg, path in sorted(outside.items()):
        print(f"# outside the tiers {' '.join(tiers)}: {pkg} (needed for {path})")
    print(f"# {len(needed)} packages used, {len(outside)} outside the tiers {' '.join(tiers)}")
    return 1 if outside else 0


# A fresh Debian 12: the required packages and apt (debootstrap --variant=minbase), then git, make
# and ca-certificates as `apt-get install` adds them, with what they recommend (git: less,
# openssh-client, patch...).
FRESH = ["git", "make", "ca-certificates"]


def counted():
    """tier -> (packages, installed MB, download MB) it adds to a fresh Debian 12 (to the run
    tier for the others), from Debian's archives; {} when apt has no list of them."""
    pkgs = available()
    if not pkgs:
        return {}
    prov = providers(pkgs)
    minbase = closure(sorted(base(pkgs)) + ["apt"], pkgs, prov, have=set())
    fresh = minbase | closure(FRESH, pkgs, prov, have=minbase,
                              fields=("Depends", "Pre-Depends", "Recommends"))
    run = closure(tier_packages("run"), pkgs, prov, have=fresh)
    out = {}
    for tier in TIERS:
        c = run if tier == "run" else closure(tier_packages(tier), pkgs, prov, have=fresh | run)
        out[tier] = (len(c), sum(int(pkgs[p].get("Installed-Size", "0")) for p in c) * 1024 / 1e6,
                     sum(int(pkgs[p].get("Size", "0")) for p in c) / 1e6)
    return out


def sizes():
    print("| tier | make targets | adds (named) | packages | installed | download |")
    print("|---|---|---|---|---|---|")
    targets = {"run": "`make run`, `make all`, `make install`", "idp": "`BIKAROO_AUTH=jwt make run`",
               "test": "`make test`, `make unit`, `make asan`, `make valgrind`, `make deb`",
               "bench": "`make bench`", "fuzz": "`make fuzz`"}
    for tier, (n, inst, down) in counted().items():
        over = "" if tier == "run" else " over run"
        print(f"| {tier} | {targets[tier]} | {' '.join(tier_packages(tier))} | {n}{over} | "
              f"{inst:.0f} MB | {down:.0f} MB |")
    return 0


def near(said, count):
    return abs(said - count) <= max(0.1 * count, 2)


def one_place():
    """The tiers' figures have one place, docs/contributing.md's table (what `sizes` prints): the
    section's prose states none of its own, and README.md's run tier is the table's run row.
    Whatever apt's lists hold. 0, or 1 (said)."""
    page = open(os.path.join(ROOT, "docs/contributing.md"), encoding="utf-8").read()
    section = page.split("## Dependencies by tier", 1)[1].split("\n## ", 1)[0]
    prose = section.split("\n| tier |", 1)[0]
    stated = [" ".join(x.split()) for x in
              re.findall(r"\b\d[\d,]*\s+(?:Debian\s+)?packages\b|\b\d+\s+MB\b", prose)]
    bad = 0
    if stated:
        bad += 1
        print(f"not ok - docs/contributing.md's tiers prose states figures of its own ({', '.join(stated)}): "
              f"the table is their one place")
    else:
        print("ok - docs/contributing.md's tiers prose states no figure of its own: the table is their place")
    row = re.search(r"^\| run \|.*\| (\d+) \| (\d+) MB \| (\d+) MB \|$", section, re.M)
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"\((\d+) Debian packages, (\d+) MB to\s+download", readme)
    if row and m and (m.group(1), m.group(2)) == (row.group(1), row.group(3)):
        print(f"ok - README.md's run tier ({m.group(1)} packages, {m.group(2)} MB) is the table's run row")
    else:
        bad += 1
        print(f"not ok - README.md's run tier ({m.group(0) if m else 'none'}) is not the table's run row "
              f"({row.groups() if row else 'none'})")
    return bad


def docs():
    """The docs' figures against counted(): README.md's run tier, docs/contributing.md's table."""
    bad = one_place()
    c = counted()
    if not c:
        print("skip - the tiers' sizes in the docs: apt has no list of Debian's archives here (apt-get update)")
        return 1 if bad else 0
    readme = open(os.path.join(ROOT, "README.md"), encoding="utf-8").read()
    m = re.search(r"\((\d+) Debian packages, (\d+) MB to\s+download", readme)
    n, _, down = c["run"]
    if m and near(int(m.group(1)), n) and near(int(m.group(2)), down):
        print(f"ok - README.md's run tier ({m.group(1)} packages, {m.group(2)} MB to download) is what "
              f"Debian's archives count for a fresh Debian 12 ({n}, {down:.0f} MB), within 10 %")
    else:
        bad += 1
        print(f"not ok - README.md's run tier ({m.group(0) if m else 'no (N Debian packages, M MB to download)'}) "
              f"is not what Debian's archives count for a fresh Debian 12: {n} packages, {down:.0f} MB")
    page = open(os.path.join(ROOT, "docs/contributing.md"), encoding="utf-8").read()
    for tier, (n, inst, down) in c.items():
        m = re.search(r"^\| %s \|.*\| (\d+)(?: over run)? \| (\d+) MB \| (\d+) MB \|$" % tier, page, re.M)
        said = tuple(int(x) for x in m.groups()) if m else None
        if said and near(said[0], n) and near(said[1], inst) and near(said[2], down):
            print(f"ok - docs/contributing.md's {tier} tier ({said[0]} packages, {said[1]} MB, {said[2]} MB) "
                  f"is what Debian's archives count, within 10 %")
        else:
            bad += 1
            print(f"not ok - docs/contributing.md's {tier} tier says {said}; Debian's archives count "
                  f"{n} packages, {inst:.0f} MB installed, {down:.0f} MB to download")
    return 1 if bad else 0


if __name__ == "__main__":
    if len(sys.argv) >= 3 and sys.argv[1] == "check":
        sys.exit(check(sys.argv[2], sys.argv[3:] or ["run"]))
    if len(sys.argv) == 2 and sys.argv[1] == "sizes":
        sys.exit(sizes())
    if len(sys.argv) == 2 and sys.argv[1] == "docs":
        sys.exit(docs())
    print(__doc__, file=sys.stderr)
    sys.exit(2)
