"""The status page as HTML (pure: the data of :mod:`serve.statusdata` in, one HTML
document out). Everything is inline (CSS, a little JavaScript, SVG charts from
:mod:`serve.statussvg`): the page works air-gapped, fetches nothing but
``status.json`` and itself, and has no control that writes anything.

Every value from the fleet, the journal or the audit log is escaped (``html.escape``);
the JavaScript only swaps in the ``<main>`` of a freshly fetched page when
``status.json`` says the data changed, so there is one renderer, this one.
"""

from __future__ import annotations

import hashlib
from base64 import b64encode
from collections.abc import Iterable, Mapping, Sequence
from datetime import UTC, datetime
from html import escape
from typing import Any

from serve.statussvg import evidence_charts

REFRESH_SECONDS = 5

CSS = """
*{box-sizing:border-box}
body{font:14px/1.45 system-ui,-apple-system,"Segoe UI",sans-serif;margin:0;color:#1d2330;
background:#f4f6f9;overflow-wrap:anywhere}
header{background:#1d2330;color:#fff;padding:.8em 1.2em}
header h1{font-size:1.25em;margin:0 0 .3em}
.facts{display:flex;flex-wrap:wrap;gap:.4em 1.2em;font-size:.92em}
main{padding:.6em 1.2em 2em;max-width:1400px}
section{background:#fff;border:1px solid #d8dde6;border-radius:6px;margin:.9em 0;padding:.6em 1em}
h2{font-size:1.1em;margin:.2em 0 .5em}
h3{font-size:1em;margin:.8em 0 .3em}
.scroll{overflow-x:auto;max-width:100%}
table{border-collapse:collapse;font-size:.92em}
th,td{text-align:left;padding:.2em .6em .2em 0;border-bottom:1px solid #eceff4;vertical-align:top}
th{font-weight:600;color:#4a5366}
.ok{color:#17723a}.bad{color:#b3261e}.warn{color:#8a5a00}.muted{color:#6b7385}
.badge{display:inline-block;padding:0 .45em;border-radius:3px;background:#e6e9ef;font-size:.9em}
.badge.ok{background:#dff3e6}.badge.bad{background:#fbe1df}.badge.warn{background:#fdf0d2}
.banner{padding:.5em 1em;background:#fbe1df;color:#7a1a14;border-bottom:1px solid #e8b4af}
.banner:empty{display:none}
pre{background:#f7f8fa;border:1px solid #eceff4;padding:.5em;overflow-x:auto;font-size:.85em;
max-width:100%;white-space:pre}
.charts{display:flex;flex-wrap:wrap;gap:.6em}
svg.chart{width:320px;max-width:100%;height:auto;border:1px solid #eceff4}
svg .bg{fill:#fcfcfd}svg .line{fill:none;stroke:#2f5fb3;stroke-width:1.5}
svg .pt{fill:#2f5fb3}svg .ctl{fill:none;stroke:#6b7385}
svg .thr{stroke:#b3261e;stroke-dasharray:4 3}svg .floor{stroke:#8a5a00;stroke-dasharray:1 3}
svg .lbl{font-size:9px;fill:#4a5366}
ul{margin:.2em 0;padding-left:1.2em}
footer{font-size:.85em;color:#6b7385;padding:0 1.2em 1.5em}
@media (max-width:640px){main{padding:.4em .6em 1.5em}section{padding:.5em .6em}
header{padding:.6em .8em}}
"""

