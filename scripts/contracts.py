#!/usr/bin/env python3
"""Capability contracts: versioning that cannot surprise clients (docs/capabilities.md).

  contracts.py check SNAPSHOT CURRENT [RELEASED]    compare the recorded snapshot with the
                                                   catalogue now
  contracts.py --update SNAPSHOT CURRENT [RELEASED] record CURRENT in SNAPSHOT (refused when a
                                                   bump is wrong or a check fails)
  contracts.py readme DOC CURRENT                  DOC's capability table
                                                   (docs/capabilities.md) against the catalogue

CURRENT is the output of build/contracts-dump (tests/contracts/dump.c), '-' for stdin: every
tool, resource, resource template and prompt as a 2026-07-28 client lists it (the contract)
with its governance record (version, lifecycle, sunset, replacement, owner, risk, roles...).
RELEASED is the snapshot of the previous release (tests/upgrade/PREVIOUS), absent or empty
when this checkout does not hold it.

Each capability's change from the snapshot is classified (patch: wording; minor: compatible
addition; major: anything a client could break on, judged by what a client that validates
against one version's schema rejects from the other, in both directions; whatever cannot be
classified is major) and its version must be at least the snapshot's version bumped at that
level (or the previous release's, while the snapshot's is not released yet). Output schemas
must leave their objects open, and with RELEASED, no change since the previous release may be
major: both serve side by side during a rolling upgrade. Exits non-zero on any failure; ends
with one summary line. Python 3 standard library only. CONTRACTS_TODAY=YYYY-MM-DD replaces
today's date (for the sunset rules' tests).
"""
import datetime
import json
import os
import re
import sys

NONE, PATCH, MINOR, MAJOR = 0, 1, 2, 3
LEVEL = {PATCH: "patch", MINOR: "minor", MAJOR: "major"}
KINDS = ("tool", "resource", "resourceTemplate", "prompt")
KIND_ALIASES = {"tool": "tool", "resource": "resource", "resourcetemplate": "resourceTemplate",
                "resource template": "resourceTemplate", "template": "resourceTemplate",
                "prompt": "prompt"}
LIFECYCLES = ("stable", "deprecated")
SEMVER = re.compile(r"^(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)\.(0|[1-9][0-9]*)$")
MISSING = object()

# Tool annotation hints and the value a client assumes when one is absent (MCP schema).
HINT_DEFAULTS = {"readOnlyHint": False, "destructiveHint": True, "idempotentHint": False,
                 "openWorldHint": True}
WORDING = ("title", "description", "examples", "$comment")
UPPER = ("maxLength", "maximum", "exclusiveMaximum", "maxItems", "maxProperties")
LOWER = ("minLength", "minimum", "exclusiveMinimum", "minItems", "minProperties")
RESTRICT = ("pattern", "format", "const", "multipleOf")
OPEN, CLOSED, CONSTRAINED = "open", "closed", "constrained"


# Why an output change is major: during a rolling upgrade a client may list the tools on an
# instance of one version and call an instance of the other, and validates each answer against
# the schema it listed (docs/capabilities.md).
def old_rejects(what="answers"):
    return " (a client holding the earlier schema rejects this version's %s)" % what


def new_rejects(what="answers"):
    return " (a client holding this schema rejects the earlier version's %s)" % what


class Change:
    def __init__(self, level, field, reason):
        self.level, self.field, self.reason = level, field, reason


def show(v):
    return json.dumps(v, sort_keys=True)


def at(path):
    return "property '%s'" % path if path else "the schema root"


# ---- JSON Schema --------------------------------------------------------------------------

