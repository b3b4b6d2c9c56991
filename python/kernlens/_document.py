"""Attribute access over the library's JSON documents."""

from __future__ import annotations

import copy
from typing import Any, Dict, Iterator, List


def _wrap(value: Any) -> Any:
    if isinstance(value, dict):
        return Document(value)
    if isinstance(value, list):
        return [_wrap(v) for v in value]
    return value


class Document:
    """A versioned kernlens document (or one of its objects) with its fields as attributes:
    ``doc.timeline.busy_pct`` reads ``doc.to_dict()["timeline"]["busy_pct"]``. Nested
    objects are Documents too, lists are lists; ``doc["key"]`` works as well."""

    def __init__(self, document: Dict[str, Any]) -> None:
        self._document = document

    def to_dict(self) -> Dict[str, Any]:
        """The document as the CLI's ``--json`` prints it, parsed: the same keys, in the
        same order, with the same values (a copy; changing it changes nothing here)."""
        return copy.deepcopy(self._document)

    def __getattr__(self, name: str) -> Any:
        if name.startswith("_"):
            raise AttributeError(name)
        try:
            return _wrap(self._document[name])
        except KeyError:
            raise AttributeError(
                f"{type(self).__name__} has no field {name!r}; fields: {', '.join(self._document)}"
            ) from None

    def __getitem__(self, key: str) -> Any:
        return _wrap(self._document[key])

    def __contains__(self, key: object) -> bool:
        return key in self._document

    def __iter__(self) -> Iterator[str]:
        return iter(self._document)

    def keys(self) -> List[str]:
        """The document's field names, in order."""
        return list(self._document)

    def __dir__(self) -> List[str]:
        return sorted(set(super().__dir__()) | set(self._document))

    def __eq__(self, other: object) -> bool:
        if isinstance(other, Document):
            return self._document == other._document
        return NotImplemented

    __hash__ = None  # type: ignore[assignment]

    def __repr__(self) -> str:
        schema = self._document.get("schema")
        head = f" {schema}" if schema else ""
        return f"<{type(self).__name__}{head}: {', '.join(self._document)}>"

    def __reduce__(self) -> Any:
        return (type(self), (self._document,))
