"""envgen: reproducible, validated GPU deep-learning environments in containers."""

__version__ = "0.1.0"
