#!/usr/bin/env python3
"""Score a kernlens binary's `locate` against eval/locate/names.tsv.

Usage: score.py [--bin PATH] [--trees DIR] [--names TSV] [--json] [--tree ID ...]
                [--row N ...] [--against OLD.json] [--check-table] [--verbose]

For each tree of the table, runs once
    kernlens locate --json --no-discover --root <trees>/<tree> <name>...
and compares each result with the row's expectation:
  * expected path: PASS when `found` is true and the top-1 `path` (relative to the
    tree root) equals it;
  * expected NOT_FOUND: PASS when `found` is false. A `found: true` answer for such a
    row is a false positive (the number the issue's precision goal is about).
Prints one line per row, then top-1 % overall, NOT_FOUND false positives, and scores
per category and per tree. `--json` prints one machine-readable document instead
(schema `kernlens.locate.eval/1`). Rows whose tree is not materialized are SKIPPED
(and counted as such, never as passes); when kernlens fails on a tree (bad exit,
bad JSON, timeout) that tree's rows fail and the other trees are still scored.
Exit status: 0 when every scored row passes, 1 when some fail, 2 on a usage error
or when kernlens failed on some tree.
"""

import argparse
import collections
import csv
import json
import os
import subprocess
import sys
import time

HERE = os.path.dirname(os.path.abspath(__file__))
REPO = os.path.dirname(os.path.dirname(HERE))
NOT_FOUND = "NOT_FOUND"


def read_rows(path):
    rows = []
    with open(path, newline="") as f:
        lines = [l for l in f if l.strip() and not l.startswith("#")]
    reader = csv.DictReader(lines, delimiter="\t", quoting=csv.QUOTE_NONE)
    need = {"tree", "name", "expected", "category", "note"}
    if not need <= set(reader.fieldnames or []):
        raise SystemExit(f"{path}: header must have columns {sorted(need)}")
    for i, r in enumerate(reader, start=1):
        r["row"] = i
        r["categories"] = [c.strip() for c in r["category"].split(",") if c.strip()]
        rows.append(r)
    return rows


def rel(path, root):
    """A result path made relative to the tree root (kernlens reports paths as
    walked, under the root as given; a resolved root is tried too)."""
    if path is None:
        return None
    p = os.path.normpath(path)
    if not os.path.isabs(p):
        return p
    for base in (root, os.path.realpath(root)):
        r = os.path.relpath(p, base)
        if not r.startswith(".."):
            return r
    return p


def run_tree(binary, root, names, timeout):
    cmd = [binary, "locate", "--json", "--no-discover", "--root", root, *names]
    t0 = time.monotonic()
    p = subprocess.run(cmd, capture_output=True, text=True, timeout=timeout)
    wall = time.monotonic() - t0
    if p.returncode not in (0, 1) or not p.stdout.strip():
        raise RuntimeError(f"{binary} exited {p.returncode} on {root}: {p.stderr[-2000:]}")
    doc = json.loads(p.stdout)
    if doc.get("schema") != "kernlens.locate/1":
        raise RuntimeError(f"unexpected schema {doc.get('schema')!r}")
    results = doc["results"]
    if len(results) != len(names):
        raise RuntimeError(f"{len(results)} results for {len(names)} names on {root}")
    return results, wall


def judge(row, res, root, errored=False):
    found = bool(res.get("found"))
    got = rel(res.get("path"), root) if found else None
    if errored:
        ok = False
    elif row["expected"] == NOT_FOUND:
        ok = not found
    else:
        ok = found and got == os.path.normpath(row["expected"])
    cands = [rel(c.get("path"), root) for c in res.get("candidates") or []]
    exp_rank = None
    if row["expected"] != NOT_FOUND and os.path.normpath(row["expected"]) in cands:
        exp_rank = cands.index(os.path.normpath(row["expected"])) + 1
    return {
        "row": row["row"], "tree": row["tree"], "name": row["name"],
        "expected": row["expected"], "categories": row["categories"],
        "pass": ok, "found": found, "got": got,
        "raw_path": res.get("path"),
        "method": res.get("method"), "reason": res.get("reason"),
        "confidence": res.get("confidence"), "keyword": res.get("keyword"),
        "expected_candidate_rank": exp_rank, "candidates": cands,
        "false_positive": row["expected"] == NOT_FOUND and found,
    }


