"""Approval policies for the memory write tools.

A policy is a callable taking a `WriteRequest` and returning True when a
person must approve the call before it runs (it may also be async). The
tools ask it only about writes; reads never wait. Whatever the policy says,
`anatid_forget` with `hard=true` waits for a person unless the caller of
`create_memory_tools` passed `hard_forget_needs_approval=False`, and a
policy that raises or returns something other than a bool counts as "ask".

A policy sees only what the model asked for, and the model has no way to
answer for a person: approvals arrive through `RunState.approve()` in the
application, never through a tool argument.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Awaitable, Callable, Union

ORDINARY_KINDS = ("fact", "preference", "observation", "note", "event")


@dataclass(frozen=True)
class WriteRequest:
    """One write the model asked for, before anything runs."""

    tool: str                   # anatid_remember | anatid_supersede | anatid_forget
    verb: str                   # remember | supersede | forget
    arguments: dict[str, Any] = field(default_factory=dict)   # exactly as the model sent them
    call_id: str | None = None

    @property
    def hard(self) -> bool:
        """A hard forget: erases the row, its edges, embedding and provenance."""
        return self.verb == "forget" and self.arguments.get("hard") is True


ApprovalPolicy = Callable[[WriteRequest], Union[bool, Awaitable[bool]]]


def ask_every_write() -> ApprovalPolicy:
    """The default: every remember, supersede and forget waits for a person."""
    def policy(request: WriteRequest) -> bool:
        return True
    policy.__qualname__ = "ask_every_write"
    return policy


def approve_low_risk(*, max_chars: int = 280, max_entities: int = 8,
                     kinds: tuple[str, ...] = ORDINARY_KINDS) -> ApprovalPolicy:
    """Let small ordinary remembers through; everything else waits for a person.

    A remember runs unreviewed when its content (plus any episode text) is at
    most `max_chars` characters, it names at most `max_entities` entities and
    its kind is one of `kinds` (or omitted). Supersedes and forgets, soft or
    hard, always wait: they change what the memory already believes.
    """
    kinds = tuple(kinds)

    def policy(request: WriteRequest) -> bool:
        if request.verb != "remember":
            return True
        args = request.arguments
        content, episode = args.get("content"), args.get("episode")
        entities, kind = args.get("entities"), args.get("kind")
        if not isinstance(content, str) or not (episode is None or isinstance(episode, str)):
            return True
        if len(content) + len(episode or "") > max_chars:
            return True
        if entities is not None and (not isinstance(entities, list) or len(entities) > max_entities):
            return True
        return not (kind is None or kind in kinds)
    policy.__qualname__ = "approve_low_risk"
    return policy


def never_ask() -> ApprovalPolicy:
    """No write waits, for trusted pipelines. Hard forgets still wait unless the tools were
    created with `hard_forget_needs_approval=False` as well."""
    def policy(request: WriteRequest) -> bool:
        return False
    policy.__qualname__ = "never_ask"
    return policy
