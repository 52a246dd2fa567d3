"""The ring abstractions (models/ring_abstraction.py): every exact step of the ring pattern lands in the choice set
the abstraction lists (the soundness the ring bound rests on), checked exhaustively over all patterns (and block
phases) of small rings; with labels that are functions of the pattern alone the sets are exactly those of the
brute-force construction; and the label counts known before building are the built ones."""

from __future__ import annotations

import pytest

from qosbound.models import ring_abstraction as ra


def _stages_label(QT, S):
    sizes = ra.stage_sizes(QT, S)

    def label(pat):
        es, pos = [], 0
        for c in sizes:
            es.append(sum((pat >> (pos + i)) & 1 for i in range(c)))
            pos += c
        return tuple(es), pat & 1
    return label


def _front_run_label(QT, K):
    def label(pat):
        h, E = pat & 1, bin(pat).count("1")
        if not (E <= K or E >= QT - K):
            return ("L", E, h)
        r = 0
        while r < QT and (pat >> r) & 1 == h:
            r += 1
        return ("T", E, h, r)
    return label


def _blocks_label(QT, c):
    def label(pat, psi):
        bits = [(pat >> i) & 1 for i in range(QT)]
        r_old, M = ra._block_layout(QT, c, psi)
        mids = tuple(sum(bits[r_old + j * c: r_old + (j + 1) * c]) for j in range(M))
        return psi, sum(bits[QT - psi:]), mids, r_old, sum(bits[:r_old]), bits[0]
    return label


def _check(ab, label, QT, phases=1):
    index = {lab: i for i, lab in enumerate(ab.labels)}
    for pat in range(1 << QT):
        for psi in range(phases):
            L = label(pat, psi) if phases > 1 else label(pat)
            i = index[L]
            assert ab.head[i] == pat & 1 and ab.ef[i] == bin(pat).count("1")
            for a in (0, 1):
                nxt = (pat >> 1) | (a << (QT - 1))
                L2 = label(nxt, (psi + 1) % phases) if phases > 1 else label(nxt)
                indptr, idx = ab.post[a]
                assert index[L2] in idx[indptr[i]:indptr[i + 1]], (L, a, L2)


@pytest.mark.parametrize("QT,S", [(4, 1), (5, 2), (6, 3)])
def test_stages_hold_every_exact_step_and_equal_the_brute_force_sets(QT, S):
    ab = ra.stages(QT, S)
    _check(ab, _stages_label(QT, S), QT)
    ref = ra.from_patterns(QT, _stages_label(QT, S))
    assert ab.size == ra.stages_labels(QT, S) == ref.size
    for a in (0, 1):
        got = {(ab.labels[i], ab.labels[j]) for i in range(ab.size)
               for j in ab.post[a][1][ab.post[a][0][i]:ab.post[a][0][i + 1]]}
        want = {(ref.labels[i], ref.labels[j]) for i in range(ref.size)
                for j in ref.post[a][1][ref.post[a][0][i]:ref.post[a][0][i + 1]]}
        assert got == want


@pytest.mark.parametrize("QT,K", [(5, 5), (6, 1), (7, 2)])
def test_the_front_run_holds_every_exact_step(QT, K):
    ab = ra.front_run(QT, K)
    _check(ab, _front_run_label(QT, K), QT)
    assert ab.size == ra.front_run_labels(QT, K)


@pytest.mark.parametrize("QT,c", [(5, 2), (6, 2), (7, 3)])
def test_blocks_hold_every_exact_step_at_every_phase(QT, c):
    ab = ra.blocks(QT, c)
    _check(ab, _blocks_label(QT, c), QT, phases=c)
    assert ab.size == ra.blocks_labels(QT, c)


def test_the_exact_abstraction_leaves_no_choice():
    ab = ra.exact(5)
    assert ab.size == 32 and all(((p[1:] - p[:-1]) == 1).all() for p, _ in ab.post)
