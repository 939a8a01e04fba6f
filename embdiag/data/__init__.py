"""Data for the book: procedural driving scenes (the default) and real BDD100K / COCO loaders.

Every image source returns a :class:`Dataset` with the same fields (images, attribute table,
split, categories, captions, source), through :func:`load_dataset` and :func:`load_captions`.
WordNet 3.0 (:mod:`.wordnet`, :mod:`.wordnet_sample`) gives texts instead: glosses labelled by
part of speech and lexicographer category, with their examples, as a :class:`WordNetSample`.
"""

from .dataset import SPLITS, Dataset, attribute_frame, concat
from .errors import DataError, DataFileNotFoundError, DataFormatError, ImageReadError
from .images import LazyImages, read_image
from .loaders import SOURCES, load_captions, load_dataset, load_study
from .bdd100k import load_bdd100k
from .coco import load_coco
from .procedural import GENERATOR_VERSION, generate_split, load_procedural
from .vocab import ATTRIBUTES, DEFAULT_SHARES, DEFAULT_VAL_ABSENT, OBJECT_CATEGORIES, VOCAB
from .wordnet import LEXNAMES, Synset, read_wordnet
from .wordnet_sample import WordNetSample, load_wordnet

__all__ = [
    "ATTRIBUTES",
    "DEFAULT_SHARES",
    "DEFAULT_VAL_ABSENT",
    "GENERATOR_VERSION",
    "LEXNAMES",
    "OBJECT_CATEGORIES",
    "SOURCES",
    "SPLITS",
    "VOCAB",
    "DataError",
    "DataFileNotFoundError",
    "DataFormatError",
    "Dataset",
    "ImageReadError",
    "LazyImages",
    "Synset",
    "WordNetSample",
    "attribute_frame",
    "concat",
    "generate_split",
    "load_bdd100k",
    "load_captions",
    "load_coco",
    "load_dataset",
    "load_procedural",
    "load_study",
    "load_wordnet",
    "read_image",
    "read_wordnet",
]
