"""The GitHub Action (``action.yml``): its inputs, read from the environment, as an ``embdiag report``.

GitHub passes each input ``name`` of a composite action's step as the variable ``EMBDIAG_<NAME>``
(set in ``action.yml``'s ``env``, never pasted into the shell, so no input can inject a command).
:func:`arguments` turns them into the command's arguments; ``python -m embdiag.report.action``
replaces itself with ``embdiag report ARGS`` (the console script, on the pinned float path), so
the job's status is the report's: 0 written, 1 a ``--fail-if`` rule violated, 2 bad input.
"""

from __future__ import annotations

import os
import shutil
import sys
from collections.abc import Mapping

__all__ = ["INPUTS", "arguments", "main"]

#: The action's inputs that name a file or value of ``embdiag report`` -> its option ("" positional).
INPUTS = {
    "vectors": "",
    "labels": "--labels",
    "pairs": "--pairs",
    "qrels": "--qrels",
    "compare": "--compare",
    "queries": "--queries",
    "compress": "--compress",
    "index": "--index",
    "k": "--k",
    "seed": "--seed",
    "margin": "--margin",
    "out": "--out",
}
#: Inputs that are switches ("true" / "false").
SWITCHES = {"quick": "--quick", "stress": "--stress"}


def arguments(env: Mapping[str, str]) -> list[str]:
    """``embdiag report``'s arguments from the action's inputs in ``env`` (``EMBDIAG_VECTORS``, ...;
    blank inputs are left out; ``EMBDIAG_FAIL_IF`` holds one rule per line).

    Example:
        >>> arguments({"EMBDIAG_VECTORS": "v.npy", "EMBDIAG_COMPRESS": "int8,int4", "EMBDIAG_QUICK": "true",
        ...            "EMBDIAG_FAIL_IF": "overlap@10<0.9\\n\\ndelta_p@10<-1\\n"})
        ['v.npy', '--compress', 'int8,int4', '--quick', '--fail-if', 'overlap@10<0.9', '--fail-if', 'delta_p@10<-1']
    """
    value = {name: env.get(f"EMBDIAG_{name.upper().replace('-', '_')}", "").strip() for name in (*INPUTS, *SWITCHES)}
    if not value["vectors"]:
        raise ValueError("vectors: the action needs the path of a vectors file (input 'vectors')")
    out = [value["vectors"]]
    for name, option in INPUTS.items():
        if option and value[name]:
            out += [option, value[name]]
    for name, option in SWITCHES.items():
        flag = value[name].lower()
        if flag not in ("", "true", "false"):
            raise ValueError(f"{name}: expected true or false, got {value[name]!r}")
        if flag == "true":
            out.append(option)
    for rule in env.get("EMBDIAG_FAIL_IF", "").splitlines():
        if rule.strip():
            out += ["--fail-if", rule.strip()]
    return out


def main() -> int:
    """Replace this process by ``embdiag report`` with the action's arguments (exit 2 on a bad input)."""
    try:
        argv = arguments(os.environ)
    except ValueError as e:
        print(f"embdiag action: {e}", file=sys.stderr)
        return 2
    command = shutil.which("embdiag")
    if command is None:
        print("embdiag action: the embdiag command is not installed", file=sys.stderr)
        return 2
    print("embdiag report " + " ".join(argv), flush=True)
    os.execv(command, [command, "report", *argv])
    return 3  # not reached


if __name__ == "__main__":
    sys.exit(main())