def check_table(rows, trees):
    """Every expected path exists in its materialized tree; rows of trees that are
    not materialized are listed, not failed."""
    bad, missing_trees = 0, set()
    for r in rows:
        root = os.path.join(trees, r["tree"])
        if not os.path.isdir(root):
            missing_trees.add(r["tree"])
            continue
        if r["expected"] != NOT_FOUND and not os.path.isfile(os.path.join(root, r["expected"])):
            print(f"row {r['row']}: {r['tree']}/{r['expected']} does not exist")
            bad += 1
        if not r["categories"] or not r["note"].strip():
            print(f"row {r['row']}: category and note must not be empty")
            bad += 1
    nf = sum(r["expected"] == NOT_FOUND for r in rows)
    print(f"{len(rows)} rows ({nf} NOT_FOUND) over {len({r['tree'] for r in rows})} trees; "
          f"{bad} problem(s); trees not materialized: {sorted(missing_trees) or 'none'}")
    return 1 if bad else 0


def print_changes(path, judged):
    """Rows whose verdict differs from a previous --json run (matched by tree and
    name, so rows added since then are listed as new)."""
    with open(path) as f:
        before = {(r["tree"], r["name"]): r for r in json.load(f)["rows"]}
    fixed, broke, new = [], [], []
    for j in judged:
        b = before.get((j["tree"], j["name"]))
        if b is None:
            new.append(j)
        elif b["pass"] != j["pass"]:
            (fixed if j["pass"] else broke).append(j)
    print(f"against {path}: {len(fixed)} fixed, {len(broke)} broken, {len(new)} new rows")
    for label, rows in (("fixed", fixed), ("BROKEN", broke)):
        for j in rows:
            print(f"  {label:6} {j['row']:3} {j['tree']:15} {short(j['name'])}")


def short(s, n=70):
    return s if len(s) <= n else s[: n - 3] + "..."


