"""Image files read on demand: decoded, centre-cropped and resized to a square uint8 array.

:class:`LazyImages` behaves like an N x size x size x 3 uint8 array whose rows are read
from files only when indexed, so a real dataset of thousands of images costs nothing
until a chapter touches its pixels. Missing or unreadable files raise errors naming them.
"""

from __future__ import annotations

from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Sequence

import numpy as np

from .errors import DataFileNotFoundError, ImageReadError

CROPS = ("center", "resize")


def read_image(path: str | Path, size: int, crop: str = "center") -> np.ndarray:
    """Decode ``path`` as RGB and return size x size x 3 uint8.

    ``crop="center"`` resizes the shorter side to ``size`` and keeps the central square;
    ``crop="resize"`` squeezes the whole image to a square.
    """
    from PIL import Image, UnidentifiedImageError

    path = Path(path)
    if crop not in CROPS:
        raise ValueError(f"crop: expected one of {CROPS}, got {crop!r}")
    if not path.is_file():
        raise DataFileNotFoundError(f"{path}: image file not found")
    try:
        with Image.open(path) as im:
            im.draft("RGB", (size * 2, size * 2))  # fast JPEG downscaling
            im = im.convert("RGB")
            w, h = im.size
            if crop == "center":
                s = min(w, h)
                im = im.crop(((w - s) // 2, (h - s) // 2, (w - s) // 2 + s, (h - s) // 2 + s))
            im = im.resize((size, size), Image.Resampling.BICUBIC, reducing_gap=2.0)
            return np.asarray(im, dtype=np.uint8).copy()
    except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
        raise ImageReadError(f"{path}: cannot read image ({type(e).__name__}: {e})") from e


def check_image_files(paths: Sequence[Path], *, open_headers: bool = True) -> None:
    """Raise for the first missing file, or (``open_headers``) the first file PIL cannot identify."""
    from PIL import Image, UnidentifiedImageError

    for p in paths:
        if not p.is_file():
            raise DataFileNotFoundError(f"{p}: image file not found")
        if open_headers:
            try:
                with Image.open(p) as im:
                    im.size  # noqa: B018 (reads the header only)
            except (UnidentifiedImageError, OSError, SyntaxError, ValueError) as e:
                raise ImageReadError(f"{p}: cannot read image ({type(e).__name__}: {e})") from e


class LazyImages:
    """Array-like N x size x size x 3 uint8 view of image files, decoded when indexed."""

    dtype = np.dtype(np.uint8)
    ndim = 4

    def __init__(self, paths: Sequence[str | Path], size: int = 64, crop: str = "center", workers: int = 2):
        if not 8 <= int(size) <= 1024:
            raise ValueError(f"size: expected 8..1024 pixels, got {size}")
        if crop not in CROPS:
            raise ValueError(f"crop: expected one of {CROPS}, got {crop!r}")
        self.paths = [Path(p) for p in paths]
        self.size, self.crop, self.workers = int(size), crop, max(1, int(workers))

    @property
    def shape(self) -> tuple[int, int, int, int]:
        return (len(self.paths), self.size, self.size, 3)

    def __len__(self) -> int:
        return len(self.paths)

    def __repr__(self) -> str:
        return f"LazyImages({len(self)} files, {self.size}x{self.size}, crop={self.crop!r})"

    def _read(self, idx: Sequence[int]) -> np.ndarray:
        out = np.empty((len(idx), self.size, self.size, 3), np.uint8)
        read = lambda i: read_image(self.paths[i], self.size, self.crop)  # noqa: E731
        if self.workers > 1 and len(idx) > 8:
            with ThreadPoolExecutor(self.workers) as ex:
                for k, im in enumerate(ex.map(read, idx)):
                    out[k] = im
        else:
            for k, i in enumerate(idx):
                out[k] = read(i)
        return out

    def __getitem__(self, key):
        if isinstance(key, (int, np.integer)):
            return self._read([range(len(self))[key]])[0]
        idx = np.arange(len(self))[key]
        return self._read([int(i) for i in np.atleast_1d(idx)])

    def take(self, indices) -> "LazyImages":
        """A lazy view of the given rows."""
        return LazyImages([self.paths[int(i)] for i in np.asarray(indices).ravel()], self.size, self.crop, self.workers)

    def load(self) -> np.ndarray:
        """Decode every image into one array."""
        return self._read(list(range(len(self))))

    def __array__(self, dtype=None, copy=None):
        a = self.load()
        return a if dtype is None else a.astype(dtype)
