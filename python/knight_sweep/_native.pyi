"""Type stubs of the Rust module under ``knight_sweep`` (python/src)."""

from typing import Any, Dict, List, Optional

import numpy as np
import numpy.typing as npt

__version__: str

def invoke(args: List[str], stdin: Optional[bytes] = None) -> bytes:
    """Runs ``ksweep ARGS`` in this process; returns what it prints."""

def spec_toml(json: str) -> str:
    """A spec given as JSON, as checked TOML text."""

def sweeps(source: List[str]) -> List[Dict[str, Any]]:
    """Every sweep's status in the source the flags name."""

def status(source: List[str], sweep: Optional[str] = None) -> Dict[str, Any]:
    """One sweep's status."""

def results(source: List[str], sweep: Optional[str] = None) -> ResultBatches:
    """Every result of a sweep, as Arrow batches."""

class ResultBatches:
    """A sweep's results: an Arrow C stream source (``pyarrow.table(r)``)."""

    def __arrow_c_stream__(self, requested_schema: Optional[object] = None) -> object: ...
    def __len__(self) -> int: ...

class Evaluator:
    """A board, methods and limits parsed from ``ksweep eval``'s flags."""

    def __init__(self, args: List[str]) -> None: ...
    @property
    def shape(self) -> List[int]: ...
    @property
    def methods(self) -> List[str]: ...
    @property
    def outcomes(self) -> List[str]: ...
    def run(self, starts: npt.NDArray[np.int64]) -> Dict[str, np.ndarray]:
        """Flat arrays, start-major: success, outcome, attempts, visited, micros."""

class Embedded:
    """A coordinator and a worker serving a database file in this process."""

    def __init__(self, db: str, threads: int = 0, reuse: bool = True) -> None: ...
    @property
    def url(self) -> str: ...
    @property
    def token(self) -> str: ...
    def stop(self) -> None: ...
