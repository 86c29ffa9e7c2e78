"""Errors that reach the user as a message and exit code 2, never as a traceback."""

from __future__ import annotations


class UserError(Exception):
    """Something the user can fix: bad input, a missing study, an unavailable model."""

    exit_code = 2


class StudyNotFoundError(UserError):
    pass


class InputError(UserError):
    """Bad input data, located as precisely as we can: file, row (1-based, header = row 1), column."""

    def __init__(
        self,
        message: str,
        *,
        file: str | None = None,
        row: int | None = None,
        column: str | None = None,
    ) -> None:
        self.file = file
        self.row = row
        self.column = column
        self.reason = message
        where = []
        if file is not None:
            where.append(str(file))
        if row is not None:
            where.append(f"row {row}")
        if column is not None:
            where.append(f"column {column!r}")
        super().__init__(f"{', '.join(where)}: {message}" if where else message)
