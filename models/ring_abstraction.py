"""Abstractions of a FIFO ring of EF and BE packets: what the ring bound remembers of the ring's EF/BE pattern.

The exact ring (``models/pq_txq_ring.py``) is a FIFO of ``Q_t`` packets, each EF or BE: at every departure the
head leaves and one packet joins the back (EF when the PQ is not empty, else BE). Its pattern -- which positions
hold EF -- has ``2^Q_t`` values. An *abstraction* maps every pattern to a *label* that keeps less: the head's kind
and the number of EF packets always (they determine the service and the delay reward), and some partial
knowledge of their order. For every label ``L`` and admitted kind ``a`` (0 BE, 1 EF) it lists ``post[a](L)``:
the labels of ALL patterns that follow, by a departure admitting ``a``, SOME pattern whose label is ``L``. So
whatever the exact pattern does, its next label lies in that set (an existential abstraction): the exact ring is
one way of choosing in the sets, which is what the bound of :mod:`qosbound.models.pq_txq_ring_bound` needs.
Each constructor below derives its sets from this definition; :func:`from_patterns` computes them by brute
force over all ``2^Q_t`` patterns, and the tests check that the two agree on small rings.

Label 0 is always the all-BE ring (EF count 0, head BE): every abstraction has it.

* :func:`exact` -- the pattern itself (``2^Q_t`` labels; one choice: the exact chain).
* :func:`stages` -- EF counts in ``S`` stages of consecutive positions (head's stage first), and the head's
  kind: the order within a stage is forgotten (so is how long an EF packet has been in its stage).
* :func:`front_run` -- the EF count, the head's kind and the length of the run of that kind at the front, for
  EF counts at most ``K`` or at least ``Q_t - K``; only the count and the head's kind in between. The oldest
  packets are known exactly up to the first change of kind: an EF packet at the front cannot be held back.
* :func:`blocks` -- the ring cut into blocks of ``c`` consecutive admissions (by admission index, so the cut
  moves with the packets), the EF count of each block and the phase: the order within a block is forgotten,
  but every packet leaves within ``c - 1`` departures of its exact time.
"""

from __future__ import annotations

import itertools
from dataclasses import dataclass

import numpy as np

__all__ = ["Abstraction", "exact", "stages", "front_run", "blocks", "from_patterns", "front_run_labels",
           "blocks_labels", "stages_labels", "exact_entries", "stages_entries", "front_run_entries", "blocks_entries"]


@dataclass
class Abstraction:
    """Labels with their head kind (0 BE, 1 EF) and EF count, and the choice sets ``post[a]`` as CSR pairs."""

    name: str
    labels: list
    head: np.ndarray
    ef: np.ndarray
    post: list  # [(indptr, idx) for a in (0, 1)]

    @property
    def size(self) -> int:
        return len(self.labels)

    @property
    def entries(self) -> int:
        """The entries of the choice sets, summed over the labels and both admitted kinds."""
        return sum(int(idx.size) for _, idx in self.post)


def _build(name: str, labels: list, head, ef, succ) -> Abstraction:
    """``succ(i, a)`` -> iterable of label indices."""
    post = []
    for a in (0, 1):
        indptr = np.zeros(len(labels) + 1, dtype=np.int64)
        idx: list[int] = []
        for i in range(len(labels)):
            s = sorted(set(succ(i, a)))
            if not s:
                raise AssertionError(f"{name}: label {labels[i]} has no successor for a={a}")
            idx += s
            indptr[i + 1] = len(idx)
        post.append((indptr, np.asarray(idx, dtype=np.int64)))
    return Abstraction(name, labels, np.asarray(head, dtype=np.int64), np.asarray(ef, dtype=np.int64), post)


def _shift(pat: int, QT: int, a: int) -> int:
    """The pattern after a departure admitting ``a`` (bit 0 is the head, bit Q_t-1 the back)."""
    return (pat >> 1) | (a << (QT - 1))


