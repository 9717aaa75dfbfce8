"""``plumb serve``: run the continuous controller for one fleet (docs/serve.md)."""

from __future__ import annotations

import signal
import stat
from pathlib import Path
from types import FrameType
from typing import Annotated

import typer

from plumb.app import PathArg, app, fail, fleet_root, load_or_exit
from service.context import current_actor


def webhook_secret(root: Path, env: str, file: str | None) -> bytes:
    """The push webhook's shared secret: ``$env``, else a file only its owner can read;
    empty when neither is set (every push is then refused)."""
    from inventory.envsettings import named_secret

    value = named_secret(env)
    if value is not None:
        return value.get_secret_value().encode()
    if file is None:
        return b""
    path = root / Path(file).expanduser()
    try:
        mode = path.stat().st_mode
        if mode & 0o077:
            raise fail(f"{path} has mode {stat.S_IMODE(mode):04o}: run `chmod 600 {path}`")
        return path.read_text(encoding="utf-8").strip().encode()
    except OSError as exc:
        raise fail(f"cannot read serve.webhook_secret_file {path}: {exc.strerror or exc}") from None


@app.command()
def serve(
    path: PathArg = Path("."),
    listen: Annotated[
        str,
        typer.Option(
            help="HOST:PORT for the status page (/, /status.json), /webhook, /healthz,"
            " /readyz and /metrics."
        ),
    ] = "127.0.0.1:9464",
    once: Annotated[bool, typer.Option("--once", help="Run one turn and exit.")] = False,
    lab_pace: Annotated[
        float,
        typer.Option(
            "--lab-pace",
            min=0.001,
            max=10_000.0,
            help="On a lab fleet: virtual minutes the lab clock moves per real second "
            "while a rollout runs (default 1/60: real time).",
        ),
    ] = 1 / 60,
) -> None:
    """Run the continuous controller: follow the fleet repo's branch, reconcile on each
    new commit and on an interval, report or correct drift inside sync windows."""
    from reconciler.state.dbfile import StateError
    from serve.controller import Controller, log
    from serve.httpapp import Endpoints, controller_routes
    from serve.httpd import ControllerHttp
    from serve.sender import Sender
    from serve.statushttp import StatusTokenError, status_routes, status_token

    root = fleet_root(path)
    load_or_exit(root)  # a fleet that does not load is reported as every command does
    host, _, port = listen.rpartition(":")
    if not host or not port.isdigit():
        raise fail(f"--listen {listen!r} is not HOST:PORT")
    try:
        controller = Controller(root, f"{current_actor()} (serve)", lab_pace=lab_pace)
    except StateError as exc:
        raise fail(str(exc), 1) from None
    serve_config = controller.serve
    secret = webhook_secret(root, serve_config.webhook_secret_env, serve_config.webhook_secret_file)
    try:
        token = status_token(controller.fleet)
    except StatusTokenError as exc:
        controller.close()
        raise fail(str(exc)) from None
    endpoints = Endpoints(
        secret=lambda: secret,
        on_push=controller.on_push,
        ready=controller.ready,
        metrics=controller.metrics.render,
    )
    routes = controller_routes(endpoints) + status_routes(lambda: controller.page, token)
    http = ControllerHttp(host, int(port), routes, log=log)
    sender = Sender(controller.db, lambda: controller.status.leader)

    def stop(signum: int, frame: FrameType | None) -> None:
        controller.stopping.set()
        controller.wake.set()

    signal.signal(signal.SIGTERM, stop)
    signal.signal(signal.SIGINT, stop)
    http.start()
    sender.start()
    log(f"plumb serve {controller.fleet.config.fleet} listening on {host}:{http.port}")
    try:
        controller.run(once=once)
    finally:
        sender.stop()
        http.stop()
        controller.close()
        log("stopped")
