#!/usr/bin/env python3
"""Check that every default the docs state of a setting is the binary's: what
`bikaroo-mcp config-help --format=markdown` prints (the one table of server/cfg.c).

Read: README.md and docs/*.md, outside code blocks and outside the table that
scripts/config-table.sh pastes (tests/release compares that one whole). A default is stated in
one of these forms, the variable in backticks:
  `VAR` (VALUE)   `VAR` (VALUE; ...)   `VAR` (VALUE, ...)   `VAR`, VALUE)   `VAR`, VALUE;
      VALUE a number (1,024 or 1024) with an optional unit: ms, s, min, h (times, converted to
      the variable's own: _MS milliseconds, _SECONDS, _TTL, _SKEW, _LIFETIME seconds), KiB, MiB,
      bytes (_BYTES), "a minute" (a rate's own unit);
  `VAR=VALUE`, the default        `VAR=VALUE` (the default)        `VAR` (default `VALUE`).
A variable config-help does not know, a unit that does not fit the variable, or a value that is
not the default fails, naming the file and line, the variable and both values. Exit 1 on any.
Usage: defaults.py BINARY [--root DIR]."""
import argparse
import glob
import os
import re
import subprocess
import sys

# ---- The rules, in one place ------------------------------------------------------------------
DOCS = ["README.md", "docs/*.md"]
GENERATED = ("<!-- generated: bikaroo-mcp config-help --format=markdown -->",
             "<!-- end of generated table -->")
SETTING = r"(?:BIKAROO_[A-Z0-9_]+|DATABASE_URL|NOTIFY_SOCKET|WATCHDOG_USEC)"
UNITS = {  # unit -> (kind, factor to the kind's base unit)
    "ms": ("ms", 1), "s": ("ms", 1000), "min": ("ms", 60000), "h": ("ms", 3600000),
    "KiB": ("bytes", 1024), "MiB": ("bytes", 1048576), "bytes": ("bytes", 1),
    "a minute": ("per minute", 1),
}
KINDS = [  # (variable name pattern, its kind, its unit in that kind's base unit)
    (r".*_MS", "ms", 1),
    (r".*_(SECONDS|TTL|SKEW|LIFETIME)", "ms", 1000),
    (r".*_BYTES", "bytes", 1),
    (r"BIKAROO_RATE_(READS|WRITES)", "per minute", 1),
]
# -------------------------------------------------------------------------------------------------

NUMBER = r"(?:\d{1,3}(?:,\d{3})+|\d+)(?!\d|,\d)"  # all of 1,200: never its 1
UNIT = "|".join(sorted((re.escape(u).replace(r"\ ", r"\s+") for u in UNITS), key=len,
                       reverse=True))  # a minute, across a line break too
FORMS = [  # (regex with groups var, value[, unit]; how the value reads)
    (re.compile(r"`(%s)`(?:\s*\(|,)\s*(%s)(?:\s+(%s))?(?=[);,])" % (SETTING, NUMBER, UNIT)),
     "number"),
    (re.compile(r"`(%s)=([^`\n]*)`(?:,\s*|\s*\()the default\b" % SETTING), "text"),
    (re.compile(r"`(%s)`\s*\(default\s+`([^`\n]*)`" % SETTING), "text"),
]


def config_help(binary):
    out = subprocess.run([binary, "config-help", "--format=markdown"], check=True,
                         capture_output=True, text=True).stdout
    table = {}
    for m in re.finditer(r"^\| `([A-Z0-9_]+)` \| `[^`]*` \| `([^`]*)` \|", out, re.M):
        table[m.group(1)] = "" if m.group(2) == "(empty)" else m.group(2)
    return table


def prose(text):
    """The text with code blocks and the generated table blanked, lines kept."""
    blank = lambda m: re.sub(r"[^\n]", " ", m.group(0))  # noqa: E731
    text = re.sub(r"(?ms)^```.*?^```", blank, text)
    return re.sub(r"(?ms)^%s$.*?^%s$" % tuple(map(re.escape, GENERATED)), blank, text)


def kind_of(var):
    return next(((k, f) for p, k, f in KINDS if re.fullmatch(p, var)), (None, 1))


def judge(var, value, unit, how, table):
    """None when the stated default is config-help's, else why not."""
    if var not in table:
        return "config-help knows no %s" % var
    default = table[var]
    if how == "text":
        return None if value == default else "config-help says %r" % default
    said = int(value.replace(",", ""))
    kind, factor = kind_of(var)
    if unit:
        unit_kind, unit_factor = UNITS[unit]
        if unit_kind != kind:
            return "%s is no unit of %s" % (unit, var)
        if (said * unit_factor) % factor or str(said * unit_factor // factor) != default:
            return "that is %g in its own unit; config-help says %s" % (
                said * unit_factor / factor, default or "(empty)")
        return None
    return None if str(said) == default else "config-help says %s" % (default or "(empty)")


def main():
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("binary", help="bikaroo-mcp, whose config-help is the reference")
    ap.add_argument("--root", default=os.path.dirname(here), help="repository root (default: ..)")
    args = ap.parse_args()
    table = config_help(os.path.abspath(args.binary))
    if not table:
        print("defaults: %s config-help printed no setting" % args.binary)
        return 1
    os.chdir(args.root)
    pages = sorted({p for pattern in DOCS for p in glob.glob(pattern)})
    findings, stated = [], 0
    for page in pages:
        with open(page, encoding="utf-8") as f:
            text = prose(f.read())
        for form, how in FORMS:
            for m in form.finditer(text):
                var, value = m.group(1), m.group(2)
                unit = " ".join(m.group(3).split()) if how == "number" and m.group(3) else None
                stated += 1
                why = judge(var, value, unit, how, table)
                if why:
                    said = value + (" " + unit if unit else "") if how == "number" else repr(value)
                    findings.append((page, text.count("\n", 0, m.start()) + 1, var, said, why))
    for finding in sorted(findings):
        print("%s:%d: %s: the page says %s, %s" % finding)
    print("defaults: %d pages, %d defaults stated of %d settings, %d not config-help's"
          % (len(pages), stated, len(table), len(findings)))
    return 1 if findings else 0


if __name__ == "__main__":
    sys.exit(main())
