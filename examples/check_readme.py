#!/usr/bin/env python3
"""Fail unless README.md shows each example file verbatim in a fenced block.

usage: check_readme.py README.md LANG:FILE [LANG:FILE ...]
e.g.   check_readme.py README.md c:examples/idle_timeouts.c cpp:cpp/examples/wheel_example.cpp
"""
import re
import sys

readme = sys.argv[1]
text = open(readme, encoding="utf-8").read()
bad = 0
for spec in sys.argv[2:]:
    lang, path = spec.split(":", 1)
    src = open(path, encoding="utf-8").read()
    blocks = re.findall(r"```" + re.escape(lang) + r"\n(.*?)```", text, re.S)
    if any(b.strip() == src.strip() for b in blocks):
        print(f"README shows {path} as it is")
    else:
        print(f"README.md has no ```{lang} block identical to {path}; copy the file into it",
              file=sys.stderr)
        bad = 1
sys.exit(bad)
