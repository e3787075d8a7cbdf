#!/usr/bin/env python3
"""The libFuzzer targets the docs and scripts/test.sh name are those the
build defines.

usage: check_fuzz_targets.py SOURCE_ROOT

The targets are the executables named fuzz_* in the meson.build files
under tests/ (built with -Dfuzz=true). The README must state their number
("the three libFuzzer targets") and name each; README.md or docs/*.md must
name each; scripts/test.sh must run each (its fuzz_targets list). Exit 0
pass, 1 fail.
"""
import glob
import os
import re
import sys

WORDS = ['zero', 'one', 'two', 'three', 'four', 'five', 'six', 'seven', 'eight', 'nine',
         'ten']

root = sys.argv[1]
targets = set()
for f in glob.glob(os.path.join(root, 'tests', '**', 'meson.build'), recursive=True):
    targets |= set(re.findall(r"executable\(\s*'(fuzz_\w+)'", open(f).read()))
errors = []
if not targets:
    errors.append('no fuzz_* executable in tests/**/meson.build')

readme = open(os.path.join(root, 'README.md')).read()
docs = readme + ''.join(open(f).read() for f in glob.glob(os.path.join(root, 'docs', '*.md')))
counts = re.findall(r'\b(\w+)\s+libFuzzer\s+targets\b', re.sub(r'\s+', ' ', readme))
said = [c for c in counts if c.lower() in WORDS or c.isdigit()]
if not said:
    errors.append('README.md does not say how many libFuzzer targets there are '
                  '("the N libFuzzer targets")')
for c in said:
    n = int(c) if c.isdigit() else WORDS.index(c.lower())
    if n != len(targets):
        errors.append(f'README.md says "{c} libFuzzer targets"; the build defines '
                      f'{len(targets)}: {", ".join(sorted(targets))}')
for t in sorted(targets):
    if not re.search(rf'`{t}`', docs):
        errors.append(f'{t} is not named in README.md or docs/*.md')

m = re.search(r'^fuzz_targets=\(([^)]*)\)', open(os.path.join(root, 'scripts', 'test.sh')).read(),
              re.M)
run = {os.path.basename(t) for t in m.group(1).split()} if m else set()
for t in sorted(targets - run):
    errors.append(f'scripts/test.sh does not run {t} (its fuzz_targets list)')
for t in sorted(run - targets):
    errors.append(f'scripts/test.sh runs {t}, which the build does not define')

for e in errors:
    print('FAIL ' + e)
if errors:
    sys.exit(1)
print(f'{len(targets)} libFuzzer targets, as the README says, each named in the docs and '
      f'run by scripts/test.sh: {", ".join(sorted(targets))}')
