#!/usr/bin/env python3
"""The layers, enforced: every #include "layer/..." under src/ must point to the
file's own layer or one below it (docs/design.md, "Layers"), and no folder
under src/ may hold more than 40 files directly. Prints each breach with the
file and line, and exits 1 if there is one."""
import os, re, sys

# What each layer may include besides itself. Lowest first.
ALLOWED = {
    'portable': set(),
    'sys': set(),
    'model': {'sys'},
    'store': {'sys', 'model'},
    'sense': {'sys', 'model', 'store'},
    'decide': {'sys', 'model'},
    'diagnose': {'sys', 'model', 'decide'},
    'bench': {'sys', 'model', 'store', 'sense', 'decide'},
    'act': {'sys', 'model', 'store', 'sense', 'decide', 'diagnose', 'bench'},
    'flow': {'sys', 'model', 'store', 'sense', 'decide', 'diagnose', 'bench', 'act'},
    'cli': {'sys', 'model', 'store', 'sense', 'decide', 'diagnose', 'bench', 'act', 'flow'},
}
# A test or fuzzer may also use the pure layers (plain functions of data),
# e.g. to judge what a parser read.
PURE = {'model', 'decide'}
MAX_FILES = 40
INCLUDE = re.compile(r'^\s*#\s*include\s+"([a-z_]+)/[^"]+"', re.M)

def main(src):
    breaches = []
    for root, dirs, files in os.walk(src):
        dirs.sort()
        rel = os.path.relpath(root, src)
        n = sum(1 for f in files)
        if rel != '.' and n > MAX_FILES:
            breaches.append(f'src/{rel}/: {n} files directly (at most {MAX_FILES}: split it into rooms)')
        if rel == '.':
            continue
        layer = rel.split(os.sep)[0]
        if layer not in ALLOWED:
            breaches.append(f'src/{rel}/: layer "{layer}" is not in tests/layers.py\'s table')
            continue
        for f in sorted(files):
            if not f.endswith(('.h', '.cc', '.c')):
                continue
            path = os.path.join(root, f)
            text = open(path, encoding='utf-8').read()
            allowed = ALLOWED[layer] | (PURE if f.endswith(('_test.cc', '_fuzz.cc')) else set())
            for m in INCLUDE.finditer(text):
                target = m.group(1)
                if target != layer and target not in allowed:
                    line = text.count('\n', 0, m.start()) + 1
                    breaches.append(f'src/{rel}/{f}:{line}: {layer}/ includes {target}/, '
                                    f'which is not below it (allowed: {", ".join(sorted(allowed)) or "none"})')
    for b in breaches:
        print(b)
    return 1 if breaches else 0

if __name__ == '__main__':
    sys.exit(main(sys.argv[1] if len(sys.argv) > 1 else os.path.join(os.path.dirname(__file__), '..', 'src')))
