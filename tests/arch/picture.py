"""The pictures of docs/ARCHITECTURE.md, drawn from the code (tests/arch/check.py --svg).

Two views of the same check results:

  view(tree, res)                  the folders of src/: a room such as engine::base or
                                   protocol::models is drawn as part of its folder;
  view(tree, res, inside="engine") the rooms of src/engine/, named without the prefix.

A node sits one floor above the highest node its `May import:` line names (the
declared graph, as layer-cycle reads it); arrows are the `crate::` references the
check found between two nodes, with their count, red when the importer's line
does not allow them. When every floor holds one node (engine's rooms are a
chain), the nodes stand in one column and the arrows arc to its right (allowed)
or left (up); otherwise floors are rows and arrows go straight or around.

Python 3 standard library only.
"""

import math
from collections import defaultdict


class View:
    """What one picture draws: nodes (job, may, files, lines) and arrows."""

    def __init__(self, title):
        self.title = title
        self.nodes = {}  # name -> {"job", "may" (list or None), "files", "lines"}
        self.edges = defaultdict(lambda: [0, 0])  # (a, b) -> [count, bad]


def view(tree, res, inside=None):
    """The folders of src/ (inside=None) or the rooms of one folder."""
    if inside is None:
        def node(u):
            return u.split("::")[0] if u in tree.units else None
        title = "Layers of %s/" % tree.src_rel
    else:
        pre = inside + "::"

        def node(u):
            return u[len(pre):] if u.startswith(pre) and u in tree.units else None
        title = "Rooms of %s/%s/" % (tree.src_rel, inside.replace("::", "/"))
    v = View(title)
    for name, u in sorted(tree.units.items()):
        n = node(name)
        if n is None or (inside is None and name != n):
            continue
        may = None if u.may is None else sorted({node(m) for m in u.may if node(m) not in (None, n)})
        v.nodes[n] = {"job": u.job, "may": may, "files": 0, "lines": 0}
    for s in tree.sources:
        n = node(tree.unit_of_file(s.rel))
        if n in v.nodes:
            v.nodes[n]["files"] += 1
            v.nodes[n]["lines"] += s.nlines
    for _rel, _ln, frm, to, ok in res.refs:
        a, b = node(frm), node(to)
        if a in v.nodes and b in v.nodes and a != b:
            v.edges[(a, b)][0] += 1
            if not ok:
                v.edges[(a, b)][1] += 1
    return v


def floors(v):
    """node -> floor: 1 + the highest floor among the nodes its May line names."""
    memo, busy = {}, set()

    def fl(n):
        if n in memo:
            return memo[n]
        if n in busy:
            return 0  # a cycle: layer-cycle reports it
        busy.add(n)
        f = 1 + max([fl(m) for m in (v.nodes[n]["may"] or []) if m in v.nodes] or [0])
        busy.discard(n)
        memo[n] = f
        return f

    return {n: fl(n) for n in v.nodes}


def esc(s):
    return s.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;").replace('"', "&quot;")


def wrap(text, width, lines):
    words, out, cur = text.split(), [], ""
    for w in words:
        if len(cur) + len(w) + (1 if cur else 0) <= width:
            cur = (cur + " " + w) if cur else w
        else:
            if cur:
                out.append(cur)
            cur = w
        if len(out) == lines:
            break
    if cur and len(out) < lines:
        out.append(cur)
    joined = " ".join(out)
    if len(joined) < len(" ".join(words)) and out:
        last = out[-1]
        out[-1] = (last[:width - 1] if len(last) >= width else last) + "\u2026"
    return [o[:width] if len(o) > width else o for o in out]


def svg(v):
    fl = floors(v)
    rows = defaultdict(list)
    for n, f in fl.items():
        rows[f].append(n)
    chain = len(rows) > 1 and all(len(r) == 1 for r in rows.values())
    return (Column if chain else Rows)(v, fl, rows).draw()


