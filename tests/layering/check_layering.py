#!/usr/bin/env python3
"""Layering, checked by the compiler. For each area, a probe translation unit
is compiled (-fsyntax-only) with exactly the flags the build uses for that
area's sources (from compile_commands.json); it fails when the area can see
another area's internal headers it must not, or cannot see one it should.
The allowed directions are the USES of src/<area>/CMakeLists.txt.

usage: check_layering.py <source dir> <build dir>"""
import json
import os
import subprocess
import sys
import tempfile

sys.path.insert(0, os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "..", "scripts"))
from compile_command import flags_only  # noqa: E402

source_dir, build_dir = (os.path.abspath(p) for p in sys.argv[1:3])
# One internal header per area that has any.
header = {
    "protocol": "protocol/envelope.hpp",
    "core": "core/utf8.hpp",
    "wire": "wire/retry.hpp",
    "adapter": "adapter/exec.hpp",
    "emulator": "emulator/server_state.hpp",
    "cli": "cli/commands.hpp",
}
# What each area may include besides its own headers and include/prism_e2b/.
sees = {
    "protocol": set(),
    "core": {"protocol"},
    "wire": {"protocol", "core"},
    "adapter": {"core", "protocol"},
    "emulator": {"protocol"},
    "cli": set(),
}

# The target that compiles each area's sources: its flags are the ones probed
# (the same directory also builds programs with flags of their own, and in a
# unity build the compiled files are batches in the build tree).
target = {
    "protocol": "prism_e2b_protocol",
    "core": "prism_e2b_core",
    "wire": "prism_e2b_wire",
    "adapter": "prism_e2b_adapter",
    "emulator": "prism_e2b_emulator_objects",
    "cli": "prism_e2b_cli",
}

commands = json.load(open(os.path.join(build_dir, "compile_commands.json")))


def command_text(e):
    return e.get("command") or " ".join(e.get("arguments", []))


checked, failures = [], []
for area, allowed in sees.items():
    marker = f"CMakeFiles/{target[area]}.dir/"
    entry = next((e for e in commands if marker in command_text(e)), None)
    if entry is None:
        continue  # not built in this configuration
    lines = [f"// probe: {area} sees {sorted(allowed)}"]
    for other, h in header.items():
        if other == area or other in allowed:
            lines += [f'#if !__has_include("{h}")', f'#error "layering: {area} cannot include {h}"', "#endif"]
        else:
            lines += [f'#if __has_include("{h}")', f'#error "layering: {area} can include {h}"', "#endif"]
    out = flags_only(entry)
    with tempfile.NamedTemporaryFile("w", suffix=".cpp", delete=False) as f:
        f.write("\n".join(lines) + "\n")
        probe = f.name
    try:
        r = subprocess.run(out + ["-fsyntax-only", probe], cwd=entry["directory"], capture_output=True, text=True)
    finally:
        os.unlink(probe)
    if r.returncode != 0:
        failures.append(f"{area}:\n{r.stderr.strip()}")
    checked.append(area)

if not checked:
    print("check_layering: no area sources in compile_commands.json")
    sys.exit(1)
if failures:
    print("\n".join(failures))
    sys.exit(1)
print(f"check_layering: {', '.join(checked)} see only what they may")
