"""The local folder behind a workspace, and how ``auto_index_paths`` select its files.

An entry of ``auto_index_paths`` is a folder (indexed recursively, hidden files and
folders left out), a file, or a glob pattern (``docs/**/*.md``), all relative to the
base folder. Nothing outside the base folder is ever read: ``..`` is refused and a
symbolic link that leads out is skipped.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

from vectorport.core.errors import ConfigError
from vectorport.workspace.naming import normalize_path

_GLOB_CHARS = frozenset("*?[")


@dataclass(frozen=True, slots=True)
class Selection:
    """Files chosen by the patterns, as workspace paths, and patterns that chose nothing."""

    paths: tuple[str, ...] = ()
    missing: tuple[str, ...] = field(default_factory=tuple)


class LocalFilesystem:
    """A folder on this machine (``base_path`` need not exist until files are read)."""

    def __init__(self, base_path: str | os.PathLike[str]) -> None:
        self.base_path = Path(base_path).expanduser().resolve()

    def __repr__(self) -> str:
        return f"LocalFilesystem({str(self.base_path)!r})"

    def resolve(self, path: str) -> Path:
        """The file of a workspace path (inside the base folder, symbolic links followed)."""
        target = (self.base_path / normalize_path(path).lstrip("/")).resolve()
        if not target.is_relative_to(self.base_path):
            raise ConfigError(f"{path!r} leads outside the workspace folder")
        return target

    def read_bytes(self, path: str) -> bytes:
        return self.resolve(path).read_bytes()

    def _workspace_path(self, file: Path) -> str | None:
        try:
            real = file.resolve()
        except OSError:
            return None
        if not real.is_relative_to(self.base_path) or not real.is_file():
            return None
        return normalize_path(file.relative_to(self.base_path).as_posix())

    def _walk(self, folder: Path) -> Iterable[Path]:
        for root, dirs, files in os.walk(folder):
            dirs[:] = sorted(d for d in dirs if not d.startswith("."))
            for name in sorted(files):
                if not name.startswith("."):
                    yield Path(root) / name

    def select(self, patterns: Iterable[str]) -> Selection:
        """The files named by ``patterns`` (folders, files or globs), each once, sorted."""
        found: dict[str, None] = {}
        missing: list[str] = []
        for pattern in patterns:
            if not isinstance(pattern, str):
                raise ConfigError(f"auto_index_paths entries are str, got {pattern!r}")
            relative = pattern.replace("\\", "/").strip().lstrip("/")
            if ".." in relative.split("/"):
                raise ConfigError(f"auto_index_paths entry {pattern!r} leaves the workspace")
            if any(c in _GLOB_CHARS for c in relative):
                candidates: Iterable[Path] = sorted(self.base_path.glob(relative))
            else:
                target = self.base_path / relative if relative not in ("", ".") else self.base_path
                if target.is_dir():
                    candidates = self._walk(target)
                elif target.is_file():
                    candidates = [target]
                else:
                    candidates = []
            chosen = [p for p in map(self._workspace_path, candidates) if p is not None]
            if not chosen:
                missing.append(pattern)
            found.update(dict.fromkeys(chosen))
        return Selection(tuple(sorted(found)), tuple(missing))
