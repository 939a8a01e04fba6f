"""``embdiag report``: the four properties of the study measured on a user's own vectors.

``inputs`` reads the user's files (vectors, labels, retrieval pairs) and raises
:class:`~embdiag.report.inputs.InputError` naming the file and the problem. Imports
``metrics``, ``data``, ``interventions``, ``training``, ``encoders`` and the shared helpers;
nothing else in the package imports it.
"""

from .inputs import InputError, check_support, read_labels, read_pairs, read_vectors

__all__ = ["InputError", "check_support", "read_labels", "read_pairs", "read_vectors"]
