#!/usr/bin/env python3
# SPDX-License-Identifier: BSD-3-Clause
# Copyright(c) 2026 The pacer authors
"""Markdown tables from a bench/run.sh run.

    bench/report.py RUN [--doc FILE] [--meta KEY=VALUE ...]
                        [--parts LIST] [--failed LIST]

RUN is what bench/run.sh printed on stdout (`-` for stdin): one JSON object
per measurement ({"bench","case","value","unit","baseline","baseline_value"})
and `goal NAME: value V target T (STATUS)` lines; anything else is skipped,
except run.sh's own `run.sh: machine: ...` and `run.sh: load at the end ...`
log lines (a run captured with 2>&1), which stand in for a missing
--meta machine=.

One subsection per part of run.sh (throughput, sched, accuracy, memory,
conformance, lcores, scale, queued, fct), each with the run's date (UTC), commit,
machine and command (--meta date=, commit=, machine=, command=; other keys
are listed after them), a table of the measurements with a baseline (case,
value and unit, baseline and its value, value / baseline value), a table of
those without one (a column per measurement), and the goals. A value of
null prints n/a.

Without --doc the subsections go to stdout. With --doc FILE they replace,
in FILE, the subsections of the same parts between `<!-- bench/run.sh:
begin -->` and `<!-- bench/run.sh: end -->`, keeping the others; the
markers and a section "## Latest bench/run.sh run" are created before the
first `## ` heading if they are not there. --parts: the parts to replace
(default: those the input has figures for); a listed part without figures
says so. --failed: parts whose run.sh function failed (said in their
subsection). Python 3 standard library only. Exit 0, 1 on a doc it cannot
edit safely (one marker without the other), 2 on bad usage.
"""

import argparse
import datetime
import json
import math
import os
import re
import subprocess
import sys
import tempfile

BEGIN = "<!-- bench/run.sh: begin -->"
END = "<!-- bench/run.sh: end -->"
SECTION = "## Latest bench/run.sh run"
PART_RE = re.compile(
    r"<!-- bench/run\.sh part (?P<part>[A-Za-z0-9_.-]+): begin -->\n"
    r"(?P<body>.*?)"
    r"<!-- bench/run\.sh part (?P=part): end -->\n?", re.S)
GOAL_RE = re.compile(
    r"^goal (?P<name>.+?): value (?P<value>\S*) target (?P<target>.*) "
    r"\((?P<status>[^()]*)\)\s*$")

# the order run.sh runs them in
PARTS = ["throughput", "sched", "accuracy", "memory", "conformance",
         "lcores", "scale", "queued", "fct", "queue", "instr"]

# bench (emit's first field) or goal name -> part, by prefix; first match
BENCH_PART = [
    ("throughput", "throughput"),
    ("sched_", "sched"),
    ("departure_error_", "accuracy"),
    ("achieved_rate", "accuracy"),
    ("machine_", "accuracy"),
    ("rss_bytes", "memory"),
    ("wheel_bytes", "memory"),
    ("rate_error_", "conformance"),
    ("lcores_", "lcores"),
    ("scale_", "scale"),
    ("queued_", "queued"),
    ("fct_", "fct"),
    ("queue_", "queue"),
    ("instr", "instr"),
]
GOAL_PART = [
    ("throughput_vs_testpmd", "throughput"),
    ("faster_than_rte_sched", "sched"),
    ("departure_error_", "accuracy"),
    ("memory", "memory"),
    ("rate_conformance", "conformance"),
    ("lcores", "lcores"),
    ("scale_", "scale"),
    ("queued_", "queued"),
    ("fct_", "fct"),
    ("queue_", "queue"),
    ("instr_", "instr"),
]

META_ORDER = ["date", "commit", "machine", "command"]


def part_of(name, table):
    for prefix, part in table:
        if name.startswith(prefix):
            return part
    # unknown: the name up to its first separator
    return re.split(r"[_/ ]", name, 1)[0] or "other"


