#!/usr/bin/env python3
"""House rules of MPIFT's Rust sources (issue 34), checked in `make test`.

Reads the hand-written Rust under src/ (generated code lives in OUT_DIR) and
prints one line per violation, `path:line: rule: detail`, then exits 1; prints
nothing and exits 0 when the tree keeps the rules:

  folder-doc       every top-level folder of src/ (and a top-level `src/x.rs`)
                   is a unit whose mod.rs opens with `//!` docs, one of them
                   `//! May import: a, b.` (or `//! May import: nothing.`)
                   naming only existing units.  A folder one level down whose
                   mod.rs has such a line is a unit of its own, `parent::sub`.
  import-up        a `crate::<unit>` path (in `use`, in code, in `use
                   crate::{..}` groups) or a `super::super::..` path that
                   reaches a unit which is neither the file's own unit nor in
                   its unit's May-import list.  src/lib.rs may reach anything.
  layer-cycle      the declared May-import graph has a cycle.
  unsafe-without-safety
                   an `unsafe {` block or `unsafe impl` without a `// SAFETY:`
                   comment of 15+ characters of reason on its line or in the
                   comment lines right above its line or above the first line
                   of the statement (match arm, field) that holds it.
  host-mpi-outside-transport
                   outside src/transport/: `mpi_sys`, `mpi::MPI_*`, an alias
                   of the bindings (`use mpi_sys as X` -> `X::`, transport's
                   re-export `crate::transport::mpi` -> `mpi::`), or a bare
                   `MPI_Xxx(` call to a function MPIFT does not define itself.
  file-too-long    a file over 600 lines.
  fn-too-long      a fn whose span (line of `fn` to its closing brace) is over
                   80 lines.
  blocking-call-unmarked
                   a host call that can block (a wait, a blocking collective
                   or constructor, blocking RMA) reachable from a dead rank, a
                   fill-in, a catch-up or MPI_Finalize without a `// Blocking:
                   in a turn|kept in flight|never blocks for ever: <why>`
                   comment (tests/arch/blocking.py).
  file-cycle       files of one folder that import
                   each other in a circle: a strongly connected component of
                   2+ files of the file graph (below), counting only the
                   arrows whose two ends are files of that folder (its mod.rs
                   included, its sub-folders' files not). Reported once per
                   circle, at the first file of one shortest cycle through it:
                   `N files: a.rs -> b.rs -> a.rs (names taken: a.rs -> b.rs:
                   x, y; ..)`, then the circle's other files. No exceptions.
                   On by default since src/ has no such circle (issue 55);
                   --no-file-cycles turns it off to look at other rules.

The file graph (for file-cycle and --summary; tests/arch/filegraph.py).  Its
nodes are the .rs files of src/.  An *arrow* runs from file A to file B when
A names an item of module B, resolved to B's file (src/engine/news/news.rs or
src/engine/news/mod.rs; an item a folder's mod.rs defines resolves to that
mod.rs; the longest prefix of the path that is a file's module wins, so a
path into an inline module stays in its file), by:
  - a `crate::` or `super::` path (in `use`, in code, in `use crate::{..}`
    groups, one arrow per module named) or a `self::` path;
  - a path through a module name in scope: one of the file's own child
    modules (`x::f()` or `pub use x::*` in a mod.rs that has `mod x;`), or a
    module a `use` brought in (`use crate::engine::comm;` then `comm::f()`
    is an arrow to comm.rs, taking `f`); such a `use` alone is an arrow only
    when its name is never used in a path (a re-export of the module);
  - a `pub use` re-export counts as any `use`: A -> the file that defines
    what it names (a file importing the re-exported name points to A, not
    further).
Not arrows: `mod x;` / `pub mod x;` declarations, paths to items of the same
file, paths in comments and strings, macros in textual scope, extern crates.
Test modules count like the rest of their file.  An arrow is a pair of files,
however many paths make it; `names taken` are the first segments after B's
module (an item, `*`, or `mod x` for the module itself).  Floors: a file's
floor is 1 + the highest floor among the files it points to outside its own
strongly connected component (1 when there are none); the files of one
component share a floor.  An arrow *runs back up* when its head is not on a
lower floor than its tail: exactly the arrows whose two ends are in one
component of 2+ files, so `up` is 0 exactly when the file graph has no
circle, and otherwise counts the arrows that tie the circles.

--summary ends with the file table: one row per folder of src/ that holds .rs
files (src/ itself for lib.rs, each unit, each sub-folder; a row counts the
folder's own files, not its sub-folders'): files, lines, arrows out of its
files (to anywhere), how many of those run back up, its circles as file-cycle
sees them and the files in them, its longest file and longest fn.  The total
row: every arrow, every arrow up, the circles of the whole file graph (across
folders too) and the files in them, and the number of floors; then each
whole-graph circle's files.

Usage:
  python3 tests/arch/check.py [--src DIR]        check (exit 1 on violations)
  python3 tests/arch/check.py --no-file-cycles   leave out the rule file-cycle
  python3 tests/arch/check.py --summary          counts per rule, per unit, and the file
                                                 graph per folder (exit 0)
  python3 tests/arch/check.py --svg FILE         also draw the layers as SVG (tests/arch/picture.py)
  python3 tests/arch/check.py --inside engine --svg FILE
                                                 ... or the rooms of one folder
  python3 tests/arch/check.py --blocking         the blocking host calls and their marks (exit 0)

Python 3 standard library only.
"""

