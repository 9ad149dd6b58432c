"""Errors a user can cause: the command line prints them on one line and exits 2."""


class UserError(ValueError):
    """Bad input from a person or a file; the message says what was wrong and what would be right."""
