"""Hugging Face adapter, offline: a tiny CLIP built from a config and saved to a folder."""

import numpy as np
import pytest

pytest.importorskip("transformers")


@pytest.fixture(scope="module")
def tiny_clip(tmp_path_factory):
    import torch
    from tokenizers import Tokenizer, models, pre_tokenizers
    from transformers import CLIPConfig, CLIPImageProcessor, CLIPModel, PreTrainedTokenizerFast

    folder = tmp_path_factory.mktemp("tiny-clip")
    words = ["[PAD]", "[UNK]", "a", "red", "car", "road", "query", "document", ":", "at", "night", "."]
    tk = Tokenizer(models.WordLevel({w: i for i, w in enumerate(words)}, unk_token="[UNK]"))
    tk.pre_tokenizer = pre_tokenizers.Whitespace()
    PreTrainedTokenizerFast(
        tokenizer_object=tk, pad_token="[PAD]", unk_token="[UNK]", model_max_length=16
    ).save_pretrained(folder)
    CLIPImageProcessor(size={"shortest_edge": 32}, crop_size={"height": 32, "width": 32}).save_pretrained(folder)
    torch.manual_seed(0)
    cfg = CLIPConfig(
        text_config=dict(
            vocab_size=len(words),
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            max_position_embeddings=16,
            pad_token_id=0,
            bos_token_id=None,
            eos_token_id=len(words) - 1,
        ),
        vision_config=dict(
            hidden_size=32,
            intermediate_size=64,
            num_hidden_layers=1,
            num_attention_heads=2,
            image_size=32,
            patch_size=8,
        ),
        projection_dim=24,
    )
    CLIPModel(cfg).save_pretrained(folder)
    return folder


def test_local_folder_encodes_images_and_texts(tiny_clip):
    from embdiag.encoders import Encoder, load_huggingface

    enc = load_huggingface(str(tiny_clip), prompts={"query": "query: ", "document": "document: "})
    assert isinstance(enc, Encoder) and enc.dim == 24 and len(enc.revision) == 64
    assert enc.name == f"hf:{tiny_clip}@{enc.revision}"
    images = np.random.default_rng(0).integers(0, 256, (3, 40, 40, 3), dtype=np.uint8)
    Z = enc.encode_images(images, batch_size=2)
    assert Z.shape == (3, 24) and Z.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(Z, axis=1), 1, atol=1e-5)
    q = enc.encode_texts(["a red car .", "a road at night ."], "query")
    d = enc.encode_texts(["a red car .", "a road at night ."], "document")
    assert q.shape == (2, 24) and not np.allclose(q, d)  # role prompts change the input
    assert load_huggingface(str(tiny_clip)).revision == enc.revision  # content-pinned revision


def test_registry_name_and_offline_hub_refusal(tiny_clip):
    from embdiag.encoders import load_encoder, load_huggingface

    assert load_encoder(f"hf:{tiny_clip}").dim == 24
    with pytest.raises(ValueError, match="revision"):
        load_huggingface("someone/clip-like-model")
    with pytest.raises(ValueError, match="revision"):
        load_encoder("hf:someone/clip-like-model")
    with pytest.raises(OSError):  # local_files_only: nothing fetched
        load_encoder("hf:someone/clip-like-model@0123456789abcdef0123456789abcdef01234567")
    with pytest.raises(ValueError, match="prompts"):
        load_huggingface(str(tiny_clip), prompts={"passage": "p: "})