import argparse
import bisect
import os
import re
import sys
from collections import defaultdict

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import blocking  # noqa: E402  (tests/arch/blocking.py)
import filegraph  # noqa: E402  (tests/arch/filegraph.py)
import picture  # noqa: E402  (tests/arch/picture.py)

MAX_FILE_LINES = 600
MAX_FN_LINES = 80
MIN_SAFETY_REASON = 15
TRANSPORT = "transport"  # the one unit that may touch the host MPI bindings
HOST_CRATE = "mpi_sys"

RULES = [
    "folder-doc",
    "import-up",
    "layer-cycle",
    "unsafe-without-safety",
    "host-mpi-outside-transport",
    "file-too-long",
    "fn-too-long",
    "blocking-call-unmarked",
    "file-cycle",  # on unless --no-file-cycles
]

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
IDENT_CH = set("abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ0123456789_")


# ---------------------------------------------------------------------------
# Lexing: blank out comments and literals, keep every offset and newline.
# ---------------------------------------------------------------------------

class Source:
    """One .rs file: `code` is the text with comments, strings and char
    literals replaced by spaces (quotes kept, newlines kept, so offsets and
    line numbers are those of the file); `comments[line]` lists the text of
    the comments on that line (markers stripped)."""

    def __init__(self, path, rel, text):
        self.path = path
        self.rel = rel
        self.text = text
        self.code, self.comments = mask(text)
        self.line_starts = [0]
        for i, ch in enumerate(text):
            if ch == "\n":
                self.line_starts.append(i + 1)
        self.code_lines = self.code.split("\n")
        self.nlines = len(text.splitlines())
        self._pairs = None
        self._braces = None
        self._attr_lines = None

    def line_of(self, off):
        return bisect.bisect_right(self.line_starts, off)  # 1-based

    def line_code(self, ln):
        return self.code_lines[ln - 1] if 1 <= ln <= len(self.code_lines) else ""

    # Brackets of the masked code: open offset -> close offset (and back).
    def pairs(self):
        if self._pairs is None:
            match, stack = {}, []
            closer = {")": "(", "]": "[", "}": "{"}
            for i, ch in enumerate(self.code):
                if ch in "([{":
                    stack.append((ch, i))
                elif ch in ")]}":
                    # unbalanced input (should not compile): unwind to a match
                    while stack and stack[-1][0] != closer[ch]:
                        stack.pop()
                    if stack:
                        _, o = stack.pop()
                        match[o] = i
                        match[i] = o
            self._pairs = match
        return self._pairs

    def braces(self):
        """List of (open, close) offsets of `{ }` pairs, by open offset."""
        if self._braces is None:
            p = self.pairs()
            self._braces = sorted((o, c) for o, c in p.items() if o < c and self.code[o] == "{")
        return self._braces

    def enclosing_brace(self, off):
        best = None
        for o, c in self.braces():
            if o >= off:
                break
            if c > off:
                best = (o, c)
        return best

    def attribute_lines(self):
        """Lines whose code is only (part of) `#[..]` / `#![..]` attributes."""
        if self._attr_lines is None:
            inside = bytearray(len(self.code))
            p = self.pairs()
            for m in re.finditer(r"#\s*!?\s*\[", self.code):
                o = m.end() - 1
                c = p.get(o)
                if c is not None and c > o:
                    for i in range(m.start(), c + 1):
                        inside[i] = 1
            lines = set()
            for ln in range(1, len(self.code_lines) + 1):
                start = self.line_starts[ln - 1]
                s = self.code_lines[ln - 1]
                chars = [start + i for i, ch in enumerate(s) if not ch.isspace()]
                if chars and all(inside[i] for i in chars):
                    lines.add(ln)
            self._attr_lines = lines
        return self._attr_lines


def _comment_text(raw):
    """Strip comment markers: `// x`, `/// x`, `//! x`, `/* x */`, ` * x`."""
    t = raw.strip()
    for pre in ("///", "//!", "//", "/**", "/*!", "/*"):
        if t.startswith(pre):
            t = t[len(pre):]
            break
    if t.endswith("*/"):
        t = t[:-2]
    t = t.strip()
    if t.startswith("*") and not t.startswith("*/"):
        t = t[1:].strip()
    return t


