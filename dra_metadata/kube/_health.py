"""Device health with its devices named: the pod, then the claims its health entries point to.

The pod is read (or watched) with ``get`` on ``pods``; a claim is read only for entries the
kubelet keyed by a CDI device ID, which needs ``get`` on ``resourceclaims``. Without that
permission the health is returned all the same, unresolved, with one warning naming what to
grant. A watch keeps the claims it read (an allocation does not change while the pod holds
it) and reads a claim again only when the pod changes and the claim was not usable yet.
"""

from __future__ import annotations

import warnings
from collections.abc import Mapping
from dataclasses import dataclass, field

from dra_metadata._model._errors import KubeAPIError, MetadataNotFoundError
from dra_metadata.kube._errors import EXAMPLE_ROLE, Target, claim_target
from dra_metadata.kube._health_resolve import ClaimReferences, needed_claims, resolve
from dra_metadata.kube._mapping import (
    claim_status_from_object,
    device_health_from_pod,
    pod_claim_references,
)
from dra_metadata.kube._models import ClaimStatus, DeviceHealth, UnresolvedDeviceWarning

TYPE_CHECKING = False  # typing.TYPE_CHECKING, without importing typing

if TYPE_CHECKING:
    from collections.abc import Callable, Generator
    from typing import Any

    import httpx2

    from dra_metadata.kube._deadline import Deadline
    from dra_metadata.kube._http import Api
    from dra_metadata.kube._identity import Resolved

    Answer = Mapping[str, Any] | KubeAPIError | MetadataNotFoundError
    """What a GET of a claim brought: the object, or the error the GET raised."""
    Naming = Generator[Target, Answer, tuple[DeviceHealth, ...]]
    """The steps of naming a view's devices: each claim to GET, sent its answer, then the
    result."""

CLAIM_PERMISSION = '"get" on "resourceclaims" (apiGroup resource.k8s.io)'


@dataclass(frozen=True, slots=True)
class PodHealthView:
    """What of a pod decides its device health: the kubelet's entries and the pod's claims.

    Two views compare equal when a pod update changed nothing the health depends on, so a
    watch reports nothing for it.
    """

    health: tuple[DeviceHealth, ...]
    references: tuple[tuple[str, str | None, str], ...]

    @classmethod
    def of(cls, pod: Mapping[str, Any], container_name: str | None) -> PodHealthView:
        references = pod_claim_references(pod)
        return cls(
            device_health_from_pod(pod, container_name),
            tuple((name, claim, why) for name, (claim, why) in references.items()),
        )

    def reference_map(self) -> ClaimReferences:
        return {name: (claim, why) for name, claim, why in self.references}


@dataclass
class ClaimResolver:
    """Reads the claims a pod's health entries point to; keeps what a watch can keep.

    ``naming`` holds the decisions and makes no request: ``named`` drives it with the GETs of
    an httpx2 client, ``named_by`` with any function that GETs (a plain read's).
    """

    namespace: Resolved
    kept: dict[str, ClaimStatus] = field(default_factory=dict)
    forbidden: str | None = None
    """Why claims cannot be read (403): then none is asked for again."""
    told: set[str] = field(default_factory=set)

    async def named(
        self,
        api: Api,
        http: httpx2.AsyncClient,
        view: PodHealthView,
        deadline: Deadline | None = None,
    ) -> tuple[DeviceHealth, ...]:
        """The view's health with the devices named where that is unambiguous."""
        from dra_metadata.kube._http import aget_object  # noqa: PLC0415 - asyncio's side

        steps = self.naming(view, stacklevel=5)  # _warn, naming, here: the awaiting line
        answer: Answer | None = None
        try:
            while True:
                target = steps.send(answer)  # type: ignore[arg-type] # the first is None
                try:
                    answer = await aget_object(api, http, target, deadline)
                except (MetadataNotFoundError, KubeAPIError) as error:
                    answer = error
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def named_by(
        self, get: Callable[[Target], Mapping[str, Any]], view: PodHealthView, stacklevel: int
    ) -> tuple[DeviceHealth, ...]:
        """As ``named``, each claim read by ``get``; a warning is ``stacklevel`` frames up from
        the caller (1: the caller's line)."""
        steps = self.naming(view, stacklevel=stacklevel + 3)
        answer: Answer | None = None
        try:
            while True:
                target = steps.send(answer)  # type: ignore[arg-type] # the first is None
                try:
                    answer = get(target)
                except (MetadataNotFoundError, KubeAPIError) as error:
                    answer = error
        except StopIteration as done:
            return done.value  # type: ignore[no-any-return]

    def naming(self, view: PodHealthView, *, stacklevel: int) -> Naming:
        """The claims to read for ``view``, one at a time, then its health named."""
        references = view.reference_map()
        claims: dict[str, ClaimStatus | str] = {}
        refused: list[str] = []
        failures: list[str] = []
        for name in needed_claims(view.health, references):
            if name in self.kept:
                claims[name] = self.kept[name]
                continue
            if self.forbidden is not None:
                claims[name] = self.forbidden
                refused.append(name)
                continue
            answer = yield claim_target(name, self.namespace)
            claims[name] = self._settled(name, answer, refused, failures)
        self._warn(refused, failures, stacklevel)
        return resolve(view.health, references, claims)

    def _settled(
        self, name: str, answer: Answer, refused: list[str], failures: list[str]
    ) -> ClaimStatus | str:
        try:
            if isinstance(answer, (KubeAPIError, MetadataNotFoundError)):
                raise answer
            status = claim_status_from_object(answer)
        except MetadataNotFoundError:
            return f'resourceclaim "{name}" in namespace "{self.namespace.value}" not found'
        except KubeAPIError as error:
            if error.status == 403:
                self.forbidden = (
                    f"the ResourceClaims cannot be read: that needs {CLAIM_PERMISSION} in "
                    f'namespace "{self.namespace.value}"'
                )
                refused.append(name)
                return self.forbidden
            failures.append(error.message)
            return f'resourceclaim "{name}" could not be read ({error.message})'
        if status.allocated:
            self.kept[name] = status
        return status

    def _warn(self, refused: list[str], failures: list[str], stacklevel: int) -> None:
        texts = []
        if refused:
            names = ", ".join(f'"{name}"' for name in refused)
            texts.append(
                "the kubelet names these devices by their CDI device IDs, and which devices "
                f"they are is in their ResourceClaims ({names}), which this identity may not "
                f'read: grant {CLAIM_PERMISSION} in namespace "{self.namespace.value}" to name '
                f"them (see {EXAMPLE_ROLE}); the health is shown unresolved"
            )
        texts.extend(
            f"which device the kubelet's health names is unresolved: {failure}"
            for failure in failures
        )
        for text in texts:
            if text not in self.told:
                self.told.add(text)
                warnings.warn(text, UnresolvedDeviceWarning, stacklevel=stacklevel)
