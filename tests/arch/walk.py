"""Follows one parameter through src/: the calls that pass it on (issue 55's
walk of `Sim_FT_MPI_Send`'s `comm` argument).

    python3 tests/arch/walk.py calls/p2p_lane.rs:send:comm [--src DIR] [--depth N]

Starting at function FN of FILE (a path under src/), with parameter PARAM, it
reads the function's body and finds every call whose arguments name PARAM (as a
whole token: `comm`, `&comm`, `comm.handle` count, a closure that captures it
does not). Each call it can resolve to a function of src/ is entered with the
callee's parameter at that position, depth first, in the order the calls
appear; a function is entered once. With `--derived`, a value bound from it
(`let c = comm_arg(comm)?;`, `let (a, b) = f(comm);`) is followed too, from
that function on.

A call resolves by its path: `a::b::f(` is `f` in the file of module `b` (the
last module segment; `crate::x::y::f` likewise), `f(` is `f` of the same file,
else the file a `use` line brings `f` from. Method calls (`x.f(`) and calls of
closures are not resolved. Everything is read as text, so a call the walk
misses is possible: it prints what it followed, for a reader to check.

Prints the walk (one line per function entered, indented by depth), then the
files in the order first visited, the number of files, and the returns: entries
into a file already visited before another file was entered.
"""

import argparse
import os
import re
import sys

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
FN_RE = re.compile(r"\bfn\s+(%s)\s*(<[^{;]*?>)?\s*\(" % IDENT)
CALL_RE = re.compile(r"((?:%s::)*)(%s)\s*(?:::<[^>]*>)?\s*\(" % (IDENT, IDENT))
USE_RE = re.compile(r"^\s*(?:pub(?:\([a-z]+\))?\s+)?use\s+([^;]+);", re.M)
KEYWORDS = {"if", "while", "for", "match", "return", "loop", "Some", "Ok", "Err", "None", "fn", "move", "unsafe", "as", "in"}


def strip_comments(code):
    """Blanks out comments and string/char literals, keeping offsets."""
    out = list(code)
    i, n = 0, len(code)
    while i < n:
        c = code[i]
        if code.startswith("//", i):
            j = code.find("\n", i)
            j = n if j < 0 else j
            out[i:j] = " " * (j - i)
            i = j
        elif code.startswith("/*", i):
            j = code.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out[i:j] = [ch if ch == "\n" else " " for ch in code[i:j]]
            i = j
        elif c == '"':
            j = i + 1
            while j < n and code[j] != '"':
                j += 2 if code[j] == "\\" else 1
            out[i + 1:j] = [ch if ch == "\n" else " " for ch in code[i + 1:j]]
            i = j + 1
        elif c == "'" and i + 2 < n and (code[i + 2] == "'" or (code[i + 1] == "\\" and code.find("'", i + 2) < i + 6)):
            j = code.find("'", i + 2 if code[i + 1] == "\\" else i + 1)
            out[i + 1:j] = " " * (j - i - 1)
            i = j + 1
        else:
            i += 1
    return "".join(out)


def matching(code, i, open_ch, close_ch):
    """Offset of the bracket closing the one at code[i]."""
    depth = 0
    for j in range(i, len(code)):
        if code[j] == open_ch:
            depth += 1
        elif code[j] == close_ch:
            depth -= 1
            if depth == 0:
                return j
    return len(code) - 1


def split_args(text):
    """Top-level comma-separated parts of an argument list's inside."""
    parts, depth, start = [], 0, 0
    for j, c in enumerate(text):
        if c in "([{":
            depth += 1
        elif c in ")]}":
            depth -= 1
        elif c == "|" and depth == 0:
            pass
        elif c == "," and depth == 0:
            parts.append(text[start:j])
            start = j + 1
    if text[start:].strip():
        parts.append(text[start:])
    return parts


def param_names(params):
    out = []
    for p in split_args(params):
        m = re.match(r"\s*(?:mut\s+)?(%s)\s*:" % IDENT, p)
        out.append(m.group(1) if m else None)
    return out


class Source:
    def __init__(self, src, rel):
        self.rel = rel
        with open(os.path.join(src, rel), encoding="utf-8") as f:
            self.raw = f.read()
        self.code = strip_comments(self.raw)
        self.fns = {}  # name -> (params, body_start, body_end)
        for m in FN_RE.finditer(self.code):
            p0 = m.end() - 1
            p1 = matching(self.code, p0, "(", ")")
            brace = self.code.find("{", p1)
            semi = self.code.find(";", p1)
            if brace < 0 or (0 <= semi < brace):
                continue
            end = matching(self.code, brace, "{", "}")
            self.fns.setdefault(m.group(1), (param_names(self.code[p0 + 1:p1]), brace, end))
        self.imports = {}  # name -> module segments
        for m in USE_RE.finditer(self.code):
            self._use(m.group(1).replace("\n", " "), [])

    def _use(self, text, prefix):
        text = text.strip()
        brace = text.find("{")
        if brace >= 0 and text.endswith("}"):
            base = [s for s in text[:brace].strip().rstrip(":").split("::") if s]
            for part in split_args(text[brace + 1:-1]):
                self._use(part, prefix + base)
            return
        segs = [s.strip() for s in text.split(" as ")[0].split("::") if s.strip()]
        if segs and segs[-1] != "self":
            self.imports[segs[-1]] = prefix + segs[:-1]