def diff_schema(old, new, path, inp, field):
    """Changes from schema old to new at path; inp: an input schema (clients send it: relaxing
    is compatible) or an output one. A client validates each answer against the output schema
    it listed, and during a rolling upgrade it may have listed either version: so an output
    change is compatible only when neither version's answers fail the other's schema. Answers
    carry only the properties their schema declares; an optional property added to an object
    the earlier version left open, or an object opened, is thus the compatible (minor) kind;
    any other change to what answers may hold is major."""
    if old == new:
        return []
    if not isinstance(old, dict) or not isinstance(new, dict):
        return [Change(MAJOR, field, "%s replaced" % at(path))]
    out = []
    for k in sorted(set(old) | set(new)):
        o, n = old.get(k, MISSING), new.get(k, MISSING)
        if o == n:
            continue
        if k in WORDING:
            out.append(Change(PATCH, field, "%s %s reworded" % (at(path), k)))
        elif k == "properties" and isinstance(o if o is not MISSING else {}, dict) \
                and isinstance(n if n is not MISSING else {}, dict):
            out += diff_properties({} if o is MISSING else o, {} if n is MISSING else n,
                                   set(new.get("required", [])), openness(old), path, inp,
                                   field)
        elif k == "required":
            out += diff_required(o, n, new.get("properties", {}), old.get("properties", {}),
                                 path, inp, field)
        elif k == "type":
            out += diff_type(o, n, path, inp, field)
        elif k == "enum":
            out += diff_enum(o, n, path, inp, field)
        elif k in UPPER or k in LOWER:
            out += diff_bound(k, o, n, path, inp, field)
        elif k in RESTRICT:
            if o is MISSING:
                lv, what = (MAJOR, "added") if inp else (MAJOR, "added" + new_rejects())
            elif n is MISSING:
                lv, what = (MINOR, "removed") if inp else (MAJOR, "removed" + old_rejects())
            else:
                lv, what = MAJOR, "changed from %s to %s" % (show(o), show(n))
            out.append(Change(lv, field, "%s %s %s" % (at(path), k, what)))
        elif k == "additionalProperties":
            out += diff_additional(o, n, path, inp, field)
        elif k == "items" and isinstance(o, dict) and isinstance(n, dict):
            out += diff_schema(o, n, path + "[]", inp, field)
        elif k in ("anyOf", "oneOf", "allOf") and isinstance(o, list) and isinstance(n, list) \
                and len(o) == len(n):
            sub = [c for a, b in zip(o, n) for c in diff_schema(a, b, path, inp, field)]
            if any(c.level > PATCH for c in sub):
                out.append(Change(MAJOR, field, "%s %s changed" % (at(path), k)))
            else:
                out += sub
        else:
            out.append(Change(MAJOR, field, "%s keyword '%s' %s" % (
                at(path), k, "added" if o is MISSING else "removed" if n is MISSING
                else "changed")))
    return out


def openness(schema):
    """Whether an object schema admits properties it does not declare: OPEN (no
    additionalProperties, or true), CLOSED (false, or unevaluatedProperties false), or
    CONSTRAINED (a schema they must match)."""
    a = schema.get("additionalProperties", True)
    if a is False or schema.get("unevaluatedProperties", True) is False:
        return CLOSED
    return OPEN if a is True else CONSTRAINED


def diff_properties(old, new, new_required, old_open, path, inp, field):
    out = []
    for p in sorted(set(old) | set(new)):
        sub = "%s.%s" % (path, p) if path else p
        if p not in new:
            out.append(Change(MAJOR, field, "property '%s' removed" % sub))
        elif p not in old:
            if p in new_required and (inp or old_open == OPEN):
                continue  # reported by diff_required as a new required property
            if inp:
                out.append(Change(MINOR, field, "optional property '%s' added" % sub))
            elif old_open == OPEN:
                out.append(Change(MINOR, field, "optional output property '%s' added" % sub))
            else:
                out.append(Change(MAJOR, field, "output property '%s' added to an object the "
                                  "earlier version %s%s" % (
                                      sub, "closed" if old_open == CLOSED else
                                      "constrained (additionalProperties)", old_rejects())))
        else:
            out += diff_schema(old[p], new[p], sub, inp, field)
    return out