def from_patterns(QT: int, label_of, name: str = "patterns") -> Abstraction:
    """The abstraction with labels ``label_of(pattern)`` (which must determine the head's kind), its choice sets
    computed by brute force over all ``2^Q_t`` patterns: the reference for the constructors (small rings)."""
    succ: dict = {}
    info: dict = {}
    for pat in range(1 << QT):
        L = label_of(pat)
        h, e = pat & 1, bin(pat).count("1")
        if info.setdefault(L, (h, e)) != (h, e):
            raise ValueError(f"label {L!r} does not determine the head's kind and the EF count")
        for a in (0, 1):
            succ.setdefault((L, a), set()).add(label_of(_shift(pat, QT, a)))
    first = label_of(0)
    labels = [first] + sorted((lab for lab in info if lab != first), key=repr)
    index = {lab: i for i, lab in enumerate(labels)}
    return _build(name, labels, [info[lab][0] for lab in labels], [info[lab][1] for lab in labels],
                  lambda i, a: (index[m] for m in succ[(labels[i], a)]))


def exact(QT: int) -> Abstraction:
    """The pattern itself: no choice is left (the exact chain)."""
    return from_patterns(QT, lambda pat: pat, "exact")


def exact_entries(QT: int) -> int:
    """Entries of :func:`exact`'s choice sets (known before building): one successor per pattern and kind."""
    return 2 * 2 ** QT


# ---- stages ---------------------------------------------------------------------------------------------------

def stage_sizes(QT: int, S: int) -> list[int]:
    base, extra = divmod(QT, S)
    return [base + (1 if i < extra else 0) for i in range(S)]


def stages_labels(QT: int, S: int) -> int:
    """Labels of :func:`stages` (known before building)."""
    sizes = stage_sizes(QT, S)
    return 2 * int(np.prod([c + 1 for c in sizes])) - 2 * int(np.prod([c + 1 for c in sizes[1:]]))


def stages_entries(QT: int, S: int) -> int:
    """An upper bound on the entries of :func:`stages`' choice sets (known before building): per label and
    admitted kind, at most 2^(S-1) choices of which stage fronts move (one bit per stage boundary) times the
    two kinds of new head."""
    return 2 * stages_labels(QT, S) * 2 ** S


def stages(QT: int, S: int) -> Abstraction:
    """Label ``(e_1 .. e_S, head)``: EF in each stage of consecutive positions (stage 1 holds the head).

    Successors. The head (kind ``head``, in stage 1) leaves, the front packet of every stage ``i+1`` moves into
    stage ``i``, the admitted packet joins stage ``S``, and the new head is stage 1's front packet. The order
    within a stage is unknown, so each moving front packet may be either kind its stage holds, and the new head
    either kind the old stage 1 holds besides its head (with one position in stage 1: the packet that moved in)."""
    sizes = stage_sizes(QT, S)
    labels = [((0,) * S, 0)]
    for es in itertools.product(*[range(c + 1) for c in sizes]):
        for h in (0, 1):
            if (h == 1 and es[0] == 0) or (h == 0 and es[0] == sizes[0]) or (es, h) == ((0,) * S, 0):
                continue
            labels.append((es, h))
    index = {lab: i for i, lab in enumerate(labels)}

    def succ(i, a):
        es, h = labels[i]
        for bits in range(1 << (S - 1)):
            e2 = list(es)
            e2[0] -= h
            ok = True
            for j in range(S - 1):
                m = (bits >> j) & 1
                if (m and es[j + 1] < 1) or (not m and es[j + 1] >= sizes[j + 1]):
                    ok = False
                    break
                e2[j] += m
                e2[j + 1] -= m
            if not ok:
                continue
            e2[S - 1] += a
            if sizes[0] >= 2:  # the new head is one of the old stage 1's other packets (es[0] - h EF of them)
                heads = [h2 for h2 in (0, 1) if (es[0] - h >= 1 if h2 else sizes[0] - 1 - (es[0] - h) >= 1)]
            else:  # stage 1 is the head alone: the packet that moved in (stage 2's front, or the admitted one)
                heads = [bits & 1 if S > 1 else a]
            for h2 in heads:
                yield index[(tuple(e2), h2)]

    return _build(f"stages({S})", labels, [lab[1] for lab in labels], [sum(lab[0]) for lab in labels], succ)


