"""What a scripted model says: a list of assistant turns per conversation, chosen statelessly.

A turn is what the model answers to one request: text and/or tool calls (several calls in one
turn are parallel calls). Every fake model server picks the turn the same way: from the request
alone, never from a cursor. The conversation is recognised by its first user prompt (a
subagent's conversation starts with the prompt its parent gave the subagent tool), and the turn
is the number of assistant turns already in that conversation's history. So interleaved requests
of a parent and its subagents, retries, and side requests never shift the script.
"""

from dataclasses import dataclass, field
from typing import Any


@dataclass(frozen=True, slots=True)
class Text:
    """Assistant text."""

    text: str


@dataclass(frozen=True, slots=True)
class ToolCall:
    """One tool call: the agent's tool name and its input (arguments)."""

    name: str
    input: dict[str, Any]


Block = Text | ToolCall


@dataclass(frozen=True, slots=True)
class TurnUsage:
    """The tokens a fake server reports for one answer, in the Anthropic convention: `input`
    not read from the cache, `cache_read` and `cache_write` apart (an API that counts cached
    tokens inside the input reports `input + cache_read` there)."""

    input: int
    output: int
    cache_read: int = 0
    cache_write: int = 0


DEFAULT_USAGE = TurnUsage(input=100, output=10)


@dataclass(frozen=True, slots=True)
class Turn:
    """One assistant answer: its blocks in order, and the usage the server reports for it."""

    blocks: tuple[Block, ...]
    usage: TurnUsage | None = None
    """None: the server's default (`DEFAULT_USAGE`, or a count of the request's size)."""

    @property
    def calls(self) -> tuple[ToolCall, ...]:
        return tuple(b for b in self.blocks if isinstance(b, ToolCall))

    def spending(self, input: int, output: int, cache_read: int = 0,
                 cache_write: int = 0) -> "Turn":
        """This turn, reported as having used these tokens."""
        return Turn(self.blocks, TurnUsage(input, output, cache_read, cache_write))


def turn(*blocks: Block) -> Turn:
    return Turn(tuple(blocks))


def say(text: str) -> Turn:
    """A turn of text only: the model ends its turn (no tool call)."""
    return Turn((Text(text),))


FINAL_TEXT = "Done."
"""Said when a conversation runs past its script: the agent stops instead of looping."""


@dataclass(slots=True)
class Script:
    """The main conversation's turns, and those of conversations recognised by their prompt.

    `others` maps a substring of a conversation's first user prompt (a subagent's task) to its
    turns; the first key found wins, else the conversation is the main one.
    """

    main: list[Turn]
    others: dict[str, list[Turn]] = field(default_factory=dict)
    final_text: str = FINAL_TEXT

    def turns_for(self, first_prompt: str) -> list[Turn]:
        for needle, turns in self.others.items():
            if needle in first_prompt:
                return turns
        return self.main

    def pick(self, first_prompt: str, index: int) -> Turn:
        """The turn answering a request with `index` assistant turns already in its history."""
        turns = self.turns_for(first_prompt)
        return turns[index] if 0 <= index < len(turns) else say(self.final_text)

    def turn_after_outputs(self, first_prompt: str, outputs: int) -> int:
        """The turn answering a history that holds `outputs` tool outputs.

        For APIs whose history is counted in tool outputs (Responses, Gemini): each scripted turn
        consumes one output per call it makes (parallel calls: several), and a turn without calls
        ends the exchange, so a history past the script's calls maps past its end.
        """
        turns = self.turns_for(first_prompt)
        index = 0
        while index < len(turns) and turns[index].calls and outputs >= len(turns[index].calls):
            outputs -= len(turns[index].calls)
            index += 1
        return index

    def conversation_key(self, first_prompt: str) -> str | None:
        """The `others` key of a prompt's conversation, None for the main one."""
        return next((k for k in self.others if k in first_prompt), None)
