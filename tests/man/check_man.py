#!/usr/bin/env python3
"""Check that what `meson install` installs is documented by what it installs.

usage: check_man.py BUILDDIR

Everything is read from the build: the list of installed files comes from
meson's introspection (meson-info/intro-installed.json), the exported
symbols from the built shared libraries (nm -D). So a new function, macro,
type, library or program without a man page fails here. Checks:

  - every symbol a shared library exports carries a symbol version (it is
    listed in the library's version script) and has a section 3 page;
  - every function an installed C header declares with its library's
    export macro (TWHEEL_API, TWHEEL_LOOP_API...) is exported by an
    installed library: none is missing from a version script;
  - every public name of an installed C header has a section 3 page:
    static inline functions, macros, struct tags, typedefs and enum
    constants (names with a leading underscore or a double underscore are
    private; NOT_API below lists the few other exceptions, and the export
    macros TWHEEL_*_API are not API);
  - every installed shared library and pkg-config file has a section 7
    overview page named after it (libtwheel.so: twheel(7)), which names
    each symbol version the library exports (TWHEEL_1.0, TWHEEL_1.1...):
    a reader learns there which release a function needs;
  - every section 7 page named after a library (twheel...) is installed
    only with that library's pkg-config file (-Dcpp=false: no twheel++(7));
  - every installed program has a section 1 page, and every installed
    section 1 page a program (or is the page of one, through ".so");
  - every installed page renders without a warning (groff -ww), and every
    ".so" page points at an installed page that names it (man NAME must
    show NAME, not a page that never mentions it);
  - every section 7 page, and the section 3 page of each main entry point
    (NEED_EXAMPLE below), has an EXAMPLE section (tests/docs compiles it).
Exit 0 pass, 1 fail.
"""
import json
import os
import re
import subprocess
import sys

# Names a public header defines that are not API, with the reason (and
# every TWHEEL_*_API: the export attributes of the libraries, used only
# while building them).
NOT_API = {
    'twheel': 'C++ only: maps the C tag twheel to twheel_c inside twheel.h',
    'tw_loop_node': 'the private link of the loop inbox, embedded in public structs',
}

# The section 3 pages a reader opens first: each shows a whole program.
NEED_EXAMPLE = [
    'twheel_create', 'twheel_add', 'twheel_mod', 'twheel_advance', 'twheel_next_expiry',
    'twheel_host_init', 'twheel_host_add', 'twheel_loop_create', 'twheel_loop_add',
    'twheel_loop_run', 'twheel_uv_create', 'twheel_ev_create', 'twheel_event_create',
    'twheel_epoll_create',
]

build = sys.argv[1]
installed = json.load(open(os.path.join(build, 'meson-info', 'intro-installed.json')))
errors = []
pages = {}  # (name, section) -> path of the installed source
for src, dst in installed.items():
    m = re.search(r'/man([1-8])/([^/]+)\.([1-8])$', dst)
    if m:
        pages[(m.group(2), m.group(3))] = src


def need(name, sec, why):
    if (name, sec) not in pages:
        errors.append(f'no {name}({sec}) page installed for {why}')


nsyms = 0
exported = set()  # every symbol an installed library exports, without its version
nodes = {}  # library -> the version nodes it exports
for src, dst in sorted(installed.items()):
    base = os.path.basename(dst)
    if re.fullmatch(r'lib(.+)\.so(\.\d+)+', base) and os.path.isfile(src):
        lib = re.match(r'lib(.+?)\.so', base).group(1)
        need(lib, '7', f'the library {base}')
        out = subprocess.run(['nm', '-D', '--defined-only', src], check=True,
                             capture_output=True, text=True).stdout
        for line in out.splitlines():
            parts = line.split()
            if len(parts) >= 3 and parts[1] == 'A':  # a version node itself
                nodes.setdefault(lib, set()).add(parts[2])
            if len(parts) < 3 or parts[1] == 'A':
                continue
            sym = parts[2]
            name = re.split(r'@+', sym)[0]
            if name.startswith('__odr_asan.'):
                continue  # AddressSanitizer's mark beside an exported variable, not ours
            exported.add(name)
            nsyms += 1
            if '@' not in sym:
                errors.append(f'{base}: {name} is exported without a symbol version '
                              '(add it to the library\'s version script)')
            need(name, '3', f'{name}, exported by {base}')
        print(f'{base}: symbols checked')
    elif base.endswith('.pc'):
        need(base[:-3], '7', f'the pkg-config package {base}')
    elif re.search(r'/bin/[^/]+$', dst):
        need(base, '1', f'the program {dst}')

