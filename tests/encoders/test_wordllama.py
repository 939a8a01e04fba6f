"""WordLlama l2_supercat: pinned files checked, loaded without any network attempt, clear errors."""

import socket
import sys

import numpy as np
import pytest

from embdiag.encoders import load_encoder, prefix
from embdiag.encoders import wordllama as wl
from embdiag.encoders.protocol import Encoder


def _no_network(*args, **kwargs):
    raise AssertionError("a network call was attempted")


@pytest.fixture
def offline(monkeypatch):
    """Every way out of the process raises: sockets, DNS, requests, the hub's tokenizer download."""
    import requests
    import tokenizers

    for name in ("connect", "connect_ex"):
        monkeypatch.setattr(socket.socket, name, _no_network)
    monkeypatch.setattr(socket, "create_connection", _no_network)
    monkeypatch.setattr(socket, "getaddrinfo", _no_network)
    monkeypatch.setattr(requests, "get", _no_network)
    monkeypatch.setattr(requests.Session, "request", _no_network)
    monkeypatch.setattr(tokenizers.Tokenizer, "from_pretrained", _no_network)


def test_loads_offline_from_the_installed_wheel(offline):
    enc = load_encoder(wl.NAME)
    assert isinstance(enc, Encoder) and enc.name == "wordllama:l2_supercat" and enc.dim == 256
    assert enc.revision == wl.revision() and len(enc.revision) == 64
    Z = enc.encode_texts(["a domestic dog", "a feline pet", "the stock market fell"])
    assert Z.shape == (3, 256) and Z.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1, rtol=1e-6)
    assert Z[0] @ Z[1] > Z[0] @ Z[2]  # it means something
    np.testing.assert_array_equal(enc.encode_texts(["a domestic dog"], role="document"), Z[:1])  # no prompts


def test_rows_are_wordllamas_normalised_mean_of_token_vectors():
    enc = wl.load_wordllama()
    texts = ["draw air into, and expel out of, the lungs", "a member of the genus Canis", "x"]
    np.testing.assert_array_equal(enc.encode_texts(texts, batch_size=2), enc.model.embed(texts, norm=True))


def test_a_prefix_of_the_native_rows_is_wordllamas_own_truncated_model():
    """Mean pooling is linear, so cutting the pooled rows equals cutting the token table (trunc_dim)."""
    enc, texts = wl.load_wordllama(), ["draw air into, and expel out of, the lungs", "a member of the genus Canis"]
    for d in wl.DIMS[1:]:
        own = wl._import_wordllama().load(
            "l2_supercat", cache_dir=wl.package_folder(), trunc_dim=d, disable_download=True
        )
        np.testing.assert_allclose(prefix(enc.encode_texts(texts), d), own.embed(texts, norm=True), rtol=0, atol=2e-7)


def test_text_only_and_roles_checked():
    enc = wl.load_wordllama()
    with pytest.raises(TypeError, match="embeds texts only"):
        enc.encode_images(np.zeros((1, 8, 8, 3), np.uint8))
    with pytest.raises(ValueError, match="role"):
        enc.encode_texts(["x"], role="passage")


def test_the_revision_pins_the_package_and_both_files(monkeypatch):
    before = wl.revision()
    assert wl.PACKAGE == "wordllama==0.4.0.post1" and sorted(wl.FILES) == [
        "tokenizers/l2_supercat_tokenizer_config.json",
        "weights/l2_supercat_256.safetensors",
    ]
    monkeypatch.setitem(wl.FILES, "weights/l2_supercat_256.safetensors", "0" * 64)
    assert wl.revision() != before


def test_files_that_differ_from_the_pinned_digests_are_refused(monkeypatch):
    monkeypatch.setitem(wl.FILES, "weights/l2_supercat_256.safetensors", "0" * 64)
    with pytest.raises(
        wl.WordLlamaError,
        match=r"l2_supercat_256.safetensors differs from the file "
        r"wordllama==0\.4\.0\.post1 ships .*pip install --force-reinstall",
    ):
        wl.load_wordllama()


def test_a_missing_package_names_it(monkeypatch):
    monkeypatch.setitem(sys.modules, "wordllama", None)  # what find_spec reports for an absent package
    with pytest.raises(
        wl.WordLlamaError,
        match=r"needs the package wordllama==0\.4\.0\.post1 "
        r"\(pip install wordllama==0\.4\.0\.post1\)",
    ):
        load_encoder("wordllama:l2_supercat")


def test_another_version_is_refused(monkeypatch):
    monkeypatch.setattr(wl.importlib.metadata, "version", lambda name: "0.3.9")
    with pytest.raises(wl.WordLlamaError, match="pinned to wordllama==0.4.0.post1; wordllama 0.3.9 is installed"):
        wl.load_wordllama()