def lenient_json(line):
    """A JSON object, or with unquoted non-numbers (an empty field, nan,
    -nan, inf: what a failed awk or median gives) read as null."""
    try:
        return json.loads(line)
    except ValueError:
        pass
    num = re.compile(r"-?\d+(\.\d+)?([eE][-+]?\d+)?$")

    def fix(m):
        v = m.group(2).strip()
        if v in ("null", "true", "false") or num.match(v):
            return m.group(0)
        return m.group(1) + "null"
    fixed = re.sub(r'("[^"]*"\s*:\s*)([^"{}\[\],]*)(?=[,}])', fix, line)
    try:
        return json.loads(fixed)
    except ValueError:
        return None


def read_run(path):
    """records, goals, log-derived meta"""
    records, goals, meta = [], [], {}
    if path == "-":
        lines = sys.stdin.read().splitlines()
    else:
        with open(path, encoding="utf-8", errors="replace") as f:
            lines = f.read().splitlines()
    for n, line in enumerate(lines, 1):
        s = line.strip()
        if s.startswith("{"):
            o = lenient_json(s)
            if not isinstance(o, dict) or "bench" not in o:
                print("report.py: %s:%d: not a measurement, skipped: %s"
                      % (path, n, s[:120]), file=sys.stderr)
                continue
            records.append(o)
            continue
        m = GOAL_RE.match(s)
        if m:
            goals.append(m.groupdict())
            continue
        if s.startswith("goal "):
            print("report.py: %s:%d: goal line not understood, skipped: %s"
                  % (path, n, s[:120]), file=sys.stderr)
            continue
        m = re.match(r"^run\.sh: machine: (.*)$", s)
        if m:
            meta["machine_start"] = m.group(1)
            continue
        m = re.match(r"^run\.sh: load at the end (.*)$", s)
        if m:
            meta["load_end"] = m.group(1)
    return records, goals, meta


def fmt_num(v):
    """a number as run.sh printed it, near enough; None -> n/a"""
    if v is None:
        return "n/a"
    if isinstance(v, bool):
        return str(v).lower()
    if isinstance(v, int):
        return str(v)
    if isinstance(v, float):
        if math.isnan(v) or math.isinf(v):
            return "n/a"
        if v == int(v) and abs(v) < 1e15:
            return str(int(v))
        if abs(v) >= 1e6:
            return "%.0f" % v
        return "%.6g" % v
    return str(v)


def with_unit(v, unit):
    s = fmt_num(v)
    if s == "n/a" or not unit:
        return s
    return "%s%s%s" % (s, "" if unit == "x" else " ", unit)


def number(v):
    if isinstance(v, bool) or not isinstance(v, (int, float)):
        return None
    if isinstance(v, float) and (math.isnan(v) or math.isinf(v)):
        return None
    return v


def ratio(v, b):
    v, b = number(v), number(b)
    if v is None or b is None or b == 0:
        return "n/a"
    r = v / b
    s = "%.4g" % r
    if "e" in s:
        s = "%.3f" % r
    return s


def cell(s):
    return str(s).replace("|", "\\|").replace("\n", " ")


def code(s):
    """s as inline code, whatever backticks it holds"""
    s = str(s).replace("\n", " ")
    ticks = max((len(t) for t in re.findall(r"`+", s)), default=0)
    fence = "`" * (ticks + 1)
    pad = " " if s.startswith("`") or s.endswith("`") else ""
    return fence + pad + s + pad + fence


def table(header, align, rows):
    out = ["| " + " | ".join(cell(h) for h in header) + " |",
           "|" + "|".join(("---:" if a == "r" else "---") for a in align) + "|"]
    for r in rows:
        out.append("| " + " | ".join(cell(c) for c in r) + " |")
    return out


