#!/usr/bin/env python3
"""Compile every C and C++ example the documentation shows; run each complete program.

usage: check_snippets.py BUILDDIR [--cc CMD] [--cxx CMD] [--have FEATURE]...
                         [--cflag=FLAG]... [--run-timeout S] FILE|DIR...

FILE is a Markdown file (each ```c and ```cpp block) or a man page (each
.EX/.EE or .nf/.fi block of its EXAMPLE section, unescaped: \\e, \\-,
\\(aq ...); a DIR stands for its *.md files and man pages (sections 3 and
7). Each block is compiled against the headers and shared libraries that
`meson install` would install (read from the build's introspection, so a
header that is not installed is not found), with -Wall -Wextra -Werror.
A block that defines main() is a complete program: it is linked, with no
warning allowed (-Wall -Wextra -Werror, unused names included), and run
(stdin /dev/null, the built libraries on LD_LIBRARY_PATH): it must exit 0
within --run-timeout seconds (default 20). The other blocks may leave
names unused (-Wno-unused-...): they are parts of a program.

A block is a complete translation unit unless a marker right before it says
otherwise (in Markdown an HTML comment, in a man page a comment line):

  <!-- snippet: fragment -->        .\\" snippet: fragment
      file-scope code: a prelude of the usual libc headers and
      <twheel/twheel.h> (C) or <twheel/twheel.hpp> (C++) goes first;
  <!-- snippet: body -->
      statements: they become the body of main() after that prelude;
  <!-- snippet: fragment, main from "TEXT" -->
      file-scope code up to the first line that starts with TEXT, then
      statements that become the body of main();
  <!-- snippet: skip: REASON -->
      not compiled (say why);
  <!-- snippet: unit, run with "ARGS" -->
      a complete program that ends by itself only when told (a server's
      --seconds): run with ARGS (split as a shell would).

The shell blocks of the Markdown files (```sh) run as root on a minimal
Debian, which has no sudo: a command there that starts with sudo fails the
check (the text says "as root" instead).

A complete program that exits 77 says it cannot run here (io_uring
refused, for instance): counted as skipped, not passed.

In Markdown, lines after the marker's first line and before "-->" are more
prelude (declarations the block uses but does not show), e.g.

  <!-- snippet: fragment
  #include <twheel/loop.h>
  static void conn_new(struct server *s, int fd);
  -->

A block that includes a header of an optional library (liburing, libuv,
libev, libevent, Boost.Asio) or of an adapter that was not built is
skipped, or fails with TWHEEL_TEST_REQUIRE_DEPS=1 in the environment
(scripts/test.sh sets it: it installs every one and requires each optional
part). Exit 0 when every compiled block compiled, 1 otherwise, 77 when
nothing could be compiled.
"""
import argparse
import json
import os
import re
import shlex
import subprocess
import sys
import tempfile

C_PRELUDE = """\
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <twheel/twheel.h>
"""

CXX_PRELUDE = """\
#include <cerrno>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <utility>
#include <vector>
#include <twheel/twheel.hpp>
using namespace std::chrono_literals;
"""

# What a block needs, from the headers it (or its prelude) includes.
NEEDS = [
    (r'<twheel/loop\.hpp>|<twheel/loop\.h>|<liburing\.h>', 'uring'),
    (r'<twheel/uv\.h>|<uv\.h>', 'uv'),
    (r'<twheel/ev\.h>|<ev\.h>', 'ev'),
    (r'<twheel/event\.h>|<event2/', 'event'),
    (r'<twheel/epoll\.h>', 'epoll'),
    (r'<twheel/asio\.hpp>|<boost/', 'asio'),
]
# How to link a program that needs it: pkg-config package, else -l flags.
EXTERNAL = {'uring': ('liburing', ['-luring']), 'uv': ('libuv', ['-luv']),
            'ev': (None, ['-lev']), 'event': ('libevent', ['-levent'])}

