"""toolgym: Gymnasium environments in which agents operate professional tools by writing scripts."""

from toolgym._version import __version__

__all__ = ["__version__"]