class Picture:
    """What both layouts share: the frame, the boxes, the labels, the legend."""

    W = 900

    def __init__(self, v, fl, rows):
        self.v, self.fl, self.rows = v, fl, rows
        self.nfl = max(fl.values() or [1])
        self.pos = {}  # node -> (cx, cy, w, h)
        self.labels = []
        self.o = []

    def head(self, H, lines):
        W = self.W
        o = self.o
        o.append('<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d" '
                 'font-family="Helvetica, Arial, sans-serif">' % (W, H, W, H))
        o.append('<defs>')
        for name, col in (("ok", "#777777"), ("bad", "#d62728")):
            o.append('<marker id="arrow-%s" viewBox="0 0 10 10" refX="9" refY="5" markerWidth="10" '
                     'markerHeight="10" markerUnits="userSpaceOnUse" orient="auto-start-reverse">'
                     '<path d="M0,0 L10,5 L0,10 z" fill="%s"/></marker>' % (name, col))
        o.append('</defs>')
        o.append('<rect width="100%" height="100%" fill="white"/>')
        o.append('<text x="20" y="28" font-size="17" font-weight="bold">%s (floors from the '
                 '<tspan font-family="monospace">//! May import:</tspan> lines)</text>' % esc(self.v.title))
        for i, t in enumerate(lines):
            o.append('<text x="20" y="%d" font-size="12" fill="#444">%s</text>' % (46 + 15 * i, esc(t)))

    def band(self, f, y, h):
        self.o.append('<rect x="10" y="%d" width="%d" height="%d" fill="%s" rx="6"/>' % (
            y, self.W - 20, h, "#f6f8fb" if f % 2 else "#eef2f7"))
        self.o.append('<text x="20" y="%d" font-size="12" fill="#667">floor %d</text>' % (y + h / 2 + 4, f))

    def arrow(self, d, bad, cnt, lx, ly):
        col, mk = ("#d62728", "bad") if bad else ("#888888", "ok")
        width = 1.2 + min(2.5, math.log(cnt + 1, 2) * 0.5)
        self.o.append('<path d="%s" fill="none" stroke="%s" stroke-width="%.1f" marker-end="url(#arrow-%s)" '
                      'opacity="0.85"/>' % (d, col, width, mk))
        for _ in range(6):  # keep labels apart
            if all(abs(lx - qx) > 24 or abs(ly - qy) > 16 for qx, qy, _t, _c in self.labels):
                break
            ly += 17
        self.labels.append((lx, ly, str(cnt), col))

    def boxes(self, job_lines):
        o = self.o
        for n in sorted(self.pos):
            cx, cy, bw, bh = self.pos[n]
            d = self.v.nodes[n]
            x, y = cx - bw / 2, cy - bh / 2
            dash = ' stroke-dasharray="5,3"' if d["may"] is None else ""
            o.append('<rect x="%.1f" y="%.1f" width="%.1f" height="%d" rx="7" fill="#ffffff" stroke="#35618f" '
                     'stroke-width="1.6"%s/>' % (x, y, bw, bh, dash))
            o.append('<text x="%.1f" y="%.1f" font-size="14" font-weight="bold" text-anchor="middle">%s</text>'
                     % (cx, y + 18, esc(n)))
            o.append('<text x="%.1f" y="%.1f" font-size="11" fill="#35618f" text-anchor="middle">%d files, '
                     '%d lines</text>' % (cx, y + 33, d["files"], d["lines"]))
            chars = max(10, int(bw / 5.6))
            for i, t in enumerate(wrap(d["job"], chars, job_lines if d["may"] is not None else 1)):
                o.append('<text x="%.1f" y="%.1f" font-size="10" fill="#333" text-anchor="middle">%s</text>'
                         % (cx, y + 48 + 13 * i, esc(t)))
            if d["may"] is None:
                o.append('<text x="%.1f" y="%.1f" font-size="10" fill="#d62728" text-anchor="middle">no '
                         'May-import line</text>' % (cx, y + 61))

    def tail(self, H):
        o = self.o
        for lx, ly, t, col in self.labels:
            w = 7 * len(t) + 6
            o.append('<rect x="%.1f" y="%.1f" width="%d" height="15" rx="3" fill="white" stroke="%s" '
                     'stroke-width="0.8"/>' % (lx - w / 2, ly - 8, w, col))
            o.append('<text x="%.1f" y="%.1f" font-size="11" text-anchor="middle" fill="%s">%s</text>' % (
                lx, ly + 4, col, t))
        ly = H - 22
        o.append('<line x1="20" y1="%d" x2="60" y2="%d" stroke="#888" stroke-width="2" '
                 'marker-end="url(#arrow-ok)"/>' % (ly, ly))
        o.append('<text x="68" y="%d" font-size="12">allowed import (references)</text>' % (ly + 4))
        o.append('<line x1="260" y1="%d" x2="300" y2="%d" stroke="#d62728" stroke-width="2" '
                 'marker-end="url(#arrow-bad)"/>' % (ly, ly))
        o.append('<text x="308" y="%d" font-size="12">import-up (not in the importer\'s May-import line)</text>'
                 % (ly + 4))
        nbad = sum(b for _c, b in self.v.edges.values())
        o.append('<text x="%d" y="%d" font-size="12" text-anchor="end" fill="#444">%d import-up</text>'
                 % (self.W - 20, ly + 4, nbad))
        o.append('</svg>')
        return "\n".join(o) + "\n"