def render_part(part, records, goals, meta, failed):
    out = ["### %s" % part, ""]
    for k in META_ORDER + sorted(k for k in meta if k not in META_ORDER):
        if k not in meta:
            continue
        v = code(meta[k]) if k == "command" else meta[k]
        out.append("- %s: %s" % (k, v))
    out.append("")
    if not records and not goals:
        out += ["**This part failed**: no figures (run.sh said why on "
                "stderr)." if failed else
                "No figures from this part in this run (see the run's "
                "log).", ""]
        return out
    if failed:
        out += ["**This part failed** (run.sh said why on stderr): the "
                "figures below are what it measured before it stopped.", ""]

    # measurements with a baseline: one row each
    with_bl = {r.get("bench") for r in records if r.get("baseline") is not None}
    long_rows = [r for r in records if r.get("bench") in with_bl]
    if long_rows:
        rows = []
        for r in long_rows:
            has = r.get("baseline") is not None
            rows.append([
                r.get("bench", ""), r.get("case", ""),
                with_unit(r.get("value"), r.get("unit", "")),
                r.get("baseline") if has else "",
                with_unit(r.get("baseline_value"), r.get("unit", "")) if has else "",
                ratio(r.get("value"), r.get("baseline_value")) if has else "",
            ])
        out += table(["measurement", "case", "value", "baseline",
                      "baseline value", "value / baseline"],
                     ["l", "l", "r", "l", "r", "r"], rows)
        out.append("")

    # measurements without one: a row per case, a column per measurement
    wide = [r for r in records if r.get("bench") not in with_bl]
    if wide:
        benches, cases, cells = [], [], {}
        for r in wide:
            b, c = r.get("bench", ""), r.get("case", "")
            if b not in benches:
                benches.append(b)
            if c not in cases:
                cases.append(c)
            cells[(c, b)] = with_unit(r.get("value"), r.get("unit", ""))
        rows = [[c] + [cells.get((c, b), "") for b in benches] for c in cases]
        out += table(["case"] + benches, ["l"] + ["r"] * len(benches), rows)
        out.append("")

    if goals:
        rows = [[g["name"], fmt_value_str(g["value"]), g["target"],
                 "**missed**" if g["status"] == "missed" else g["status"]]
                for g in goals]
        out += table(["goal", "value", "target", "result"],
                     ["l", "r", "l", "l"], rows)
        counts = {}
        for g in goals:
            counts[g["status"]] = counts.get(g["status"], 0) + 1
        out += ["", "Goals: " + ", ".join(
            "%d %s" % (counts[k], k) for k in sorted(counts)) + "."]
        out.append("")
    return out


def fmt_value_str(v):
    if v in ("", "null", "nan", "-nan", "inf", "-inf"):
        return "n/a"
    return v


def wrap_part(part, lines):
    body = "\n".join(lines).rstrip("\n") + "\n"
    return ("<!-- bench/run.sh part %s: begin -->\n%s"
            "<!-- bench/run.sh part %s: end -->\n" % (part, body, part))


def order_key(part):
    return (PARTS.index(part), "") if part in PARTS else (len(PARTS), part)


def region(parts_text):
    """what goes between BEGIN and END: the parts in run.sh's order"""
    s = ("\n<!-- Written by bench/run.sh --write-doc (bench/report.py): "
         "everything between the bench/run.sh markers is replaced; each "
         "part's subsection is from the last run that ran that part. -->\n\n")
    s += "\n".join(parts_text[p] for p in sorted(parts_text, key=order_key))
    return s + "\n"


def update_doc(text, new_parts):
    """text with new_parts (part -> wrapped subsection) put in"""
    nb, ne = text.count(BEGIN), text.count(END)
    if nb == 0 and ne == 0:
        sec = SECTION + "\n\n" + BEGIN + region(new_parts) + END + "\n\n"
        m = re.search(r"^## ", text, re.M)
        if m:
            return text[:m.start()] + sec + text[m.start():]
        if text and not text.endswith("\n"):
            text += "\n"
        return text + ("\n" if text else "") + sec
    if nb != 1 or ne != 1 or text.index(BEGIN) > text.index(END):
        raise ValueError("%d '%s' and %d '%s' markers (one of each, in that "
                         "order, expected): not editing" % (nb, BEGIN, ne, END))
    a = text.index(BEGIN) + len(BEGIN)
    b = text.index(END)
    old = {}
    for m in PART_RE.finditer(text[a:b]):
        old[m.group("part")] = m.group(0).rstrip("\n") + "\n"
    old.update(new_parts)
    return text[:a] + region(old) + text[b:]


def git_commit():
    try:
        c = subprocess.run(["git", "rev-parse", "--short", "HEAD"],
                           capture_output=True, text=True, timeout=10)
        if c.returncode != 0:
            return None
        h = c.stdout.strip()
        d = subprocess.run(["git", "status", "--porcelain"],
                           capture_output=True, text=True, timeout=30)
        if d.returncode == 0 and d.stdout.strip():
            h += "+dirty"
        return h + " (at report time)"
    except (OSError, subprocess.SubprocessError):
        return None


