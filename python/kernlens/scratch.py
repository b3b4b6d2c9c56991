"""``kernlens.scratch``: git-tracked scratch copies of a package for kernel rewrites, and the
patch back (``kernlens scratch create|diff|release|sweep --json``). Failures raise
:class:`kernlens.ScratchError`; a refused create carries the refusal document as
``error.document``."""

from __future__ import annotations

import os
from typing import Optional, Union

from . import _native
from ._document import Document

PathLike = Union[str, "os.PathLike[str]"]


def create(
    source: PathLike,
    output: PathLike,
    *,
    session: Optional[str] = None,
    attempt: Optional[str] = None,
    branch: Optional[str] = None,
    repo: Optional[PathLike] = None,
    owner_pid: Optional[int] = None,
    grace_secs: Optional[int] = None,
) -> Document:
    """Copy the package holding the kernel file ``source`` into a git-tracked scratch
    worktree for the attempt directory ``output`` (``.../<session>/<attempt>``). The
    session's owner is this Python process unless ``owner_pid`` names another."""
    return Document(
        _native.scratch_create(
            source,
            output,
            session=session,
            attempt=attempt,
            branch=branch,
            repo=repo,
            owner_pid=owner_pid,
            grace_secs=grace_secs,
        )
    )


def diff(
    scratch_dir: PathLike, *, out: Optional[PathLike] = None, best: Optional[str] = None
) -> Document:
    """Export what changed in a scratch worktree: per-file copies, a patch, export.json."""
    return Document(_native.scratch_diff(scratch_dir, out=out, best=best))


def release(scratch_dir: PathLike) -> Document:
    """Mark a relocated scratch session done, so the next sweep removes it."""
    return Document(_native.scratch_release(scratch_dir))


def sweep(*, local_root: Optional[PathLike] = None, grace_secs: Optional[int] = None) -> Document:
    """Reclaim scratch sessions whose owner has died."""
    return Document(_native.scratch_sweep(local_root=local_root, grace_secs=grace_secs))


__all__ = ["create", "diff", "release", "sweep"]
