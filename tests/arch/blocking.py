"""Blocking host calls a dead rank can reach (issue 53), for tests/arch/check.py.

A dead rank joins the host's blocking collectives one communicator at a time, in
turns (engine::dead::turns): every dead rank inside a blocking join is inside the same
communicator, so two dead ranks never wait for each other in two places. The rule
holds only if every host call that can block and that a dead rank, a fill-in, a
catch-up or `MPI_Finalize` reaches says why it cannot break it. So every such
call site carries one of these comments, on its line or in the comment lines
right above it (or above the first line of its statement):

    // Blocking: in a turn: <why this call is inside a turn>
    // Blocking: kept in flight: <what completes it>
    // Blocking: never blocks for ever: <the argument>

with 15 or more characters of reason. The rule `blocking-call-unmarked` names
each site without one.

What counts as a blocking host call (BLOCKING and COLL_BLOCKING below): the
transport functions that may wait for another process: the waits, the blocking
collectives (`transport::generated::MPI_Bcast` and the like) and communicator
constructors, blocking point-to-point, the window's creation,
freeing and blocking RMA (`Window::get`, `Window::fetch_add`), `MPI_Finalize`.
`MPI_Comm_free` is not one (MPICH and Open MPI free locally).

Reachability is by name, and errs on the side of reaching too much: the call
graph joins every `f(..)`, `x::f(..)` and `.f(..)` in a function body to every
function of that name the path allows (a method call to every method of that
name, a qualified call to the functions of that module or type). Functions
passed as values are followed where their name is written (`with(f)`). The
roots are the dead rank's start (`zombie::kill_me`), the fill-in
(`fillin::poll`, `fillin::settle_owed`), the catch-up on revoked communicators
(`revoke::catch_up_owed`, `revoke::catch_up_owed_ready`) and `MPI_Finalize`
(`calls::lifecycle::finalize`).
"""

import re

MARK_RE = re.compile(r"^Blocking:\s*(in a turn|kept in flight|never blocks for ever)\s*:?\s*(.*)$")
MIN_REASON = 15

IDENT = r"[A-Za-z_][A-Za-z0-9_]*"

# Roots: (module stem, function name).
ROOTS = [
    ("zombie", "kill_me"),
    ("fillin", "poll"),
    ("fillin", "settle_owed"),
    ("revoke", "catch_up_owed"),
    ("revoke", "catch_up_owed_ready"),
    ("lifecycle", "finalize"),
]

# Blocking transport functions, by transport module.
BLOCKING = {
    "request": {"wait", "waitany", "waitsome", "waitall"},
    "comm": {"split", "dup", "intercomm_create", "create_group", "join", "disconnect", "intercomm_merge",
             "split_type", "create", "cart_create", "cart_sub", "graph_create", "dist_graph_create",
             "dist_graph_create_adjacent", "spawn", "spawn_multiple"},
    "p2p": {"send", "recv", "mrecv", "sendrecv", "probe", "mprobe", "ssend"},
    "env": {"finalize"},
}
# Window methods that wait (a blocking flush, or a collective over the world).
WINDOW_BLOCKING = {"get", "fetch_add", "free"}


# The blocking collectives, as `transport::generated::MPI_<Name>` names them
# (snake case below); their I-forms start and do not block.
COLL_BLOCKING = {"barrier", "bcast", "reduce", "allreduce", "gather", "gatherv", "scatter", "scatterv", "allgather",
                 "allgatherv", "alltoall", "alltoallv", "alltoallw", "reduce_scatter", "reduce_scatter_block", "scan",
                 "exscan", "neighbor_allgather", "neighbor_allgatherv", "neighbor_alltoall", "neighbor_alltoallv",
                 "neighbor_alltoallw"}


def _generated_blocking(name):
    """`transport::generated::MPI_Xxx` (the host's own name) blocks: a blocking
    collective, or a host call some module of BLOCKING names (`MPI_Comm_split`
    as comm::split, `MPI_Send` as p2p::send)."""
    if not name.startswith("MPI_"):
        return False
    snake = name[4:].lower()
    if snake in COLL_BLOCKING:
        return True
    comm = BLOCKING["comm"]
    if snake.startswith("comm_") and snake[5:] in comm:
        return True
    return any(snake in names for names in BLOCKING.values())