class Rows(Picture):
    """Floors as rows: bottom floor by name, upper floors by the mean x of what they may import."""

    BOX_H = 78
    MIN_GAP = 72
    TOP = 80

    def draw(self):
        v, fl, W, BOX_H = self.v, self.fl, self.W, self.BOX_H
        xpos, width, slot_of = {}, {}, {}
        for f in range(1, self.nfl + 1):
            row = self.rows[f]

            def key(n):
                xs = [xpos[m] for m in (v.nodes[n]["may"] or []) if m in xpos]
                return (sum(xs) / len(xs) if xs else W / 2, n)

            row.sort(key=key if f > 1 else (lambda n: n))
            slot = (W - 20 - 90) / max(len(row), 1)
            for i, n in enumerate(row):
                xpos[n] = 90 + slot * (i + 0.5)
                width[n] = min(190, slot - 16)
                slot_of[n] = i
        # same-floor arrows arc above (rightwards) or below (leftwards) their
        # floor, higher the further apart; floors get the room their arcs need
        arc = {}
        above, below = defaultdict(lambda: 0), defaultdict(lambda: 0)
        for (a, b) in v.edges:
            if fl[a] == fl[b]:
                off = BOX_H / 2 + 18 + 16 * (abs(slot_of[a] - slot_of[b]) - 1)
                up = xpos[b] > xpos[a]
                arc[(a, b)] = -off if up else off
                room = above if up else below
                room[fl[a]] = max(room[fl[a]], off - BOX_H / 2 + 12)
        floor_y = {}
        y = self.TOP + 12 + above[self.nfl]
        for f in range(self.nfl, 0, -1):
            floor_y[f] = y
            if f > 1:
                y += BOX_H + max(self.MIN_GAP, below[f] + above[f - 1] + 24)
        H = int(floor_y[1] + BOX_H + below[1] + 70)
        self.pos = {n: (xpos[n], floor_y[fl[n]] + BOX_H / 2, width[n], BOX_H) for n in xpos}
        self.head(H, ["A unit sits one floor above the highest unit it may import. Arrows: the crate:: "
                      "references found in the code, with their count;",
                      "red when the importer's May-import line does not allow them. Dashed box: no "
                      "May-import line. A folder's rooms are drawn as the folder."])
        for f in range(1, self.nfl + 1):
            self.band(f, floor_y[f] - 12, BOX_H + 24)
        detour = {"left": 0, "right": 0}
        for (a, b), (cnt, bad) in sorted(v.edges.items(), key=lambda e: (abs(fl[e[0][0]] - fl[e[0][1]]), e[0])):
            mxm, mym = self.middle(a, b, arc, detour)
            self.curve(a, b, mxm, mym, cnt, bad)
        self.boxes(2)
        return self.tail(H)

    def middle(self, a, b, arc, detour):
        """The point an arrow from a to b passes through halfway."""
        ax, ay, bx, by = self.pos[a][0], self.pos[a][1], self.pos[b][0], self.pos[b][1]
        dx, dy = bx - ax, by - ay
        dist = math.hypot(dx, dy) or 1
        block = self.blockers(a, b)
        if (a, b) in arc:
            return (ax + bx) / 2, ay + arc[(a, b)]
        if not block:  # a->b and b->a bend apart
            return (ax + bx) / 2 + dy / dist * dist * 0.08, (ay + by) / 2 - dx / dist * dist * 0.08
        # around the boxes in the way, on the nearer side
        lo = min(self.pos[n][0] - self.pos[n][2] / 2 for n in block)
        hi = max(self.pos[n][0] + self.pos[n][2] / 2 for n in block)
        mid = (ax + bx) / 2
        if abs((mid - lo) - (hi - mid)) < 40:
            side = "left" if dx < 0 else "right"  # towards the target
        else:
            side = "left" if (mid - lo) < (hi - mid) else "right"
        if side == "left" and lo < 150:
            side = "right"
        elif side == "right" and hi > self.W - 80:
            side = "left"
        detour[side] += 1
        off = 26 + 16 * (detour[side] - 1)
        mxm = (lo - off if side == "left" else hi + off)
        return max(100.0, min(self.W - 45.0, mxm)), (ay + by) / 2

    def curve(self, a, b, mxm, mym, cnt, bad):
        ax, ay, bx, by = self.pos[a][0], self.pos[a][1], self.pos[b][0], self.pos[b][1]
        mx, my = 2 * mxm - (ax + bx) / 2, 2 * mym - (ay + by) / 2  # control point of the quadratic
        x0, y0 = self.border(a, mx, my)
        x1, y1 = self.border(b, mx, my)
        self.arrow("M%.1f,%.1f Q%.1f,%.1f %.1f,%.1f" % (x0, y0, mx, my, x1, y1), bad, cnt,
                   0.25 * x0 + 0.5 * mx + 0.25 * x1, 0.25 * y0 + 0.5 * my + 0.25 * y1)

    def border(self, n, tx, ty):
        cx, cy, bw, bh = self.pos[n]
        dx, dy = tx - cx, ty - cy
        if dx == 0 and dy == 0:
            return cx, cy
        sx = (bw / 2) / abs(dx) if dx else float("inf")
        sy = (bh / 2) / abs(dy) if dy else float("inf")
        s = min(sx, sy)
        return cx + dx * s, cy + dy * s

    def blockers(self, a, b):
        """Boxes other than a's and b's that the straight a-b line crosses."""
        ax, ay, bx, by = self.pos[a][0], self.pos[a][1], self.pos[b][0], self.pos[b][1]
        hit = []
        for n, (cx, cy, bw, bh) in self.pos.items():
            if n in (a, b):
                continue
            for k in range(1, 20):
                x, y = ax + (bx - ax) * k / 20, ay + (by - ay) * k / 20
                if abs(x - cx) <= bw / 2 + 8 and abs(y - cy) <= bh / 2 + 8:
                    hit.append(n)
                    break
        return hit