def mask(text):
    """Return (code, comments) for Rust source `text` (see Source)."""
    out = list(text)
    comments = defaultdict(list)
    n = len(text)
    line = 1
    i = 0

    def blank(a, b):
        for k in range(a, b):
            if out[k] != "\n":
                out[k] = " "

    while i < n:
        ch = text[i]
        if ch == "\n":
            line += 1
            i += 1
            continue
        nxt = text[i + 1] if i + 1 < n else ""
        # line comment (also /// and //!)
        if ch == "/" and nxt == "/":
            j = text.find("\n", i)
            j = n if j < 0 else j
            comments[line].append(_comment_text(text[i:j]))
            blank(i, j)
            i = j
            continue
        # block comment, nested
        if ch == "/" and nxt == "*":
            depth, j = 1, i + 2
            while j < n and depth:
                if text.startswith("/*", j):
                    depth += 1
                    j += 2
                elif text.startswith("*/", j):
                    depth -= 1
                    j += 2
                else:
                    j += 1
            for k, piece in enumerate(text[i:j].split("\n")):
                t = _comment_text(piece)
                if t:
                    comments[line + k].append(t)
            line += text.count("\n", i, j)
            blank(i, j)
            i = j
            continue
        prev = text[i - 1] if i else ""
        # raw strings r"..", r#".."#, br#".."#, cr".."
        if ch == "r" and (prev not in IDENT_CH or (prev in "bc" and (i < 2 or text[i - 2] not in IDENT_CH))):
            j = i + 1
            while j < n and text[j] == "#":
                j += 1
            if j < n and text[j] == '"':
                hashes = j - i - 1
                end = text.find('"' + "#" * hashes, j + 1)
                end = n if end < 0 else end + 1 + hashes
                line += text.count("\n", i, end)
                blank(i + 1, end)
                out[j] = '"'
                out[end - 1] = '"'
                i = end
                continue
        # strings (b".." and c".." keep their prefix as an identifier char)
        if ch == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            end = min(j + 1, n)
            line += text.count("\n", i, end)
            blank(i + 1, end - 1)
            i = end
            continue
        # char literals vs lifetimes / labels
        if ch == "'":
            if nxt == "\\":
                j = i + 3  # skip the escaped character
                while j < n and text[j] != "'" and text[j] != "\n":
                    j += 1
                if j < n and text[j] == "'":
                    blank(i + 1, j)
                    i = j + 1
                    continue
            elif i + 2 < n and text[i + 2] == "'" and nxt != "\n":
                blank(i + 1, i + 2)
                i += 3
                continue
            i += 1  # a lifetime or a label: leave as code
            continue
        i += 1
    return "".join(out), comments


# ---------------------------------------------------------------------------
# Paths: `crate::a::{b, c::d}` and `super::super::x` trees in masked code.
# ---------------------------------------------------------------------------

_TOK = re.compile(r"\s*(::|" + IDENT + r"|\S)")


def _next(code, pos):
    m = _TOK.match(code, pos)
    if not m:
        return None, pos
    return m.group(1), m.end()


def parse_tree(code, pos, prefix):
    """Parse a path / use tree starting at `pos` (just after the leading
    segments `prefix`, expecting `::`).  Returns [(segments, rename)], with a
    trailing `self` dropped and `*` kept as a segment."""
    results = []
    segs = list(prefix)
    while True:
        tok, p = _next(code, pos)
        if tok != "::":
            break
        tok, p2 = _next(code, p)
        if tok == "{":
            pos = p2
            while True:
                tok, p3 = _next(code, pos)
                if tok == "}" or tok is None:
                    pos = p3
                    break
                if tok == ",":
                    pos = p3
                    continue
                if tok == "*":
                    results.append((segs + ["*"], None))
                    pos = p3
                    continue
                if tok == "{" or not re.match(IDENT, tok):
                    pos = p3  # unexpected; skip it
                    continue
                sub, pos = parse_tree(code, p3, segs + [tok])
                results.extend(sub)
            return results, pos
        if tok == "*":
            results.append((segs + ["*"], None))
            return results, p2
        if tok is None or not re.fullmatch(IDENT, tok):
            break  # turbofish `::<`, etc.
        segs.append(tok)
        pos = p2
    rename = None
    tok, p = _next(code, pos)
    if tok == "as":
        tok2, p2 = _next(code, p)
        if tok2 and re.fullmatch(IDENT, tok2):
            rename, pos = tok2, p2
    if segs and segs[-1] == "self":
        segs = segs[:-1]
    results.append((segs, rename))
    return results, pos


# ---------------------------------------------------------------------------
# The tree: files, units, May-import lines.
# ---------------------------------------------------------------------------

