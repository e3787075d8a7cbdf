#!/usr/bin/env python3
"""Every size the documentation states is the measured one.

usage: check_figures.py SOURCE_ROOT PROGRAM...

Each PROGRAM (figures, figures_cpp) prints "name value" lines: the sizes
of the public structs and handles, the wheel's one allocation, the wheel's
level constants, the C++ handles' inline capacities (measured by counting
allocations). The text checked is README.md, docs/*.md (not the dated
results), the man pages of sections 3 and 7 and the public headers.

  - Each rule below finds one statement and compares its number with a
    measured value. A rule whose value this build cannot measure (no loop
    library, a sanitizer that owns malloc) is reported as not checked.
  - Any other "N bytes", "N-byte" or "N KiB" in that text fails: a new
    figure needs a rule here (or a rephrasing without the number).
  - docs/wheel.md's table of levels is recomputed from TWHEEL_LEVELS,
    TWHEEL_LEVEL0_BITS and TWHEEL_LEVEL_BITS.
Exit 0 pass, 1 fail.
"""
import glob
import math
import os
import re
import subprocess
import sys

root = sys.argv[1]
vals = {}
for prog in sys.argv[2:]:
    out = subprocess.run([prog], check=True, capture_output=True, text=True).stdout
    for line in out.splitlines():
        k, v = line.split()
        vals[k] = int(v)

errors = []

# Derived values: what the docs call them.
if 'tw_timer_release' in vals and 'tw_timer_debug' in vals:
    vals['debug_extra'] = vals['tw_timer_debug'] - vals['tw_timer_release']
if 'wheel_alloc_bytes' in vals:
    vals['wheel_kib'] = round(vals['wheel_alloc_bytes'] / 1024, 1)
vals['cache_line'] = 64
for h in ('Timer', 'LoopTimer'):
    cap, got = vals.get(h + '_inline_capacity'), vals.get(h + '_inline_measured')
    if cap is not None and got is not None and cap != got:
        errors.append(f'tw::{h}::inline_capacity is {cap}, but callables of up to {got} '
                      'bytes are stored without an allocation')
    if cap is not None:
        vals[h + '_inline'] = cap
if 'LoopTimer_inline' in vals and vals['LoopTimer_inline'] != vals.get('Timer_inline'):
    errors.append('tw::Timer<tw::Loop> and tw::Timer<tw::Wheel> store callables of different sizes inline; '
                  'docs/cpp.md says one size on every owner')
for h in ('TimerHook', 'LoopTimerHook'):
    if vals.get(h + '_allocations', 0) != 0:
        errors.append(f'a hook ({h}) made, armed, fired, cancelled and destroyed allocated '
                      f'{vals[h + "_allocations"]} times; docs/cpp.md says it allocates nothing')
for demo_h in ('demo/demo_common.h',):
    demo_h = os.path.join(root, demo_h)
    for name in ('DEMO_MAX_LINE', 'DEMO_HTTP_MAX_HEAD'):
        m = os.path.exists(demo_h) and re.search(r'#define\s+' + name + r'\s+(\d+)', open(demo_h).read())
        if m:
            vals[name] = int(m.group(1))

