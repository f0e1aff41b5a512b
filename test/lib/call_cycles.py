#!/usr/bin/env python3
# SPDX-License-Identifier: GPL-2.0-or-later
"""call_cycles.py - the file-level call graph of lib/ must have no cycle.

An edge a.c -> b.c means a function of a.c calls a function defined in
b.c by name; a call to a static inline function of a header counts as the
calls that function makes. Calls through the ops tables (s->pol->pick(s))
are not edges: they go from the core to the file that select.c bound.
Usage: call_cycles.py LIBDIR   (prints the graph; exit 1 on a cycle)
"""
import os
import re
import sys

DEF = re.compile(r'^(?:static\s+)?(?:inline\s+)?(?:RS_HOT\s+)?(?:const\s+)?'
                 r'[a-z_][\w\s\*]*?\b(\w+)\s*\(([^;{]*)\)\s*\{', re.M)
CALL = re.compile(r'\b([a-z_]\w*)\s*\(')


def strip(text):
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    return re.sub(r'"(?:\\.|[^"\\])*"', '""', text)


def functions(path):
    """name -> (static, body) of every function defined in path."""
    text = strip(open(path).read())
    out = {}
    for m in DEF.finditer(text):
        depth, i = 1, m.end()
        while depth:
            depth += {'{': 1, '}': -1}.get(text[i], 0)
            i += 1
        head = text[m.start():m.end()]
        out[m.group(1)] = ('static' in head.split('(')[0], text[m.end():i])
    return out


def main(libdir):
    files = sorted(f for f in os.listdir(libdir) if f.endswith(('.c', '.h')))
    defs = {f: functions(os.path.join(libdir, f)) for f in files}
    public = {}                     # non-static function -> file
    inline = {}                     # header inline function -> body
    for f, fns in defs.items():
        for name, (static, body) in fns.items():
            if f.endswith('.h'):
                inline[name] = body
            elif not static:
                public[name] = f

    def callees(body, seen):
        for name in CALL.findall(body):
            if name in public:
                yield public[name]
            elif name in inline and name not in seen:
                seen.add(name)
                yield from callees(inline[name], seen)

    graph = {}
    for f in files:
        if f.endswith('.c'):
            graph[f] = set()
            for _, body in defs[f].values():
                graph[f].update(callees(body, set()))
            graph[f].discard(f)
    for f in sorted(graph):
        print('%-12s -> %s' % (f, ' '.join(sorted(graph[f])) or '-'))
    state = {}

    def visit(f, path):
        state[f] = 1
        for g in sorted(graph[f]):
            if state.get(g) == 1:
                sys.exit('call cycle: ' + ' -> '.join(path[path.index(g):] + [g]))
            if not state.get(g):
                visit(g, path + [g])
        state[f] = 2

    for f in sorted(graph):
        if not state.get(f):
            visit(f, [f])
    print('no call cycles between the files of %s' % libdir)


if __name__ == '__main__':
    main(sys.argv[1] if len(sys.argv) > 1 else 'lib')
