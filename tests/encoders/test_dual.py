"""Reference dual encoder: shapes, unit rows, roles, resizing, weights file that rebuilds it."""

import hashlib

import numpy as np
import pytest
import torch

from embdiag.encoders import DualConfig, DualEncoder, Encoder, ReferenceEncoder, WordTokenizer
from embdiag.encoders.dual import image_tensor, to_bytes

TEXTS = ["A red car on a highway at night.", "Two pedestrians on a city street.", "An empty road."]


def _encoder(arch: str) -> ReferenceEncoder:
    torch.manual_seed(0)
    tok = WordTokenizer(max_len=16).fit(TEXTS)
    cfg = DualConfig(
        arch=arch,
        width=32,
        depth=1,
        heads=2,
        channels=(8, 16),
        text_width=32,
        text_depth=1,
        vocab_size=len(tok.vocabulary_),
        max_len=16,
        dim=64,
    )
    return ReferenceEncoder(DualEncoder(cfg), tok, f"tiny-{arch}", "r0")


@pytest.mark.parametrize("arch", ["vit", "cnn"])
def test_unit_float32_rows_in_batches(arch):
    enc = _encoder(arch)
    assert isinstance(enc, Encoder)
    images = np.random.default_rng(0).integers(0, 256, (5, 32, 32, 3), dtype=np.uint8)
    Z = enc.encode_images(images, batch_size=2)
    assert Z.dtype == np.float32 and Z.shape == (5, 64)
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1, atol=1e-5)
    np.testing.assert_allclose(Z, enc.encode_images(images, batch_size=5), atol=1e-5)
    q, d = enc.encode_texts(TEXTS, "query"), enc.encode_texts(TEXTS, "document")
    assert q.shape == d.shape == (3, 64) and not np.allclose(q, d)  # the role prompt matters
    big = enc.encode_images(np.repeat(np.repeat(images, 2, 1), 2, 2))  # 64 px images are area-resized
    np.testing.assert_allclose(big, Z, atol=1e-4)


def test_weights_file_alone_rebuilds_the_encoder_and_pins_the_revision():
    enc = _encoder("vit")
    data = to_bytes(enc.model, enc.tokenizer)
    again = ReferenceEncoder.from_bytes(data, "tiny-vit")
    assert again.revision == hashlib.sha256(data).hexdigest() and again.model.config == enc.model.config
    np.testing.assert_array_equal(again.encode_texts(TEXTS), enc.encode_texts(TEXTS))
    with pytest.raises(ValueError, match="metadata"):
        from safetensors.torch import save

        ReferenceEncoder.from_bytes(save({"x": torch.zeros(1)}), "bad")


def test_progress_goes_to_stderr(capsys):
    _encoder("cnn").encode_texts(TEXTS, batch_size=2, progress=True)
    assert "3/3" in capsys.readouterr().err


def test_errors_name_the_argument():
    enc = _encoder("vit")
    with pytest.raises(ValueError, match="images"):
        enc.encode_images(np.zeros((2, 32, 32, 3), np.float32))
    with pytest.raises(ValueError, match="role"):
        enc.encode_texts(TEXTS, role="passage")
    with pytest.raises(ValueError, match="batch_size"):
        enc.encode_texts(TEXTS, batch_size=0)
    with pytest.raises(ValueError, match="arch"):
        DualConfig(arch="mlp")
    with pytest.raises(ValueError, match="patch"):
        DualConfig(image_size=32, patch=5)
    assert image_tensor(np.full((1, 8, 8, 3), 255, np.uint8), 8).max() == 1.0
