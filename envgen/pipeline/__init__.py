"""Orchestration: check -> render -> build -> smoke -> record, and run/push/pull/images on top.

Each module here composes the lower layers (profile, kb, check, render, docker, smoke, host);
none of them talks to the user directly: results are returned, errors raised.
"""
