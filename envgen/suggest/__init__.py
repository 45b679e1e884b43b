"""`envgen suggest`: which versions to install for a GPU and a driver. ``options`` (knowledge base only, also used
by the check rules), ``search`` (candidates judged by `check_profile`), ``write`` (commented profiles)."""