SCRIPT = (
    """
(function () {
  "use strict";
  var banner = document.getElementById("live");
  function say(text) { banner.textContent = text; }
  function opened() {
    var keys = {};
    document.querySelectorAll("details[open][data-key]").forEach(function (d) {
      keys[d.getAttribute("data-key")] = true;
    });
    return keys;
  }
  function redraw(main) {
    return fetch(".", {cache: "no-store", credentials: "same-origin"})
      .then(function (r) { return r.ok ? r.text() : null; })
      .then(function (text) {
        if (text === null) { return; }
        var page = new DOMParser().parseFromString(text, "text/html");
        var fresh = page.querySelector("main");
        if (!fresh) { return; }
        var keep = opened();
        main.innerHTML = fresh.innerHTML;
        main.setAttribute("data-digest", fresh.getAttribute("data-digest") || "");
        main.querySelectorAll("details[data-key]").forEach(function (d) {
          if (keep[d.getAttribute("data-key")]) { d.open = true; }
        });
        var head = page.querySelector("header");
        if (head) { document.querySelector("header").innerHTML = head.innerHTML; }
      });
  }
  function refresh() {
    fetch("status.json", {cache: "no-store", credentials: "same-origin"})
      .then(function (r) {
        if (r.status === 401) {
          say("status.json: a bearer token is required (see the foot of the page)");
          return null;
        }
        return r.json().then(function (data) { return {status: r.status, data: data}; });
      })
      .then(function (got) {
        if (got === null) { return null; }
        say(got.status === 200 ? "" : (got.data.reason || "status.json: " + got.status));
        var main = document.querySelector("main");
        if (got.data.digest && got.data.digest !== main.getAttribute("data-digest")) {
          return redraw(main);
        }
        return null;
      })
      .catch(function (err) { say("cannot reach the controller: " + err); });
  }
  setInterval(refresh, """
    + str(REFRESH_SECONDS * 1000)
    + """);
})();
"""
)
SCRIPT_HASH = "sha256-" + b64encode(hashlib.sha256(SCRIPT.encode()).digest()).decode()
CSP = (
    "default-src 'none'; style-src 'unsafe-inline'; img-src data:; connect-src 'self';"
    f" script-src '{SCRIPT_HASH}'; base-uri 'none'; form-action 'none'; frame-ancestors 'none'"
)


def e(value: object) -> str:
    return escape("-" if value is None else str(value))


def _badge(text: str, tone: str = "") -> str:
    return f'<span class="badge {tone}">{e(text)}</span>'


def _table(head: Sequence[str], rows: Iterable[Sequence[str]], css: str = "") -> str:
    """A table of already-escaped cells, scrolling on its own on a narrow screen."""
    body = "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows)
    th = "".join(f"<th>{e(h)}</th>" for h in head)
    return f'<div class="scroll"><table class="{css}"><tr>{th}</tr>{body}</table></div>'


def _when(stamp: object) -> str:
    return e(str(stamp).replace("T", " ").replace("+00:00", "Z")) if stamp else "-"


def header(data: Mapping[str, Any]) -> str:
    state, ctl = data["state"], data["controller"]
    state_text = (
        _badge("state database reachable", "ok")
        if state["up"]
        else _badge(f"state database unreachable since {state['unreachable_since']}", "bad")
    )
    role = _badge("leader", "ok") if ctl["leader"] else _badge("standby", "warn")
    return (
        f"<h1>plumb serve: fleet {e(data['fleet'])}</h1>"
        '<div class="facts">'
        f"<span>{role}</span><span>{state_text}</span>"
        f"<span>commit <code>{e((ctl['commit'] or '-')[:12])}</code></span>"
        f"<span>last pass {_when(ctl['last_pass_at'])}</span>"
        f'<span class="muted">data of {_when(data["generated_at"])}</span>'
        "</div>"
    )


def state_section(data: Mapping[str, Any]) -> str:
    state, ctl = data["state"], data["controller"]
    lines = []
    if not state["up"]:
        lines.append(
            f'<p class="bad">The state database cannot be read: {e(state["reason"])}.'
            " Rollouts, approvals and the audit log are not shown until it answers.</p>"
        )
    elif ctl["last_error"]:
        lines.append(f'<p class="bad">The last turn failed: {e(ctl["last_error"])}</p>')
    lease = data.get("lease")
    lines.append(
        "<p>Fleet lease: "
        + (
            f"held by {e(lease['holder'])} ({e(lease['purpose'])}, token {e(lease['token'])})"
            if lease
            else "free"
        )
        + "</p>"
    )
    return '<section id="controller"><h2>Controller</h2>' + "".join(lines) + "</section>"


