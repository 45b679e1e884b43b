"""Shared by both tiers and the preflight: the run's context and check runner, the diagnosis table, versions, kernels
for a GPU's architecture, the system's facts (Python, devices, host)."""
