"""Who may do what: every service action re-reads the acting user's role from the store.

A guarded action is a method of :class:`db.service.Service` whose first argument is the acting
user and, for a project action, whose second is the project id; the role is checked at the moment
of the action, so hiding a button is never the only protection and a demoted user loses access
at once.
"""

from __future__ import annotations

import functools
from collections.abc import Callable
from typing import Any, Concatenate, ParamSpec, Protocol, TypeVar

from sqlalchemy import Engine

from db import repository as repo

P = ParamSpec("P")
R = TypeVar("R")


class Forbidden(PermissionError):
    """The acting user's role does not allow this action."""


class HasEngine(Protocol):
    engine: Engine


S = TypeVar("S", bound=HasEngine)
Action = Callable[Concatenate[S, P], R]


def _fresh_actor(service: HasEngine, args: tuple[Any, ...], name: str) -> repo.UserInfo:
    actor = args[0] if args else None
    if not isinstance(actor, repo.UserInfo):
        raise Forbidden(f"{name} needs the acting user as its first argument")
    try:
        return repo.get_user(service.engine, actor.id)
    except repo.NotFoundError:
        raise Forbidden("the acting user no longer exists") from None


def lead_only(func: Action) -> Action:
    """Refuse the action (``Forbidden``) unless its acting user is an administrator now (the
    account role ``lead``: accounts, new projects)."""

    @functools.wraps(func)
    def checked(self: HasEngine, *args: Any, **kwargs: Any) -> Any:
        fresh = _fresh_actor(self, args, func.__name__)
        if fresh.role != repo.ADMIN_ROLE:
            raise Forbidden(f"only leads may {func.__name__.replace('_', ' ')}")
        return func(self, fresh, *args[1:], **kwargs)

    checked.lead_only = True  # type: ignore[attr-defined]
    return checked


def project_role_only(*roles: str) -> Callable[[Action], Action]:
    """Refuse the action unless its acting user's role on the project given as the next
    argument is one of ``roles`` now (an administrator leads every project)."""

    def decorate(func: Action) -> Action:
        @functools.wraps(func)
        def checked(self: HasEngine, *args: Any, **kwargs: Any) -> Any:
            fresh = _fresh_actor(self, args, func.__name__)
            project_id = args[1] if len(args) > 1 else None
            if not isinstance(project_id, int):
                raise Forbidden(f"{func.__name__} needs the project id as its second argument")
            if repo.project_role(self.engine, project_id, fresh.id) not in roles:
                raise Forbidden(
                    f"only a project's {' or '.join(roles)} may {func.__name__.replace('_', ' ')}"
                )
            return func(self, fresh, *args[1:], **kwargs)

        checked.lead_only = "lead" in roles and len(roles) == 1  # type: ignore[attr-defined]
        checked.project_roles = roles  # type: ignore[attr-defined]
        return checked

    return decorate


project_lead_only = project_role_only("lead")
