"""Where the project's folders are: the checkout holding ``_toc.yml``, ``notebooks/`` and ``data/``."""

from __future__ import annotations

import os
from pathlib import Path


def _is_root(path: Path) -> bool:
    return (path / "_toc.yml").is_file() and (path / "notebooks").is_dir()


def project_root() -> Path:
    """``$EMBDIAG_ROOT``; else the checkout this package was installed from (editable
    installs); else the nearest folder at or above the working directory holding
    ``_toc.yml`` and ``notebooks/``; else the working directory."""
    env = os.environ.get("EMBDIAG_ROOT")
    if env:
        return Path(env).resolve()
    checkout = Path(__file__).resolve().parents[1]
    if _is_root(checkout):
        return checkout
    here = Path.cwd().resolve()
    return next((p for p in (here, *here.parents) if _is_root(p)), here)


def published_dir() -> Path:
    """``data/study`` of the checkout: the published study's transcribed values. They travel
    with the code (they are text transcribed from the paper, not artifacts), so they are read
    from the project root even when ``$EMBDIAG_DATA`` points elsewhere."""
    return project_root() / "data" / "study"
