"""Errors raised by the data loaders; each message names the file and the problem."""

from __future__ import annotations


class DataError(ValueError):
    """Input data is missing, malformed or inconsistent."""


class DataFileNotFoundError(FileNotFoundError, DataError):
    """A required file or folder does not exist (also a ``FileNotFoundError``)."""


class DataFormatError(DataError):
    """A file exists but lacks a required field or holds an invalid value."""


class ImageReadError(DataError):
    """An image file exists but cannot be decoded."""