def diff_required(o, n, new_props, old_props, path, inp, field):
    o = set() if o is MISSING else set(o)
    n = set() if n is MISSING else set(n)
    out = []
    for p in sorted(n - o):
        sub = "%s.%s" % (path, p) if path else p
        what = "added as required" if p not in old_props else "now required"
        if inp:
            out.append(Change(MAJOR, field, "property '%s' %s" % (sub, what)))
        else:
            out.append(Change(MAJOR, field, "output property '%s' %s%s" % (
                sub, what, new_rejects("answers without it"))))
    for p in sorted(o - n):
        sub = "%s.%s" % (path, p) if path else p
        if inp:
            if p in new_props:
                out.append(Change(MINOR, field, "property '%s' no longer required" % sub))
        else:
            out.append(Change(MAJOR, field, "output property '%s' no longer always present%s"
                              % (sub, old_rejects("answers without it"))))
    return out


def diff_type(o, n, path, inp, field):
    def types(t):
        return None if t is MISSING else set([t] if isinstance(t, str) else t)
    ot, nt = types(o), types(n)
    if ot is None:  # a type where any was accepted
        return [Change(MAJOR, field, "%s type added%s" % (
            at(path), "" if inp else new_rejects()))]
    if nt is None:
        return [Change(MINOR if inp else MAJOR, field, "%s type removed%s" % (
            at(path), "" if inp else old_rejects()))]
    if ot == nt:
        return []
    if inp and nt > ot:
        return [Change(MINOR, field, "%s type widened to %s" % (at(path), show(n)))]
    if not inp and nt < ot:
        return [Change(MAJOR, field, "%s type narrowed to %s%s" % (
            at(path), show(n), new_rejects()))]
    return [Change(MAJOR, field, "%s type changed from %s to %s" % (at(path), show(o), show(n)))]


def diff_enum(o, n, path, inp, field):
    if o is MISSING:
        return [Change(MAJOR, field, "%s enum added%s" % (
            at(path), "" if inp else new_rejects()))]
    if n is MISSING:
        return [Change(MINOR if inp else MAJOR, field, "%s enum removed%s" % (
            at(path), "" if inp else old_rejects()))]
    os_, ns = {show(v) for v in o}, {show(v) for v in n}
    added, removed = sorted(ns - os_), sorted(os_ - ns)
    if inp and removed:
        return [Change(MAJOR, field, "%s enum narrowed (%s removed)" % (
            at(path), ", ".join(removed)))]
    if inp and added:
        return [Change(MINOR, field, "%s enum values %s added" % (at(path), ", ".join(added)))]
    out = []
    if added:
        out.append(Change(MAJOR, field, "%s enum values %s added%s" % (
            at(path), ", ".join(added), old_rejects())))
    if removed:
        out.append(Change(MAJOR, field, "%s enum values %s removed%s" % (
            at(path), ", ".join(removed), new_rejects())))
    return out  # none: the same values in another order


def diff_bound(k, o, n, path, inp, field):
    upper = k in UPPER
    if o is MISSING:
        tighter = True
    elif n is MISSING:
        tighter = False
    elif not isinstance(o, (int, float)) or not isinstance(n, (int, float)) \
            or isinstance(o, bool) or isinstance(n, bool):
        return [Change(MAJOR, field, "%s %s changed" % (at(path), k))]
    else:
        tighter = n < o if upper else n > o
    lv = (MAJOR if tighter else MINOR) if inp else MAJOR
    what = "narrowed" if tighter else "relaxed"
    why = "" if inp else new_rejects() if tighter else old_rejects()
    return [Change(lv, field, "%s %s %s (%s -> %s)%s" % (
        at(path), k, what, "none" if o is MISSING else show(o),
        "none" if n is MISSING else show(n), why))]


def diff_additional(o, n, path, inp, field):
    o = True if o is MISSING else o
    n = True if n is MISSING else n
    if isinstance(o, bool) and isinstance(n, bool):
        if inp:
            return [Change(MINOR if n else MAJOR, field, "%s additionalProperties %s" % (
                at(path), "allowed" if n else "refused"))]
        # Answers carry only declared properties: neither changes what a client accepts of
        # either version. A closed object is refused all the same, as a rule of its own
        # (closed_outputs): no later version could add a property to it.
        return [Change(MINOR, field, "output object at %s %s" % (
            at(path), "opened" if n else "closed"))]
    if isinstance(o, dict) and isinstance(n, dict):
        return diff_schema(o, n, path + ".*", inp, field)
    return [Change(MAJOR, field, "%s additionalProperties changed" % at(path))]


