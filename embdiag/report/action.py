"""The GitHub Action (``action.yml``): its inputs, read from the environment, as an ``embdiag report``.

The inputs are the options of :class:`~embdiag.report.options.ReportOptions` that declare one
(:func:`inputs`, :func:`environment`: what ``action.yml`` declares, tested against it).

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

from .options import in_action

__all__ = ["inputs", "environment", "arguments", "main"]

#: The Action's own input (how it runs embdiag), not an option of the command.
OWN_INPUTS = {"python-version": {"description": "The Python that runs embdiag.", "default": "3.11"}}


def _default(option) -> str:
    """An input's default as the Action writes it: the option's default as text, "" for none."""
    default = option.default
    if option.action_default is not None:
        return option.action_default
    if option.kind == "switch":
        return "true" if default else "false"
    if option.kind == "number":
        return f"{default:g}"
    return "" if default in (None, ()) else str(default)


def inputs() -> dict[str, dict]:
    """``action.yml``'s ``inputs``: every option of :func:`~embdiag.report.options.in_action`
    (description, and ``required`` or a default), then :data:`OWN_INPUTS`."""
    out = {}
    for o in in_action():
        entry = {"description": o.action}
        out[o.input] = entry | (
            {"required": True} if o.required and o.action_default is None else {"default": _default(o)}
        )
    return out | OWN_INPUTS


def environment() -> dict[str, str]:
    """The ``env`` of ``action.yml``'s report step: ``EMBDIAG_<NAME>`` for each input of an option."""
    return {o.env: f"${{{{ inputs.{o.input} }}}}" for o in in_action()}


def arguments(env: Mapping[str, str]) -> list[str]:
    """``embdiag report``'s arguments from the action's inputs in ``env`` (``EMBDIAG_VECTORS``, ...;
    blank inputs are left out; a switch is ``true`` or ``false``; an option given more than once,
    ``EMBDIAG_FAIL_IF`` or ``EMBDIAG_COMPARE``, holds one rule or path per line).

    Example:
        >>> arguments({"EMBDIAG_VECTORS": "v.npy", "EMBDIAG_COMPRESS": "int8,int4", "EMBDIAG_QUICK": "true",
        ...            "EMBDIAG_FAIL_IF": "overlap@10<0.9\\n\\ndelta_p@10<-1\\n"})
        ['v.npy', '--compress', 'int8,int4', '--quick', '--fail-if', 'overlap@10<0.9', '--fail-if', 'delta_p@10<-1']
    """
    out = []
    for o in in_action():
        value = env.get(o.env, "")
        if o.many:
            out += [part for line in value.splitlines() if line.strip() for part in (o.flag, line.strip())]
            continue
        value = value.strip()
        if o.kind == "switch":
            if value.lower() not in ("", "true", "false"):
                raise ValueError(f"{o.input}: expected true or false, got {value!r}")
            out += [o.flag] if value.lower() == "true" else []
        elif not o.flag.startswith("--"):
            if not value:
                raise ValueError(f"{o.input}: the action needs the path of a vectors file (input '{o.input}')")
            out.append(value)
        elif value:
            out += [o.flag, value]
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
