"""``toolgym bench``: versioned evaluation sets, runs of any agent on them, reports and
comparisons (see the README's "Benchmarking a model")."""
