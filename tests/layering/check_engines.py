#!/usr/bin/env python3
"""The local server knows its isolation engines by name in one place only
(src/emulator/engines/engine_factory.cpp): no other file compares a string
with an engine's name, and no file outside an engine's folder includes that
engine's class header (engines/<name>/<name>_engine.hpp) but the factory.

usage: check_engines.py <source dir>"""
import os
import re
import sys

source_dir = os.path.abspath(sys.argv[1])
server = os.path.join(source_dir, "src", "emulator")
engines_dir = os.path.join(server, "engines")
factory = os.path.join(engines_dir, "engine_factory.cpp")
names = sorted(d for d in os.listdir(engines_dir) if os.path.isdir(os.path.join(engines_dir, d)))
# What --engine and the ledger call them: each engine's name() (a folder's name with '-' for '_').
spelled = {n.replace("_", "-") for n in names} | {"agent"}
literal = "|".join(re.escape(n) for n in sorted(spelled))
compare = re.compile(rf'(==|!=)\s*"({literal})"|"({literal})"\s*(==|!=)')
include = re.compile(r'#include\s+"emulator/engines/([a-z_]+)/\1_engine\.hpp"')

failures = []
files = 0
for dirpath, _, filenames in os.walk(server):
    for name in filenames:
        if not name.endswith((".cpp", ".hpp")):
            continue
        path = os.path.join(dirpath, name)
        files += 1
        rel = os.path.relpath(path, source_dir)
        text = open(path, encoding="utf-8").read()
        for no, line in enumerate(text.splitlines(), 1):
            if path != factory and compare.search(line):
                failures.append(f"{rel}:{no}: compares with an engine's name: {line.strip()}")
            m = include.search(line)
            if m and path != factory and not path.startswith(os.path.join(engines_dir, m.group(1)) + os.sep):
                failures.append(f"{rel}:{no}: includes the {m.group(1)} engine (only the factory may)")

if files == 0 or not names:
    print("check_engines: no engines found under src/emulator/engines")
    sys.exit(1)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"check_engines: {len(names)} engines ({', '.join(names)}), named only by the factory ({files} files)")