MAY_RE = re.compile(r"^\s*//!\s*May import:\s*(.*)$")


class Unit:
    def __init__(self, name, doc_rel, doc_src):
        self.name = name
        self.doc_rel = doc_rel  # e.g. src/engine/mod.rs, or None if missing
        self.doc_src = doc_src
        self.may = None  # list of names, None when there is no line
        self.may_line = 1
        self.job = ""
        self.files = []


def module_path(rel_in_src):
    """src-relative file path -> module segments (lib.rs -> [])."""
    parts = rel_in_src[:-3].split("/")
    if parts[-1] == "mod" or (len(parts) == 1 and parts[0] in ("lib", "main")):
        parts = parts[:-1]
    return parts


class Tree:
    def __init__(self, src_dir):
        self.src_dir = os.path.abspath(src_dir)
        self.root = os.path.dirname(self.src_dir)
        self.sources = []  # Source
        self.modpath = {}  # rel -> segments
        for dirpath, dirnames, filenames in os.walk(self.src_dir):
            dirnames.sort()
            for fn in sorted(filenames):
                if fn.endswith(".rs"):
                    path = os.path.join(dirpath, fn)
                    rel = os.path.relpath(path, self.root).replace(os.sep, "/")
                    with open(path, encoding="utf-8", errors="replace") as f:
                        src = Source(path, rel, f.read())
                    self.sources.append(src)
                    self.modpath[rel] = module_path(os.path.relpath(path, self.src_dir).replace(os.sep, "/"))
        self.by_rel = {s.rel: s for s in self.sources}
        self.src_rel = os.path.relpath(self.src_dir, self.root).replace(os.sep, "/")
        self.units = {}
        self._find_units()
        for s in self.sources:
            u = self.unit_of_file(s.rel)
            if u in self.units:
                self.units[u].files.append(s)

    def _doc_file(self, parts):
        base = "/".join([self.src_rel] + parts)
        for cand in (base + "/mod.rs", base + ".rs"):
            if cand in self.by_rel:
                return cand
        return None

    def _find_units(self):
        tops = set()
        for s in self.sources:
            mp = self.modpath[s.rel]
            if mp:
                tops.add(mp[0])
        for top in sorted(tops):
            doc = self._doc_file([top])
            u = Unit(top, doc, self.by_rel.get(doc))
            read_doc(u)
            self.units[top] = u
        # folders one level down that declare their own May-import line
        for s in self.sources:
            mp = self.modpath[s.rel]
            if len(mp) == 2 and os.path.isdir(os.path.join(self.src_dir, mp[0], mp[1])):
                doc = self._doc_file(mp)
                if doc == s.rel:
                    u = Unit(mp[0] + "::" + mp[1], doc, s)
                    read_doc(u)
                    if u.may is not None:
                        self.units[u.name] = u

    def unit_of_segments(self, segs):
        """Absolute module segments -> unit name, or None for root items."""
        if not segs or segs[0] not in self.units:
            return None
        if len(segs) >= 2 and segs[0] + "::" + segs[1] in self.units:
            return segs[0] + "::" + segs[1]
        return segs[0]

    def unit_of_file(self, rel):
        mp = self.modpath[rel]
        return self.unit_of_segments(mp) or "(root)"


def read_doc(u):
    """Fill u.may, u.may_line, u.job (the first paragraph) from the opening `//!` lines."""
    if u.doc_src is None:
        return
    lines = u.doc_src.text.split("\n")
    job_open = True  # the job is the first paragraph of the docs
    for i, line in enumerate(lines):
        t = line.strip()
        if not t:
            continue
        if t.startswith("//!"):
            body = t[3:].strip()
            m = MAY_RE.match(line)
            if job_open and body and not m:
                u.job = (u.job + " " + body) if u.job else body
            elif u.job:
                job_open = False
            if m and u.may is None:
                u.may = parse_may(m.group(1))
                u.may_line = i + 1
            continue
        if t.startswith("//") or t.startswith("#!"):
            continue
        break


def parse_may(text):
    text = text.split(".")[0].strip()
    if text.strip("` ").lower() == "nothing":
        return []
    names = []
    for part in re.split(r",|\band\b", text):
        p = part.strip().strip("`").strip()
        if p.startswith("crate::"):
            p = p[len("crate::"):]
        if p:
            names.append(p)
    return names


# ---------------------------------------------------------------------------
# The checks.
# ---------------------------------------------------------------------------

class Result:
    def __init__(self):
        self.violations = []  # (rel, line, rule, detail)
        self.refs = []  # (rel, line, from_unit, to_unit, ok)
        self.unsafe = []  # (rel, line, kind, ok)
        self.host = []  # (rel, line, text)
        self.fns = []  # (rel, line, name, span)
        self.blocking = []  # (rel, line, call, mark, root path)
        self.graph = None  # filegraph.FileGraph
        self.file_cycles = False  # the rule file-cycle applied

    def add(self, rel, line, rule, detail):
        self.violations.append((rel, line, rule, detail))