# (statement, the value each number of it is) -- one entry per phrasing.
RULES = [
    # struct tw_timer, release build
    (r'intrusive (\d+)-byte timers', ['tw_timer_release']),
    (r'(\d+)-byte `struct tw_timer`', ['tw_timer_release']),
    (r'struct is (\d+) bytes on LP64 in a release build', ['tw_timer_release']),
    (r'Size: (\d+) bytes on LP64 in a release build', ['tw_timer_release']),
    (r'(\d+)-byte (?:floor )?nodes', ['tw_timer_release']),
    (r'the (\d+)-byte C node', ['tw_timer_release']),
    # what debug_checks adds
    (r'(\d+) more bytes per timer', ['debug_extra']),
    # the legacy headers' timers, release build
    (r'struct timer_list is (\d+) bytes on LP64', ['timer_list_release']),
    (r'struct callout is (\d+) bytes on LP64', ['callout_release']),
    (r'grows by\s+(\d+) bytes', ['debug_extra']),
    # the wheel's one allocation
    (r'about (\d+\.\d) KiB', ['wheel_kib']),
    # struct tw_loop_timer
    (r'\((\d+) bytes in all on\s+LP64; what firing a one-shot timer touches sits in its first (\d+) bytes',
     ['tw_loop_timer_release', 'tw_loop_timer_hot_end_release']),
    (r'Size: (\d+) bytes on LP64 \(the core node is (\d+) of them\)',
     ['tw_loop_timer_release', 'tw_timer_release']),
    (r'fills the first (\d+) bytes, one cache line when the struct is (\d+)-byte aligned',
     ['tw_loop_timer_hot_end_release', 'cache_line']),
    # struct tw_loop_deadline
    (r'A deadline is (\d+) bytes on LP64 in a release build', ['tw_loop_deadline_release']),
    (r'`struct tw_loop_deadline` \((\d+) bytes\)', ['tw_loop_deadline_release']),
    # the CPU's cache line (bench.md)
    (r'(\d+)-byte line', ['cache_line']),
    (r'not (\d+)-byte aligned', ['cache_line']),
    # the C++ handles
    (r'captures\s+up\s+to (\d+) bytes inline', ['Timer_inline']),
    (r'Timer::inline_capacity, (\d+) bytes\)', ['Timer_inline']),
    (r'`inline_capacity` bytes \((\d+), one pointer, for `Timer`; (\d+) for `LoopTimer`\)',
     ['Timer_inline', 'LoopTimer_inline']),
    (r'a `g` above (\d+) bytes: one more', ['Timer_cancel_inline_measured']),
    (r'over (\d+) bytes: one more', ['Timer_cancel_inline_measured']),
    (r'`sizeof\(Timer\)` is (\d+) bytes', ['Timer']),
    (r'callable \((\d+) bytes on LP64\)', ['Timer']),
    (r'and (\d+) inline bytes', ['Timer_inline']),
    (r'one\s+pointer \((\d+) bytes\)', ['TimerHook']),
    (r'`LoopTimer` \((\d+) bytes: a pointer', ['LoopTimer']),
    (r'the C node is in the handle \((\d+) bytes, a callable of up to (\d+) bytes inline',
     ['Timer', 'Timer_inline']),
    (r'the node and a pointer \((\d+) bytes\)', ['TimerHook']),
    (r'the callables \((\d+) bytes inline\)', ['LoopTimer_inline']),
    (r'the handle is a pointer \((\d+) bytes\)', ['LoopTimer']),
    (r'f\(tw::LoopTimer &\)\. (\d+) bytes\.', ['LoopTimer']),
    (r'the C timer and two pointers \((\d+) bytes', ['LoopTimerHook']),
    (r'(\d+) bytes on LP64: the C timer,', ['LoopTimerHook']),
    (r'Allocates only if g\s+(?:///\s+)?exceeds (\d+) bytes', ['LoopTimer_cancel_inline_measured']),
    (r'a `Timer<Wheel>` is (\d+) bytes', ['Timer']),
    (r'a `Hook<Wheel, D>` is (\d+) bytes', ['TimerHook']),
    (r'`Timer<Loop>` is (\d+) bytes', ['LoopTimer']),
    (r'`Hook<Loop, D>` is (\d+) bytes', ['LoopTimerHook']),
    (r'bytes \((\d+) on every owner', ['Timer_inline']),
    (r'three for an (?:`f`|@f) over (\d+) bytes', ['Timer_inline']),
    # the demo's protocol
    (r'longer than (\d+) bytes is malformed', ['DEMO_MAX_LINE']),
    (r'`DEMO_HTTP_MAX_HEAD` \(`demo_common.h`, ([\d,]+)\s+bytes\)', ['DEMO_HTTP_MAX_HEAD']),
]
FIGURE = r'\b\d[\d,.]*\s*(?:-byte|bytes|KiB|MiB)\b'


def texts():
    files = [os.path.join(root, 'README.md')] + sorted(glob.glob(os.path.join(root, 'docs/*.md')))
    files += sorted(glob.glob(os.path.join(root, 'man/*.[37]')))
    for pat in ('libtwheel/include/twheel/*.h', 'libtwheel/uring/include/twheel/*.h',
                'adapters/*/include/twheel/*.h', 'cpp/include/twheel/*.hpp'):
        files += sorted(glob.glob(os.path.join(root, pat)))
    for f in files:
        t = open(f, encoding='utf-8').read()
        if re.search(r'\.[37]$', f):
            t = re.sub(r'\\f[BIRP]|\\&', '', t).replace('\\-', '-').replace('\\e', '\\')
        yield os.path.relpath(f, root), t