def split_list(s):
    return [x for x in re.split(r"[,\s]+", s or "") if x]


def main():
    ap = argparse.ArgumentParser(
        prog="bench/report.py",
        description="Markdown tables from bench/run.sh's output "
                    "(docs/PERFORMANCE.md's 'Latest bench/run.sh run').")
    ap.add_argument("run", help="run.sh's stdout (JSON lines and goal lines); - for stdin")
    ap.add_argument("--doc", help="markdown file to update in place (else: stdout)")
    ap.add_argument("--meta", action="append", default=[], metavar="KEY=VALUE",
                    help="date=, commit=, machine=, command=, or any other; repeatable")
    ap.add_argument("--parts", help="parts to write, comma separated (default: those with figures)")
    ap.add_argument("--failed", help="parts that failed, comma separated")
    a = ap.parse_args()

    meta = {}
    for kv in a.meta:
        k, sep, v = kv.partition("=")
        if not sep or not k:
            ap.error("--meta '%s': KEY=VALUE expected" % kv)
        meta[k] = v
    try:
        records, goals, logmeta = read_run(a.run)
    except OSError as e:
        print("report.py: %s" % e, file=sys.stderr)
        return 2

    if "machine" not in meta and "machine_start" in logmeta:
        m = logmeta["machine_start"]
        if "load_end" in logmeta:
            m += ", load at the end " + logmeta["load_end"]
        meta["machine"] = m
    if "date" not in meta:
        try:
            t = os.path.getmtime(a.run) if a.run != "-" else None
        except OSError:
            t = None
        d = (datetime.datetime.fromtimestamp(t, datetime.timezone.utc) if t
             else datetime.datetime.now(datetime.timezone.utc))
        meta["date"] = d.strftime("%Y-%m-%d %H:%M UTC") + \
            (" (the input's modification time)" if t else " (report time)")
    if "commit" not in meta:
        meta["commit"] = git_commit() or "unknown"
    if "command" not in meta:
        meta["command"] = "unknown (bench/report.py %s)" % a.run

    by_part = {}
    for r in records:
        by_part.setdefault(part_of(str(r.get("bench", "")), BENCH_PART),
                           ([], []))[0].append(r)
    for g in goals:
        by_part.setdefault(part_of(g["name"], GOAL_PART), ([], []))[1].append(g)
    parts = split_list(a.parts) or sorted(by_part, key=order_key)
    failed = set(split_list(a.failed))
    for p in parts:
        if not re.match(r"^[A-Za-z0-9_.-]+$", p):
            ap.error("--parts: bad part name '%s'" % p)
    extra = [p for p in by_part if p not in parts]
    if extra:
        print("report.py: figures of parts not in --parts left out: %s"
              % ", ".join(extra), file=sys.stderr)
    if not parts:
        print("report.py: nothing in %s: no measurement or goal lines" % a.run,
              file=sys.stderr)
        return 1

    new = {}
    for p in sorted(dict.fromkeys(parts), key=order_key):
        recs, gls = by_part.get(p, ([], []))
        new[p] = wrap_part(p, render_part(p, recs, gls, meta, p in failed))

    if not a.doc:
        sys.stdout.write("\n".join(new[p] for p in sorted(new, key=order_key)))
        return 0
    try:
        with open(a.doc, encoding="utf-8") as f:
            text = f.read()
    except FileNotFoundError:
        text = "# Performance\n"
    try:
        text = update_doc(text, new)
    except ValueError as e:
        print("report.py: %s: %s" % (a.doc, e), file=sys.stderr)
        return 1
    d = os.path.dirname(os.path.abspath(a.doc))
    fd, tmp = tempfile.mkstemp(prefix=".report-", dir=d)
    try:
        with os.fdopen(fd, "w", encoding="utf-8") as f:
            f.write(text)
        os.chmod(tmp, os.stat(a.doc).st_mode & 0o7777
                 if os.path.exists(a.doc) else 0o644)
        os.replace(tmp, a.doc)
    except BaseException:
        os.unlink(tmp)
        raise
    print("report.py: %s: wrote %s" % (a.doc, ", ".join(sorted(new, key=order_key))),
          file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
