"""Host facts (nvidia-smi, NVML, docker info, WSL) behind one interface; the doctor; the run-time gate.

Importing this package imports no third-party module: facts can be collected on a machine with only the
standard library. The doctor's verdicts (envgen.host.doctor) use envgen.check, imported when called.
"""

from envgen.host.collect import collect
from envgen.host.facts import HostFactsProvider, RealProvider, RecordedProvider
from envgen.host.model import DockerFacts, GpuFact, HostFacts, Probe, RuntimeFacts

__all__ = [
    "DockerFacts",
    "GpuFact",
    "HostFacts",
    "HostFactsProvider",
    "Probe",
    "RealProvider",
    "RecordedProvider",
    "RuntimeFacts",
    "collect",
]
