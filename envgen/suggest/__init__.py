"""`envgen suggest`: which versions to install for a GPU and a driver. Candidates come from ``envgen.kb.builds``
(also used by the check rules); ``search`` (candidates judged by `check_profile`), ``write`` (commented profiles)."""
