"""Profiles: the typed model, strict YAML loading with line numbers, and lookup by name."""

from envgen.profile.loader import ProfileSource, find_profile, list_profiles, load_profile
from envgen.profile.model import Profile

__all__ = ["Profile", "ProfileSource", "find_profile", "list_profiles", "load_profile"]