GROFF = {'e': '\\', '-': '-', '(aq': "'", '(dq': '"', '(rs': '\\', '(ga': '`',
         '(ti': '~', '(ha': '^', '(em': '--', '(en': '-', '(lq': '"', '(rq': '"',
         '&': '', '(bu': '*', '(ul': '_', '(pl': '+', '(eq': '=', '(or': '|',
         '(sl': '/', '(lB': '[', '(rB': ']', '(lC': '{', '(rC': '}', '(la': '<',
         '(ra': '>', '0': ' ', ' ': ' ', '~': ' ', '|': '', '^': ''}


def unescape_groff(line):
    def repl(m):
        s = m.group(1)
        if s.startswith('f'):
            return ''
        return GROFF.get(s, m.group(0))
    return re.sub(r'\\(f\[[^]]*\]|f\(..|f.|\(..|[-e&0 ~|^])', repl, line)


class Block:
    def __init__(self, path, line, lang, code, marker, prelude):
        self.path, self.line, self.lang, self.code = path, line, lang, code
        self.marker, self.prelude = marker, prelude

    def where(self):
        return f'{os.path.relpath(self.path)}:{self.line}'


def parse_marker(text):
    """'fragment, main from "x"' -> ('fragment', 'x'); '' -> ('unit', None)."""
    text = text.strip()
    if not text:
        return 'unit', None, None
    if text.startswith('skip'):
        return 'skip', None, text.partition(':')[2].strip() or 'no reason given'
    m = re.search(r'main from "([^"]+)"', text)
    kind = text.split(',')[0].strip()
    if re.search(r'run with "([^"]*)"', text) and kind != 'unit':
        raise ValueError('"run with" is for a complete program (unit)')
    if kind not in ('unit', 'fragment', 'body'):
        raise ValueError(f'unknown snippet kind "{kind}"')
    return kind, (m.group(1) if m else None), None


