"""The one declaration loader of every command that reads a declaration (``simulate``,
``recommend``, ``preview``, and ``emulate``).

``--declaration REFERENCE`` names the declaration:

- ``path/to/file.py:ATTR`` — an ordinary Python file, run as a module registered in
  ``sys.modules`` before it runs (so ``dataclasses`` and ``from __future__ import annotations``
  work as in any imported module), with the file's directory on ``sys.path`` (so it can import
  its neighbours, as ``python file.py`` can);
- ``package.module:ATTR`` — an importable module (the working directory is on ``sys.path``, as
  with ``python -m``).

Dots after the colon walk attributes and mapping keys (``stacks.environments:ENVIRONMENTS.prod``).
Without ``--declaration``, ``--env NAME`` (default ``dev``) reads this repository's
``stacks/environments.py``; outside the repository that is an error saying to pass
``--declaration``.

The declaration shape (one for every command)
---------------------------------------------
An object (any class, dataclass or module) or a mapping with:

==========================  ==============================================================
``capacity_limits``         required: the service environment's ``CapacityLimit``\\ s
``shares``                  required: the ``QuotaShareSpec``\\ s
``queue_name``              optional: the job queue's name (``preview``'s default ``--queue``)
``stack_name``              optional: the name of the CloudFormation stack that deploys it
                            (``preview`` finds the stack's id with DescribeStacks)
``lifecycle``               optional: a ``ShareLifecycle`` (or anything with its
                            switches; ``allow_preemption_on_in_share_enable`` may be
                            absent) for every share without its own entry
``lifecycle_by_share``      optional: share name → ``ShareLifecycle``, as the construct takes
``provisioning``            optional: ``ShareProvisioning`` (or its value):
                            ``CUSTOM_RESOURCE`` (default, guarded) or ``CLOUDFORMATION``
==========================  ==============================================================

These are the keyword arguments ``QuotaManagedTrainingQueue`` takes, so the object a stack
passes to the construct is the object every command reads. ``simulate`` and ``recommend`` use
the limits and shares; ``preview`` uses all of it (a share's switches are what the custom
resource's guards are judged with). This module never imports ``aws_cdk``: a lifecycle is read
by its switches' names.
"""

from __future__ import annotations

import argparse
import hashlib
import importlib
import importlib.util
import sys
from collections.abc import Iterator, Mapping, Sequence
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from types import ModuleType
from typing import Any

from ..model import CapacityLimit, QuotaConfigError, QuotaShareSpec
from ..runtime.share_request import GuardOptIns
from ..wire.custom_resource import GUARD_PROPERTIES, RENDERED_WHEN_SET

ENVIRONMENTS = "stacks.environments:ENVIRONMENTS"
"""This repository's deployment environments (``--env``)."""
DEFAULT_ENVIRONMENT = "dev"
SWITCHES = tuple(GUARD_PROPERTIES)
"""A ``ShareLifecycle``'s guard switches (the custom resource's opt-ins)."""
OPTIONAL_SWITCHES = RENDERED_WHEN_SET
"""Switches an object may lack (False): added after the first three, which objects had."""
CUSTOM_RESOURCE, CLOUDFORMATION = "CUSTOM_RESOURCE", "CLOUDFORMATION"
SHAPE = ("an object or mapping with capacity_limits and shares (optionally queue_name, "
         "stack_name, lifecycle, lifecycle_by_share, provisioning)")
REFERENCE = "path/to/file.py:attribute or package.module:attribute"


@dataclass(frozen=True)
class Declaration:
    """What a command reads from ``--declaration`` (or ``--env``): see the module docs."""

    name: str
    capacity_limits: Sequence[CapacityLimit]
    shares: Sequence[QuotaShareSpec]
    queue_name: str | None = None
    lifecycles: Mapping[str, GuardOptIns] = field(default_factory=dict)
    """Per share name; every share has one."""
    provisioning: str = CUSTOM_RESOURCE
    stack_name: str | None = None
    """The CloudFormation stack that deploys the declaration, when it says."""

    def lifecycle_of(self, share: str) -> GuardOptIns:
        return self.lifecycles.get(share, GuardOptIns())


