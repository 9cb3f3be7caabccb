"""Lean4 Agentic for Harbor: `-a lar_harbor:LarAgent` and `-e lar_harbor:LocalSandboxEnvironment`."""

from lar_harbor.agent import LarAgent
from lar_harbor.environment import LocalSandboxEnvironment

__all__ = ["LarAgent", "LocalSandboxEnvironment"]