def _transport_aliases(src):
    """Names a file may use for transport modules without the `transport::`
    prefix: `use crate::transport::{self, request}` makes `request::` one."""
    names = set()
    for m in re.finditer(r"\buse\s+crate\s*::\s*transport\s*::\s*(\{[^;]*\}|" + IDENT + r")\s*;", src.code):
        body = m.group(1)
        for part in re.split(r"[{},\s]+", body):
            if part in BLOCKING or part == "generated":
                names.add(part)
    return names


def blocking_sites(src):
    """[(offset, text)] of blocking host calls in one file (outside transport)."""
    code = src.code
    out = []
    aliases = _transport_aliases(src)
    mods = "|".join(sorted(set(BLOCKING) | {"generated"}))
    rx = re.compile(r"(?<![A-Za-z0-9_:])(transport\s*::\s*)?(" + mods + r")\s*::\s*(?:(" + IDENT + r")\s*::\s*)?("
                    + IDENT + r")\s*\(")
    for m in rx.finditer(code):
        prefixed, mod, sub, name = m.group(1), m.group(2), m.group(3), m.group(4)
        if not prefixed and mod not in aliases:
            continue
        if mod == "generated":
            if sub is not None or not _generated_blocking(name):
                continue
        elif sub is not None or name not in BLOCKING[mod]:
            continue
        out.append((m.start(), re.sub(r"\s+", "", m.group(0))[:-1]))
    for m in re.finditer(r"\b(?:win|w)\s*\.\s*(" + "|".join(sorted(WINDOW_BLOCKING)) + r")\s*\(", code):
        out.append((m.start(), "win." + m.group(1)))
    for m in re.finditer(r"\bWindow\s*::\s*create\s*\(", code):
        out.append((m.start(), "Window::create"))
    return sorted(out)


class Fn:
    def __init__(self, src, name, start, body, end, owner):
        self.src = src
        self.name = name
        self.start = start  # offset of `fn`
        self.body = body  # offset of `{`
        self.end = end  # offset of `}`
        self.owner = owner  # impl type name, or None for a free fn
        self.stem = src.rel.rsplit("/", 1)[-1][:-3]
        if self.stem == "mod":
            self.stem = src.rel.rsplit("/", 2)[-2]

    def key(self):
        return "%s:%d %s" % (self.src.rel, self.src.line_of(self.start), self.name)


def _impl_blocks(src):
    """[(open, close, type name)] of `impl .. Type .. {` blocks."""
    code, p = src.code, src.pairs()
    out = []
    for m in re.finditer(r"\bimpl\b", code):
        i = m.end()
        depth = 0
        while i < len(code) and not (code[i] == "{" and depth == 0):
            if code[i] == "<":
                depth += 1
            elif code[i] == ">":
                depth -= 1
            elif code[i] == ";":
                break
            i += 1
        if i >= len(code) or code[i] != "{" or i not in p:
            continue
        head = code[m.end():i]
        head = re.sub(r"<[^<>]*(<[^<>]*>[^<>]*)*>", " ", head)
        names = re.findall(IDENT, head.split(" for ")[-1]) if " for " in head else re.findall(IDENT, head)
        names = [n for n in names if n not in ("where", "dyn", "mut", "const", "unsafe")]
        out.append((i, p[i], names[0] if names else "?"))
    return out


def fn_items(src):
    """[(name, offset of `fn`, offset of the body's `{`, of its `}`)] for each fn
    item with a body (tests/arch/check.py's function-length rule uses it too)."""
    code, p = src.code, src.pairs()
    out = []
    for m in re.finditer(r"\bfn\s+(?:r#)?(" + IDENT + r")", code):
        i = m.end()
        body = None
        while i < len(code):
            ch = code[i]
            if ch in "([":
                c = p.get(i)
                if c is None:
                    break
                i = c + 1
                continue
            if ch == "{":
                body = i
                break
            if ch in ";})]":
                break
            i += 1
        if body is not None and body in p:
            out.append((m.group(1), m.start(), body, p[body]))
    return out


