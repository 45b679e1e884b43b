"""Offline refresh scripts: each reads a saved copy of an upstream page or script and prints YAML rows.
Nothing here runs at test time or fetches anything; see README.md."""
