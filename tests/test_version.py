"""A source checkout imported without being installed works: the version
reads as ``unversioned`` (the tools print it) instead of failing at
import, as it did on a machine that had only the repository."""

from __future__ import annotations

import importlib.metadata

import pytest

from revmlir import version


def test_installed_version_is_the_distributions():
    assert version.revmlir_version() == importlib.metadata.version("revmlir")


def test_a_checkout_that_is_not_installed_is_unversioned(monkeypatch: pytest.MonkeyPatch):
    def missing(name: str) -> str:
        raise importlib.metadata.PackageNotFoundError(name)

    monkeypatch.setattr(importlib.metadata, "version", missing)
    assert version.revmlir_version() == version.UNVERSIONED
