"""`python -m cli`: the `webnn-convert` console entry (`cli.entry`), signal handling included."""

from cli.entry import main

main()
