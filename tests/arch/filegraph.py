"""The file-level import graph of src/, for tests/arch/check.py: the rule
`file-cycle` (on unless `--no-file-cycles`) and the file table of `--summary`.

What an arrow is, what runs back up and what a circle is: check.py's
docstring, "The file graph". This module builds the graph from the lexer of
check.py (passed in as `Lexer`, so that check.py stays the one place that
reads Rust) and computes its strongly connected components, floors and
shortest cycles. Everything is sorted by path, so the numbers are the same on
every run over the same tree.
"""

import os
import re
from collections import defaultdict, namedtuple

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"
MAX_NAMES = 8  # names shown per arrow in a file-cycle report

# check.py's lexer: paths_in(tree, src), parse_tree(code, pos, prefix),
# inline_mods(src), before(code, off) (the rstripped text before off).
Lexer = namedtuple("Lexer", "paths_in parse_tree inline_mods before")


class FileGraph:
    """files: the rel paths of src/'s .rs files, sorted; names[(a, b)]: the
    names file a takes from file b (one arrow per pair); succ[a]: the b's."""

    def __init__(self, files):
        self.files = sorted(files)
        self.names = defaultdict(set)
        self.succ = defaultdict(set)

    def add(self, a, b, name):
        if a != b:
            self.names[(a, b)].add(name)
            self.succ[a].add(b)

    def arrows(self):
        return sorted(self.names)


def folder_of(rel):
    return rel.rsplit("/", 1)[0]


def _module_files(tree):
    """Module segments (tuple) -> the rel path of the file that holds it."""
    out = {}
    for s in tree.sources:  # lib.rs before main.rs: the library is the crate
        out.setdefault(tuple(tree.modpath[s.rel]), s.rel)
    return out


def resolve(files, absolute):
    """Absolute segments -> (rel of the file of the longest module prefix,
    the segments after it); (None, ..) when no prefix is a file."""
    for k in range(len(absolute), -1, -1):
        rel = files.get(tuple(absolute[:k]))
        if rel is not None:
            return rel, list(absolute[k:])
    return None, list(absolute)


def _in_use(lex, code, off):
    return re.search(r"(?<![A-Za-z0-9_])use$", lex.before(code, off)) is not None


def _in_use_group(src, lex, off):
    """True when off is inside the `{..}` of a path (`a::{b, c::d}`), where a
    name is not one in scope but a segment of the path before the brace."""
    enc = src.enclosing_brace(off)
    return enc is not None and lex.before(src.code, enc[0]).endswith("::")


def _here(base, mods, off):
    return list(base) + [nm for (o, c, nm) in mods if o < off < c]


def _self_paths(src, lex, base, mods):
    """[(off, absolute, rename, in_use)] of the leading `self::` paths."""
    code = src.code
    out = []
    for m in re.finditer(r"(?<![A-Za-z0-9_$.])self\s*::", code):
        if lex.before(code, m.start()).endswith("::"):
            continue
        items, _ = lex.parse_tree(code, m.start() + 4, ["self"])
        for segs, rename in items:
            if segs[1:2] == ["super"]:
                continue  # `self::super::`: written as `super::`, left to paths_in
            out.append((m.start(), _here(base, mods, m.start()) + segs[1:], rename, _in_use(lex, code, m.start())))
    return out


def _scoped_paths(src, lex, scope):
    """[(off, absolute, rename, in_use, name)] of the paths `x::..` whose first
    segment x is a module name in scope: scope[x] = its absolute segments."""
    code = src.code
    out = []
    if not scope:
        return out
    rx = re.compile(r"(?<![A-Za-z0-9_$:])(" + "|".join(sorted(map(re.escape, scope))) + r")\s*::(?!\s*<)")
    for m in rx.finditer(code):
        if lex.before(code, m.start()).endswith("::") or _in_use_group(src, lex, m.start()):
            continue
        name = m.group(1)
        items, _ = lex.parse_tree(code, m.end(1), [name])
        for segs, rename in items:
            out.append((m.start(), scope[name] + segs[1:], rename, _in_use(lex, code, m.start()), name))
    return out


def _children(tree, files, base):
    """Name -> absolute segments of the file modules right below `base`."""
    out = {}
    for mp in files:
        if len(mp) == len(base) + 1 and list(mp[:-1]) == list(base):
            out[mp[-1]] = list(mp)
    return out


