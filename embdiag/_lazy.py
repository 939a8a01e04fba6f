"""A package's names, imported from their modules on first use (PEP 562).

``embdiag.data`` and ``embdiag.interventions`` export the names of many modules; importing one
module of theirs (``embdiag.data.files``, ``embdiag.interventions.ann``) should not import the
rest, and scikit-learn, image readers and loaders with them. :func:`exports` gives the package
a module ``__getattr__`` that imports a name's module when the name is first read.
"""

from __future__ import annotations

import importlib
import sys
from collections.abc import Callable, Mapping


def exports(package: str, modules: Mapping[str, tuple[str, ...]]) -> tuple[list[str], Callable, Callable]:
    """``(__all__, __getattr__, __dir__)`` for ``package`` whose submodule ``m`` exports the names
    ``modules[m]``: the names loaded on first use, the module ``__getattr__`` that loads one, and a
    ``__dir__`` listing them with the package's own names.

    Example:
        >>> all_, getattr_, _ = exports("embdiag", {"synthetic": ("anisotropic_gaussian",)})
        >>> all_, getattr_("anisotropic_gaussian").__module__
        (['anisotropic_gaussian'], 'embdiag.synthetic')
    """
    where = {name: module for module, names in modules.items() for name in names}

    def __getattr__(name: str):
        if name not in where:
            raise AttributeError(f"module {package!r} has no attribute {name!r}")
        return getattr(importlib.import_module(f"{package}.{where[name]}"), name)

    def __dir__() -> list[str]:
        return sorted({*vars(sys.modules[package]), *where})

    return sorted(where), __getattr__, __dir__
