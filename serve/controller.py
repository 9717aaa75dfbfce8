"""The controller loop of ``plumb serve``: lead (or stand by), follow git, reconcile.

Each turn: make sure of leadership (PostgreSQL state: a session advisory lock, see
:mod:`serve.leader_pg`; SQLite state: a lock file beside the state file,
:mod:`serve.leader_file`); on taking over, end a lease an earlier controller
left behind; fetch the followed branch when the poll interval elapsed or a push
webhook woke the loop; reconcile on a new commit or when the reconcile interval
elapsed; turn committed rollout decisions in the audit log into notices; refresh the
metrics. A failed turn is logged and retried at the next one: the loop never dies of
an unreachable state database or a git error.

A state database that cannot be reached (restarted, failed over, the network cut) is
retried with backoff (1 s doubling to 10 s, :func:`reconciler.state.retry.retry_after`),
logged when it is lost and when it is back, never once per turn. Meanwhile this replica
does not lead, ``/readyz`` answers 503 (it cannot tell who leads), and
``plumb_state_database_up`` is 0; once the database answers, the connection is reopened,
leadership is claimed again, a lease left by the turn the outage cut short is ended
(its fencing token then refuses a late write), and a ``state_unreachable`` notice says
how long the outage lasted.
"""

from __future__ import annotations

import gc
import sys
import threading
import time
from collections import Counter as Tally
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path
from typing import TYPE_CHECKING, Any

from ci.gitrepo import repo_state
from intent.fleet import load_fleet
from inventory.problems import InputError
from reconciler.drivers.base import Outcome
from reconciler.errors import FencedOut, Frozen
from reconciler.state.db import StateDB
from reconciler.state.dbfile import StateError
from reconciler.state.errors import StateUnreachable
from reconciler.state.lease import LeaseHeld
from reconciler.state.location import (
    fleet_state_location,
    is_postgres_url,
    open_state,
    with_state_rules,
)
from reconciler.state.retry import retry_after
from serve.gitpoll import PollError, fetch_and_fast_forward, head_commit
from serve.leader_file import FileLeaderLock
from serve.metrics import ServeMetrics
from serve.notices import Notice, notice_from_audit
from serve.reconcile import (
    IntentCache,
    PassResult,
    blocked_lines,
    owned_lines,
    queue_notice,
    reconcile_pass,
)
from serve.rolloutmetrics import RolloutMetrics
from serve.rollouts import RolloutDriver
from serve.sdnotify import Notifier
from serve.statusdata import AuditCheck, ControllerFacts, gather_status, pass_summary, unreadable
from serve.turnlog import TurnLog
from serve.webhook import Push
from service.context import FleetContext

if TYPE_CHECKING:
    from serve.leader_pg import LeaderLock

SERVE_PURPOSE = "serve"
FLEET_PATHS = ("plumb.yaml", "inventory", "intent", "policies")
"""What the loaded fleet and its validation are made of (rollouts/ is read per turn)."""
AUDIT_CURSOR = "notices.audit_seq"
LEADER_SEEN = "serve.leader_seen"  # epoch seconds the leader last said it leads
LEADER_SEEN_EVERY = 30.0
"""The leader records that it leads this often (state, not audit)."""
NO_LEADER_NOTICE_SECONDS = 120
"""A leader that takes over after a gap longer than this tells it (``no_leader``)."""
OLD_LEASE_CURSOR = "notices.old_lease_token"
APPLIED = Outcome.applied


def _collect_after_load() -> None:
    """Loading a fleet freezes what exists out of the cyclic collector's sight (a
    one-shot command never scans it again). A controller loads every pass: hand the
    frozen objects back and collect, or cyclic garbage from earlier turns (tracebacks,
    closed transports) would stay frozen for the life of the process."""
    if gc.get_freeze_count():
        gc.unfreeze()
        gc.collect()


def _counts(by_outcome: dict[str, int]) -> str:
    """``3 applied, 1 failed``: outcome counts as words, never a Python dict."""
    return ", ".join(f"{n} {outcome}" for outcome, n in sorted(by_outcome.items()))


def _lost_state(exc: BaseException) -> bool:
    """Did this error come from a state database that could not be reached (directly,
    or as the ``FencedOut`` a pre-write check makes of it)?"""
    return isinstance(exc, StateUnreachable) or isinstance(exc.__cause__, StateUnreachable)


