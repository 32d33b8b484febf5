#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0
"""What top's detail pane draws as graphs, read from `tmux capture-pane -p`.

    graph_check.py COLS CAPTURE UNIT

Fails (exit 1, one line) when the screen is not whole: a line wider than
COLS, a graph title not followed by its two rows of graph cells (braille
U+2800..U+28FF or ASCII ' ', '.', '|' only), no HISTORY line. Else prints
for the graph UNIT (faults/s, messages/s, runs/s, ns/run):

    MAX SPAN_S POINT_S POINTS TOP_CELLS BOTTOM_CHARS

MAX as labelled, SPAN_S and POINT_S in seconds from the labels, POINTS
drawn (two a braille cell), TOP_CELLS the non-blank cells of the top row,
BOTTOM_CHARS the distinct characters of the bottom row, blanks left out.
"""
import re
import sys

ROWS = 2
TITLE = re.compile(r"^(faults/s|messages/s|runs/s|ns/run)  max (\S+)  last ([0-9.]+)([smhd])$")
HISTORY = re.compile(r"^HISTORY  a point per ([0-9.]+)([smhd]),")
SECONDS = {"s": 1, "m": 60, "h": 3600, "d": 86400}
BRAILLE = re.compile("^[ \u2800-\u28ff]*$")
ASCII = re.compile(r"^[ .|]*$")


def die(msg):
    print(msg)
    sys.exit(1)


def main():
    cols, path, want = int(sys.argv[1]), sys.argv[2], sys.argv[3]
    with open(path, encoding="utf-8") as f:
        lines = f.read().split("\n")
    point = None
    graphs = {}
    for i, line in enumerate(lines):
        if len(line) > cols:	# every character drawn here is one column wide
            die("line %d is %d columns wide, the pane %d: %r" % (i + 1, len(line), cols, line))
        m = HISTORY.match(line)
        if m:
            point = float(m.group(1)) * SECONDS[m.group(2)]
        m = TITLE.match(line)
        if not m:
            continue
        rows = lines[i + 1:i + 1 + ROWS]
        if len(rows) < ROWS or not all(BRAILLE.match(r) or ASCII.match(r) for r in rows):
            die("%s: not followed by %d rows of graph cells: %r" % (m.group(1), ROWS, rows))
        graphs[m.group(1)] = (m.group(2), float(m.group(3)) * SECONDS[m.group(4)], rows)
    if point is None:
        die("no HISTORY line")
    if want not in graphs:
        die("no %s graph" % want)
    mx, span, rows = graphs[want]
    braille = any(BRAILLE.match(r) and r.strip() for r in rows)
    cells = max(len(r) for r in rows)
    print(mx, "%g" % span, "%g" % point, cells * (2 if braille else 1),
          sum(c != " " for c in rows[0]), "".join(sorted(set(rows[-1]) - {" "})) or "-")


if __name__ == "__main__":
    main()
