#!/usr/bin/env python3
"""Every API name the documentation mentions exists.

usage: check_names.py SOURCE_ROOT FILE|DIR...

FILE is a Markdown file or a man page; a DIR stands for its *.md files and
its man pages of sections 3 and 7. Checked names:

  - C names with the project's prefixes (tw_, twheel_, TW_, TWHEEL_): each
    must be declared in a public header (libtwheel, the io_uring loop, the
    adapters, the C++ layer), be a symbol version of a linker map, a meson
    variable the build defines for parent projects (twheel_dep...) or a
    variable of the CMake package (cmake/*.in);
  - C++ names: in A::B::C, A must be the namespace tw, a class of the C++
    layer, or (for CMake's imported targets, twheel::twheel...) a target
    the CMake package defines; each further part must be declared in the
    headers, and a member named after a class (Loop::run) must be declared
    in that class or one of its bases;
  - calls on a variable the same file declared of a class of the C++ layer
    (`tw::AsioHost host(io);` then `host.resume()`): the member must be
    declared in that class or one of its bases.

The headers are read from the source tree, so every adapter counts whether
or not this build found its host library. Exit 0 pass, 1 fail.
"""
import glob
import os
import re
import sys

root = sys.argv[1]


def read(path):
    return open(path, encoding='utf-8').read()


def strip_comments(text):
    text = re.sub(r'/\*.*?\*/', ' ', text, flags=re.S)
    return re.sub(r'//[^\n]*', ' ', text)


headers = []
for pat in ('libtwheel/include/twheel/*.h', 'libtwheel/include/twheel/compat/*.h','libtwheel/include/twheel/*.h.in',
            'libtwheel/uring/include/twheel/*.h', 'adapters/*/include/twheel/*.h'):
    headers += glob.glob(os.path.join(root, pat))
cpp_headers = glob.glob(os.path.join(root, 'cpp/include/twheel/*.hpp'))

c_names = set()
for h in headers + cpp_headers:
    c_names |= set(re.findall(r'\b\w+\b', strip_comments(read(h))))
for m in glob.glob(os.path.join(root, '**/*.map'), recursive=True):
    c_names |= set(re.findall(r'^\s*(TWHEEL\w*_[\d.]+)\s*\{', read(m), re.M))  # versions
for m in glob.glob(os.path.join(root, '**/meson.build'), recursive=True):
    if '/build' in os.path.relpath(m, root).replace(os.sep, '/').split('/subprojects')[0][:6]:
        continue
    text = read(m)
    c_names |= set(re.findall(r'^\s*(\w+)\s*=', text, re.M))
    c_names |= set(re.findall(r"set_variable\('(\w+)'", text))
    c_names |= set(re.findall(r"env\s*:\s*\[?'(\w+)=", text))  # test environment
    # set_variable('twheel_' + name + '_dep', ...) over the adapters
    for pre, post in re.findall(r"set_variable\('(\w+)' \+ \w+ \+ '(\w+)'", text):
        for a in ('uv', 'ev', 'event', 'epoll'):
            c_names.add(pre + a + post)
cmake_targets = set()
cmake_patterns = set()  # TWHEEL_${_up}_LIBRARY: one variable per component
for m in glob.glob(os.path.join(root, 'cmake/*.in')):
    cmake_targets |= set(re.findall(r'twheel::([\w+-]+)', read(m)))
    # the CMake package's variables (cache entries a user may set)
    c_names |= set(re.findall(r'\b(TWHEEL_\w+)\b', read(m)))
    for pat in re.findall(r'\b(TWHEEL_(?:\w|\$\{\w+\})*\$\{\w+\}(?:\w|\$\{\w+\})*)', read(m)):
        cmake_patterns.add(re.sub(r'\\\$\\\{\w+\\\}', '[A-Z0-9]+', re.escape(pat)))

# The C++ layer: classes, their bases and their bodies.
cpp_text = ''.join(strip_comments(read(h)) for h in cpp_headers)
cpp_idents = set(re.findall(r'\b\w+\b', cpp_text))
classes = {}  # name -> (bases, body)
for m in re.finditer(r'\b(?:class|struct)\s+(\w+)\s*(?:final\s*)?(:[^{;]*)?\{', cpp_text):
    depth, i = 1, m.end()
    while depth and i < len(cpp_text):
        depth += {'{': 1, '}': -1}.get(cpp_text[i], 0)
        i += 1
    bases = re.findall(r'(\w+)\s*(?:<[^>]*>)?\s*(?:,|$)', (m.group(2) or '').strip(': '))
    body = cpp_text[m.end():i]
    old = classes.get(m.group(1))
    if not old or len(body) > len(old[1]):
        classes[m.group(1)] = (bases, body)