pcs = {os.path.basename(dst)[:-3] for dst in installed.values() if dst.endswith('.pc')}
progs = {os.path.basename(dst) for dst in installed.values() if re.search(r'/bin/[^/]+$', dst)}
shared = set()  # pages that the ".so" page of an installed program points at
for name, sec in pages:
    with open(pages[(name, sec)], encoding='utf-8') as f:
        m = re.fullmatch(r'\.so man1/(.+)\.1', f.readline().strip())
    if sec == '1' and name in progs and m:
        shared.add(m.group(1))
for name, sec in sorted(pages):
    if sec == '1' and name not in progs and name not in shared:
        errors.append(f'{name}(1) is installed without the program {name}')
for name, sec in sorted(pages):
    if sec == '7' and name.startswith('twheel') and name not in pcs:
        errors.append(f'{name}(7) is installed without {name}.pc: it documents what is not installed')

for lib, libnodes in sorted(nodes.items()):
    if (lib, '7') not in pages:
        continue
    text = re.sub(r'\\f[BIRP]', '', open(pages[(lib, '7')], encoding='utf-8').read())
    for node in sorted(libnodes):
        if not re.search(r'(?<!\w)' + re.escape(node) + r'(?!\w)', text):
            errors.append(f'{lib}(7) does not name the symbol version {node} that lib{lib}.so exports')

nnames = 0
ndecls = 0
for src, dst in sorted(installed.items()):
    if not dst.endswith('.h'):
        continue
    text = open(src, encoding='utf-8').read()
    text = re.sub(r'/\*.*?\*/', '', text, flags=re.S)
    text = re.sub(r'//[^\n]*', '', text)
    for m in re.finditer(r'^\s*TWHEEL(?:_[A-Z]+)?_API\b[^;{(]*?\b(\w+)\s*\(', text, re.M):
        ndecls += 1
        if m.group(1) not in exported:
            errors.append(f'{m.group(1)}, declared in {os.path.basename(dst)}, is exported by no '
                          'installed library (add it to the library\'s version script)')
    names = set()
    guard = re.search(r'#\s*ifndef\s+(\w+)\s*\n\s*#\s*define\s+\1\b', text)
    for m in re.finditer(r'^\s*#\s*define\s+(\w+)', text, re.M):
        names.add(m.group(1))
    if guard:
        names.discard(guard.group(1))
    names |= set(re.findall(r'static\s+inline\s+[\w\s\*]*?\b(\w+)\s*\(', text))
    names |= set(re.findall(r'\bstruct\s+(\w+)\s*\{', text))
    names |= set(re.findall(r'\btypedef\b[^;(]*?\b(\w+)\s*;', text))
    names |= set(re.findall(r'\btypedef\b[^;]*?\(\s*\*\s*(\w+)\s*\)', text))
    for body in re.findall(r'\benum\b[^{;]*\{(.*?)\}', text, re.S):
        names |= set(re.findall(r'^\s*([A-Za-z]\w*)\s*[=,]?', body, re.M)) - {''}
    for name in sorted(names):
        if name.startswith('_') or '__' in name or name in NOT_API or re.fullmatch(r'TWHEEL(_\w+)?_API', name):
            continue
        nnames += 1
        need(name, '3', f'{name}, declared in {os.path.basename(dst)}')

for (name, sec), src in sorted(pages.items()):
    with open(src, encoding='utf-8') as f:
        first = f.readline().strip()
    if first.startswith('.so '):
        m = re.fullmatch(r'\.so man([1-8])/(.+)\.([1-8])', first)
        if not m or (m.group(2), m.group(3)) not in pages:
            errors.append(f'{name}({sec}): "{first}" does not point at an installed page')
            continue
        target = open(pages[(m.group(2), m.group(3))], encoding='utf-8').read()
        target = re.sub(r'\\f[BIRP]|\\f\(..', '', re.sub(r'^\.\\".*$', '', target, flags=re.M))
        if not re.search(r'(?<![\w-])' + re.escape(name) + r'(?!\w)', target.replace('\\-', '-')):
            errors.append(f'{name}({sec}): "{first}" points at a page that does not name {name}')
        continue
    r = subprocess.run(['groff', '-man', '-ww', '-z', '-Tutf8', src],
                       capture_output=True, text=True)
    if r.returncode != 0 or r.stderr.strip():
        errors.append(f'{name}({sec}) does not render cleanly:\n{r.stderr.strip()}')

for (name, sec), src in sorted(pages.items()):
    if sec != '7' and not (sec == '3' and name in NEED_EXAMPLE):
        continue
    text = open(src, encoding='utf-8').read()
    if not re.search(r'^\.SH\s+"?EXAMPLES?"?\s*$', text, re.M):
        errors.append(f'{name}({sec}) has no EXAMPLE section')

print(f'{len(pages)} pages installed; {nsyms} exported symbols, {ndecls} declared functions '
      f'and {nnames} header names checked')
for e in errors:
    print('FAIL:', e)
sys.exit(1 if errors else 0)