def file_arrows(tree, src, lex, files, graph):
    """Adds the arrows of one file to graph (rules: check.py's docstring)."""
    base = tree.modpath[src.rel]
    mods = lex.inline_mods(src)
    refs = [(off, ab, rn, _in_use(lex, src.code, off)) for off, ab, rn, _lead in lex.paths_in(tree, src)]
    refs += _self_paths(src, lex, base, mods)
    aliases = {}  # name -> absolute segments of a file module a `use` brought in

    def take(absolute, rename, in_use, alias_ok):
        rel, rest = resolve(files, absolute)
        if rel is None or rel == src.rel:
            return
        if rest:
            graph.add(src.rel, rel, rest[0])
        elif in_use and alias_ok and (rename or absolute) and rename != "_":
            aliases[rename or absolute[-1]] = list(absolute)
        else:
            graph.add(src.rel, rel, "mod " + (absolute[-1] if absolute else "crate"))

    for _off, absolute, rename, in_use in refs:
        take(absolute, rename, in_use, True)
    children = _children(tree, files, base)
    scope = dict(children)
    scope.update(aliases)
    used = set()
    for _off, absolute, rename, in_use, name in _scoped_paths(src, lex, scope):
        used.add(name)
        take(absolute, rename, in_use, False)
    for name in sorted(set(aliases) - used - set(children)):
        take(aliases[name], None, False, False)  # a module brought in, never used by path


def build(tree, lex):
    files = _module_files(tree)
    graph = FileGraph(s.rel for s in tree.sources)
    for src in tree.sources:
        file_arrows(tree, src, lex, files, graph)
    return graph


# ---------------------------------------------------------------------------
# Components, floors, cycles.
# ---------------------------------------------------------------------------

def components(nodes, succ):
    """Strongly connected components (Tarjan, iterative), each a sorted list,
    sinks first (reverse topological order of the condensation)."""
    index, low, on, stack, comps = {}, {}, set(), [], []
    counter = 0
    for root in sorted(nodes):
        if root in index:
            continue
        work = [(root, iter(sorted(succ.get(root, ()))))]
        index[root] = low[root] = counter
        counter += 1
        stack.append(root)
        on.add(root)
        while work:
            v, it = work[-1]
            w = next(it, None)
            if w is not None:
                if w not in nodes:
                    continue
                if w not in index:
                    index[w] = low[w] = counter
                    counter += 1
                    stack.append(w)
                    on.add(w)
                    work.append((w, iter(sorted(succ.get(w, ())))))
                elif w in on:
                    low[v] = min(low[v], index[w])
                continue
            work.pop()
            if work:
                low[work[-1][0]] = min(low[work[-1][0]], low[v])
            if low[v] == index[v]:
                comp = []
                while True:
                    w = stack.pop()
                    on.discard(w)
                    comp.append(w)
                    if w == v:
                        break
                comps.append(sorted(comp))
    return comps


def floors(nodes, succ, comps):
    """File -> floor: 1 + the highest floor among what the file's component
    points to outside itself (1 for a file that points to nothing)."""
    comp_of = {v: i for i, c in enumerate(comps) for v in c}
    fl = {}
    for i, comp in enumerate(comps):  # sinks first: every target is done
        below = [fl[comps[comp_of[w]][0]] for v in comp for w in succ.get(v, ()) if w in nodes and comp_of[w] != i]
        f = 1 + max(below or [0])
        for v in comp:
            fl[v] = f
    return fl


def cycle_through(start, members, succ):
    """A shortest cycle through `start` among `members`, as [start, .., start]
    (breadth-first, successors in sorted order); None when there is none."""
    prev, frontier, found = {start: None}, [start], None
    while frontier and found is None:
        nxt = []
        for v in frontier:
            for w in sorted(succ.get(v, ())):
                if w == start:
                    found = v
                    break
                if w in members and w not in prev:
                    prev[w] = v
                    nxt.append(w)
            if found is not None:
                break
        frontier = nxt
    if found is None:
        return None
    path, v = [], found
    while v is not None:
        path.append(v)
        v = prev[v]
    path.reverse()
    return path + [start]


def shortest_cycle(members, succ):
    """A shortest cycle among members, as [a, b, .., a]: [`cycle_through`] each
    member in path order; the first of the shortest wins."""
    best = None
    for s in sorted(members):
        path = cycle_through(s, members, succ)
        if path is not None and (best is None or len(path) < len(best)):
            best = path
    return best


