"""The detectors, one module each, and the registry that drives the engine.

`REGISTRY` lists them in the order the engine asks them (the first to refuse a call wins). The
policy's `[detectors]` defaults, `supervisor policy show`, the docs table (docs/engine.md,
checked by a test) and `supervisor analyze`'s notion of a loop detector all come from it.
Adding a detector: one module with a `Detector` subclass, one line here, its defaults
documented in docs/policy.md, its row in docs/engine.md, and its tests.
"""

from supervisor.engine.detectors.base import Detector
from supervisor.engine.detectors.blind_search import BlindSearch
from supervisor.engine.detectors.cycle import Cycle
from supervisor.engine.detectors.error_rate import ErrorRate
from supervisor.engine.detectors.exact_repeat import ExactRepeat
from supervisor.engine.detectors.ineffective_edits import IneffectiveEdits
from supervisor.engine.detectors.no_progress import NoProgress
from supervisor.engine.detectors.polling import Polling
from supervisor.engine.detectors.recurring_error import RecurringError
from supervisor.engine.detectors.repeated_text import RepeatedText
from supervisor.engine.detectors.revert import Revert
from supervisor.engine.detectors.similar_calls import SimilarCalls
from supervisor.engine.detectors.stale_read import StaleRead

REGISTRY: tuple[Detector, ...] = (
    StaleRead(),
    ExactRepeat(),
    Cycle(),
    SimilarCalls(),
    RecurringError(),
    IneffectiveEdits(),
    Revert(),
    ErrorRate(),
    NoProgress(),
    BlindSearch(),
    RepeatedText(),
    Polling(),
)
BY_NAME: dict[str, Detector] = {d.name: d for d in REGISTRY}
NAMES: tuple[str, ...] = tuple(BY_NAME)
LOOP_DETECTORS: frozenset[str] = frozenset(d.name for d in REGISTRY if d.loop)

__all__ = ["BY_NAME", "LOOP_DETECTORS", "NAMES", "REGISTRY", "Detector"]