# ---- front run ----------------------------------------------------------------------------------------------------

def _tracked(QT: int, K: int, E: int) -> bool:
    return E <= K or E >= QT - K


def front_run_labels(QT: int, K: int) -> int:
    """Labels of :func:`front_run` (known before building)."""
    n = 0
    for E in range(QT + 1):
        for h in (0, 1):
            cnt = E if h else QT - E
            if cnt:
                n += (1 if cnt == QT else cnt) if _tracked(QT, K, E) else 1
    return n


def front_run_entries(QT: int, K: int | None = None) -> int:
    """The entries of :func:`front_run`'s choice sets (known before building: O(Q_t) arithmetic, nothing
    allocated), counted from its successors: a tracked label with ``r >= 2`` or ``r = Q_t`` has one; one with
    ``r = 1`` starts a new run of the other kind, and an untracked label one of either kind, each counted as
    :func:`front_run`'s ``free`` lists them."""
    K = QT if K is None else K

    def free(E1: int, a: int, heads) -> int:
        n = 0
        for k in heads:
            x = E1 if k else QT - 1 - E1
            if x < 1:
                continue
            n += x if _tracked(QT, K, E1 + a) and x <= QT - 2 else 1
        return n

    n = 0
    for E in range(QT + 1):
        for h in (0, 1):
            cnt = E if h else QT - E
            if not cnt:
                continue
            for a in (0, 1):
                if not _tracked(QT, K, E):
                    n += free(E - h, a, (0, 1))
                elif cnt == QT:
                    n += 1
                else:  # runs r = 2 .. cnt keep theirs; r = 1 starts the other kind's
                    n += (cnt - 1) + free(E - h, a, (1 - h,))
    return n


def front_run(QT: int, K: int | None = None) -> Abstraction:
    """Label ``("T", E, head, r)`` where the run is tracked (``E <= K`` or ``E >= Q_t - K``; all E when K is None):
    the first ``r`` packets are of the head's kind and packet ``r + 1`` is not (``r = Q_t``: the whole ring);
    ``("L", E, head)`` otherwise.

    Successors (bit 0 the head; the departure drops it, the admitted packet ``a`` takes position ``Q_t``).
    Known: the new ring's first ``Q_t - 1`` packets are the old ring's last ``Q_t - 1``, holding ``E - head``
    EF. A tracked label with ``r >= 2`` keeps its run, one shorter (``r = Q_t``: the whole ring, extended by
    ``a`` when it is of the same kind); with ``r = 1`` the new head is of the other kind, the run it starts is
    unknown. In the unknown cases the new run of kind ``k`` may have any length ``r'`` a pattern allows: with
    ``x`` the packets of kind ``k`` among the old ring's last ``Q_t - 1``, ``1 <= r' <= x`` when ``x <= Q_t -
    2`` (the run ends at one of the others), and ``r' = Q_t - 1 + [a = k]`` when ``x = Q_t - 1``."""
    K = QT if K is None else K
    labels: list = [("T", 0, 0, QT)]
    for E in range(QT + 1):
        for h in (0, 1):
            cnt = E if h else QT - E
            if not cnt:
                continue
            if not _tracked(QT, K, E):
                labels.append(("L", E, h))
            elif cnt == QT:
                if (E, h) != (0, 0):
                    labels.append(("T", E, h, QT))
            else:
                labels += [("T", E, h, r) for r in range(1, cnt + 1)]
    index = {lab: i for i, lab in enumerate(labels)}

    def at(E2, h2, r2):
        return index[("T", E2, h2, r2)] if _tracked(QT, K, E2) else index[("L", E2, h2)]

    def free(E1, a, E2, heads):
        """Labels of a ring whose first Q_t - 1 packets hold E1 EF in an unknown order, then ``a``."""
        for k in heads:
            x = E1 if k else QT - 1 - E1
            if x < 1:
                continue
            if not _tracked(QT, K, E2):
                yield index[("L", E2, k)]
            elif x <= QT - 2:
                yield from (index[("T", E2, k, r)] for r in range(1, x + 1))
            else:
                yield index[("T", E2, k, QT - 1 + (1 if a == k else 0))]

    def succ(i, a):
        lab = labels[i]
        E, h = lab[1], lab[2]
        E2 = E - h + a
        if lab[0] == "L":
            return free(E - h, a, E2, (0, 1))
        r = lab[3]
        if r == QT:
            return [at(E2, h, QT - 1 + (1 if a == h else 0))]
        if r >= 2:
            return [at(E2, h, r - 1)]
        return free(E - h, a, E2, (1 - h,))

    name = "front run" if K >= QT else f"front run (E <= {K} or >= Q_t - {K})"
    return _build(name, labels, [lab[2] for lab in labels], [lab[1] for lab in labels], succ)


