"""The signal policy (qosbound.interrupts): the first SIGINT / SIGTERM stops the run, later ones are counted."""

from __future__ import annotations

import os
import signal

import pytest

from qosbound import interrupts


def _send(sig):
    os.kill(os.getpid(), sig)
    for _ in range(1000):  # the handler runs at the next bytecode boundary; give it a few
        pass


def test_the_first_signal_raises_and_later_ones_are_only_counted():
    with interrupts.handling():
        with pytest.raises(interrupts.Stopped) as e:
            _send(signal.SIGTERM)
        assert e.value.exit_code == 143 and interrupts.received() == signal.SIGTERM
        _send(signal.SIGINT)  # the clean-up goes on: nothing is raised
        _send(signal.SIGTERM)
        assert interrupts.count() == 3
        assert interrupts.exit_code() == 143  # the first signal decides


def test_sigint_first_means_exit_130():
    with interrupts.handling():
        with pytest.raises(interrupts.Stopped) as e:
            _send(signal.SIGINT)
        assert e.value.exit_code == 130 and interrupts.exit_code() == 130


def test_check_raises_again_once_a_signal_arrived():
    """A loop between units of work: a signal whose exception was lost still stops it at the next unit."""
    with interrupts.handling():
        interrupts.check()  # nothing received yet
        try:
            _send(signal.SIGTERM)
        except interrupts.Stopped:
            pass  # e.g. swallowed by a third party's 'except BaseException'
        with pytest.raises(interrupts.Stopped):
            interrupts.check()


def test_stopped_is_not_an_exception_a_broad_except_would_swallow():
    assert not issubclass(interrupts.Stopped, Exception)


def test_handlers_are_restored_after_the_block_and_state_is_fresh_per_run():
    before = signal.getsignal(signal.SIGTERM)
    with interrupts.handling():
        assert signal.getsignal(signal.SIGTERM) is not before
        with pytest.raises(interrupts.Stopped):
            _send(signal.SIGTERM)
    assert signal.getsignal(signal.SIGTERM) is before
    with interrupts.handling():
        assert interrupts.received() is None and interrupts.count() == 0


def test_nested_handling_is_one_run():
    with interrupts.handling():
        with interrupts.handling():  # e.g. run_isolated inside the CLI's main
            with pytest.raises(interrupts.Stopped):
                _send(signal.SIGTERM)
        assert interrupts.received() == signal.SIGTERM and interrupts.active()


def test_stage_hooks_see_every_stage():
    seen = []
    interrupts.HOOKS.append(lambda stage, **info: seen.append((stage, info)))
    try:
        interrupts.stage("reap", pid=42)
    finally:
        interrupts.HOOKS.clear()
    assert seen == [("reap", {"pid": 42})]
