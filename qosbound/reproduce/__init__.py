"""``qosbound reproduce PAPER``: the tables and figures of each source paper, regenerated."""