class NoDeclarationError(QuotaConfigError):
    """No ``--declaration`` and no repository ``stacks/`` to take ``--env`` from."""

    def __init__(self, command: str, env: str) -> None:
        super().__init__(command, "--declaration", None, REFERENCE)
        self.env = env
        # One line saying which option to pass, not "No module named 'stacks'".
        self.args = (
            f"{command}: no declaration: pass --declaration {REFERENCE} ({SHAPE}); "
            f"--env {env} reads stacks/environments.py of the quota_constructs repository, "
            f"which is not importable from {Path.cwd()}",
        )

    def __str__(self) -> str:
        return str(self.args[0])

    def __reduce__(self) -> tuple[Any, ...]:
        return (type(self), (self.subject, self.env))


def add_declaration_arguments(parser: argparse.ArgumentParser) -> None:
    """``--env NAME`` or ``--declaration REFERENCE``, for :func:`load`."""
    where = parser.add_mutually_exclusive_group()
    where.add_argument("--env", default=None,
                       help="a deployment environment of this repository's "
                       f"stacks/environments.py (default: {DEFAULT_ENVIRONMENT})")
    where.add_argument("--declaration", metavar="FILE.py:ATTR|MODULE:ATTR",
                       help="any object with capacity_limits and shares (the keyword "
                       "arguments of QuotaManagedTrainingQueue)")


def load(options: argparse.Namespace, *, command: str) -> Declaration:
    """The declaration ``--declaration`` names, else the ``--env`` environment."""
    if getattr(options, "declaration", None):
        return declaration_of(options.declaration, options.declaration, command=command)
    return environment(getattr(options, "env", None) or DEFAULT_ENVIRONMENT, command=command)


def environment(name: str, *, command: str = "simulate") -> Declaration:
    """A deployment environment of this repository's ``stacks/environments.py``."""
    try:
        environments = resolve(ENVIRONMENTS, command=command, option="--env")
    except QuotaConfigError as error:
        if _missing_repository(error):
            raise NoDeclarationError(command, name) from None
        raise
    if name not in environments:
        raise QuotaConfigError(command, "--env", name, "one of " + ", ".join(sorted(environments)))
    return declaration_of(f"{ENVIRONMENTS}.{name}", name, command=command, option="--env")


def declaration_of(
    reference: str, name: str, *, command: str = "simulate", option: str = "--declaration"
) -> Declaration:
    """The declaration ``reference`` names, read in the one shape (module docs)."""
    return read_declaration(resolve(reference, command=command, option=option), name,
                            command=command, option=option, reference=reference)


