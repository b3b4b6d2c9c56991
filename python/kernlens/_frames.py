"""DataFrames from document rows: pandas when installed, pyarrow-backed columns when pyarrow is."""

from __future__ import annotations

from typing import Any, Dict, List


def frame(rows: List[Dict[str, Any]]) -> Any:
    """A pandas DataFrame of ``rows`` (one dict per row, columns in the rows' key order).
    With pyarrow installed (and pandas >= 2), scalar columns are pyarrow-backed."""
    try:
        import pandas as pd
    except ImportError as e:  # pragma: no cover - exercised only without pandas
        raise ImportError(
            "kernlens DataFrames need pandas: pip install 'kernlens[pandas]' (or pandas)"
        ) from e
    df = pd.DataFrame.from_records(rows)
    if rows:
        df = df[list(rows[0].keys())]
    try:
        import pyarrow  # noqa: F401
    except ImportError:
        return df
    if int(pd.__version__.split(".")[0]) < 2:
        return df
    try:
        return df.convert_dtypes(dtype_backend="pyarrow")
    except (TypeError, ValueError):
        # A column pyarrow cannot type (mixed lists) stays as pandas made it.
        return df
