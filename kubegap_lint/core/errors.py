"""Errors that stop a run (exit code 2). Each carries one line for the user, with a location."""

from __future__ import annotations


class KubegapError(Exception):
    """Base of every error the CLI turns into a one-line message and exit code 2."""


class DataFileError(KubegapError):
    """A policy, incident, workload-table or configuration file is wrong."""

    def __init__(self, messages: list[str]) -> None:
        super().__init__("\n".join(messages))
        self.messages = messages


class UsageError(KubegapError):
    """The command line asks for something that cannot be done."""


class StorageError(KubegapError):
    """The temporary folder a large run keeps its facts in cannot be written (full, read-only)."""