def closed_outputs(schema, path=""):
    """Where an output schema closes an object (additionalProperties or unevaluatedProperties
    false), as property paths: output objects stay open (docs/capabilities.md)."""
    if not isinstance(schema, dict):
        return []
    out = [at(path)] if openness(schema) == CLOSED else []
    for p, sub in sorted((schema.get("properties") or {}).items()):
        out += closed_outputs(sub, "%s.%s" % (path, p) if path else p)
    for k in ("items", "additionalProperties", "not", "if", "then", "else"):
        out += closed_outputs(schema.get(k), path + ("[]" if k == "items" else ""))
    for k in ("anyOf", "oneOf", "allOf", "prefixItems"):
        for sub in schema.get(k) or []:
            out += closed_outputs(sub, path)
    for sub in (schema.get("$defs") or {}).values():
        out += closed_outputs(sub, path)
    return out


# ---- the other parts of a contract --------------------------------------------------------

def diff_annotations(o, n):
    o = {} if o is MISSING else o
    n = {} if n is MISSING else n
    if not isinstance(o, dict) or not isinstance(n, dict):
        return [Change(MAJOR, "annotations", "annotations replaced")]
    out = []
    for k in sorted(set(o) | set(n)):
        a, b = o.get(k, MISSING), n.get(k, MISSING)
        if a == b:
            continue
        if k == "title":
            out.append(Change(PATCH, "annotations", "annotation title reworded"))
        elif k in HINT_DEFAULTS:
            ea = HINT_DEFAULTS[k] if a is MISSING else a
            eb = HINT_DEFAULTS[k] if b is MISSING else b
            if ea != eb:
                out.append(Change(MAJOR, "annotations", "%s changed from %s to %s" % (
                    k, show(ea), show(eb))))
            else:
                out.append(Change(MINOR, "annotations", "%s %s (same meaning)" % (
                    k, "added" if a is MISSING else "left to its default")))
        elif a is MISSING:
            out.append(Change(MINOR, "annotations", "annotation %s added" % k))
        else:
            out.append(Change(MAJOR, "annotations", "annotation %s %s" % (
                k, "removed" if b is MISSING else "changed")))
    return out


def diff_arguments(o, n):
    o = [] if o is MISSING else o
    n = [] if n is MISSING else n
    try:
        om = {a["name"]: a for a in o}
        nm = {a["name"]: a for a in n}
        assert len(om) == len(o) and len(nm) == len(n)
    except (TypeError, KeyError, AssertionError):
        return [Change(MAJOR, "arguments", "arguments changed")]
    out = []
    for name in sorted(set(om) | set(nm)):
        if name not in nm:
            out.append(Change(MAJOR, "arguments", "argument '%s' removed" % name))
        elif name not in om:
            req = bool(nm[name].get("required", False))
            out.append(Change(MAJOR if req else MINOR, "arguments", "%s argument '%s' added" % (
                "required" if req else "optional", name)))
        else:
            a, b = om[name], nm[name]
            for k in sorted(set(a) | set(b)):
                x, y = a.get(k, MISSING), b.get(k, MISSING)
                if x == y:
                    continue
                if k in ("title", "description"):
                    out.append(Change(PATCH, "arguments", "argument '%s' %s reworded" % (name, k)))
                elif k == "required":
                    now = bool(y) if y is not MISSING else False
                    was = bool(x) if x is not MISSING else False
                    if now != was:
                        out.append(Change(MAJOR if now else MINOR, "arguments",
                                          "argument '%s' %s" % (
                                              name, "now required" if now else
                                              "no longer required")))
                else:
                    out.append(Change(MAJOR, "arguments", "argument '%s' %s changed" % (name, k)))
    return out


