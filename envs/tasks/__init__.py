"""The task model (tasks, suites, task files) and the named suites of every domain."""