def check_folders(tree, res):
    for name, u in sorted(tree.units.items()):
        if u.doc_src is None:
            res.add(tree.src_rel + "/" + name, 1, "folder-doc", "folder has no mod.rs to declare its layer in")
            continue
        first = next((ln for ln in u.doc_src.text.split("\n") if ln.strip()), "")
        if not first.strip().startswith("//!"):
            res.add(u.doc_rel, 1, "folder-doc", "mod.rs must open with `//!` doc comments saying the folder's job")
        if u.may is None:
            res.add(u.doc_rel, 1, "folder-doc",
                    "no `//! May import: a, b.` line (or `//! May import: nothing.`) in the opening docs")
            continue
        for m in u.may:
            if m not in tree.units:
                res.add(u.doc_rel, u.may_line, "folder-doc", "May import names `%s`, which is no folder of %s/"
                        % (m, tree.src_rel))


def declared_graph(tree):
    return {n: [m for m in (u.may or []) if m in tree.units and m != n] for n, u in tree.units.items()}


def check_cycles(tree, res):
    g = declared_graph(tree)
    for comp in filegraph.components(set(g), g):
        if len(comp) < 2:
            continue
        start = min(comp)
        cyc = " -> ".join(filegraph.cycle_through(start, set(comp), g))
        u = tree.units[start]
        res.add(u.doc_rel, u.may_line, "layer-cycle", "declared May-import lines form a cycle: %s" % cyc)


def inline_mods(src):
    """[(open, close, name)] of `mod name { .. }` in the file."""
    p = src.pairs()
    out = []
    for m in re.finditer(r"\bmod\s+(" + IDENT + r")\s*\{", src.code):
        o = m.end() - 1
        if o in p:
            out.append((o, p[o], m.group(1)))
    return out


def paths_in(tree, src):
    """Every crate path in the file: [(offset, absolute segments, rename, leading)]
    with `super` resolved; `leading` is 'crate' or 'super'."""
    code = src.code
    base = tree.modpath[src.rel]
    mods = inline_mods(src)
    found = []
    for m in re.finditer(r"\$?\b(crate|super)\s*::", code):
        start = m.start()
        if _before(code, start).endswith("::"):
            continue  # not leading: `self::super::`, `a::crate` (not Rust)
        word = m.group(1)
        after_kw = m.start(1) + len(word)
        items, _ = parse_tree(code, after_kw, [word])
        for segs, rename in items:
            if word == "crate":
                absolute = segs[1:]
            else:
                here = list(base) + [nm for (o, c, nm) in mods if o < start < c]
                k = 0
                while k < len(segs) and segs[k] == "super":
                    k += 1
                if k > len(here):
                    continue
                absolute = here[:len(here) - k] + segs[k:]
            found.append((start, absolute, rename, word))
    return found


LEXER = filegraph.Lexer(paths_in=paths_in, parse_tree=parse_tree, inline_mods=inline_mods,
                        before=lambda code, off: _before(code, off))


def check_imports(tree, res):
    for src in tree.sources:
        frm = tree.unit_of_file(src.rel)
        if frm == "(root)":
            continue
        may = tree.units[frm].may or []
        for off, absolute, _rename, _lead in paths_in(tree, src):
            to = tree.unit_of_segments(absolute)
            if to is None or to == frm:
                continue
            ok = to in may
            line = src.line_of(off)
            res.refs.append((src.rel, line, frm, to, ok))
            if not ok:
                listed = ", ".join(may) if may else "nothing"
                res.add(src.rel, line, "import-up", "`%s` reaches `crate::%s` (%s may import: %s)"
                        % (frm, to, frm, listed))


def _statement_start(src, off):
    """Offset of the first code of the statement, match arm or field holding
    `off`: after the last `;` `,` or closed `{..}` at the level of the
    innermost enclosing brace."""
    code = src.code
    enc = src.enclosing_brace(off)
    i = enc[0] + 1 if enc else 0
    boundary = i
    p = src.pairs()
    while i < off:
        ch = code[i]
        if ch in "([{":
            c = p.get(i)
            if c is None or c > off:
                break  # a ( or [ around off: the statement started before it

            if ch == "{":
                rest = code[c + 1:c + 40].lstrip()
                if not re.match(r"(else\b|[.?)\];,=+\-*/<>|&^%!]|as\b)", rest):
                    boundary = c + 1
            i = c + 1
            continue
        if ch in ";,":
            boundary = i + 1
        i += 1
    while boundary < off and code[boundary].isspace():
        boundary += 1
    return boundary


