"""Field types of the documents, for editors and type checkers: annotations only (the values
come from the document at runtime through :class:`Document` attribute access). They follow
the Rust types the documents are serialised from (docs/design/cli.md lists the schemas)."""

from __future__ import annotations

from typing import List, Optional

from ._document import Document


class Categories(Document):
    """Where the GPU time went (µs), as TraceLens's gpu_timeline splits it."""

    computation_us: float
    communication_us: float
    exposed_communication_us: float
    memcpy_us: float
    idle_us: float


class DeviceTimeline(Document):
    """Busy/idle of one device."""

    device: int
    total_us: float
    busy_us: float
    idle_us: float
    kernel_union_us: float
    memcpy_us: float
    idle_pct: float
    busy_pct: float
    kernel_count: int


class Timeline(Document):
    """Busy/idle over the aggregation scope."""

    total_us: float
    busy_us: float
    idle_us: float
    kernel_union_us: float
    memcpy_us: float
    kernel_sum_us: float
    idle_pct: float
    busy_pct: float
    busy_fraction: float
    per_device: List[DeviceTimeline]
    categories: Categories


class GraphCoverage(Document):
    """CUDA/HIP graph-replay coverage over the whole trace."""

    launches: int
    launches_with_kernels: int
    coverage: Optional[float]
    graph_kernels: int
    under_recorded: bool
    launch_api: Optional[str]


class Attribution(Document):
    """Kernel-to-op attribution."""

    kernel_count: int
    attributed_kernels: int
    unlinked_kernels: int
    graph_attributed_kernels: int
    attributed_pct: float
    attributed_us: float
    unlinked_us: float
    graph_attributed_us: float


class KernelRow(Document):
    """One hot kernel."""

    name: str
    calls: int
    total_us: float
    min_us: float
    max_us: float
    share: float
    op_name: Optional[str]
    op_count: int


class OpRow(Document):
    """One hot op."""

    name: str
    calls: int
    total_us: float
    share: float


class SteadyWindow(Document):
    """The window the aggregates cover."""

    start_us: float
    end_us: float
    step_name: Optional[str]
    step_count: Optional[int]
    method: str
    annotation_coverage: Optional[float]


class SummaryFields(Document):
    """The fields of ``kernlens.summary/1``."""

    schema: str
    trace_file: str
    event_total: int
    stream_errors: List[str]
    aggregation_scope: str
    trace_start_us: Optional[float]
    window: Optional[SteadyWindow]
    window_status: str
    analyzed_rank: Optional[int]
    rank_count: int
    selected_capture_fragment: bool
    cycles: int
    cycle: int
    timeline: Timeline
    graph: GraphCoverage
    attribution: Attribution
    kernels: List[KernelRow]
    ops: List[OpRow]
    stream_overlap: Optional[Document]
    provenance: Optional[Document]


class BusySpread(Document):
    """Min, median and max busy% over the ranks that were read."""

    min: float
    min_rank: Optional[int]
    median: float
    max: float
    max_rank: Optional[int]


class Spread(Document):
    busy_pct: BusySpread


class FailedRank(Document):
    rank: Optional[int]
    trace_file: str
    error: str


class RanksFields(Document):
    """The fields of ``kernlens.ranks/1``."""

    schema: str
    input: str
    cycle: str
    rank_count: int
    ranks: List[SummaryFields]
    failed: List[FailedRank]
    spread: Optional[Spread]
