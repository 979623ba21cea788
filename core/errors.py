"""Errors that reach the user as one line on stderr and exit code 2."""


class ComindError(Exception):
    """A user-facing error: bad input, bad configuration, a missing revision.

    The CLI prints ``comind: <message>`` and exits 2, with no traceback.
    """

    exit_code = 2


class ValidationError(ComindError):
    """A record failed validation; ``problems`` holds one message per bad field."""

    def __init__(self, problems: list[str]) -> None:
        self.problems = problems
        super().__init__("invalid record: " + "; ".join(problems))