def diff_contract(old, new):
    """Every change from contract old to new (dicts as listed, without _meta)."""
    out = []
    for k in sorted(set(old) | set(new)):
        o, n = old.get(k, MISSING), new.get(k, MISSING)
        if o == n:
            continue
        if k in ("title", "description"):
            out.append(Change(PATCH, k, "%s reworded" % k))
        elif k == "annotations":
            out += diff_annotations(o, n)
        elif k in ("inputSchema", "outputSchema"):
            inp = k == "inputSchema"
            if o is MISSING:
                out.append(Change(MAJOR, k, "%s added%s" % (
                    k, "" if inp else new_rejects("answers without structured content"))))
            elif n is MISSING:
                out.append(Change(MINOR if inp else MAJOR, k, "%s removed" % k))
            else:
                out += diff_schema(o, n, "", inp, k)
        elif k == "arguments":
            out += diff_arguments(o, n)
        else:  # name, uri, uriTemplate, mimeType and whatever this script does not know
            out.append(Change(MAJOR, k, "%s %s" % (
                k, "added" if o is MISSING else "removed" if n is MISSING else
                "changed from %s to %s" % (show(o), show(n)))))
    return out


def diff_lifecycle(old, new):
    """Deprecating is a minor change (semver.org); so is lifting it; an earlier sunset is
    major, a later one minor, another replacement patch."""
    out = []
    ol, nl = old.get("lifecycle"), new.get("lifecycle")
    if ol != nl:
        out.append(Change(MINOR, "lifecycle", "lifecycle %s -> %s" % (ol, nl)))
    elif nl == "deprecated":
        os_, ns = old.get("sunset"), new.get("sunset")
        if os_ != ns and os_ and ns:
            out.append(Change(MAJOR if ns < os_ else MINOR, "sunset", "sunset moved %s %s -> %s"
                              % ("earlier" if ns < os_ else "later", os_, ns)))
        if old.get("replacement") != new.get("replacement"):
            out.append(Change(PATCH, "replacement", "replacement changed"))
    return out


# ---- versions and records -----------------------------------------------------------------

def semver(v):
    m = SEMVER.match(v) if isinstance(v, str) else None
    return tuple(int(x) for x in m.groups()) if m else None


def bump(v, level):
    if level == MAJOR:
        return (v[0] + 1, 0, 0)
    if level == MINOR:
        return (v[0], v[1] + 1, 0)
    if level == PATCH:
        return (v[0], v[1], v[2] + 1)
    return v


def vstr(v):
    return "%d.%d.%d" % v


def today():
    t = os.environ.get("CONTRACTS_TODAY")
    return t if t else datetime.datetime.now(datetime.timezone.utc).date().isoformat()


def valid_date(s):
    try:
        return isinstance(s, str) and re.fullmatch(r"\d{4}-\d{2}-\d{2}", s) is not None \
            and datetime.date.fromisoformat(s) is not None
    except ValueError:
        return False


def load_json(path):
    try:
        if path == "-":
            return json.load(sys.stdin)
        with open(path, encoding="utf-8") as f:
            return json.load(f)
    except (OSError, ValueError) as e:
        sys.exit("contracts: cannot read %s: %s" % (path, e))


def current_records(dump):
    """{(kind, key): record} from the dump: the record a snapshot keeps, plus governance."""
    caps = dump.get("capabilities") if isinstance(dump, dict) else None
    if not isinstance(caps, dict):
        sys.exit("contracts: the dump has no capabilities object")
    recs = {}
    for kind in KINDS:
        for key, e in sorted((caps.get(kind) or {}).items()):
            g = e.get("governance") or {}
            r = {"kind": kind, "name": key, "version": g.get("version"),
                 "lifecycle": g.get("lifecycle"), "contract": e.get("contract")}
            for opt in ("sunset", "replacement"):
                if g.get(opt) is not None:
                    r[opt] = g[opt]
            recs[(kind, key)] = (r, g)
    return recs


def snapshot_records(snap):
    caps = snap.get("capabilities") if isinstance(snap, dict) else None
    if not isinstance(caps, list):
        sys.exit("contracts: the snapshot has no capabilities list")
    return {(r["kind"], r["name"]): r for r in caps}