class Column(Picture):
    """One node per floor: a column, arrows down arc on its right, arrows up on its left."""

    BOX_H = 70
    GAP = 20
    TOP = 96
    LEFT, BOX_W = 230, 300

    def draw(self):
        v, fl = self.v, self.fl
        step = self.BOX_H + self.GAP
        cx = self.LEFT + self.BOX_W / 2
        for n, f in fl.items():
            self.pos[n] = (cx, self.TOP + (self.nfl - f) * step + self.BOX_H / 2, self.BOX_W, self.BOX_H)
        H = int(self.TOP + self.nfl * step + 60)
        self.head(H, ["One node per floor; a node may import the nodes below it that its May-import "
                      "line names. Arrows: the crate:: references",
                      "found in the code between two nodes, with their count; red (on the left) when "
                      "they run up. Every node may also import",
                      "the folders below its own (protocol, transport)."])
        for f in range(1, self.nfl + 1):
            self.band(f, self.TOP + (self.nfl - f) * step - self.GAP / 2 + 1, step - 2)
        ends = self.endpoints()
        for (a, b), (cnt, bad) in sorted(v.edges.items(), key=lambda e: (abs(fl[e[0][0]] - fl[e[0][1]]), e[0])):
            span = abs(fl[a] - fl[b])
            right = fl[a] > fl[b]
            edge = self.LEFT + (self.BOX_W if right else 0)
            off = (22 + 26 * (span - 1)) * (1 if right else -1)
            y0, y1 = ends[(a, b)]
            d = "M%.1f,%.1f C%.1f,%.1f %.1f,%.1f %.1f,%.1f" % (edge, y0, edge + off, y0, edge + off, y1,
                                                               edge + (6 if right else -6), y1)
            self.arrow(d, bad, cnt, edge + 0.75 * off, (y0 + y1) / 2)
        self.boxes(2)
        return self.tail(H)

    def endpoints(self):
        """(a, b) -> (y where it leaves a, y where it reaches b): a node's arrows
        leave from the lower half of its side (the longest highest) and arrive in
        the upper half (the longest lowest), so the arcs of one node do not cross."""
        fl, outs, ins = self.fl, defaultdict(list), defaultdict(list)
        for (a, b) in self.v.edges:
            outs[a].append((a, b))
            ins[b].append((a, b))
        y0, y1 = {}, {}
        for n, es in outs.items():
            es.sort(key=lambda e: -abs(fl[e[0]] - fl[e[1]]))
            cy, h = self.pos[n][1], self.BOX_H / 2 - 6
            for i, e in enumerate(es):
                y0[e] = cy + 4 + (h - 4) * (i + 1) / (len(es) + 1)
        for n, es in ins.items():
            es.sort(key=lambda e: abs(fl[e[0]] - fl[e[1]]))
            cy, h = self.pos[n][1], self.BOX_H / 2 - 6
            for i, e in enumerate(es):
                y1[e] = cy - h + (h - 4) * (i + 1) / (len(es) + 1)
        return {e: (y0[e], y1[e]) for e in self.v.edges}
