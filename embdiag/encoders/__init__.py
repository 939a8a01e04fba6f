"""Encoders of design B: images and captions into one unit-normalised space, cached once.

- ``protocol``: the :class:`Encoder` protocol (``name``, ``revision``, ``dim``,
  ``encode_images``, ``encode_texts`` with a ``query`` or ``document`` role);
- ``tokenizer``: a word-level tokenizer fitted on training captions, with role prompts;
- ``dual``: the reference image–text dual encoder (ViT or CNN image tower), 768-d;
- ``matryoshka``: the symmetric contrastive loss at nested prefixes (768, 512, 256, 128);
- ``train``: training the reference encoders on the procedural pool split
  (``python -m embdiag.encoders.train --arch vit|cnn --minutes 30``);
- ``huggingface``: a lazily imported ``transformers`` adapter (CLIP/SigLIP-style);
- ``wordllama``: the pinned WordLlama ``l2_supercat`` text encoder, loaded offline;
- ``registry``: ``load_encoder(name, root=None)`` for every encoder name;
- ``cache``: embeddings cached by encoder revision, dataset, split, role and dimension;
- ``vectors``: what a fixed-encoder chapter measures (an encoder's cached vectors or a user's);
- ``wordnet``: the WordNet sample's committed WordLlama vectors, and their regeneration.

Imports only :mod:`embdiag.data`, :mod:`embdiag.metrics` and the shared helpers;
``train`` is imported on first use, so ``python -m embdiag.encoders.train`` runs it once.
"""

from .cache import embed, prefix
from .dual import DualConfig, DualEncoder, ReferenceEncoder
from .huggingface import HuggingFaceEncoder, load_huggingface
from .matryoshka import DIMS, clip_loss, matryoshka_loss
from .protocol import ROLES, Encoder
from .registry import REFERENCE_NAMES, load_encoder, load_reference
from .tokenizer import WordTokenizer
from .vectors import CaptionVectors, LabelledVectors, caption_vectors, driving_vectors, read_labelled_vectors
from .wordllama import WordLlamaEncoder, WordLlamaError, load_wordllama
from .wordnet import wordnet_caption_vectors, wordnet_vectors


def __getattr__(name: str):
    if name in ("TrainConfig", "train_reference"):
        from . import train

        return getattr(train, name)
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


__all__ = [
    "CaptionVectors",
    "DIMS",
    "DualConfig",
    "DualEncoder",
    "Encoder",
    "HuggingFaceEncoder",
    "LabelledVectors",
    "REFERENCE_NAMES",
    "ROLES",
    "ReferenceEncoder",
    "TrainConfig",
    "WordLlamaEncoder",
    "WordLlamaError",
    "WordTokenizer",
    "caption_vectors",
    "clip_loss",
    "driving_vectors",
    "embed",
    "load_encoder",
    "load_huggingface",
    "load_reference",
    "load_wordllama",
    "matryoshka_loss",
    "prefix",
    "read_labelled_vectors",
    "train_reference",
    "wordnet_caption_vectors",
    "wordnet_vectors",
]
