"""Recording episodes and reading them back: the recorder, the episode-log format, re-execution,
and the HTML and video replays."""
