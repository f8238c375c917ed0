#!/usr/bin/env python3
"""Cache keys for clang-tidy results, one per translation unit.

A key hashes what clang-tidy's verdict depends on: its version, .clang-tidy,
the compile command and the preprocessed source (every header it includes),
with the checkout's path taken out so that a fresh clone elsewhere hits the
results of an earlier run. Prints "<key> <file>" per file.

  tidy_keys.py <build dir> <clang-tidy> <file>...
"""
import concurrent.futures
import hashlib
import json
import os
import subprocess
import sys

from compile_command import flags_only


def main():
    build, tidy, files = sys.argv[1], sys.argv[2], sys.argv[3:]
    root = os.getcwd()
    commands = {e["file"]: e for e in json.load(open(os.path.join(build, "compile_commands.json")))}
    version = subprocess.run([tidy, "--version"], capture_output=True, text=True, check=True).stdout
    with open(".clang-tidy", "rb") as f:
        config = f.read()

    def key(path):
        entry = commands[path]
        # Preprocessed, comments kept (NOLINT, argument comments), no line markers.
        out = flags_only(entry) + [entry["file"]]
        pre = subprocess.run(out + ["-E", "-C", "-P", "-o", "-"], cwd=entry["directory"], capture_output=True, check=True)
        h = hashlib.sha256()
        for part in (version.encode(), config, entry["command"].encode(), pre.stdout):
            h.update(part.replace(root.encode(), b"@ROOT@"))
            h.update(b"\0")
        return h.hexdigest()

    with concurrent.futures.ThreadPoolExecutor(max_workers=int(os.environ.get("TIDY_JOBS", "2"))) as pool:
        for path, k in zip(files, pool.map(key, files)):
            print(k, path)


if __name__ == "__main__":
    main()
