"""The console's actions: what an admin client may ask for, queued for the operator's key.

Lifting a quarantine (re-attesting its server) and regenerating Rift's HIGH cards both need the
operator's private key, which the serving process never reads. So an action is a POST that
carries the session's CSRF token, needs an admin caller (:attr:`Caller.admin
<cartograph.access.guard.Caller.admin>`: an API key added with ``--admin`` or a JWT with the
``cartograph:admin`` scope), is audited (``console-action``, every refusal too: a stale or
forged form, no admin scope, nothing to lift, a restricted client), and puts a job
on the store's queue (:mod:`cartograph.storage.jobs`) that ``cartograph jobs run`` carries out
where the key is. The jobs page shows each job's state and what its run printed.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

import anyio
from starlette.requests import Request
from starlette.responses import RedirectResponse, Response

from cartograph.console import pages
from cartograph.errors import CartographError

if TYPE_CHECKING:
    from cartograph.console.app import Console
    from cartograph.console.sessions import ConsoleSession
    from cartograph.storage import Job

NOT_ADMIN = (
    "This action needs an admin client: an API key added with `cartograph clients add NAME "
    "--admin`, or a JWT with the cartograph:admin scope. Your login can see, not act."
)


def _audit(
    console: Console, session: ConsoleSession, action: str, outcome: str, **fields: str
) -> None:
    console.proxy.audit.write(
        "console-action", client=session.caller.name, action=action, outcome=outcome, **fields
    )


async def _checked(
    console: Console, request: Request, session: ConsoleSession, action: str
) -> tuple[dict[str, str], Response | None]:
    """The form's fields, or the refusal page (stale or forged form, or not an admin); a
    refusal is audited like a queued job, with its reason as the outcome."""
    form = {k: str(v) for k, v in (await request.form()).items()}
    args = {"server": form["server"]} if "server" in form else {}
    if not session.csrf_ok(form.get("csrf")):
        _audit(console, session, action, "stale-form", **args)
        return form, console.page("login.html", None, 403, csrf="", message=pages.STALE_FORM)
    if not session.caller.admin:
        _audit(console, session, action, "refused", **args)
        return form, console.page("message.html", session, 403, title="Not allowed", text=NOT_ADMIN)
    return form, None


async def _queue(
    console: Console, session: ConsoleSession, kind: str, args: dict[str, str], action: str
) -> Job:
    queue = console.proxy.store.job_queue()
    job = await anyio.to_thread.run_sync(queue.submit, kind, args, session.caller.name)
    _audit(console, session, action, "queued", job=job.id, **args)
    return job


async def lift(console: Console, request: Request, session: ConsoleSession) -> Response:
    """POST /console/actions/lift (``server``): queue re-attesting it."""
    form, refused = await _checked(console, request, session, "lift")
    if refused is not None:
        return refused
    server = form.get("server", "")
    held = {r.server for r in pages.quarantine_rows(console.proxy, session.caller)}
    if server not in held:
        _audit(console, session, "lift", "not-held", server=server)
        known = [pages.server_path(s) for s in sorted(held)]
        return console.not_found(session, f"a quarantined server {server!r}", known)
    job = await _queue(console, session, "reattest", {"server": server}, "lift")
    return RedirectResponse(f"/console/jobs?queued={job.id}", status_code=303)


async def regenerate(console: Console, request: Request, session: ConsoleSession) -> Response:
    """POST /console/actions/regenerate: queue regenerating the HIGH clusters' cards."""
    _, refused = await _checked(console, request, session, "regenerate")
    if refused is not None:
        return refused
    if not pages.unrestricted(session.caller):
        _audit(console, session, "regenerate", "refused")
        text = "Regenerating rewrites cards of every server; it needs a client allowed all tools."
        return console.page("message.html", session, 403, title="Not allowed", text=text)
    job = await _queue(console, session, "regenerate", {}, "regenerate")
    return RedirectResponse(f"/console/jobs?queued={job.id}", status_code=303)


async def jobs_page(console: Console, request: Request, session: ConsoleSession) -> Response:
    """GET /console/jobs: the queue, newest first, cut to what the caller may see."""
    try:
        jobs = await anyio.to_thread.run_sync(console.proxy.store.job_queue().jobs)
    except CartographError as exc:
        return console.page("message.html", session, 503, title="Jobs", text=str(exc))
    visible = {s.server for s in console.proxy.status(session.caller).servers}
    everything = pages.unrestricted(session.caller)
    shown = [
        j
        for j in reversed(jobs)
        if (j.args.get("server") in visible if j.kind == "reattest" else everything)
    ]
    queued = request.query_params.get("queued")
    return console.page("jobs.html", session, jobs=shown, queued=queued)
