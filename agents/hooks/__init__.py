"""Agent hooks: one module per agent CLI, registered in :data:`AGENTS` (the interface is in
`interface`). Adding an agent is one module and one line here."""

from __future__ import annotations

from . import claude, gemini
from .interface import Agent

AGENTS: dict[str, Agent] = {agent.name: agent for agent in (claude.AGENT, gemini.AGENT)}