def log(message: str) -> None:
    stamp = datetime.now(UTC).isoformat(timespec="seconds")
    sys.stderr.write(f"{stamp} {message}\n")
    sys.stderr.flush()


class Leadership:
    """Who leads: the advisory lock on PostgreSQL, a lock file beside a SQLite state."""

    def __init__(self, location: str, fleet: str) -> None:
        self._lock: LeaderLock | FileLeaderLock
        if is_postgres_url(location):
            from serve.leader_pg import LeaderLock

            self._lock = LeaderLock(location, fleet)
        else:
            self._lock = FileLeaderLock(Path(location))

    def claim(self) -> bool:
        return self._lock.try_acquire()

    def held(self) -> bool:
        return self._lock.still_held()

    def release(self) -> None:
        self._lock.release()


@dataclass
class Status:
    leader: bool = False
    last_ok: float | None = None
    last_error: str | None = None
    commit: str | None = None
    unreachable_since: float | None = None  # time.time() of the first failed turn
    unreachable_turns: int = 0  # turns in a row that could not reach the state
    retry_at: float = 0.0  # time.monotonic() of the next try while unreachable
    logged_at: float = 0.0  # time.monotonic() the outage was last logged

    def state_up(self) -> bool:
        return self.unreachable_since is None


UNREACHABLE_LOG_SECONDS = 60.0
"""While the state database stays unreachable, a reminder is logged this often."""


