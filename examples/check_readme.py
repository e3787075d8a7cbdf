#!/usr/bin/env python3
"""Fail if the C example in README.md differs from examples/idle_timeouts.c."""
import re
import sys

readme, example = sys.argv[1], sys.argv[2]
text = open(readme, encoding="utf-8").read()
src = open(example, encoding="utf-8").read()
blocks = re.findall(r"```c\n(.*?)```", text, re.S)
if any(b.strip() == src.strip() for b in blocks):
    print("README example matches", example)
    sys.exit(0)
print(f"README.md has no ```c block identical to {example}; copy the file into it", file=sys.stderr)
sys.exit(1)
