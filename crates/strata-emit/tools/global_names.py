#!/usr/bin/env python3
"""Names declared at global scope of a preprocessed C or C++ translation unit (stdin): functions,
variables, types, enumerators of global enums. Skips namespace, class and function bodies."""
import re, sys
src = sys.stdin.read()
src = re.sub(r'^#.*$', '', src, flags=re.M)
src = re.sub(r'"(\\.|[^"\\])*"', '""', src)
src = re.sub(r"'(\\.|[^'\\])*'", "''", src)
toks = re.findall(r'""|[A-Za-z_][A-Za-z0-9_]*|::|\S', src)
out = set()
stack = []  # 'ns', 'link', 'block', 'enum'
paren = 0
angle_template = 0
pending = None  # what the next '{' opens
prev = None
for i, t in enumerate(toks):
    nxt = toks[i + 1] if i + 1 < len(toks) else ''
    top = all(s in ('link',) for s in stack)
    in_enum = stack and stack[-1] == 'enum' and all(s in ('link', 'enum') for s in stack)
    if t == 'namespace':
        pending = 'ns'
    elif t == 'extern' and nxt == '""':
        pending = 'link'
    elif t == 'enum':
        pending = 'enum'
    elif t == '(':
        paren += 1
        if pending == 'enum': pending = None
    elif t == ')':
        paren -= 1
        if pending == 'enum': pending = None
    elif t == '{':
        if pending == 'link' or pending == 'ns' or pending == 'enum':
            stack.append(pending)
        else:
            stack.append('block')
        pending = None
    elif t == '}':
        if stack:
            stack.pop()
    elif t == ';':
        if pending in ('ns',):
            pass
        pending = None if pending != 'link' else pending
    elif re.match(r'[A-Za-z_]', t):
        if top and paren == 0 and prev != '::' and nxt in ('(', ';', '[', '=', ',', '{', ':') :
            out.add(t)
        if top and paren == 0 and prev in ('struct', 'class', 'union', 'enum'):
            out.add(t)
        if in_enum and paren == 0 and prev in ('{', ','):
            out.add(t)
        if pending == 'link' and t != 'extern':
            pending = None
    prev = t
for n in sorted(out):
    if not n.startswith('_'):
        print(n)