class Controller:
    def __init__(
        self, root: Path, actor: str, *, sleep_step: float = 0.2, lab_pace: float = 1 / 60
    ) -> None:
        self.root = root
        self.actor = actor
        self.fleet = load_fleet(root)
        self.serve = self.fleet.config.serve
        self.location = fleet_state_location(root, self.fleet.config)
        self.db: StateDB = with_state_rules(open_state(self.location), self.fleet.config)
        self.metrics = ServeMetrics(self.fleet.config.fleet)
        self.leadership = Leadership(self.location, self.fleet.config.fleet)
        self.status = Status(commit=head_commit(root))
        self.wake = threading.Event()
        self.stopping = threading.Event()
        self.notifier = Notifier.from_environ()
        self._sleep_step = sleep_step
        self._next_poll = 0.0
        self._next_pass = 0.0
        self._next_rollout = 0.0
        self.intent = IntentCache()
        self._seen_at = 0.0  # time.time() this replica last recorded that it leads
        self._loaded_commit: str | None = None
        self.rollouts = RolloutDriver(
            RolloutMetrics(self.metrics.registry, self.fleet.config.fleet),
            self._say,
            lab_pace=lab_pace,
        )
        self.turn_log = TurnLog()
        self._notes: list[str] = []
        self.last_pass: dict[str, Any] | None = None
        self._audit_check = AuditCheck()
        self.page: dict[str, Any] = gather_status(self._facts(), None, self._audit_check)

    def _say(self, message: str) -> None:
        """Log a line, and keep it as what this turn did (the status page's last turns)."""
        log(message)
        self._notes.append(message)

    # -- endpoints -------------------------------------------------------------

    def on_push(self, push: Push) -> bool:
        if push.branch != self.serve.branch:
            return False
        log(f"push from {push.forge} to {push.branch} ({push.commit[:12]}): fetching")
        self._next_poll = 0.0
        self.wake.set()
        return True

    def ready(self) -> tuple[bool, str]:
        if not self.status.state_up():
            return False, (
                f"state database unreachable, so who leads is unknown: {self.status.last_error}"
            )
        if self.status.last_error is not None:
            return False, f"last turn failed: {self.status.last_error}"
        if not self.status.leader:
            return True, "standby: another replica leads"
        if self.status.last_ok is None:
            return False, "no reconcile pass completed yet"
        return True, f"leader; last pass {time.time() - self.status.last_ok:.0f}s ago"

    # -- the loop --------------------------------------------------------------

    def run(self, *, once: bool = False) -> None:
        """Turn until stopped; systemd (if it started us) hears READY=1 first, a
        watchdog ping after each turn, and STOPPING=1 at the end."""
        self.notifier.ready()
        try:
            while not self.stopping.is_set():
                self.turn()
                self.notifier.alive()
                if once:
                    return
                self._pause()
        finally:
            self.notifier.stopping()

    def _pause(self) -> None:
        """Sleep until the next poll or pass is due, a push wakes us, or we stop."""
        due = min(self._next_poll, self._next_pass, self._next_rollout)
        due = due if self.status.leader else 0.0
        if not self.status.state_up():
            due = self.status.retry_at
        deadline = max(due, time.monotonic() + self._sleep_step)
        while not self.stopping.is_set() and time.monotonic() < deadline:
            if self.wake.wait(min(self._sleep_step, max(deadline - time.monotonic(), 0))):
                self.wake.clear()
                return

    def turn(self) -> None:
        if not self.status.state_up():
            self.db.retry_now()  # this loop paces the retries (see _state_lost)
        self._notes = []
        try:
            self._turn()
            self.status.last_error = None
            if not self.status.state_up():
                self._state_back()
        except (StateError, FencedOut, Frozen, LeaseHeld, PollError, InputError) as exc:
            self.status.last_error = f"{type(exc).__name__}: {exc}"
            if _lost_state(exc):
                self._state_lost()
            else:
                log(f"turn failed: {self.status.last_error}")
        finally:
            _collect_after_load()
        self.metrics.state_up.labels(self.fleet.config.fleet).set(int(self.status.state_up()))
        if self.status.state_up():
            self._refresh_metrics()
        self.turn_log.add(time.time(), self._notes, self.status.last_error)
        self._refresh_page()

    def _facts(self) -> ControllerFacts:
        status = self.status
        return ControllerFacts(
            fleet=self.fleet.config.fleet,
            leader=status.leader,
            state_up=status.state_up(),
            unreachable_since=status.unreachable_since,
            last_error=status.last_error,
            last_ok=status.last_ok,
            commit=status.commit,
            last_pass=self.last_pass,
            turns=[t.as_dict() for t in self.turn_log.newest_first()],
        )

    def _refresh_page(self) -> None:
        """The status page's data after this turn, read in this thread; the HTTP thread
        serves the last one. A state database that cannot be read is said on the page."""
        facts = self._facts()
        try:
            page = gather_status(facts, self.db if facts.state_up else None, self._audit_check)
        except Exception as exc:  # the page says why; the loop goes on
            reason = f"{type(exc).__name__}: {' '.join(str(exc).split())[:300]}"
            log(f"status page: cannot read the state database: {reason}")
            page = unreadable(gather_status(facts, None, self._audit_check), reason)
        self.page = page

    def _state_lost(self) -> None:
        """This turn could not reach the state database: stop leading (who leads is
        unknown), and try again after a backoff; log the loss, then a reminder a minute."""
        status = self.status
        status.leader = False
        self.metrics.leader.labels(self.fleet.config.fleet).set(0)
        self.db.drop_connection()  # idle through the outage, it would fail once more
        status.unreachable_turns += 1
        now = time.monotonic()
        status.retry_at = now + retry_after(status.unreachable_turns)
        if status.unreachable_since is None:
            status.unreachable_since = time.time()
            status.logged_at = now
            log(f"state database unreachable, not leading; retrying: {status.last_error}")
        elif now - status.logged_at >= UNREACHABLE_LOG_SECONDS:
            status.logged_at = now
            down = time.time() - status.unreachable_since
            log(
                f"state database still unreachable after {down:.0f} s"
                f" ({status.unreachable_turns} tries); next in {status.retry_at - now:.0f} s"
            )

    def _state_back(self) -> None:
        """The first turn since an outage that reached the state database: say so, and
        queue a notice of how long it lasted."""
        status = self.status
        since = status.unreachable_since or time.time()
        down = time.time() - since
        status.unreachable_since, status.unreachable_turns, status.retry_at = None, 0, 0.0
        role = "leading" if status.leader else "standing by"
        log(f"state database reachable again after {down:.0f} s; {role}")
        if not status.leader:
            return  # the leader tells; a standby's notice would be told twice
        fleet = self.fleet.config.fleet
        began = datetime.fromtimestamp(since, UTC).isoformat(timespec="seconds")
        self._tell(
            Notice(
                "state_unreachable",
                fleet,
                f"the state database of fleet {fleet} could not be reached for {down:.0f} s"
                f" from {began}; the controller is {role} again",
                {"since": began, "seconds": round(down)},
            )
        )

    def _tell(self, notice: Notice) -> None:
        """Queue one notice for the targets that want its event, in a transaction."""
        with self.db.transaction() as conn:
            queue_notice(self.db, conn, self.fleet, notice)

    def _turn(self) -> None:
        was_leader = self.status.leader
        self.status.leader = self.leadership.claim()
        self.metrics.leader.labels(self.fleet.config.fleet).set(int(self.status.leader))
        if not self.status.leader:
            return
        if not was_leader:
            self._say(f"leading fleet {self.fleet.config.fleet}")
            self._take_over()
            self._tell_gap()
            self._next_poll = self._next_pass = 0.0
        self._seen_leading()
        now = time.monotonic()
        moved = False
        if now >= self._next_poll:
            self._next_poll = now + self.serve.poll_seconds
            polled = fetch_and_fast_forward(self.root, self.serve.remote, self.serve.branch)
            moved = polled.moved
            if moved:
                self._say(
                    f"new commit {polled.after[:12]} on {self.serve.remote}/{self.serve.branch}"
                )
        if moved or now >= self._next_pass:
            self._next_pass = now + self.serve.interval_seconds
            self._pass()
        if time.monotonic() >= self._next_rollout:  # approvals, waves, bakes due
            wait = self.rollouts.turn(self._context(), self.leadership.held)
            self._next_rollout = time.monotonic() + wait
        self.audit_notices()
        self.old_lease_notice()

    def _clean_commit(self) -> str | None:
        """HEAD, when the fleet files in the working tree are HEAD's (no local edit):
        then what was loaded and derived from it is still true. None otherwise."""
        state = repo_state(self.root, FLEET_PATHS)
        return state.commit if state.commit and not state.dirty else None

    def _context(self) -> FleetContext:
        return FleetContext(self.fleet, self.actor, head_commit(self.root), self.db)

    def _seen_leading(self) -> None:
        """Record, every :data:`LEADER_SEEN_EVERY` s, that this replica leads: a later
        leader can then tell how long the fleet had none."""
        now = time.time()
        if now - self._seen_at < LEADER_SEEN_EVERY:
            return
        with self.db.transaction() as conn:
            self.db.outbox.set_cursor(conn, LEADER_SEEN, int(now))
        self._seen_at = now

    def _tell_gap(self) -> None:
        """Taking over: when the last leader was last seen more than
        :data:`NO_LEADER_NOTICE_SECONDS` ago (none ever led: nothing is told), queue a
        ``no_leader`` notice saying how long nothing reconciled the fleet."""
        seen = self.db.outbox.cursor(LEADER_SEEN)
        if seen is None:
            return
        gap = int(time.time()) - seen
        if gap <= NO_LEADER_NOTICE_SECONDS:
            return
        fleet = self.fleet.config.fleet
        since = datetime.fromtimestamp(seen, UTC).isoformat(timespec="seconds")
        self._say(f"no replica led fleet {fleet} for {gap} s (since {since})")
        self._tell(
            Notice(
                "no_leader",
                fleet,
                f"no plumb serve replica led fleet {fleet} for {gap} s (since {since});"
                f" {self.actor} leads now",
                {"since": since, "seconds": gap, "leader": self.actor},
            )
        )

    def _take_over(self) -> None:
        """End a lease an earlier controller left (it died mid-pass): leadership says
        that controller's session is gone, and its token, once broken, fences it out."""
        held = self.db.lease.current()
        if held is not None and held.purpose.startswith(SERVE_PURPOSE):
            self.db.lease.break_lease(
                self.actor,
                f"plumb serve took over leadership; {held.holder} lost its session",
            )
            self._say(f"ended the lease {held.token} left by {held.holder}")

    def _pass(self) -> None:
        clean = self._clean_commit()
        if clean is None or clean != self._loaded_commit:
            self.fleet = load_fleet(self.root)  # else the fleet of that very commit is loaded
            self._loaded_commit = clean
        self.serve = self.fleet.config.serve
        context = self._context()
        self.status.commit = context.commit
        result = reconcile_pass(
            context,
            now=datetime.now(UTC),
            leading=self.leadership.held,
            intent=self.intent,
            clean_commit=clean,
        )
        self._pass_metrics(result)
        self.status.last_ok = time.time()
        self.last_pass = pass_summary(result, context.commit, self.status.last_ok)
        applied = result.applied.by_outcome() if result.applied else {}
        self._say(
            f"pass at {(context.commit or '-')[:12]}: {result.decision.count()} drifted field(s),"
            f" {result.decision.corrected_fields()} to correct ({result.decision.window.reason})"
            + (f"; applied: {_counts(applied)}" if applied else "")
            + (f"; refused: {result.refused}" if result.refused else "")
        )
        for line in owned_lines(result.decision) + blocked_lines(result.decision):
            self._say(line)

    def _pass_metrics(self, result: PassResult) -> None:
        m, fleet = self.metrics, self.fleet.config.fleet
        decision = result.decision
        for mode in ("warn", "correct"):
            m.drift_fields.labels(fleet, mode).set(decision.count(mode))
        if result.applied is not None:
            done = sum(
                len(r.changes) for r in result.applied.results if r.outcome.value == "applied"
            )
            m.corrected.labels(fleet).inc(done)
        ok = result.refused is None and (result.applied is None or result.applied.ok())
        m.passes.labels(fleet, "ok" if ok else "failed").inc()
        m.pending.labels(fleet).set(
            result.plan.change_count() - (result.decision.corrected_fields() if ok else 0)
        )
        m.unknown.labels(fleet).set(len(result.plan.unknown()))
        m.window_open.labels(fleet).set(int(decision.window.allowed))
        m.last_reconcile.labels(fleet).set(time.time())
        m.duration.labels(fleet).set(result.seconds)
        m.commit.clear()
        m.commit.labels(fleet, self.status.commit or "").set(1)
        m.set_blocked(decision.blocked)
        m.set_owned(decision.owned())

    def audit_notices(self) -> None:
        """Notices for rollout holds, aborts and rollbacks, once each: the cursor over
        the audit log moves in the same transaction as the notices are queued."""
        outbox = self.db.outbox
        seen = outbox.cursor(AUDIT_CURSOR)
        if seen is None:  # the first turn ever: history is not replayed
            head = self.db.audit.records(1)
            if head:
                with self.db.transaction() as conn:
                    outbox.set_cursor(conn, AUDIT_CURSOR, head[-1].seq)
            return
        records = self.db.audit.after(seen)
        if not records:
            return
        notices = [n for r in records if (n := notice_from_audit(r, self.fleet.config.fleet))]
        with self.db.transaction() as conn:
            for notice in notices:
                queue_notice(self.db, conn, self.fleet, notice)
            outbox.set_cursor(conn, AUDIT_CURSOR, records[-1].seq)

    def old_lease_notice(self) -> None:
        held = self.db.lease.current()
        if held is None:
            return
        age = (self.db.now() - held.heartbeat_at).total_seconds()
        if age < self.serve.old_lease_minutes * 60:
            return
        if self.db.outbox.cursor(OLD_LEASE_CURSOR) == held.token:
            return
        with self.db.transaction() as conn:
            queue_notice(
                self.db,
                conn,
                self.fleet,
                Notice(
                    "old_lease",
                    self.fleet.config.fleet,
                    f"the fleet lease is held by {held.describe(self.db.now())}",
                    {"token": held.token, "holder": held.holder, "purpose": held.purpose},
                ),
            )
            self.db.outbox.set_cursor(conn, OLD_LEASE_CURSOR, held.token)

    def _refresh_metrics(self) -> None:
        m, fleet = self.metrics, self.fleet.config.fleet
        try:
            held = self.db.lease.current()
            m.lease_age.labels(fleet).set(
                (self.db.now() - held.since).total_seconds() if held else 0
            )
            head = self.db.audit.records(1)
            m.audit_head.labels(fleet).set(head[-1].seq if head else 0)
            m.rollouts.clear()
            for status, count in Tally(r.status.value for r in self.db.journal.all()).items():
                m.rollouts.labels(fleet, status).set(count)
            m.outbox.labels(fleet).set(self.db.outbox.undelivered())
        except StateError as exc:
            log(f"metrics: {exc}")

    def close(self) -> None:
        self.leadership.release()
        self.db.close()
