"""The errors a user can cause: each carries one line that says what was wrong and what to do."""

__all__ = ["TokenmathError", "InputError", "CatalogError"]


class TokenmathError(ValueError):
    """Base of every error the CLI reports as one line with a non-zero exit."""


class InputError(TokenmathError):
    """An impossible or absurd input value (negative batch, zero chips, unknown precision...)."""


class CatalogError(TokenmathError):
    """A catalog name that does not exist, or an entry that does not validate; one line for the user."""