def _safety_in(texts):
    """texts: comment texts top to bottom. -> (found, reason_ok, reason)."""
    for k, t in enumerate(texts):
        if t.startswith("SAFETY:"):
            reason = " ".join([t[len("SAFETY:"):]] + texts[k + 1:])
            reason = " ".join(reason.split())
            return True, len(reason) >= MIN_SAFETY_REASON, reason
    return False, False, ""


def _comments_above(src, ln):
    """Comment texts of the contiguous comment / attribute lines above ln."""
    attrs = src.attribute_lines()
    texts = []
    k = ln - 1
    while k >= 1:
        has_code = src.line_code(k).strip() != ""
        if not has_code and src.comments.get(k):
            texts = list(src.comments[k]) + texts
        elif k in attrs:
            texts = list(src.comments.get(k, [])) + texts
        else:
            break
        k -= 1
    return texts


def check_unsafe(tree, res):
    for src in tree.sources:
        code = src.code
        for m in re.finditer(r"(?<![A-Za-z0-9_#])unsafe\b", code):
            rest = code[m.end():m.end() + 20].lstrip()
            if rest.startswith("{"):
                kind = "unsafe block"
            elif re.match(r"impl\b", rest):
                kind = "unsafe impl"
            else:
                continue  # unsafe fn / extern / trait / attribute
            ln = src.line_of(m.start())
            lines = [ln]
            st = src.line_of(_statement_start(src, m.start()))
            if st != ln:
                lines.append(st)
            best = (False, False, "")
            for cand in lines:
                for texts in (list(src.comments.get(cand, [])), _comments_above(src, cand)):
                    r = _safety_in(texts)
                    if r[1]:
                        best = r
                        break
                    if r[0] and not best[0]:
                        best = r
                if best[1]:
                    break
            ok = best[1]
            res.unsafe.append((src.rel, ln, kind, ok))
            if not ok:
                if best[0]:
                    detail = "%s: SAFETY reason too short (%d characters, need %d): %r" % (
                        kind, len(best[2]), MIN_SAFETY_REASON, best[2])
                else:
                    detail = "%s without a `// SAFETY: <reason>` comment on its line or right above" % kind
                res.add(src.rel, ln, "unsafe-without-safety", detail)


def _extern_blocks(src):
    p = src.pairs()
    out = []
    for m in re.finditer(r"\bextern\s*(?:\"\s*\"\s*)?\{", src.code):
        o = m.end() - 1
        if o in p:
            out.append((o, p[o]))
    return out


def own_mpi_fns(tree):
    """Names MPI_* that MPIFT defines itself as fn items (not in extern blocks)."""
    names = set()
    for src in tree.sources:
        ext = _extern_blocks(src)
        for m in re.finditer(r"\bfn\s+(MPI_[A-Za-z0-9_]*)", src.code):
            if not any(o < m.start() < c for o, c in ext):
                names.add(m.group(1))
    return names


def transport_reexports(tree):
    """Absolute paths under which transport re-exports the host bindings."""
    out = []
    for src in tree.sources:
        if tree.unit_of_file(src.rel).split("::")[0] != TRANSPORT:
            continue
        for m in re.finditer(r"\bpub(?:\s*\([^)]*\))?\s+use\s+(?:::)?" + HOST_CRATE + r"(?:\s+as\s+(" + IDENT + r"))?\s*;",
                             src.code):
            out.append(tree.modpath[src.rel] + [m.group(1) or HOST_CRATE])
    return out


_PATH_RE = re.compile(IDENT + r"(?:\s*::\s*(?:" + IDENT + r"|\*|\{[^}]*\}))*")


def _path_at(code, off):
    """(end, text) of the path starting at off: `a::b::C`, `a::*`, `a::{b, c}`."""
    m = _PATH_RE.match(code, off)
    if not m:
        return off + 1, code[off:off + 1]
    return m.end(), " ".join(m.group(0).split())


def _before(code, off, k=60):
    return code[max(0, off - k):off].rstrip()


