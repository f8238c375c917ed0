"""One entry of compile_commands.json as the compiler's flags alone: no output,
dependency-file or -c options and no source file, so a caller can compile or
preprocess something else (or the same source) with the build's flags."""
import os
import shlex


def flags_only(entry):
    args = shlex.split(entry["command"]) if "command" in entry else list(entry["arguments"])
    out = []
    skip = False
    for a in args:
        if skip:
            skip = False
            continue
        if a in ("-o", "-MF", "-MT", "-MQ"):
            skip = True
            continue
        if a in ("-c", "-MD", "-MMD") or a == entry["file"] or os.path.join(entry["directory"], a) == entry["file"]:
            continue
        out.append(a)
    return out
