"""The install plan: what one profile's image installs, where, and what its smoke test expects, made once from the
profile and the knowledge base. ``check`` judges it and ``render`` writes it; neither works it out again."""
