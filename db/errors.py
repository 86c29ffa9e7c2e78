"""Problems with a study file itself (not with the data a user imports)."""

from __future__ import annotations


class StudyFileError(Exception):
    """The file is missing, is not a study, or cannot be opened."""


class NewerSchemaError(StudyFileError):
    """The study was written by a newer MeaningBench; opening it could damage it."""


class StudyReadOnlyError(StudyFileError):
    """The study cannot be written here: a read-only file, folder or medium."""


class StudyWriteError(StudyFileError):
    """A write failed in the operating system: a full disk, a size limit, an I/O error."""


class MigrationError(StudyFileError):
    """Upgrading an older study failed; the study was left as it was."""


class StudyBusyError(StudyFileError):
    """Another program has held the study's write lock for too long."""
