"""How each key reached the dashboard: with how many others, after how long a quiet.

A burst (a paste, a shell command typed into the wrong pane, tmux `send-keys`) is written to
the terminal at once. The terminal driver's input thread reads what is there in one
`os.read`; that thread and the app's handling may both be delayed for long stretches when the
machine is loaded, so neither the time a key is *handled* nor the time it is *parsed* says
when it arrived (a parse interrupted for 500 ms stamps the rest of a burst 500 ms later).
What a loaded machine cannot fake is what the input thread observed:

- every key parsed from one read arrived together: a read that yields more than one key is a
  burst, however long its parsing took;
- a quiet is only what was seen to be quiet. A wait on the terminal that timed out after
  `WAIT_S` proves that nothing arrived during it, a look that found nothing proves that nothing
  had arrived when it began (the thread looks once more whenever it gets control back after a
  wait: the app may have held it for a while), and a read proves that whatever was not in it
  arrived after the read began. The quiet before a read is the time from the previous read
  that had keys (all of its keys had arrived when that read returned) to the last such proof.
  A delayed thread only makes that bound smaller, never larger;
- at start-up there is no previous read, but there is the program's start: a key typed before
  it was read by what started it (the shell reads the command line up to its Enter) or is
  still waiting to be read, since nothing here empties the terminal's input on the way in. So
  when the input thread's first look finds nothing waiting, no key arrived between the
  program's start and that look, and the first key is credited with the quiet since the
  start (a person's first key, pressed as soon as the screen shows, is not judged "faster
  than a person types" because the thread had not run long); when something is waiting, the
  keys of the read that takes it are credited with none (`QuietLedger.opening`).

`ArrivalDriver` is Textual's Linux driver with that input loop; each `events.Key` it posts
carries an `Arrival` (`arrival_of`). `supervisor.tui.deliberate` decides from it.
"""

import contextlib
import os
import selectors
import time
from codecs import getincrementaldecoder
from dataclasses import dataclass

from textual import events
from textual._parser import ParseError
from textual.drivers.linux_driver import LinuxDriver
from textual.message import Message

WAIT_S = 0.05
"""How long one wait on the terminal lasts: the resolution of a proven quiet (a person's
quiet is undercounted by at most this)."""

_ATTRIBUTE = "_supervisor_arrival"


def process_started() -> float:
    """When this process started, on the `time.monotonic()` clock: its start time in
    `/proc/self/stat` (clock ticks since boot), else now (nothing earlier is proven)."""
    now = time.monotonic()
    try:
        with open("/proc/self/stat", "rb") as f:
            fields = f.read().rsplit(b")", 1)[1].split()  # the name may hold spaces
        age = time.clock_gettime(time.CLOCK_BOOTTIME) - int(fields[19]) / os.sysconf(
            "SC_CLK_TCK")
    except (OSError, ValueError, IndexError, AttributeError):
        return now
    return now - age if age >= 0.0 else now


PROCESS_STARTED = process_started()
"""Read once, when the dashboard's modules are imported (before its input thread runs)."""


@dataclass(frozen=True)
class Arrival:
    """How a key reached the app."""

    keys_in_read: int
    """Keys parsed from the same read of the terminal (1: it came alone)."""
    quiet_before: float
    """Seconds during which, provably, no key arrived before this read (0: none proven)."""

    def in_burst(self, gap: float) -> bool:
        """Whether the key came with others, or without a quiet of `gap` seconds before it."""
        return self.keys_in_read != 1 or self.quiet_before < gap


NOT_ALONE = Arrival(keys_in_read=0, quiet_before=0.0)
"""A key the parser let out later than its read (an escape sequence completed by a timeout):
nothing is known of its arrival, so it never counts as deliberate."""


def arrival_of(event: events.Key) -> Arrival | None:
    """The arrival the driver recorded (None: the key did not come from a terminal read, as
    the keys a test's Pilot presses)."""
    found = getattr(event, _ATTRIBUTE, None)
    return found if isinstance(found, Arrival) else None


def tag(event: events.Key, arrival: Arrival) -> None:
    """Record how `event` arrived (the driver does, for each key it reads)."""
    setattr(event, _ATTRIBUTE, arrival)


class QuietLedger:
    """The proofs of quiet the input loop collects, turned into an `Arrival` per read."""

    def __init__(self, now: float) -> None:
        self.last_keys_at = now
        """When the previous read with keys returned (all of its keys had arrived)."""
        self.absent_since = now
        """The latest moment at which nothing (else) had arrived yet."""
        self.unproven = False
        """The next read takes what was already waiting at the first look: no quiet is
        proven for its keys."""

    @classmethod
    def opening(cls, looked: float, started: float, waiting: bool) -> "QuietLedger":
        """The ledger of an input thread whose first look at the terminal, at `looked`, found
        something `waiting` to be read or not; `started`: when the program started (see the
        module docstring: no key that reaches it arrived between then and an empty look)."""
        ledger = cls(looked)
        ledger.last_keys_at = min(started, looked)
        ledger.unproven = waiting
        return ledger

    def waited(self, started: float, timeout: float) -> None:
        """A wait begun at `started` timed out: nothing arrived before `started + timeout`."""
        self.absent_since = max(self.absent_since, started + timeout)

    def read(self, began: float, returned: float, keys: int) -> Arrival:
        """A read begun at `began` returned at `returned` with `keys` keys."""
        quiet = 0.0 if self.unproven else max(0.0, self.absent_since - self.last_keys_at)
        self.unproven = False
        arrival = Arrival(keys, quiet)
        if keys:
            self.last_keys_at = returned
        # what this read did not take arrived after it began
        self.absent_since = max(self.absent_since, began)
        return arrival


class ArrivalDriver(LinuxDriver):
    """Textual's Linux driver, whose input thread tags each key with its `Arrival`."""

    def run_input_thread(self) -> None:
        """Textual's loop (wait, read, parse, post), with each wait and read recorded."""
        from textual._xterm_parser import XTermParser

        selector = selectors.SelectSelector()
        selector.register(self.fileno, selectors.EVENT_READ)
        parser = XTermParser(self._debug)
        decode = getincrementaldecoder("utf-8")().decode
        looked = time.monotonic()
        ledger = QuietLedger.opening(looked, PROCESS_STARTED, bool(selector.select(0)))

        def read(final: bool = False) -> None:
            began = time.monotonic()
            data = decode(os.read(self.fileno, 1024 * 4), final=final)
            returned = time.monotonic()
            if not data:
                return
            parsed: list[Message] = list(parser.feed(data))
            keys = sum(isinstance(message, events.Key) for message in parsed)
            self._post(parsed, ledger.read(began, returned, keys))

        try:
            while not self.exit_event.is_set():
                started = time.monotonic()
                if selector.select(WAIT_S):
                    read()
                else:
                    ledger.waited(started, WAIT_S)
                    # the thread may get control back long after the wait ended (the app held
                    # the GIL, building a screen): look again at once, so that the quiet proven
                    # reaches the moment it looked, not only the end of the wait
                    looked = time.monotonic()
                    if not selector.select(0):
                        ledger.waited(looked, 0.0)
                self._post(list(parser.tick()), NOT_ALONE)
            selector.unregister(self.fileno)
            self._post(list(parser.tick()), NOT_ALONE)
        finally:
            selector.close()
            with contextlib.suppress(EOFError, ParseError):
                for _ in parser.feed(""):  # tell the parser the input ended, as Textual does
                    pass

    def _post(self, messages: list[Message], arrival: Arrival) -> None:
        for message in messages:
            if isinstance(message, events.Key):
                tag(message, arrival)
            self.process_message(message)
