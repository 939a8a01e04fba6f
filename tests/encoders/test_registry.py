"""Registry: one factory signature, clear errors naming the valid names."""

import pytest
import torch

from embdiag import artifacts
from embdiag.encoders import REFERENCE_NAMES, DualConfig, DualEncoder, WordTokenizer, load_encoder
from embdiag.encoders.dual import to_bytes


def _save(root, name):
    tok = WordTokenizer(max_len=8).fit(["a red car"])
    torch.manual_seed(0)
    model = DualEncoder(
        DualConfig(width=16, depth=1, heads=2, text_width=16, vocab_size=len(tok.vocabulary_), max_len=8, dim=32)
    )
    data = to_bytes(model, tok)
    artifacts.save(f"encoders/{name}", {"weights.safetensors": data}, {}, root=root)
    return data


def test_reference_names_load_from_the_data_folder(tmp_path):
    assert REFERENCE_NAMES == ("reference-vit", "reference-cnn")
    _save(tmp_path, "reference-vit")
    enc = load_encoder("reference-vit", root=tmp_path)
    assert enc.name == "reference-vit" and enc.dim == 32


def test_missing_corrupt_and_unknown_names(tmp_path):
    with pytest.raises(artifacts.MissingArtifactError, match="--arch cnn"):
        load_encoder("reference-cnn", root=tmp_path)
    _save(tmp_path, "reference-cnn")
    (tmp_path / "encoders" / "reference-cnn" / "weights.safetensors").write_bytes(b"x")
    with pytest.raises(artifacts.CorruptArtifactError, match="checksum"):
        load_encoder("reference-cnn", root=tmp_path)
    for bad in ("clip", "hf:", "reference-mlp"):
        with pytest.raises(ValueError, match="reference-vit.*hf:<model id>@<revision>"):
            load_encoder(bad, root=tmp_path)