checked = unmeasured = 0
for name, t in texts():
    # header comments: one statement may run over " * " or "/// " line starts
    flat = re.sub(r'\n[ \t]*(?:\*(?!/)|///?)?[ \t]*', lambda m: ' ' * len(m.group(0)), t)
    covered = []
    for pat, keys in RULES:
        rx = pat.replace(' ', r'\s+')
        for m in re.finditer(rx, flat):
            covered.append(m.span())
            line = t.count('\n', 0, m.start()) + 1
            for g, key in enumerate(keys, 1):
                stated = m.group(g)
                if key not in vals:
                    unmeasured += 1
                    print(f'not checked here: {name}:{line}: "{m.group(0)}" ({key} not measured in this build)')
                    continue
                checked += 1
                want = vals[key]
                ok = (float(stated.replace(',', '')) == want)
                if key.startswith('tw_loop_timer_hot_end'):
                    ok = want <= int(stated)  # "sits in its first N bytes"
                if not ok:
                    errors.append(f'{name}:{line}: "{m.group(0)}" says {stated}, '
                                  f'but {key} is {want}')
    for m in re.finditer(FIGURE, flat):
        if not any(a <= m.start() and m.end() <= b for a, b in covered):
            line = t.count('\n', 0, m.start()) + 1
            errors.append(f'{name}:{line}: "{m.group(0)}" is a figure no rule of '
                          'check_figures.py checks (add a rule, or say it without the number)')

# docs/wheel.md's table of levels.
L, B0, B = vals.get('levels'), vals.get('level0_bits'), vals.get('level_bits')
if L is not None:
    t = open(os.path.join(root, 'docs/wheel.md'), encoding='utf-8').read()
    rows = re.findall(r'^\| (\d+(?:–\d+)?) \| (.*?) \| (.*?) \| (.*?) \| (.*?) \| (.*?) \|$', t, re.M)
    if not rows:
        errors.append('docs/wheel.md: no table of levels found')

    def start(k):
        return 0 if k == 0 else B0 + (k - 1) * B

    def end(k):  # one past the level's last bit
        return 64 if k == L - 1 else start(k + 1)

    def p2(n):
        return '1 tick' if n == 0 else ('256' if n == 8 else f'2^{n}')

    def human_ms(s):
        m = re.match(r'([\d.]+) (ms|s|min|h|days|years)', s)
        if not m:
            return None
        unit = {'ms': 1, 's': 1e3, 'min': 6e4, 'h': 3.6e6, 'days': 8.64e7, 'years': 3.15576e10}
        return float(m.group(1)) * unit[m.group(2)]

    seen = set()
    for lv, bits, slots, span, rng, ms in rows:
        ks = [int(x) for x in lv.split('–')]
        for k in range(ks[0], ks[-1] + 1):
            seen.add(k)
        checked += 1
        k = ks[0]
        if len(ks) == 1:
            want = (f'{start(k)}–{end(k) - 1}', str(2 ** (end(k) - start(k))), p2(start(k)))
            got = (bits, slots, span)
            if got != want:
                errors.append(f'docs/wheel.md: level {k}: bits, slots, span {got}, computed {want}')
            if k < L - 1 and rng != p2(end(k)).replace('1 tick', '1'):
                errors.append(f'docs/wheel.md: level {k}: range {rng}, computed {p2(end(k))}')
            if k < L - 1 and human_ms(ms) is not None:
                exact = 2 ** end(k)
                if abs(human_ms(ms) - exact) > 0.05 * exact:
                    errors.append(f'docs/wheel.md: level {k}: {ms} at 1 ms/tick, computed {exact} ms')
        else:
            a, b = ks
            want_slots = f'{2 ** B} each'
            want_span = f'2^{start(a)} … 2^{start(b)}'
            want_rng = f'2^{end(a)} … 2^{end(b)}'
            if (slots, span, rng) != (want_slots, want_span, want_rng):
                errors.append(f'docs/wheel.md: levels {lv}: {(slots, span, rng)}, computed '
                              f'{(want_slots, want_span, want_rng)}')
            if human_ms(ms) is not None and abs(human_ms(ms) - 2 ** end(a)) > 0.05 * 2 ** end(a):
                errors.append(f'docs/wheel.md: level {a}: {ms} at 1 ms/tick, computed {2 ** end(a)} ms')
    if rows and seen != set(range(L)):
        errors.append(f'docs/wheel.md: the table has levels {sorted(seen)}, the wheel has 0–{L - 1}')

print(f'{checked} figures checked, {unmeasured} not measurable in this build')
for e in errors:
    print('FAIL:', e)
sys.exit(1 if errors else 0)
