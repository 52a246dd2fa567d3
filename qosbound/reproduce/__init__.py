"""``qosbound reproduce PAPER``: the tables and figures of each source paper, regenerated, and the paper's claims
judged: every target's result rows are mapped onto the paper's claims file (``qosbound/data/claims/PAPER.yaml``,
:mod:`qosbound.reproduce.claimsfile`), one row per claim, and the target exits by one rule
(:mod:`qosbound.reproduce.claims`)."""
