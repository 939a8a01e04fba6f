"""Data for the book: procedural driving scenes (the default) and real BDD100K / COCO loaders.

Every source returns a :class:`Dataset` with the same fields (images, attribute table,
split, categories, captions, source), through :func:`load_dataset` and :func:`load_captions`.
"""

from .dataset import SPLITS, Dataset, attribute_frame, concat
from .errors import DataError, DataFileNotFoundError, DataFormatError, ImageReadError
from .images import LazyImages, read_image
from .loaders import SOURCES, load_captions, load_dataset, load_study
from .bdd100k import load_bdd100k
from .coco import load_coco
from .procedural import GENERATOR_VERSION, generate_split, load_procedural
from .vocab import ATTRIBUTES, DEFAULT_SHARES, DEFAULT_VAL_ABSENT, OBJECT_CATEGORIES, VOCAB

__all__ = [
    "ATTRIBUTES", "DEFAULT_SHARES", "DEFAULT_VAL_ABSENT", "GENERATOR_VERSION", "OBJECT_CATEGORIES", "SOURCES",
    "SPLITS", "VOCAB", "DataError", "DataFileNotFoundError", "DataFormatError", "Dataset", "ImageReadError",
    "LazyImages", "attribute_frame", "concat", "generate_split", "load_bdd100k", "load_captions", "load_coco",
    "load_dataset", "load_procedural", "load_study", "read_image",
]
