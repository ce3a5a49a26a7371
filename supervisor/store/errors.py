"""Errors of the store, each with a message fit to show the operator as one line."""


class StoreError(Exception):
    """A store operation failed; the message says what and where."""


class InvalidSessionId(StoreError, ValueError):
    """A session id that does not match the protocol's pattern (never used as a path)."""


class SessionNotFound(StoreError, LookupError):
    """No directory for this session under the root."""


class UnreadableStore(StoreError):
    """The store's folder cannot be read (another user's root, a permission, not a folder)."""


class UnsafeStore(StoreError, PermissionError):
    """A store directory (or socket, or lock) another local user owns or may write to: using it
    would let that user read the sessions, forge operator decisions or answer for the hook."""
