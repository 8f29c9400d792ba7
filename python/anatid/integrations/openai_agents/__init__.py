"""anatid for the OpenAI Agents SDK: approval-gated memory tools, a session
stored in the same file as the graph, and interrupted runs parked for review.

    pip install "anatid[agents]"

Importing this package needs no SDK; the first call that does (building the
tools, loading a parked run) raises ImportError naming the extra.
"""
from .policy import ApprovalPolicy, WriteRequest, approve_low_risk, ask_every_write, never_ask
from .runstate import ParkedRun, PendingCall, RunEvent, RunStateStore
from .session import AnatidSession, SessionWrite
from .tools import READ_TOOLS, WRITE_TOOLS, create_memory_tools

__all__ = ["AnatidSession", "SessionWrite", "create_memory_tools", "READ_TOOLS", "WRITE_TOOLS",
           "ApprovalPolicy", "WriteRequest", "ask_every_write", "approve_low_risk", "never_ask",
           "RunStateStore", "ParkedRun", "PendingCall", "RunEvent"]