def folder_succ(graph, folder):
    """The arrows whose two ends are files of `folder` (not of its sub-folders)."""
    nodes = {f for f in graph.files if folder_of(f) == folder}
    return nodes, {v: {w for w in graph.succ.get(v, ()) if w in nodes} for v in nodes}


def folder_circles(graph, folder):
    nodes, succ = folder_succ(graph, folder)
    return [c for c in components(nodes, succ) if len(c) >= 2], succ


def folders(graph):
    return sorted({folder_of(f) for f in graph.files})


def _names(graph, a, b):
    ns = sorted(graph.names[(a, b)])
    more = len(ns) - MAX_NAMES
    return ", ".join(ns[:MAX_NAMES]) + (", +%d more" % more if more > 0 else "")


def check_file_cycles(graph, res):
    """Adds one `file-cycle` violation per circle inside a folder."""
    for folder in folders(graph):
        circles, succ = folder_circles(graph, folder)
        for comp in circles:
            cyc = shortest_cycle(set(comp), succ)
            base = [os.path.basename(f) for f in cyc]
            taken = "; ".join("%s -> %s: %s" % (base[i], base[i + 1], _names(graph, cyc[i], cyc[i + 1]))
                              for i in range(len(cyc) - 1))
            detail = "%d files: %s (names taken: %s)" % (len(comp), " -> ".join(base), taken)
            others = [os.path.basename(f) for f in comp if f not in cyc]
            if others:
                detail += "; also in the circle: " + ", ".join(others)
            res.add(cyc[0], 1, "file-cycle", detail)


# ---------------------------------------------------------------------------
# The table of --summary.
# ---------------------------------------------------------------------------

def numbers(graph):
    """(floors, up arrows, whole-graph circles) of the whole file graph."""
    nodes = set(graph.files)
    comps = components(nodes, graph.succ)
    fl = floors(nodes, graph.succ, comps)
    up = {(a, b) for (a, b) in graph.names if fl[b] >= fl[a]}
    return fl, up, [c for c in comps if len(c) >= 2]


def table(tree, res, graph):
    """The lines of the file table of --summary."""
    fl, up, circles = numbers(graph)
    lines_of = {s.rel: s.nlines for s in tree.sources}
    longest_fn = {}
    for rel, _ln, name, span in res.fns:
        d = folder_of(rel)
        if span > longest_fn.get(d, ("", "", 0))[2]:
            longest_fn[d] = (rel, name, span)
    out = ["File graph (arrow: a file takes an item of another file; up: an arrow whose head is not on a",
           "lower floor than its tail, i.e. inside a circle; circles: of 2+ files of the folder, counting",
           "only arrows inside the folder; `in` = files in those circles)"]
    out.append("  %-20s %5s %6s %6s %5s %7s %4s  %-30s %s" % (
        "folder", "files", "lines", "arrows", "up", "circles", "in", "longest file (lines)", "longest fn (lines)"))
    for d in folders(graph):
        fs = [f for f in graph.files if folder_of(f) == d]
        arrows = [(a, b) for (a, b) in graph.names if folder_of(a) == d]
        circ, _succ = folder_circles(graph, d)
        big = min(fs, key=lambda f: (-lines_of[f], f))
        fn = longest_fn.get(d)
        out.append("  %-20s %5d %6d %6d %5d %7d %4d  %-30s %s" % (
            d + "/", len(fs), sum(lines_of[f] for f in fs), len(arrows), sum(1 for a in arrows if a in up),
            len(circ), sum(len(c) for c in circ), "%s (%d)" % (os.path.basename(big), lines_of[big]),
            "%s:%s (%d)" % (os.path.basename(fn[0]), fn[1], fn[2]) if fn else "-"))
    out.append("  %-20s %5d %6d %6d %5d %7d %4d  floors: %d" % (
        "total (src/)", len(graph.files), sum(lines_of.values()), len(graph.names), len(up), len(circles),
        sum(len(c) for c in circles), max(fl.values() or [0])))
    for c in circles:
        out.append("  circle of %d files: %s" % (len(c), _short_list(c)))
    return out


def _short_list(files):
    """Files grouped by folder: `src/engine/{a.rs, b.rs}`."""
    by = defaultdict(list)
    for f in files:
        by[folder_of(f)].append(os.path.basename(f))
    return ", ".join("%s/{%s}" % (d, ", ".join(by[d])) for d in sorted(by))
