#!/usr/bin/env python3
"""The docs a newcomer follows stay true: the README's program is the example CI
builds and runs (examples/0_hello.cpp), its CMake lines are the ones the
packaging consumer uses, the README stays short, and every relative link in the
README and docs/ names a file (and a heading) that exists.

usage: check_docs.py <source root>
"""
import pathlib
import re
import sys

root = pathlib.Path(sys.argv[1])
problems = []

readme = (root / "README.md").read_text()
# 12 KiB: the front page opens with the program; the reference lives in docs/.
if len(readme.encode()) > 12 * 1024:
    problems.append(f"README.md is {len(readme.encode())} bytes, over 12 KiB: move reference text to docs/")


def fenced_block(text, heading, lang):
    """The first ```lang block after `heading`."""
    at = text.find(heading)
    if at < 0:
        return None
    m = re.compile(r"^```" + lang + r"\n(.*?)^```", re.S | re.M).search(text, at)
    return m.group(1) if m else None


program = fenced_block(readme, "## A complete program", "cpp")
example = (root / "examples/0_hello.cpp").read_text()
if program != example:
    problems.append("README.md's complete program differs from examples/0_hello.cpp (copy the file into it)")

cmake = fenced_block(readme, "## A complete program", "cmake") or ""
consumer = (root / "tests/packaging/cmake_consumer/CMakeLists.txt").read_text()
for line in cmake.splitlines():
    if line.startswith(("find_package(", "target_link_libraries(", "target_compile_features(")):
        if line.strip() not in consumer:
            problems.append(f"README.md's CMake line '{line}' is not in tests/packaging/cmake_consumer (not tested)")


def anchors(text):
    """GitHub's heading ids: lower case, punctuation dropped, spaces to dashes."""
    ids = set()
    for m in re.finditer(r"^#+ (.*)$", text, re.M):
        slug = re.sub(r"[^\w\- ]", "", m.group(1).strip().lower()).replace(" ", "-")
        ids.add(slug)
    return ids


pages = [root / "README.md", root / "bench/README.md", *sorted((root / "docs").glob("*.md"))]
for page in pages:
    text = page.read_text()
    # Links outside code: drop fenced blocks and inline code first.
    prose = re.sub(r"^```.*?^```", "", text, flags=re.S | re.M)
    prose = re.sub(r"`[^`\n]*`", "", prose)
    for target in re.findall(r"\]\(([^)\s]+)\)", prose):
        if re.match(r"[a-z]+:", target):
            continue  # https:, mailto:
        path, _, anchor = target.partition("#")
        dest = (page.parent / path).resolve() if path else page
        name = page.relative_to(root)
        if not dest.exists():
            problems.append(f"{name}: link to {target}: no such file")
        elif anchor and dest.suffix == ".md" and anchor not in anchors(dest.read_text()):
            problems.append(f"{name}: link to {target}: no such heading")

for p in problems:
    print(f"check_docs: {p}")
sys.exit(1 if problems else 0)