namespaces = set(re.findall(r'\bnamespace\s+(\w+)', cpp_text))


def own_body(body):
    """@body without the bodies of the classes nested in it."""
    out, i = '', 0
    for m in re.finditer(r'\b(?:class|struct)\s+\w+\s*(?:final\s*)?(:[^{;]*)?\{', body):
        if m.start() < i:
            continue
        depth, j = 1, m.end()
        while depth and j < len(body):
            depth += {'{': 1, '}': -1}.get(body[j], 0)
            j += 1
        out += body[i:m.start()]
        i = j
    return out + body[i:]


def declares(cls, name, seen=()):
    """@name is declared in class @cls itself or a base, not in a class nested in it."""
    if cls not in classes or cls in seen:
        return False
    bases, body = classes[cls]
    if re.search(r'\b' + re.escape(name) + r'\b', own_body(body)):
        return True
    return any(declares(b, name, seen + (cls,)) for b in bases)


def member_of(cls, name, seen=()):
    if cls not in classes or cls in seen:
        return False
    bases, body = classes[cls]
    if re.search(r'\b' + re.escape(name) + r'\b', body):
        return True
    return any(member_of(b, name, seen + (cls,)) for b in bases)


def check_cpp(name):
    parts = name.split('::')
    if parts[0] == 'twheel':
        if len(parts) == 2 and parts[1] in cmake_targets:
            return None
        return 'no namespace twheel (the C++ namespace is tw; twheel:: names CMake targets)'
    if parts[0] == 'tw':
        parts = parts[1:]
    elif parts[0] not in classes:
        return None  # std::, boost::, asio::, ...: not ours
    for n, p in enumerate(parts):
        if p not in cpp_idents:
            return f'{p} is not declared in the C++ headers'
        if n and parts[n - 1] in classes and not member_of(parts[n - 1], p) and p not in namespaces:
            return f'{parts[n - 1]} has no member {p}'
    return None


errors = []
nc = ncpp = 0
files = []
for p in sys.argv[2:]:
    files += (sorted(glob.glob(os.path.join(p, '*.md')) + glob.glob(os.path.join(p, '*.[37]')))
              if os.path.isdir(p) else [p])
for f in files:
    text = read(f)
    var_class = {}  # a variable this file's code declared -> its tw:: class
    in_code = False  # a ``` block, or a man page's .nf/.EX block
    if re.search(r'\.[1-8]$', f):
        text = re.sub(r'\\f[BIRP]|\\f\(..|\\&', '', text).replace('\\-', '-').replace('\\e', '\\')
    for lineno, line in enumerate(text.split('\n'), 1):
        where = f'{os.path.relpath(f)}:{lineno}'
        if re.match(r'```|\.(nf|fi|EX|EE)\b', line):
            in_code = not line.startswith(('.fi', '.EE')) and not (line.startswith('```') and in_code)
        for m in re.finditer(r'(?<![\w/.-])((?:\w+::)+[\w+-]*\w\+*)', line):
            name = m.group(1)
            if name.startswith(('std::', 'boost::', 'asio::')):
                continue
            # a CMake target name keeps its -uring++ suffix; C++ names stop at \w
            if not name.startswith('twheel::'):
                name = re.match(r'[\w:]*\w', name).group(0)
            ncpp += 1
            why = check_cpp(name)
            if why:
                errors.append(f'{where}: {name}: {why}')
        for m in re.finditer(r'(?<![\w/.-])((?:tw|twheel|TW|TWHEEL)_\w*[A-Za-z0-9](?:\.\d+)*)'
                             r'(?![\w*]|\.(?:c|h|md|py|sh|cpp|hpp|map|in)\b)', line):
            name = m.group(1)
            nc += 1
            if name not in c_names and not any(re.fullmatch(p, name) for p in cmake_patterns):
                errors.append(f'{where}: {name} is not declared in any public header')
        for m in re.finditer(r'\btw::(\w+)(?:<[^<>]*>)?\s+(\w+)\s*[({=;]', line if in_code else ''):
            if m.group(1) in classes:
                var_class[m.group(2)] = m.group(1)
        for m in re.finditer(r'(?<![\w.>])(\w+)\.(\w+)\s*\(', line if in_code else ''):
            cls = var_class.get(m.group(1))
            if cls:
                ncpp += 1
                if not declares(cls, m.group(2)):
                    errors.append(f'{where}: {m.group(1)}.{m.group(2)}(): {cls} has no member {m.group(2)}')

print(f'{nc} C names and {ncpp} C++ names checked')
for e in errors:
    print('FAIL:', e)
sys.exit(1 if errors else 0)