def check_host_mpi(tree, res):
    own = own_mpi_fns(tree)
    reexports = transport_reexports(tree)
    for src in tree.sources:
        if tree.unit_of_file(src.rel).split("::")[0] == TRANSPORT:
            continue
        code = src.code
        hits = {}  # offset -> (end, text)

        def hit(off, text=None):
            end, t = _path_at(code, off)
            if off not in hits:
                hits[off] = (end, text or t)

        aliases = set()
        for m in re.finditer(r"\buse\s+(?:::)?" + HOST_CRATE + r"\s+as\s+(" + IDENT + r")", code):
            aliases.add(m.group(1))
        for off, absolute, rename, _lead in paths_in(tree, src):
            for rx in reexports:
                if absolute == rx:
                    aliases.add(rename or rx[-1])  # `use crate::transport::mpi;`: its uses count
                elif absolute[:len(rx)] == rx:
                    hit(off)
        for rx in reexports:  # `transport::mpi::X` through an imported `transport`
            if len(rx) >= 2:
                for m in re.finditer(r"(?<![A-Za-z0-9_:])" + rx[-2] + r"\s*::\s*" + rx[-1] + r"\s*::", code):
                    hit(m.start())
        # the crate itself: `mpi_sys::X`, `use mpi_sys::*`, `use mpi_sys as X`
        for m in re.finditer(r"(?<![A-Za-z0-9_])" + HOST_CRATE + r"\b", code):
            hit(m.start())
        # `mpi::MPI_*` always; any `X::` for a known alias of the bindings
        for m in re.finditer(r"(?<![A-Za-z0-9_])mpi\s*::\s*MPI_", code):
            hit(m.start())
        for a in aliases:
            for m in re.finditer(r"(?<![A-Za-z0-9_])" + re.escape(a) + r"\s*::", code):
                hit(m.start())
        # declarations of host functions in extern blocks
        ext = _extern_blocks(src)
        for m in re.finditer(r"\bfn\s+(MPI_[A-Za-z0-9_]*)", code):
            if any(o < m.start() < c for o, c in ext):
                hit(m.start(1), "extern fn " + m.group(1))
        # bare calls MPI_Xxx( to a function MPIFT does not define
        for m in re.finditer(r"\bMPI_[A-Za-z0-9_]+(?=\s*\()", code):
            before = _before(code, m.start())
            if before.endswith("::") or re.search(r"\bfn$", before):
                continue
            if m.group(0) in own:
                continue
            hit(m.start(), m.group(0) + "(")
        # one report per place: a hit inside an earlier hit's path is the same place
        last_end = -1
        for off in sorted(hits):
            end, text = hits[off]
            if off < last_end:
                continue
            last_end = end
            ln = src.line_of(off)
            res.host.append((src.rel, ln, text))
            res.add(src.rel, ln, "host-mpi-outside-transport",
                    "`%s`: the host MPI bindings are for src/%s/ only" % (text, TRANSPORT))


def functions(src):
    """[(name, fn_line, span_lines)] for each fn item with a body."""
    out = []
    for name, start, _body, end in blocking.fn_items(src):
        l0, l1 = src.line_of(start), src.line_of(end)
        out.append((name, l0, l1 - l0 + 1))
    return out


def check_sizes(tree, res):
    for src in tree.sources:
        if src.nlines > MAX_FILE_LINES:
            res.add(src.rel, 1, "file-too-long", "%d lines (max %d)" % (src.nlines, MAX_FILE_LINES))
        for name, ln, span in functions(src):
            res.fns.append((src.rel, ln, name, span))
            if span > MAX_FN_LINES:
                res.add(src.rel, ln, "fn-too-long", "fn %s spans %d lines (max %d)" % (name, span, MAX_FN_LINES))


def check(src_dir, file_cycles=True):
    tree = Tree(src_dir)
    res = Result()
    res.graph = filegraph.build(tree, LEXER)
    res.file_cycles = file_cycles
    if file_cycles:
        filegraph.check_file_cycles(res.graph, res)
    check_folders(tree, res)
    check_cycles(tree, res)
    check_imports(tree, res)
    check_unsafe(tree, res)
    check_host_mpi(tree, res)
    check_sizes(tree, res)
    blocking.check_blocking(tree, res, _comments_above, _statement_start, TRANSPORT)
    res.violations.sort(key=lambda v: (v[0], v[1], RULES.index(v[2]), v[3]))
    return tree, res


# ---------------------------------------------------------------------------
# --summary
# ---------------------------------------------------------------------------