# ---- blocks -------------------------------------------------------------------------------------------------------

def _block_layout(QT: int, c: int, psi: int) -> tuple[int, int]:
    """(packets left of the oldest block, full blocks between) with ``psi`` packets in the open block."""
    rest = QT - psi
    r_old = (rest - 1) % c + 1
    return r_old, (rest - r_old) // c


def blocks_labels(QT: int, c: int) -> int:
    """Labels of :func:`blocks` (known before building)."""
    n = 0
    for psi in range(min(c, QT)):
        r_old, M = _block_layout(QT, c, psi)
        n += (psi + 1) * (c + 1) ** M * 2 * r_old
    return n


def blocks_entries(QT: int, c: int) -> int:
    """An upper bound on the entries of :func:`blocks`' choice sets (known before building): per label and
    admitted kind, the new head is one of two kinds."""
    return 2 * 2 * blocks_labels(QT, c)


def blocks(QT: int, c: int) -> Abstraction:
    """Label ``(psi, e_new, mids, r_old, e_old, head)``: the admissions are cut into blocks of ``c`` by admission
    index; ``psi`` (0 .. c-1) of them are in the open block (``e_new`` EF), then the full blocks ``mids`` (EF each,
    oldest first), then the oldest block with ``r_old`` packets left (``e_old`` EF, the head among them).

    Successors: the head leaves the oldest block; the admitted packet joins the open block, which closes when it
    reaches ``c``; when the oldest block is empty the next one becomes the oldest; the new head is either kind
    the oldest block still holds (its order is unknown). ``c = 1`` keeps the whole pattern."""
    if not 1 <= c <= QT:
        raise ValueError("block size must be in 1 .. Q_t")
    labels: list = []
    for psi in range(min(c, QT)):
        r_old, M = _block_layout(QT, c, psi)
        for e_new in range(psi + 1):
            for mids in itertools.product(range(c + 1), repeat=M):
                for e_old in range(r_old + 1):
                    for h in (0, 1):
                        if (h == 1 and e_old == 0) or (h == 0 and e_old == r_old):
                            continue
                        labels.append((psi, e_new, mids, r_old, e_old, h))
    first = next(lab for lab in labels if lab[0] == 0 and lab[1] == 0 and not any(lab[2]) and lab[4] == 0)
    labels.remove(first)
    labels.insert(0, first)
    index = {lab: i for i, lab in enumerate(labels)}

    def succ(i, a):
        psi, e_new, mids, r_old, e_old, h = labels[i]
        r1, e1 = r_old - 1, e_old - h
        psi2, en2, mids2 = psi + 1, e_new + a, mids
        if psi2 == c:
            mids2, psi2, en2 = mids + (en2,), 0, 0
        if r1 == 0:
            r1, e1, mids2 = c, mids2[0], mids2[1:]
        for h2 in (0, 1):
            if (h2 == 1 and e1 == 0) or (h2 == 0 and e1 == r1):
                continue
            yield index[(psi2, en2, mids2, r1, e1, h2)]

    return _build(f"blocks({c})", labels, [lab[5] for lab in labels],
                  [lab[1] + sum(lab[2]) + lab[4] for lab in labels], succ)
