#!/usr/bin/env python3
"""Point src/ citations of the team's private notes at docs/model/ (issue 12).

Reads docs/model/citations.tsv (file, line, old text, new text; `\\n`, `\\t` and `\\\\` are
escapes) and replaces each old text in its file. Lines move as the code is rewritten, so a row
is matched by its old text, not by its line number: the text must occur in the file, and when it
occurs more than once the occurrence nearest the recorded line is taken. A row whose text is no
longer in its file (or whose file is gone) is reported and skipped.

Afterwards every file under src/ is searched for citations that still point outside the
repository (MODEL.md, HISTORY.md, MODERN.md, OUTPUT.md, STYLE.md, ../shared/), and each is listed.

Usage, from the repository root:
    python3 docs/model/apply-citations.py            # apply and report
    python3 docs/model/apply-citations.py --dry-run  # report only

Exit status: 0 when every row was placed and no outside citation remains, 1 otherwise.
"""

import os
import re
import sys

TSV = os.path.join(os.path.dirname(os.path.abspath(__file__)), "citations.tsv")
OUTSIDE = re.compile(r"MODEL\.md|HISTORY\.md|MODERN\.md|OUTPUT\.md|STYLE\.md|\.\./shared/")


def unescape(s):
    out, i = [], 0
    while i < len(s):
        if s[i] == "\\" and i + 1 < len(s) and s[i + 1] in "nt\\":
            out.append({"n": "\n", "t": "\t", "\\": "\\"}[s[i + 1]])
            i += 2
        else:
            out.append(s[i])
            i += 1
    return "".join(out)


def read_rows(path):
    rows = []
    with open(path, encoding="utf-8") as f:
        for n, raw in enumerate(f, 1):
            line = raw.rstrip("\n")
            if not line or line.startswith("#"):
                continue
            parts = line.split("\t")
            if len(parts) != 4:
                sys.exit(f"{path}:{n}: expected 4 tab-separated fields, got {len(parts)}")
            file, hint, old, new = parts
            rows.append((n, file, int(hint), unescape(old), unescape(new)))
    return rows


def line_of(text, pos):
    return text.count("\n", 0, pos) + 1


def place(text, old, hint):
    """Start offset of the occurrence of `old` nearest line `hint`, and how many there were."""
    starts, at = [], text.find(old)
    while at >= 0:
        starts.append(at)
        at = text.find(old, at + 1)
    if not starts:
        return None, 0
    best = min(starts, key=lambda s: abs(line_of(text, s) - hint))
    return best, len(starts)


def main():
    dry = "--dry-run" in sys.argv[1:]
    rows = read_rows(TSV)
    texts, failed, notes = {}, [], []
    for n, file, hint, old, new in rows:
        if file not in texts:
            if not os.path.exists(file):
                texts[file] = None
            else:
                with open(file, encoding="utf-8") as f:
                    texts[file] = f.read()
        text = texts[file]
        if text is None:
            failed.append(f"row {n}: {file} does not exist (was near line {hint}): {old!r}")
            continue
        at, count = place(text, old, hint)
        if at is None:
            failed.append(f"row {n}: {file}: text not found (was line {hint}): {old!r}")
            continue
        if count > 1:
            notes.append(
                f"row {n}: {file}: {count} occurrences, took the one at line "
                f"{line_of(text, at)} (recorded {hint})"
            )
        texts[file] = text[:at] + new + text[at + len(old):]
        print(f"{file}:{line_of(text, at)}: {old!r} -> {new!r}")
    if not dry:
        for file, text in texts.items():
            if text is not None:
                with open(file, "w", encoding="utf-8") as f:
                    f.write(text)
    for note in notes:
        print("note:", note)
    for fail in failed:
        print("NOT PLACED:", fail)
    left = []
    for root, _, files in os.walk("src"):
        for name in sorted(files):
            path = os.path.join(root, name)
            text = texts.get(path)
            if text is None:
                try:
                    with open(path, encoding="utf-8") as f:
                        text = f.read()
                except (UnicodeDecodeError, OSError):
                    continue
            for k, line in enumerate(text.splitlines(), 1):
                if OUTSIDE.search(line):
                    left.append(f"{path}:{k}: {line.strip()}")
    for l in left:
        print("STILL OUTSIDE:", l)
    verb = "would replace" if dry else "replaced"
    print(f"{verb} {len(rows) - len(failed)} of {len(rows)}; {len(left)} outside citations left")
    return 0 if not failed and not left else 1


if __name__ == "__main__":
    sys.exit(main())
