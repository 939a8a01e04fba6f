"""Controlled training (design A): a small JEPA trained under seven conditions.

Masks, model, losses (prediction, SIGReg), EMA, the conditions as data, one training loop
and the resumable sweep. Reads images from :mod:`embdiag.data` and measures with
:mod:`embdiag.metrics`; imports nothing of ``interventions``, ``encoders`` or ``paper``.
"""