def drift_section(drift: Mapping[str, Any] | None) -> str:
    if drift is None:
        return (
            '<section id="fleet"><h2>Fleet</h2><p class="muted">No reconcile pass yet'
            " (a standby does not reconcile).</p></section>"
        )
    window = drift["window"]
    out = [
        '<section id="fleet"><h2>Fleet</h2>',
        f"<p>Commit reconciled <code>{e((drift['commit'] or '-')[:12])}</code> at "
        f"{_when(drift['at'])} ({e(drift['seconds'])} s); pass "
        + (_badge("ok", "ok") if drift["ok"] else _badge("failed", "bad"))
        + "</p>",
        f"<p>Sync window {_badge('open', 'ok') if window['open'] else _badge('closed', 'warn')}"
        f" {e(window['reason'])}</p>",
        _table(
            ["drifted", "warn", "correct", "correcting now", "pending changes", "unknown devices"],
            [
                [
                    e(drift["drifted"]),
                    e(drift["by_mode"]["warn"]),
                    e(drift["by_mode"]["correct"]),
                    e(drift["correcting"]),
                    e(drift["pending"]),
                    e(len(drift["unknown"])),
                ]
            ],
            "counts",
        ),
    ]
    if drift["refused"]:
        out.append(f'<p class="bad">Nothing corrected: {e(drift["refused"])}</p>')
    if drift["by_owner"]:
        out.append("<h3>Drifted fields by owner</h3>")
        out.append(
            _table(["owner", "fields"], ([e(k), e(v)] for k, v in drift["by_owner"].items()))
        )
    if drift["blocked"]:
        out.append("<h3>Blocked corrections</h3>")
        rows = ([e(d), e(b["kind"]), e(b["reason"])] for d, b in sorted(drift["blocked"].items()))
        out.append(_table(["device", "kind", "reason"], rows))
    if drift["unknown"]:
        out.append("<h3>Unknown devices</h3>")
        out.append(_table(["device", "why"], ([e(d), e(w)] for d, w in drift["unknown"].items())))
    if drift["fields"]:
        rows = (
            [
                e(f["device"]),
                e(f["path"]),
                e(f["observed"]),
                e(f["intended"]),
                e(f["mode"]),
                e(f"rollout {f['rollout']}" if f["rollout"] else f["owner"]),
                e(f["waiting"] or ("" if f["mode"] == "warn" else "correcting")),
            ]
            for f in drift["fields"]
        )
        more = f" (and {drift['fields_more']} more)" if drift["fields_more"] else ""
        out.append(f'<details data-key="fields"><summary>Drifted fields{e(more)}</summary>')
        out.append(
            _table(["device", "path", "observed", "intended", "mode", "owner", "waiting"], rows)
        )
        out.append("</details>")
    out.append("</section>")
    return "".join(out)


def _wave_rows(rollout: Mapping[str, Any]) -> list[list[str]]:
    rows = []
    for w in rollout["waves"]:
        note = ""
        if rollout["awaiting_wave"] == w["number"]:
            note = _badge(
                f"waiting for promotion: plumb rollout promote {rollout['id']} "
                f"--wave {w['number']}",
                "warn",
            )
        elif w["status"] == "held":
            note = _badge(f"held: {rollout['reason'] or w['decision'] or ''}", "bad")
        tone = {"passed": "ok", "held": "bad", "aborted": "bad", "baking": "warn"}.get(
            w["status"], ""
        )
        states = ", ".join(f"{k} {v}" for k, v in w["target_states"].items())
        bake = w["bake_window_minutes"]
        rows.append(
            [
                e(w["number"]),
                "canary" if w["canary"] else "wave",
                f'<span class="wave-status {tone}" data-wave="{e(w["number"])}">'
                f"{e(w['status'])}</span>",
                f'{e(w["targets"])} <span class="muted">{e(states)}</span>',
                e(f"{w['bake_minutes']:g} min")
                + (
                    f' <span class="muted">(lab min {bake[0]:g}..{bake[1]:g})</span>'
                    if bake[0] is not None and bake[1] is not None
                    else ""
                ),
                e(w["decision"]),
                e(w["attempts"]),
                note,
            ]
        )
    return rows