def label(kind, key):
    return key if kind in ("tool", "prompt") else "%s %s" % (kind, key)


def governance_failures(name, key, g, recs):
    """What the governance record itself must say (it is what clients read in _meta)."""
    bad = []
    if not g:
        return ["%s: no governance record in _meta (version, lifecycle...)" % name]
    if semver(g.get("version")) is None:
        bad.append("%s: version %r is not MAJOR.MINOR.PATCH" % (name, g.get("version")))
    lc = g.get("lifecycle")
    if lc not in LIFECYCLES:
        bad.append("%s: lifecycle %r is neither stable nor deprecated" % (name, lc))
    elif lc == "deprecated":
        if not valid_date(g.get("sunset")):
            bad.append("%s: deprecated without a sunset date (YYYY-MM-DD): a deprecated "
                       "capability says until when it keeps working" % name)
        if not g.get("replacement"):
            bad.append("%s: deprecated without a replacement: say what to use instead" % name)
        elif g["replacement"] == key or not any(g["replacement"] == k for (_, k) in recs):
            bad.append("%s: replacement %r is not another capability of the catalogue"
                       % (name, g["replacement"]))
    else:
        for opt in ("sunset", "replacement"):
            if g.get(opt):
                bad.append("%s: %s given but lifecycle is stable" % (name, opt))
    return bad


def roll_failures(name, rel, cur):
    """A change from the previous release's contract rel that a validating client rejects,
    whatever the version says: both releases serve side by side during a rolling upgrade."""
    broken = [c.reason for c in diff_contract(rel.get("contract") or {}, cur["contract"] or {})
              if c.level == MAJOR]
    if not broken:
        return []
    return ["%s: cannot roll from the previous release's %s: %s; a change clients break on "
            "ships as a new capability beside this one (then deprecate this one)"
            % (name, rel.get("version"), "; ".join(broken))]


def compare(snap, recs, released=None):
    """(failures, stale, changed, notes): stale are failures that `make contracts` fixes.
    released: the previous release's snapshot records, or None: a version the snapshot
    records above the release's is not released yet, and a change is then judged from the
    release (what clients may hold), not from that unreleased record."""
    failures, stale, notes = [], [], []
    changed = 0
    now = today()
    for (kind, key), (cur, g) in recs.items():
        name = label(kind, key)
        failures += governance_failures(name, key, g, recs)
        failures += ["%s: its outputSchema closes the object at %s (additionalProperties "
                     "false): output objects stay open, so that a later version can add a "
                     "property" % (name, where)
                     for where in closed_outputs((cur["contract"] or {}).get("outputSchema"))]
        if g.get("lifecycle") == "deprecated" and valid_date(g.get("sunset")) \
                and g["sunset"] < now:
            notes.append("%s: past its sunset %s: it may now be removed" % (name, g["sunset"]))
        rel = (released or {}).get((kind, key))
        if rel is not None:
            failures += roll_failures(name, rel, cur)
        old = snap.get((kind, key))
        if old is None:
            changed += 1
            stale.append("%s: new capability (minor), version %s, not in the snapshot: run make "
                         "contracts to record it" % (name, cur["version"]))
            continue
        if old == cur:
            continue
        changed += 1
        ov, cv = semver(old.get("version")), semver(cur["version"])
        if ov is None or cv is None:
            if ov is None:
                failures.append("%s: the snapshot's version %r is not MAJOR.MINOR.PATCH"
                                % (name, old.get("version")))
            continue
        base, bv = old, ov
        rv = semver(rel.get("version")) if rel is not None else None
        if rv is not None and rv < ov:  # the snapshot's version is not released yet
            base, bv = rel, rv
        changes = diff_contract(base.get("contract") or {}, cur["contract"] or {})
        changes += diff_lifecycle(base, cur)
        level = max([c.level for c in changes], default=NONE)
        fields = []
        for c in changes:
            if c.field not in fields:
                fields.append(c.field)
        top = [c.reason for c in changes if c.level == level]
        what = "%s changed (%s: %s)" % (", ".join(fields), LEVEL[level], "; ".join(top)) \
            if changes else "contract unchanged"
        # Initial development (semver item 4: 0.y.z): anything may change; a version from
        # 1.0.0 on is the public contract the rules protect.
        need = cv if bv[0] == 0 and cv[0] == 0 else max(bump(bv, level), ov)
        since = " since the previous release" if base is rel else ""
        if cv < ov:
            failures.append("%s: %s but version %s -> %s goes backwards; versions never go down"
                            % (name, what, vstr(ov), vstr(cv)))
        elif cv < need:
            failures.append("%s: %s%s but version %s -> %s; bump to %s" % (
                name, what, since, vstr(bv), vstr(cv), vstr(need)))
        else:
            stale.append("%s: %s%s, version %s -> %s is enough, but the snapshot records %s: "
                         "run make contracts to record it" % (
                             name, what, since, vstr(bv), vstr(cv),
                             "the old contract" if changes or base is rel else
                             "the old version"))
    for (kind, key), old in snap.items():
        if (kind, key) in recs:
            continue
        changed += 1
        name = label(kind, key)
        sunset = old.get("sunset")
        if old.get("lifecycle") == "deprecated" and valid_date(sunset) and sunset < now:
            stale.append("%s: removed after its sunset %s: run make contracts to record it"
                         % (name, sunset))
        elif old.get("lifecycle") == "deprecated" and valid_date(sunset):
            failures.append("%s: removed from the catalogue (major) before its sunset %s: "
                            "deprecated capabilities keep working until their sunset"
                            % (name, sunset))
        else:
            failures.append("%s: removed or renamed (major) without having been deprecated "
                            "with a sunset that has passed: deprecated capabilities keep working "
                            "until their sunset (deprecate it first: lifecycle deprecated, "
                            "sunset, replacement; remove it after the sunset)" % name)
    return failures, stale, changed, notes