def pct(a, b):
    return 100.0 * a / b if b else 0.0


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--bin", default=os.path.join(REPO, "target", "release", "kernlens"))
    ap.add_argument("--trees", default="/work/eval-trees")
    ap.add_argument("--names", default=os.path.join(HERE, "names.tsv"))
    ap.add_argument("--tree", action="append", default=[], help="score only this tree")
    ap.add_argument("--row", action="append", type=int, default=[],
                    help="score only this row (1-based data row of the table; repeatable)")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("--verbose", "-v", action="store_true",
                    help="also print keyword, candidates and notes of failing rows")
    ap.add_argument("--timeout", type=float, default=1800)
    ap.add_argument("--against", metavar="JSON",
                    help="a previous `--json` result: also list the rows whose verdict changed")
    ap.add_argument("--check-table", action="store_true",
                    help="only check the table against the trees (every expected file exists) and exit")
    a = ap.parse_args()
    if a.check_table:
        return check_table(read_rows(a.names), a.trees)
    if not os.access(a.bin, os.X_OK):
        print(f"score.py: no executable kernlens at {a.bin}", file=sys.stderr)
        return 2
    rows = read_rows(a.names)
    by_tree = collections.OrderedDict()
    for r in rows:
        if a.tree and r["tree"] not in a.tree:
            continue
        if a.row and r["row"] not in a.row:
            continue
        by_tree.setdefault(r["tree"], []).append(r)
    judged, skipped, walls, errors = [], [], {}, []
    for tree, trows in by_tree.items():
        root = os.path.join(a.trees, tree)
        if not os.path.isdir(root):
            skipped.extend({"row": r["row"], "tree": tree, "name": r["name"]} for r in trows)
            continue
        try:
            results, wall = run_tree(a.bin, root, [r["name"] for r in trows], a.timeout)
        except (RuntimeError, subprocess.TimeoutExpired, json.JSONDecodeError) as e:
            # One tree's crash or timeout must not hide the other trees' scores:
            # its rows fail (a NOT_FOUND row is not counted as a pass either).
            print(f"score.py: {tree}: {e}", file=sys.stderr)
            errors.append(tree)
            results = [{"found": False, "method": "error", "reason": f"error: {e}"[:300]}
                       for _ in trows]
            wall = None
        walls[tree] = round(wall, 2) if wall is not None else None
        judged.extend(judge(r, res, root, errored=wall is None)
                      for r, res in zip(trows, results))
    judged.sort(key=lambda j: j["row"])
    notes = {r["row"]: r["note"] for r in rows}

    total = len(judged)
    passed = sum(j["pass"] for j in judged)
    nf_rows = [j for j in judged if j["expected"] == NOT_FOUND]
    fp = [j for j in nf_rows if j["false_positive"]]
    def_rows = [j for j in judged if j["expected"] != NOT_FOUND]
    cats = collections.OrderedDict()
    for j in judged:
        for c in j["categories"]:
            s = cats.setdefault(c, [0, 0])
            s[0] += j["pass"]
            s[1] += 1
    trees = collections.OrderedDict()
    for j in judged:
        s = trees.setdefault(j["tree"], [0, 0])
        s[0] += j["pass"]
        s[1] += 1
    summary = {
        "rows": total, "passed": passed, "top1_pct": round(pct(passed, total), 1),
        "defined_rows": len(def_rows),
        "defined_passed": sum(j["pass"] for j in def_rows),
        "not_found_rows": len(nf_rows),
        "not_found_false_positives": len(fp),
        "skipped": len(skipped),
        "errored_trees": errors,
        "per_category": {c: {"passed": s[0], "rows": s[1]} for c, s in cats.items()},
        "per_tree": {t: {"passed": s[0], "rows": s[1], "wall_s": walls.get(t)}
                     for t, s in trees.items()},
    }
    if a.json:
        doc = {"schema": "kernlens.locate.eval/1", "binary": os.path.abspath(a.bin),
               "summary": summary, "rows": judged, "skipped": skipped}
        json.dump(doc, sys.stdout, indent=2)
        sys.stdout.write("\n")
    else:
        for j in judged:
            verdict = "PASS" if j["pass"] else ("FAIL*" if j["false_positive"] else "FAIL")
            got = j["got"] if j["found"] else f"not found ({j['reason'] or 'no match'})"
            conf = f" conf={j['confidence']}" if j.get("confidence") else ""
            print(f"{verdict:5} {j['row']:3} {j['tree']:15} {','.join(j['categories']):24} "
                  f"{short(j['name'])}\n      expected {j['expected']}\n      got      {got}"
                  f" [{j['method']}{conf}]")
            if a.verbose and not j["pass"]:
                print(f"      keyword {j['keyword']!r}; expected at candidate rank "
                      f"{j['expected_candidate_rank']}; candidates {j['candidates']}")
                print(f"      note: {notes[j['row']]}")
        for s in skipped:
            print(f"SKIP  {s['row']:3} {s['tree']:15} (tree not materialized) {short(s['name'])}")
        print()
        print(f"top-1: {passed}/{total} = {summary['top1_pct']}%  "
              f"(defined rows {summary['defined_passed']}/{len(def_rows)}, "
              f"NOT_FOUND rows {len(nf_rows) - len(fp)}/{len(nf_rows)})")
        print(f"NOT_FOUND false positives (found: true on a NOT_FOUND row): {len(fp)}")
        if skipped:
            print(f"skipped rows (tree missing): {len(skipped)}")
        if errors:
            print(f"trees where kernlens failed (their rows count as failures): {errors}")
        print("per category:")
        for c, s in cats.items():
            print(f"  {c:28} {s[0]:3}/{s[1]:<3} {pct(s[0], s[1]):5.1f}%")
        print("per tree:")
        for t, s in trees.items():
            print(f"  {t:28} {s[0]:3}/{s[1]:<3} {pct(s[0], s[1]):5.1f}%  ({walls.get(t)} s)")
        if a.against:
            print_changes(a.against, judged)
    if errors:
        return 2
    return 0 if passed == total else 1


if __name__ == "__main__":
    sys.exit(main())