def markdown_blocks(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    blocks = []
    i = 0
    while i < len(lines):
        m = re.match(r'^\s*```(c|cpp|c\+\+)\s*$', lines[i])
        if not m:
            i += 1
            continue
        lang = 'c' if m.group(1) == 'c' else 'cpp'
        start = i
        j = i + 1
        while j < len(lines) and not re.match(r'^\s*```\s*$', lines[j]):
            j += 1
        code = '\n'.join(lines[i + 1:j]) + '\n'
        # the marker: an HTML comment ending on the last non-blank line before
        k = start - 1
        while k >= 0 and not lines[k].strip():
            k -= 1
        marker, prelude = '', ''
        if k >= 0 and lines[k].rstrip().endswith('-->'):
            e = k
            while e >= 0 and '<!--' not in lines[e]:
                e -= 1
            comment = '\n'.join(lines[e:k + 1])
            cm = re.search(r'<!--\s*snippet:(.*?)(?:\n(.*))?-->', comment, re.S)
            if cm:
                marker = cm.group(1)
                prelude = cm.group(2) or ''
        blocks.append(Block(path, start + 1, lang, code, marker, prelude))
        i = j + 1
    return blocks


def shell_sudo(path):
    """The lines of the ```sh blocks of a Markdown file that run sudo."""
    found, in_sh = [], False
    for n, line in enumerate(open(path, encoding='utf-8').read().split('\n'), 1):
        if re.match(r'^\s*```', line):
            in_sh = not in_sh and bool(re.match(r'^\s*```(sh|bash|shell)\s*$', line))
        elif in_sh and re.search(r'(^|[;&|(]\s*)sudo\s', line.strip()):
            found.append((n, line.strip()))
    return found


def man_blocks(path):
    lines = open(path, encoding='utf-8').read().split('\n')
    blocks = []
    in_example = False
    marker = ''
    i = 0
    while i < len(lines):
        line = lines[i]
        if line.startswith('.SH'):
            in_example = bool(re.match(r'\.SH\s+"?EXAMPLES?"?\s*$', line))
            marker = ''
        elif in_example and re.match(r'\.\\"\s*snippet:', line):
            marker = line.split('snippet:', 1)[1]
        elif in_example and line.strip() in ('.EX', '.nf'):
            end = '.EE' if line.strip() == '.EX' else '.fi'
            j = i + 1
            code = []
            while j < len(lines) and lines[j].strip() != end:
                if not lines[j].startswith('.'):
                    code.append(unescape_groff(lines[j]))
                j += 1
            text = '\n'.join(code) + '\n'
            cpp = path.endswith('++.7') or re.search(r'\.hpp>|\bstd::|\btw::', text)
            blocks.append(Block(path, i + 1, 'cpp' if cpp else 'c', text, marker, ''))
            marker = ''
            i = j
        i += 1
    return blocks


def installed_tree(build, tmp):
    """Lay out the headers as installed, under tmp/include; list the libraries."""
    installed = json.load(open(os.path.join(build, 'meson-info', 'intro-installed.json')))
    inc = os.path.join(tmp, 'include')
    libs = {}
    for src, dst in installed.items():
        m = re.search(r'/include/(.+\.h(pp)?)$', dst)
        if m:
            d = os.path.join(inc, os.path.dirname(m.group(1)))
            os.makedirs(d, exist_ok=True)
            os.symlink(os.path.abspath(src), os.path.join(d, os.path.basename(src)))
        m = re.search(r'/lib(twheel(-\w+)?)\.so\.\d+\.\d+\.\d+$', dst)
        if m and os.path.isfile(src):
            libs[m.group(1)] = os.path.abspath(src)
    return inc, libs


def external_flags(name):
    pc, fallback = EXTERNAL[name]
    if pc:
        r = subprocess.run(['pkg-config', '--libs', pc], capture_output=True, text=True)
        if r.returncode == 0:
            return r.stdout.split()
    return fallback


def source_of(b):
    kind, main_from, _ = parse_marker(b.marker)
    if kind == 'unit':
        return b.prelude + b.code
    head = (C_PRELUDE if b.lang == 'c' else CXX_PRELUDE) + b.prelude + '\n'
    if kind == 'fragment' and not main_from:
        return head + '#line 1\n' + b.code
    lines = b.code.split('\n')
    cut = 0
    if kind == 'fragment':
        cut = next((n for n, l in enumerate(lines) if l.strip().startswith(main_from)), None)
        if cut is None:
            raise ValueError(f'no line starts with "{main_from}"')
    top = '\n'.join(lines[:cut])
    body = '\n'.join(lines[cut:])
    return (head + '#line 1\n' + top + '\n' + 'int main(void)\n{\n' +
            f'#line {cut + 1}\n' + body + '\n\treturn 0;\n}\n')


def run_args(marker):
    """The arguments of 'run with "ARGS"' in a marker, or none."""
    m = re.search(r'run with "([^"]*)"', marker)
    return shlex.split(m.group(1)) if m else []


def run_program(prog, args, libs, cwd, timeout):
    """Run a complete program as a reader would: its exit status, or why
    it has none (still running after timeout seconds), and its output."""
    env = dict(os.environ)
    dirs = sorted({os.path.dirname(p) for p in libs.values()})
    env['LD_LIBRARY_PATH'] = ':'.join(dirs + [env.get('LD_LIBRARY_PATH', '')]).rstrip(':')
    try:
        r = subprocess.run([prog] + args, stdin=subprocess.DEVNULL, capture_output=True,
                           text=True, cwd=cwd, env=env, timeout=timeout)
    except subprocess.TimeoutExpired as e:
        out = e.stdout or b''
        out = (out.decode(errors='replace') if isinstance(out, bytes) else out)[-2000:]
        return f'still running after {timeout:g} s (it must end by itself)', out
    return r.returncode, r.stdout[-2000:] + r.stderr[-2000:]


def expand(paths):
    """Files as given; a directory gives its *.md files or man pages (3, 7)."""
    out = []
    for p in paths:
        if os.path.isdir(p):
            out += sorted(os.path.join(p, f) for f in os.listdir(p)
                          if re.search(r'\.(md|3|7)$', f))
        else:
            out.append(p)
    return out


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('build')
    ap.add_argument('--cc', default='cc')
    ap.add_argument('--cxx', default='')
    ap.add_argument('--have', action='append', default=[])
    ap.add_argument('--cflag', action='append', default=[])
    ap.add_argument('--run-timeout', type=float, default=20)
    ap.add_argument('files', nargs='+')
    a = ap.parse_args()

    blocks = []
    sudo = 0
    for f in expand(a.files):
        if re.search(r'\.[1-8]$', f):
            blocks += man_blocks(f)
            continue
        blocks += markdown_blocks(f)
        for n, line in shell_sudo(f):
            print(f'FAIL {os.path.relpath(f)}:{n}: "{line}": a minimal root has no sudo; '
                  'say "as root"')
            sudo += 1

    warn = ['-Wall', '-Wextra', '-Werror']
    unused_ok = ['-Wno-unused-function', '-Wno-unused-variable', '-Wno-unused-parameter',
                 '-Wno-unused-but-set-variable', '-Wno-unused-label',
                 '-Wno-unused-local-typedefs']
    ok = skipped = 0
    failed = sudo
    with tempfile.TemporaryDirectory(prefix='twheel-snippets-') as tmp:
        inc, libs = installed_tree(a.build, tmp)
        have = set(a.have)
        for name in libs:
            have.add(name[len('twheel-'):] if name != 'twheel' else 'core')
        for n, b in enumerate(blocks):
            try:
                kind, _, reason = parse_marker(b.marker)
                src = None if kind == 'skip' else source_of(b)
            except ValueError as e:
                print(f'FAIL {b.where()}: bad snippet marker: {e}')
                failed += 1
                continue
            if kind == 'skip':
                print(f'skip {b.where()}: {reason}')
                skipped += 1
                continue
            needs = {feat for pat, feat in NEEDS if re.search(pat, src)}
            if b.lang == 'cpp':
                needs.add('cpp')
            missing = sorted(needs - have)
            if missing and os.environ.get('TWHEEL_TEST_REQUIRE_DEPS'):
                print(f'FAIL {b.where()}: needs {", ".join(missing)}, not built here '
                      '(TWHEEL_TEST_REQUIRE_DEPS)')
                failed += 1
                continue
            if missing:
                print(f'skip {b.where()}: needs {", ".join(missing)}, not built here')
                skipped += 1
                continue
            ext = '.c' if b.lang == 'c' else '.cpp'
            fn = os.path.join(tmp, f'snippet{n}{ext}')
            with open(fn, 'w', encoding='utf-8') as f:
                f.write(f'#line 1 "{b.where()}"\n' if kind == 'unit' else '')
                f.write(src)
            if b.lang == 'c':
                cmd = shlex.split(a.cc) + ['-std=c11']
            else:
                # <twheel/co.hpp> is the one C++20 header (opt-in)
                cxx_std = '-std=c++20' if '<twheel/co.hpp>' in src else '-std=c++17'
                cmd = shlex.split(a.cxx) + [cxx_std]
            linked = kind == 'unit' and re.search(r'^\s*int\s+main\s*\(', src, re.M)
            cmd += ['-D_GNU_SOURCE', '-I', inc] + warn + ([] if linked else unused_ok)
            cmd += a.cflag + ['-pthread']
            if linked:
                extra = []
                for feat in sorted(needs & EXTERNAL.keys()):
                    extra += external_flags(feat)
                cmd += [fn, '-o', fn + '.out'] + sorted(libs.values()) + extra
            else:
                cmd += ['-c', fn, '-o', fn + '.o']
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                out = r.stderr.replace(fn, b.where())
                print(f'FAIL {b.where()} ({b.lang}):\n{out}')
                if kind != 'unit':
                    print('--- as compiled:\n' + src + '---')
                failed += 1
                continue
            if not linked:
                print(f'ok   {b.where()} ({b.lang}, compiled)')
                ok += 1
                continue
            status, out = run_program(fn + '.out', run_args(b.marker), libs, tmp,
                                      a.run_timeout)
            if status == 0:
                print(f'ok   {b.where()} ({b.lang}, linked, ran to its end)')
                ok += 1
            elif status == 77:
                print(f'skip {b.where()}: linked, exits 77 here:\n{out}')
                skipped += 1
            else:
                why = status if isinstance(status, str) else f'exit {status}'
                print(f'FAIL {b.where()} ({b.lang}, linked): {why}\n{out}')
                failed += 1
    print(f'{ok} compiled, {failed} failed, {skipped} skipped')
    if failed:
        return 1
    return 0 if ok else 77


if __name__ == '__main__':
    sys.exit(main())