def sorted_keys(v):
    if isinstance(v, dict):
        return {k: sorted_keys(v[k]) for k in sorted(v)}
    if isinstance(v, list):
        return [sorted_keys(x) for x in v]
    return v


def snapshot_json(recs):
    order = ("kind", "name", "version", "lifecycle", "sunset", "replacement", "contract")
    caps = [{f: sorted_keys(recs[k][0][f]) for f in order if f in recs[k][0]}
            for k in sorted(recs, key=lambda k: (KINDS.index(k[0]), k[1]))]
    doc = {"about": "The public contract of every capability with its version, as recorded by "
                    "`make contracts` (scripts/contracts.py; docs/capabilities.md). Do not edit "
                    "by hand.",
           "capabilities": caps}
    return json.dumps(doc, indent=2, ensure_ascii=False) + "\n"


def released_records(path):
    """The previous release's snapshot records; None (with a note) when path is absent or
    empty (a checkout without that release's history)."""
    if path is None:
        return None
    if not os.path.exists(path) or os.path.getsize(path) == 0:
        print("contracts: note: no snapshot of the previous release (%s): versions are judged "
              "from this snapshot only, and the rolling upgrade is not checked" % path)
        return None
    return snapshot_records(load_json(path))


def cmd_check(snapshot, current, update, released_path=None):
    recs = current_records(load_json(current))
    snap = snapshot_records(load_json(snapshot)) if os.path.exists(snapshot) or not update \
        else {}
    failures, stale, changed, notes = compare(snap, recs, released_records(released_path))
    for n in notes:
        print("contracts: note: " + n)
    if update:
        for f in failures:
            print("contracts: FAIL " + f)
        if failures:
            print("contracts: %d failures: %s not written" % (len(failures), snapshot))
            return 1
        with open(snapshot, "w", encoding="utf-8") as f:
            f.write(snapshot_json(recs))
        print("contracts: recorded %d capabilities in %s (%d changed)"
              % (len(recs), snapshot, changed))
        return 0
    for f in failures + stale:
        print("contracts: FAIL " + f)
    print("contracts: %d capabilities, %d changed, %d failures"
          % (len(recs), changed, len(failures) + len(stale)))
    return 1 if failures or stale else 0


