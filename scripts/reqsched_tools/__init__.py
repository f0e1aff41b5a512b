"""Shared code of the reqsched testbed tools (scripts/testbed, replay, report)."""