def module_files(src):
    """Module name (file stem, or folder for mod.rs) -> rel paths."""
    out = {}
    for root, _, files in os.walk(src):
        for f in files:
            if f.endswith(".rs"):
                rel = os.path.relpath(os.path.join(root, f), src)
                stem = os.path.basename(os.path.dirname(rel)) if f == "mod.rs" else f[:-3]
                out.setdefault(stem, []).append(rel)
    return out


class Walker:
    def __init__(self, src, depth, derived=False):
        self.src, self.depth, self.derived = src, depth, derived
        self.mods = module_files(src)
        self.cache = {}
        self.seen = set()
        self.lines = []
        self.visits = []  # rel of each function entered, in order

    def source(self, rel):
        if rel not in self.cache:
            self.cache[rel] = Source(self.src, rel)
        return self.cache[rel]

    def resolve(self, here, path, name):
        segs = [s for s in path.split("::") if s]
        if not segs:
            if name in here.fns:
                return here.rel
            segs = here.imports.get(name)
            if not segs:
                return None
        mod = segs[-1]
        if mod == "self":
            return here.rel
        if mod == "super":
            return None
        for rel in self.mods.get(mod, []):
            if name in self.source(rel).fns:
                return rel
        return None

    def walk(self, rel, fn, param, level=0):
        key = (rel, fn)
        s = self.source(rel)
        if fn not in s.fns:
            self.lines.append("%s%s:%s (not found)" % ("  " * level, rel, fn))
            return
        if key in self.seen:
            return
        self.seen.add(key)
        self.visits.append(rel)
        self.lines.append("%s%s:%s(%s)" % ("  " * level, rel, fn, param))
        if level >= self.depth:
            return
        _, b0, b1 = s.fns[fn]
        body = s.code[b0:b1]
        names = [param]
        if self.derived:
            names = self.bound_from(body, param)
        tok = re.compile(r"(?<![\w.])&?(?:mut\s+)?(?:%s)\b(?!\s*[(!])" % "|".join(map(re.escape, names)))
        for m in CALL_RE.finditer(body):
            path, name = m.group(1), m.group(2)
            if name in KEYWORDS or body[m.start() - 1:m.start()] == ".":
                continue
            a0 = m.end() - 1
            args = split_args(body[a0 + 1:matching(body, a0, "(", ")")])
            hits = [i for i, a in enumerate(args) if "|" not in a and tok.search(a)]
            if not hits:
                continue
            target = self.resolve(s, path, name)
            if target is None:
                continue
            params = self.source(target).fns[name][0]
            for i in hits:
                if i < len(params) and params[i]:
                    self.walk(target, name, params[i], level + 1)


LET_RE = re.compile(r"\blet\s+(?:mut\s+)?(\([^=]*?\)|%s)\s*(?::[^=]*)?=([^;]*);" % IDENT)


def _bound_from(body, param):
    """param and the names bound from it (or from a name bound from it) by a
    `let` of the body, in order."""
    names = [param]
    for m in LET_RE.finditer(body):
        if re.search(r"(?<![\w.])(?:%s)\b" % "|".join(map(re.escape, names)), m.group(2)):
            for n in re.findall(IDENT, m.group(1)):
                if n not in names and n not in ("mut", "_"):
                    names.append(n)
    return names


Walker.bound_from = staticmethod(_bound_from)


def report(w):
    out = list(w.lines)
    order, returns, last = [], 0, None
    for rel in w.visits:
        if rel not in order:
            order.append(rel)
        elif rel != last:
            returns += 1
        last = rel
    out.append("")
    out.append("files, in the order first visited: " + ", ".join(order))
    out.append("functions entered: %d; files: %d; returns to a file already visited: %d" % (len(w.visits), len(order), returns))
    return "\n".join(out) + "\n"


def main(argv=None):
    here = os.path.dirname(os.path.abspath(__file__))
    ap = argparse.ArgumentParser(description="Follow one parameter through src/ (issue 55).")
    ap.add_argument("start", help="FILE:FUNCTION:PARAM, FILE relative to src/")
    ap.add_argument("--src", default=os.path.normpath(os.path.join(here, "..", "..", "src")))
    ap.add_argument("--depth", type=int, default=12, help="calls deep at most (default 12)")
    ap.add_argument("--derived", action="store_true", help="also follow values bound from the parameter")
    args = ap.parse_args(argv)
    try:
        rel, fn, param = args.start.split(":")
    except ValueError:
        print("walk.py: START is FILE:FUNCTION:PARAM", file=sys.stderr)
        return 2
    w = Walker(args.src, args.depth, args.derived)
    w.walk(rel, fn, param)
    sys.stdout.write(report(w))
    return 0


if __name__ == "__main__":
    sys.exit(main())