# ---- the capability table of docs/capabilities.md ------------------------------------------

README_COLUMNS = ("kind", "name", "version", "risk", "owner", "roles", "confirmation",
                  "lifecycle")


def cells(line):
    return [c.strip().replace("`", "").strip() for c in line.strip().strip("|").split("|")]


def readme_rows(path):
    try:
        with open(path, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except OSError as e:
        sys.exit("contracts: cannot read %s: %s" % (path, e))
    for i, line in enumerate(lines):
        if line.lstrip().startswith("|") and \
                tuple(c.lower() for c in cells(line)) == README_COLUMNS:
            rows = []
            for j in range(i + 2, len(lines)):
                if not lines[j].lstrip().startswith("|"):
                    break
                rows.append((j + 1, cells(lines[j])))
            return rows
    return None


def roles(s):
    return sorted(r for r in re.split(r"[,\s]+", s or "") if r)


def cmd_readme(path, current):
    recs = current_records(load_json(current))
    rows = readme_rows(path)
    if rows is None:
        print("readme: FAIL %s: no capability table (header | %s |)"
              % (path, " | ".join(README_COLUMNS)))
        print("readme: 0 rows, 1 failures")
        return 1
    bad, seen = [], set()
    for ln, c in rows:
        where = "%s:%d" % (path, ln)
        if len(c) != len(README_COLUMNS):
            bad.append("%s: %d cells, expected %d" % (where, len(c), len(README_COLUMNS)))
            continue
        row = dict(zip(README_COLUMNS, c))
        kind = KIND_ALIASES.get(row["kind"].lower())
        key = (kind, row["name"])
        name = label(kind or row["kind"], row["name"])
        if key not in recs:
            bad.append("%s: %s is not in the catalogue" % (where, name))
            continue
        if key in seen:
            bad.append("%s: %s listed twice" % (where, name))
            continue
        seen.add(key)
        g = recs[key][1]
        for col in ("version", "risk", "owner"):
            if row[col] != (g.get(col) or ""):
                bad.append("%s: %s: %s %r in the table, %r in the catalogue"
                           % (where, name, col, row[col], g.get(col)))
        if roles(row["roles"]) != roles(g.get("roles")):
            bad.append("%s: %s: roles %r in the table, %r in the catalogue"
                       % (where, name, row["roles"], g.get("roles")))
        lc = (row["lifecycle"].split() or [""])[0].strip(",;(")
        if lc != g.get("lifecycle"):
            bad.append("%s: %s: lifecycle %r in the table, %r in the catalogue"
                       % (where, name, lc, g.get("lifecycle")))
        elif lc == "deprecated":
            for opt in ("sunset", "replacement"):
                if g.get(opt) and g[opt] not in row["lifecycle"]:
                    bad.append("%s: %s: the lifecycle cell does not give the %s %s"
                               % (where, name, opt, g[opt]))
        if not row["confirmation"]:
            bad.append("%s: %s: empty confirmation" % (where, name))
    for key in recs:
        if key not in seen:
            bad.append("%s: %s (version %s) is missing from the capability table"
                       % (path, label(*key), recs[key][1].get("version")))
    for b in bad:
        print("readme: FAIL " + b)
    print("readme: %d rows, %d failures" % (len(rows), len(bad)))
    return 1 if bad else 0


def main(argv):
    usage = ("usage: contracts.py check SNAPSHOT CURRENT [RELEASED] | --update SNAPSHOT "
             "CURRENT [RELEASED] | readme DOC CURRENT")
    if len(argv) not in (4, 5) or (len(argv) == 5 and argv[1] == "readme"):
        sys.exit(usage)
    cmd, a, b = argv[1:4]
    rel = argv[4] if len(argv) == 5 else None
    if cmd == "check":
        return cmd_check(a, b, False, rel)
    if cmd in ("--update", "update"):
        return cmd_check(a, b, True, rel)
    if cmd == "readme":
        return cmd_readme(a, b)
    sys.exit(usage)


if __name__ == "__main__":
    sys.exit(main(sys.argv))
