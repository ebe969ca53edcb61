"""The test suite. It is a package (as is each folder) so that tests import their shared helpers
as ``tests.<folder>.<module>``; pytest puts the repository root on ``sys.path`` (pyproject.toml)."""
