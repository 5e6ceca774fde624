"""Helpers of the `webnn-convert` commands (the commands themselves live in `cli.main`)."""
