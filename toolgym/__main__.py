from toolgym.cli import app

app(prog_name="toolgym")
