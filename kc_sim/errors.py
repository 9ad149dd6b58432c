"""Errors a user can cause: the command line prints them on one line and exits 2."""

import errno
import os


class UserError(ValueError):
    """Bad input from a person or a file; the message says what was wrong and what would be right."""


_FOLDER = "choose a folder you can write"
#: errno -> (what is wrong, in words; what would be right)
OS_ERRORS = {
    errno.EACCES: ("permission denied", f"{_FOLDER} (or a file you can read)"),
    errno.EPERM: ("operation not permitted", f"{_FOLDER} (or a file you can read)"),
    errno.EROFS: ("read-only file system", "write to a folder on a writable file system"),
    errno.ENOSPC: ("no space left on the device", "free some space or write to another device, then run the "
                   "command again"),
    errno.EDQUOT: ("disk quota exceeded", "free some space or write elsewhere, then run the command again"),
    errno.EFBIG: ("file too large for this file system or limit", "write to another file system"),
    errno.ENOTDIR: ("a part of this path is a file, not a folder", "give a path whose folders are folders "
                    "(or do not exist yet)"),
    errno.EISDIR: ("a folder", "give a file name"),
    errno.ENOENT: ("no such file or folder", "give an existing path"),
    errno.ENAMETOOLONG: ("file name too long", "give a shorter path"),
    errno.ELOOP: ("too many symbolic links", "give a path without a link loop"),
    errno.EMFILE: ("too many open files", "raise the limit (ulimit -n) or use fewer jobs"),
}


def os_error_text(e: OSError) -> str:
    """An OSError as one line for a person: the path, what is wrong with it in words, and
    what would be right (``/data/run: read-only file system: write to a folder on a
    writable file system``)."""
    what, right = OS_ERRORS.get(e.errno, (None, None))
    names = " -> ".join(str(n) for n in (e.filename, e.filename2) if n is not None)
    if e.errno == errno.EEXIST and e.filename is not None and not os.path.isdir(e.filename):
        what, right = "a file where a folder is needed", OS_ERRORS[errno.ENOTDIR][1]
    text = what or (e.strerror or str(e) or type(e).__name__)
    head = f"{names}: {text}" if names else text
    return f"{head}: {right}" if right else f"{head} ({type(e).__name__})"