def functions_of(src):
    impls = _impl_blocks(src)
    out = []
    for name, start, body, end in fn_items(src):
        owner = None
        for o, c, t in impls:
            if o < start < c:
                owner = t
        out.append(Fn(src, name, start, body, end, owner))
    return out


_CALL_RE = re.compile(r"(?:(" + IDENT + r")\s*::\s*)?(?:(\.)\s*)?(" + IDENT + r")\s*(?:::\s*<[^>]*>\s*)?\(")
_VALUE_RE = re.compile(r"[(,]\s*(?:(" + IDENT + r")\s*::\s*)?(" + IDENT + r")\s*[,)]")
_KEYWORDS = {"if", "while", "match", "for", "loop", "return", "Some", "Ok", "Err", "None", "fn", "in", "as", "let"}


class Graph:
    def __init__(self, sources):
        self.fns = []
        for s in sources:
            self.fns.extend(functions_of(s))
        self.by_name = {}
        self._uses = {}
        self._alias = {}
        for f in self.fns:
            self.by_name.setdefault(f.name, []).append(f)

    def _targets(self, f, qual, dot, name):
        cands = self.by_name.get(name, [])
        if not cands:
            return []
        if dot:
            return [g for g in cands if g.owner is not None]
        if qual in ("self", "Self"):
            return [g for g in cands if g.owner == f.owner]
        if qual:
            if qual[0].isupper():
                # one of our types; a foreign one (`Vec::new`) reaches nothing here
                return [g for g in cands if g.owner == qual]
            if qual in ("crate", "super"):
                return [g for g in cands if g.owner is None]
            if qual == "transport" or qual in self._aliases(f.src):
                return []  # the host's side: a blocking site if anything
            # a module of ours, else (std, transport, a local enum) nothing
            return [g for g in cands if g.stem == qual and g.owner is None]
        same = [g for g in cands if g.src is f.src and g.owner is None]
        if same:
            return same
        stems = self._imports(f.src).get(name, ())
        return [g for g in cands if g.owner is None and g.stem in stems]

    def _aliases(self, src):
        got = self._alias.get(src.rel)
        if got is None:
            got = self._alias[src.rel] = _transport_aliases(src)
        return got

    def _imports(self, src):
        """name -> module stems a file's `use` lines bring it from."""
        got = self._uses.get(src.rel)
        if got is None:
            got = {}
            for m in re.finditer(r"\buse\s+([^;]*);", src.code):
                text = m.group(1)
                # `a::b::{c, d::e}`: each leaf with the segment before it
                for seg in re.finditer(r"(" + IDENT + r")\s*::\s*\{([^}]*)\}", text):
                    for n in re.findall(IDENT, seg.group(2)):
                        got.setdefault(n, set()).add(seg.group(1))
                for seg in re.finditer(r"(" + IDENT + r")\s*::\s*(" + IDENT + r")(?!\s*::)", text):
                    got.setdefault(seg.group(2), set()).add(seg.group(1))
            self._uses[src.rel] = got
        return got

    def callees(self, f):
        """[(fn, offset of the call)] that `f`'s body may call."""
        code = f.src.code[f.body:f.end]
        out = []
        for m in _CALL_RE.finditer(code):
            qual, dot, name = m.group(1), m.group(2), m.group(3)
            if name in _KEYWORDS:
                continue
            out.extend((g, f.body + m.start()) for g in self._targets(f, qual, dot, name))
        for m in _VALUE_RE.finditer(code):
            qual, name = m.group(1), m.group(2)
            if name in _KEYWORDS or name not in self.by_name:
                continue
            out.extend((g, f.body + m.start()) for g in self._targets(f, qual, None, name) if g.owner is None)
        return out

    def reach(self, roots, edge_mark):
        """(reached, covered): fn -> the root path (list of fns) it was first
        reached by over calls without a mark; fn -> (mark, path) for those
        reached only below a call that carries one (`edge_mark(src, offset)`:
        the mark of the call at that offset, or None)."""
        seen = {}
        todo = []
        for stem, name in roots:
            for f in self.by_name.get(name, []):
                if f.stem == stem and f not in seen:
                    seen[f] = [f]
                    todo.append(f)
        below = []  # (fn, mark, path) just under a marked call
        while todo:
            f = todo.pop(0)
            for g, off in self.callees(f):
                mark = edge_mark(f.src, off)
                if mark is not None:
                    below.append((g, mark, seen[f] + [g]))
                elif g not in seen:
                    seen[g] = seen[f] + [g]
                    todo.append(g)
        covered = {}
        while below:
            g, mark, path = below.pop(0)
            if g in seen or g in covered:
                continue
            covered[g] = (mark, path)
            below.extend((h, mark, path + [h]) for h, _ in self.callees(g))
        return seen, covered


