"""Images as ``data:`` URLs, so figures and tables carry their pictures offline."""

from __future__ import annotations

import base64
import io

import numpy as np
from PIL import Image


def to_data_url(image: np.ndarray, fmt: str = "png", scale: int = 1) -> str:
    """A uint8 H x W x 3 image as a base64 ``data:`` URL, PNG (exact) or JPEG (small; quality 90)."""
    im = Image.fromarray(np.asarray(image, np.uint8))
    if scale > 1:
        im = im.resize((im.width * scale, im.height * scale), Image.Resampling.NEAREST)
    buf = io.BytesIO()
    if fmt == "png":
        im.save(buf, format="PNG", optimize=True)
    elif fmt == "jpeg":
        im.save(buf, format="JPEG", quality=90)
    else:
        raise ValueError(f"fmt: expected 'png' or 'jpeg', got {fmt!r}")
    return f"data:image/{fmt};base64," + base64.b64encode(buf.getvalue()).decode("ascii")