def _decisions(rollout: Mapping[str, Any]) -> str:
    out = []
    for w in rollout["waves"]:
        evidence = w.get("evidence") or {}
        if not w["decision"]:
            continue
        window = evidence.get("window") or ["?", "?"]
        items = "".join(
            f'<li><span class="{"ok" if m.get("phase") == "successful" else "bad"}">'
            f"{e(m.get('phase'))}</span> {e(m.get('message'))}</li>"
            for m in evidence.get("measurements") or []
        )
        items += "".join(
            f'<li><span class="muted">A/A</span> {e(f.get("message"))}</li>'
            for f in (evidence.get("noise_floors") or {}).values()
        )
        out.append(
            f"<h3>Wave {e(w['number'])}: {e(str(w['decision']).upper())}</h3>"
            f'<p class="muted">over {e(window[0])} .. {e(window[-1])}; controls:'
            f" {e(evidence.get('controls', 0))} ({e(evidence.get('control_group', '-'))})</p>"
            f"<ul>{items}</ul>"
        )
    return "".join(out)


def rollout_block(rollout: Mapping[str, Any]) -> str:
    tone = {"completed": "ok", "held": "bad", "aborted": "bad", "rolling_back": "bad"}.get(
        rollout["status"], "warn"
    )
    charts = evidence_charts(rollout["waves"], rollout["current_wave"])
    cost = rollout["cost"]
    return (
        f'<article class="rollout" data-rollout="{e(rollout["id"])}">'
        f"<h3>{e(rollout['id'])} "
        f'<span class="badge {tone} rollout-status">{e(rollout["status"])}</span>'
        + ("" if rollout["active"] else ' <span class="muted">(latest, not active)</span>')
        + "</h3>"
        f"<p>spec {e(rollout['spec'])}, started by {e(rollout['actor'])} at"
        f" {_when(rollout['created_at'])}; wave now: {e(rollout['current_wave'])}</p>"
        + (f'<p class="reason">reason: {e(rollout["reason"])}</p>' if rollout["reason"] else "")
        + _table(
            ["wave", "kind", "status", "targets", "bake", "decision", "attempts", ""],
            _wave_rows(rollout),
            "waves",
        )
        + f'<p class="muted">stalled {cost["stalled_gpu_hours"]:.1f} GPU-h'
        f" (plan {cost['planned_gpu_hours']:.1f}, lower bound"
        f" {cost['lower_bound_gpu_hours']:.1f})</p>"
        + _decisions(rollout)
        + ('<h3>Evidence</h3><div class="charts">' + "".join(charts) + "</div>" if charts else "")
        + f'<details data-key="text-{e(rollout["id"])}"><summary>plumb rollout status</summary>'
        f"<pre>{e(rollout['text'])}</pre></details></article>"
    )


def rollouts_section(data: Mapping[str, Any]) -> str:
    rollouts = data["rollouts"]
    body = "".join(rollout_block(r) for r in rollouts) or '<p class="muted">No rollout.</p>'
    return f'<section id="rollouts"><h2>Rollouts</h2>{body}</section>'


def approvals_section(data: Mapping[str, Any]) -> str:
    approvals = data["approvals"]
    if approvals is None:
        return ""
    out = ['<section id="approvals"><h2>Approvals</h2>']
    waiting = data["promotions_waiting"]
    if waiting:
        out.append("<h3>Promotions waiting</h3>")
        rows = (
            [
                e(p["rollout"]),
                e(p["wave"]),
                f"<code>plumb rollout promote {e(p['rollout'])} --wave {e(p['wave'])}</code>",
            ]
            for p in waiting
        )
        out.append(_table(["rollout", "before wave", "to promote (CLI)"], rows))
    queued = approvals["queued"]
    out.append(f"<h3>Queue ({len(queued)})</h3>")
    if queued:
        rows = (
            [
                e(a["place"]),
                e(a["spec"]),
                e(a["approved_by"]),
                _when(a["approved_at"]),
                e(a["approval"]),
            ]
            for a in queued
        )
        out.append(_table(["place", "spec", "approved by", "at", "approval"], rows))
    else:
        out.append('<p class="muted">No approval waiting to start.</p>')
    for title, key in (
        ("Handed over, not taken yet", "drive"),
        ("Promotions given, not taken yet", "promotions_given"),
    ):
        if approvals[key]:
            out.append(f"<h3>{e(title)}</h3><ul>")
            out += [
                f"<li>{e(', '.join(f'{k} {v}' for k, v in a.items()))}</li>" for a in approvals[key]
            ]
            out.append("</ul>")
    out.append(
        '<p class="muted">Approvals stay in git and the CLI (plumb rollout approve, promote);'
        " this page only shows them.</p></section>"
    )
    return "".join(out)