def read_declaration(
    target: Any, name: str, *, command: str = "simulate", option: str = "--declaration",
    reference: str | None = None,
) -> Declaration:
    """``target`` (an object or mapping) as a :class:`Declaration`; errors name ``option``."""
    shown = name if reference is None else reference

    def field_of(key: str) -> Any:
        if isinstance(target, Mapping):
            return target.get(key)
        return getattr(target, key, None)

    def refuse(what: str, value: Any, allowed: str) -> QuotaConfigError:
        return QuotaConfigError(command, f"{option} {shown}: {what}", value, allowed)

    limits, shares = field_of("capacity_limits"), field_of("shares")
    if limits is None or shares is None or isinstance(target, (str, bytes)):
        hint = ("; a list of shares alone is not a declaration: give it capacity_limits (the "
                "recommended.py recommend writes defines DECLARATION)"
                if _is_share_list(target) else "")
        raise QuotaConfigError(command, option, reference or name, SHAPE + hint)
    limits, shares = _items(limits), _items(shares)
    for item in limits:
        if not isinstance(item, CapacityLimit):
            raise refuse("capacity_limits", item, "CapacityLimit items")
    for item in shares:
        if not isinstance(item, QuotaShareSpec):
            raise refuse("shares", item, "QuotaShareSpec items")
    queue_name = field_of("queue_name")
    if queue_name is not None and (not isinstance(queue_name, str) or not queue_name):
        raise refuse("queue_name", queue_name, "a job queue name (a non-empty string) or None")
    stack_name = field_of("stack_name")
    if stack_name is not None and (not isinstance(stack_name, str) or not stack_name):
        raise refuse("stack_name", stack_name, "a CloudFormation stack name (a non-empty "
                     "string) or None")
    lifecycles = _lifecycles(field_of("lifecycle"), field_of("lifecycle_by_share"),
                             [s.name for s in shares], refuse)
    provisioning = _provisioning(field_of("provisioning"), refuse)
    if provisioning == CLOUDFORMATION:
        # As the construct refuses it: only the custom resource has guards to switch off.
        for share, lifecycle in lifecycles.items():
            for switch in SWITCHES:
                if getattr(lifecycle, switch):
                    raise refuse(f"share {share!r} lifecycle.{switch}", True,
                                 "False with ShareProvisioning.CLOUDFORMATION; only "
                                 "CUSTOM_RESOURCE can adopt, guard a shrink, guard turning "
                                 "in-share preemption on or guard a delete")
    return Declaration(name=name, capacity_limits=tuple(limits), shares=tuple(shares),
                       queue_name=queue_name, lifecycles=lifecycles, provisioning=provisioning,
                       stack_name=stack_name)


def resolve(reference: str, *, command: str = "simulate", option: str = "--declaration") -> Any:
    """The object ``module:attr.attr`` (or ``file.py:attr``) names; dots walk mappings too.
    Errors name the ``command`` and the ``option`` the reference came from."""
    module_name, sep, path = reference.partition(":")
    if not sep or not module_name or not path:
        raise QuotaConfigError(command, option, reference, REFERENCE)
    target: Any = _module(module_name, reference, command=command, option=option)
    for part in path.split("."):
        if isinstance(target, Mapping) and part in target:
            target = target[part]
        elif hasattr(target, part):
            target = getattr(target, part)
        else:
            known = sorted(target) if isinstance(target, Mapping) else []
            hint = f"; known: {', '.join(map(str, known))}" if known else ""
            raise QuotaConfigError(command, option, reference,
                                   f"a path to an existing attribute ({part!r} not found{hint})")
    return target


# -- loading modules ------------------------------------------------------------------------


def _module(module_name: str, reference: str, *, command: str, option: str) -> ModuleType:
    try:
        if module_name.endswith(".py"):
            return _file_module(Path(module_name))
        # As ``python -m`` would: modules of the working directory are importable.
        with _first_on_path(Path.cwd()):
            return importlib.import_module(module_name)
    except (ImportError, FileNotFoundError) as error:
        raise QuotaConfigError(command, option, reference,
                               f"an importable module or file ({error})") from None
    except Exception as error:  # the user's module itself failed while running
        where = _where(error)
        raise QuotaConfigError(command, option, reference,
                               f"a module that runs ({type(error).__name__}: {error}{where})"
                               ) from None


def _file_module(path: Path) -> ModuleType:
    """``path`` run as a module that is in ``sys.modules`` while it runs (and after)."""
    if not path.is_file():
        raise FileNotFoundError(f"no file {str(path)!r}")
    resolved = path.resolve()
    # A name no real module has (the file's stem could be "json"), the same for the same file,
    # so a file read twice (--declaration and --compare) is one module.
    digest = hashlib.sha256(str(resolved).encode()).hexdigest()[:12]
    name = f"_quota_declaration_{_identifier(path.stem)}_{digest}"
    loaded = sys.modules.get(name)
    if loaded is not None:
        return loaded
    spec = importlib.util.spec_from_file_location(name, resolved)
    if spec is None or spec.loader is None:
        raise ImportError(f"cannot load {str(path)!r} as Python")
    module = importlib.util.module_from_spec(spec)
    sys.modules[name] = module  # before it runs: dataclasses look their module up there
    try:
        with _first_on_path(resolved.parent):
            spec.loader.exec_module(module)
    except BaseException:
        sys.modules.pop(name, None)
        raise
    return module