def summary(tree, res):
    out = []
    counts = defaultdict(int)
    for v in res.violations:
        counts[v[2]] += 1
    out.append("Violations per rule")
    for r in RULES:
        if r == "file-cycle" and not res.file_cycles:
            out.append("  %-28s %5s" % (r, "off"))  # --no-file-cycles turned it off
        else:
            out.append("  %-28s %5d" % (r, counts[r]))
    out.append("  %-28s %5d" % ("total", len(res.violations)))
    out.append("")

    names = ["(root)"] + sorted(tree.units)
    per = {n: defaultdict(int) for n in names}
    longest_fn = {}
    longest_file = {}
    for s in tree.sources:
        u = tree.unit_of_file(s.rel)
        per[u]["files"] += 1
        per[u]["lines"] += s.nlines
        if s.nlines > longest_file.get(u, ("", 0))[1]:
            longest_file[u] = (s.rel, s.nlines)
    for rel, ln, frm, to, ok in res.refs:
        if not ok:
            per[frm]["up"] += 1
    for rel, ln, kind, ok in res.unsafe:
        u = tree.unit_of_file(rel)
        per[u]["unsafe"] += 1
        if not ok:
            per[u]["nosafety"] += 1
    for rel, ln, text in res.host:
        per[tree.unit_of_file(rel)]["host"] += 1
    for rel, ln, name, span in res.fns:
        u = tree.unit_of_file(rel)
        if span > longest_fn.get(u, ("", "", 0))[2]:
            longest_fn[u] = (name, rel, span)

    out.append("Per folder (unit; `(root)` is src/lib.rs)")
    hdr = "  %-18s %5s %6s %6s %6s %8s %7s  %-44s %s" % (
        "unit", "files", "lines", "imp-up", "unsafe", "noSAFETY", "hostMPI", "longest fn (lines)", "longest file (lines)")
    out.append(hdr)
    tot = defaultdict(int)
    for n in names:
        d = per[n]
        for k in ("files", "lines", "up", "unsafe", "nosafety", "host"):
            tot[k] += d[k]
        fnn = longest_fn.get(n)
        fl = longest_file.get(n)
        host = "-" if n.split("::")[0] == TRANSPORT else str(d["host"])
        out.append("  %-18s %5d %6d %6d %6d %8d %7s  %-44s %s" % (
            n, d["files"], d["lines"], d["up"], d["unsafe"], d["nosafety"], host,
            ("%s %s (%d)" % (fnn[0], fnn[1], fnn[2])) if fnn else "-",
            ("%s (%d)" % fl) if fl else "-"))
    out.append("  %-18s %5d %6d %6d %6d %8d %7d" % (
        "total (%d units)" % len(tree.units), tot["files"], tot["lines"], tot["up"], tot["unsafe"],
        tot["nosafety"], tot["host"]))
    out.append("")
    if res.fns:
        f = max(res.fns, key=lambda x: x[3])
        out.append("Longest function: %s in %s:%d, %d lines (max %d)" % (f[2], f[0], f[1], f[3], MAX_FN_LINES))
    if tree.sources:
        s = max(tree.sources, key=lambda x: x.nlines)
        out.append("Longest file: %s, %d lines (max %d)" % (s.rel, s.nlines, MAX_FILE_LINES))
    over_fn = sum(1 for f in res.fns if f[3] > MAX_FN_LINES)
    over_file = sum(1 for s in tree.sources if s.nlines > MAX_FILE_LINES)
    out.append("Functions over %d lines: %d of %d; files over %d lines: %d of %d" % (
        MAX_FN_LINES, over_fn, len(res.fns), MAX_FILE_LINES, over_file, len(tree.sources)))
    out.append("Declared May-import lines:")
    for n in sorted(tree.units):
        u = tree.units[n]
        out.append("  %-18s %s" % (n, "(none)" if u.may is None else (", ".join(u.may) or "nothing")))
    out.append("")
    out.extend(filegraph.table(tree, res, res.graph))
    return "\n".join(out) + "\n"


# ---------------------------------------------------------------------------

def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    default_src = os.path.normpath(os.path.join(here, "..", "..", "src"))
    ap = argparse.ArgumentParser(description="MPIFT house rules on src/ (issue 34).")
    ap.add_argument("--src", default=default_src, help="the src/ directory (default: the repository's)")
    ap.add_argument("--file-cycles", action="store_true",
                    help="apply the rule file-cycle (the default; kept for old scripts)")
    ap.add_argument("--no-file-cycles", action="store_true",
                    help="leave out the rule file-cycle (circles of files inside one folder)")
    ap.add_argument("--summary", action="store_true", help="print counts per rule and per folder; exit 0")
    ap.add_argument("--svg", metavar="FILE", help="write a picture of the layers to FILE")
    ap.add_argument("--inside", metavar="FOLDER", help="with --svg: draw the rooms of FOLDER (e.g. engine)")
    ap.add_argument("--blocking", action="store_true",
                    help="list the blocking host calls a dead rank, fill-in, catch-up or MPI_Finalize reaches; exit 0")
    args = ap.parse_args(argv)
    if not os.path.isdir(args.src):
        print("check.py: no directory %s" % args.src, file=sys.stderr)
        return 2
    tree, res = check(args.src, file_cycles=not args.no_file_cycles)
    if args.svg:
        with open(args.svg, "w", encoding="utf-8") as f:
            f.write(picture.svg(picture.view(tree, res, inside=args.inside)))
    if args.summary:
        sys.stdout.write(summary(tree, res))
        return 0
    if args.blocking:
        sys.stdout.write(blocking.listing(res))
        return 0
    for rel, line, rule, detail in res.violations:
        print("%s:%d: %s: %s" % (rel, line, rule, detail))
    return 1 if res.violations else 0


if __name__ == "__main__":
    sys.exit(main())
