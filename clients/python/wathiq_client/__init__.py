"""A typed client for the Wathiq API (see README.md)."""

from ._generated import *  # noqa: F401,F403
from .client import ApproverInput, Client, WathiqError

__all__ = ["ApproverInput", "Client", "WathiqError"]
