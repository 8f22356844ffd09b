"""Errors whose message is meant for the user: they say what was wrong and what to do."""


class UserError(Exception):
    """Bad input or state the user can fix. Callers print str(e), never a traceback."""


class CorpusError(UserError):
    """A corpus file is missing, empty, undecodable or malformed; nothing from it was ingested."""


class StorageError(UserError):
    """The index store failed (read-only, damaged, disk full, server gone): one line naming the
    data dir or URL, what happened and what to do."""
