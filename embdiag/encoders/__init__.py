"""Fixed encoders (design B): the project's reference encoders, a Hugging Face adapter and the
embedding cache, behind one protocol (``encode_images``, ``encode_texts`` -> float32 rows).

Reads :mod:`embdiag.data` and measures with :mod:`embdiag.metrics`; imports nothing of
``interventions``, ``training`` or ``paper``.
"""