def turns_section(turns: Sequence[Mapping[str, Any]]) -> str:
    rows = []
    for t in turns:
        at = datetime.fromtimestamp(float(t["at"]), UTC).isoformat(timespec="seconds")
        did = "; ".join(str(line) for line in t["did"])
        did += f" (+{t['more']} more)" if t["more"] else ""
        did += f" ({t['repeats']} turns)" if t["repeats"] > 1 else ""
        result = _badge("ok", "ok") if t["ok"] else _badge(f"failed: {t['error']}", "bad")
        rows.append([_when(at), e(did), result])
    table = (
        _table(["ended", "what the turn did", "result"], rows, "turns")
        if rows
        else ('<p class="muted">No turn yet.</p>')
    )
    return f'<section id="turns"><h2>Last turns</h2>{table}</section>'


def audit_section(audit: Mapping[str, Any] | None) -> str:
    if audit is None:
        return ""
    verdict = (
        _badge(f"chain verifies (to seq {audit.get('verified_seq')})", "ok")
        if audit.get("ok")
        else _badge("chain does NOT verify", "bad")
    )
    problems = "".join(f"<li>{e(p)}</li>" for p in audit.get("problems") or [])
    problems += "".join(f"<li>missing guard {e(g)}</li>" for g in audit.get("missing_guards") or [])
    return (
        '<section id="audit"><h2>Audit log</h2>'
        f"<p>head seq {e(audit['head_seq'])} at {_when(audit['head_at'])},"
        f" hash <code>{e((audit['head_hash'] or '-')[:16])}</code> {verdict}"
        f' <span class="muted">verified {_when(audit.get("verified_at"))}</span></p>'
        + (f"<ul>{problems}</ul>" if problems else "")
        + "</section>"
    )


def render_page(data: Mapping[str, Any], *, token_required: bool) -> str:
    """The whole page; ``data`` as :func:`serve.statusdata.gather_status` made it."""
    token_note = (
        "This page and status.json demand <code>Authorization: Bearer TOKEN</code>"
        " (serve.status_token_file): send it from a reverse proxy in front of plumb, or"
        " <code>curl -H 'Authorization: Bearer TOKEN' .../status.json</code>."
        if token_required
        else "No token is required (serve.status_token_file is not set)."
    )
    return (
        '<!doctype html><html lang="en"><head><meta charset="utf-8">'
        '<meta name="viewport" content="width=device-width, initial-scale=1">'
        f"<title>plumb serve: {e(data['fleet'])}</title>"
        '<link rel="icon" href="data:,">'
        f"<style>{CSS}</style></head><body>"
        f"<header>{header(data)}</header>"
        '<div id="live" class="banner" role="status" aria-live="polite"></div>'
        f'<main data-digest="{e(data.get("digest", ""))}">'
        + state_section(data)
        + rollouts_section(data)
        + approvals_section(data)
        + drift_section(data["drift"])
        + turns_section(data["turns"])
        + audit_section(data["audit"])
        + "</main>"
        f"<footer><p>Read-only: nothing on this page writes. It refreshes from"
        f' <a href="status.json">status.json</a> every {REFRESH_SECONDS} s. {token_note}</p>'
        "</footer>"
        f"<script>{SCRIPT}</script></body></html>"
    )