@contextmanager
def _first_on_path(directory: Path) -> Iterator[None]:
    """``directory`` first on ``sys.path`` while a declaration is imported, then removed: left
    there, a file beside it (``platform.py``) would shadow a standard module for the rest of
    the process."""
    entry = str(directory)
    added = entry not in sys.path
    if added:
        sys.path.insert(0, entry)
    try:
        yield
    finally:
        if added and entry in sys.path:
            sys.path.remove(entry)


def _identifier(text: str) -> str:
    return "".join(c if c.isalnum() else "_" for c in text)


def _where(error: BaseException) -> str:
    if isinstance(error, SyntaxError):
        return f" at {error.filename} line {error.lineno}"
    frames = []
    trace = error.__traceback__
    while trace is not None:
        frames.append(trace)
        trace = trace.tb_next
    for frame in reversed(frames):
        filename = frame.tb_frame.f_code.co_filename
        if "importlib" not in filename:
            return f" at {filename} line {frame.tb_lineno}"
    return ""


def _missing_repository(error: QuotaConfigError) -> bool:
    cause = error.__context__
    while cause is not None:
        if isinstance(cause, ModuleNotFoundError) and (cause.name or "").split(".")[0] == "stacks":
            return True
        cause = cause.__context__
    return "No module named 'stacks" in str(error)


# -- the optional fields ------------------------------------------------------------------


def _items(value: Any) -> list[Any]:
    if isinstance(value, (str, bytes, Mapping)):
        return [value]  # refused item by item with its type named
    try:
        return list(value)
    except TypeError:
        return [value]


def _is_share_list(target: Any) -> bool:
    try:
        return (not isinstance(target, (str, bytes, Mapping)) and bool(list(target))
                and all(isinstance(item, QuotaShareSpec) for item in target))
    except TypeError:
        return False


def _lifecycles(default: Any, by_share: Any, names: Sequence[str], refuse: Any
                ) -> dict[str, GuardOptIns]:
    base = GuardOptIns() if default is None else _lifecycle(default, "lifecycle", refuse)
    chosen = {name: base for name in names}
    if by_share is None:
        return chosen
    if not isinstance(by_share, Mapping):
        raise refuse("lifecycle_by_share", by_share, "a mapping of share name to ShareLifecycle")
    for name, value in by_share.items():
        if name not in chosen:
            raise refuse("lifecycle_by_share", name,
                         "names of the declaration's shares: " + ", ".join(names))
        chosen[name] = _lifecycle(value, f"lifecycle_by_share[{name!r}]", refuse)
    return chosen


def _lifecycle(value: Any, where: str, refuse: Any) -> GuardOptIns:
    switches = {}
    for switch in SWITCHES:
        absent = False if switch in OPTIONAL_SWITCHES else None
        flag = value.get(switch, False) if isinstance(value, Mapping) else getattr(
            value, switch, absent)
        if not isinstance(flag, bool):
            raise refuse(f"{where}.{switch}", flag,
                         "True or False (a ShareLifecycle, or a mapping of its switches)")
        switches[switch] = flag
    return GuardOptIns(**switches)


def _provisioning(value: Any, refuse: Any) -> str:
    if value is None:
        return CUSTOM_RESOURCE
    text = str(getattr(value, "value", value))
    if text not in (CUSTOM_RESOURCE, CLOUDFORMATION):
        raise refuse("provisioning", value,
                     "ShareProvisioning.CUSTOM_RESOURCE or ShareProvisioning.CLOUDFORMATION")
    return text