def innermost(fns, src, off):
    best = None
    for f in fns:
        if f.src is src and f.body < off < f.end and (best is None or f.body > best.body):
            best = f
    return best


def _mark(*groups):
    """(kind, reason) of the first `Blocking:` mark in the comment groups (each
    a list of comment texts), or None. The reason runs on over the following
    lines of its group up to a blank line or another `WORD:` paragraph."""
    for texts in groups:
        for k, t in enumerate(texts):
            m = MARK_RE.match(t)
            if not m:
                continue
            words = [m.group(2)]
            for more in texts[k + 1:]:
                if not more.strip() or re.match(r"^[A-Z][A-Za-z ]*:", more):
                    break
                words.append(more)
            return m.group(1), " ".join(" ".join(words).split())
    return None


def check_blocking(tree, res, comments_above, statement_start, transport="transport"):
    """Adds `blocking-call-unmarked` violations; res.blocking gets every
    reachable site as (rel, line, call, mark or None, root path).

    A mark covers the host call it is written at, every one in the fn it is
    written above, or, written at a call of one of our functions, every host
    call below that call (the argument is made where it holds: `join::join`
    called in a dead rank's turn)."""
    sources = [s for s in tree.sources if tree.unit_of_file(s.rel).split("::")[0] not in (transport, "protocol")]
    g = Graph(sources)

    def at(s, off):
        """The comment groups that may mark the call at `off`."""
        ln = s.line_of(off)
        groups = [list(s.comments.get(ln, [])), comments_above(s, ln)]
        st = s.line_of(statement_start(s, off))
        if st != ln:
            groups.append(comments_above(s, st))
        enc = s.enclosing_brace(off)
        if enc and re.search(r"\bunsafe\s*$", s.code[max(0, enc[0] - 40):enc[0]]):
            # inside `unsafe {`: the mark sits with the SAFETY line above it
            groups.append(comments_above(s, s.line_of(enc[0])))
        return groups

    reached, covered = g.reach(ROOTS, lambda s, off: _mark(*at(s, off)))
    res.blocking = []
    for s in sources:
        for off, text in blocking_sites(s):
            f = innermost(g.fns, s, off)
            if f is None or (f not in reached and f not in covered):
                continue
            ln = s.line_of(off)
            if f in reached:
                # a mark above the enclosing fn covers every site in it
                mark = _mark(*at(s, off), comments_above(s, s.line_of(f.start)))
                path = reached[f]
            else:
                mark, path = covered[f]
            path = " -> ".join(x.stem + "::" + x.name for x in path)
            res.blocking.append((s.rel, ln, text, mark, path))
            if mark is None:
                res.add(s.rel, ln, "blocking-call-unmarked",
                        "`%s` can block and is reached from %s; say `// Blocking: in a turn|kept in flight|"
                        "never blocks for ever: <why>`" % (text, path))
            elif len(mark[1]) < MIN_REASON:
                res.add(s.rel, ln, "blocking-call-unmarked",
                        "`%s`: the `Blocking: %s` mark needs a reason of %d+ characters" % (text, mark[0], MIN_REASON))


def listing(res):
    """The blocking host calls reachable from the roots, each with its mark."""
    out = []
    for rel, ln, text, mark, path in sorted(res.blocking):
        kind = mark[0] if mark else "UNMARKED"
        out.append("%s:%d  %s  [%s]\n    via %s\n    %s" % (rel, ln, text, kind, path, mark[1] if mark else ""))
    return "\n".join(out) + "\n"
