"""Data for the book: procedural driving scenes (the default) and real BDD100K / COCO loaders.

Every image source returns a :class:`Dataset` with the same fields (images, attribute table,
split, categories, captions, source), through :func:`load_dataset` and :func:`load_captions`.
WordNet 3.0 (:mod:`.wordnet`, :mod:`.wordnet_sample`) gives texts instead: glosses labelled by
part of speech and lexicographer category, with their examples, as a :class:`WordNetSample`.
"""

from .._lazy import exports

__all__, __getattr__, __dir__ = exports(
    __name__,
    {
        "dataset": ("SPLITS", "Dataset", "attribute_frame", "concat"),
        "errors": ("DataError", "DataFileNotFoundError", "DataFormatError", "ImageReadError"),
        "images": ("LazyImages", "read_image"),
        "loaders": ("SOURCES", "load_captions", "load_dataset", "load_study"),
        "bdd100k": ("load_bdd100k",),
        "coco": ("load_coco",),
        "procedural": ("GENERATOR_VERSION", "generate_split", "load_procedural"),
        "vocab": ("ATTRIBUTES", "DEFAULT_SHARES", "DEFAULT_VAL_ABSENT", "OBJECT_CATEGORIES", "VOCAB"),
        "wordnet": ("LEXNAMES", "Synset", "read_wordnet"),
        "wordnet_sample": ("WordNetSample", "load_wordnet"),
    },
)
