"""BGP sessions are derived once per loaded fleet, and forgotten with it."""

from __future__ import annotations

import dataclasses
import gc

import pytest

import intent.sessions
from intent.sessions import all_sessions
from tests.fleetcopy import FleetCopy


def test_derived_once_per_fleet(orion: FleetCopy, monkeypatch: pytest.MonkeyPatch) -> None:
    """Walking a fleet's sessions twice derives them once; the walks agree."""
    fleet = orion.load()
    calls: list[str] = []
    real = intent.sessions.sessions_of

    def counted(fleet: object, device: str):  # type: ignore[no-untyped-def]
        calls.append(device)
        return real(fleet, device)  # type: ignore[arg-type]

    monkeypatch.setattr(intent.sessions, "sessions_of", counted)
    first = list(all_sessions(fleet))
    derived = len(calls)
    assert first and derived
    assert list(all_sessions(fleet)) == first
    assert len(calls) == derived


def test_another_fleet_derives_its_own(orion: FleetCopy, monkeypatch: pytest.MonkeyPatch) -> None:
    """A copy of a fleet is another fleet: its sessions are derived for it."""
    fleet = orion.load()
    first = list(all_sessions(fleet))
    calls: list[str] = []
    real = intent.sessions.sessions_of

    def counted(fleet: object, device: str):  # type: ignore[no-untyped-def]
        calls.append(device)
        return real(fleet, device)  # type: ignore[arg-type]

    monkeypatch.setattr(intent.sessions, "sessions_of", counted)
    copy = dataclasses.replace(fleet)
    assert list(all_sessions(copy)) == first
    assert calls


def test_forgotten_with_the_fleet(orion: FleetCopy) -> None:
    """Once a fleet is gone, nothing of it stays behind."""
    fleet = orion.load()
    list(all_sessions(fleet))
    key = id(fleet)
    assert key in intent.sessions._SESSIONS
    del fleet
    gc.collect()
    assert key not in intent.sessions._SESSIONS
