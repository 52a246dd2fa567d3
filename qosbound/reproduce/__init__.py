"""``qosbound reproduce PAPER``: the tables and figures of each source paper, regenerated, and the paper's claims
checked: every target prints one claim table and exits by one rule (:mod:`qosbound.reproduce.claims`)."""
