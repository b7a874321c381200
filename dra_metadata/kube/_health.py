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
from typing import TYPE_CHECKING, Any

from dra_metadata._model._errors import KubeAPIError, MetadataNotFoundError
from dra_metadata.kube._errors import EXAMPLE_ROLE, claim_target
from dra_metadata.kube._health_resolve import ClaimReferences, needed_claims, resolve
from dra_metadata.kube._http import Api, Deadline, aget_object
from dra_metadata.kube._mapping import (
    claim_status_from_object,
    device_health_from_pod,
    pod_claim_references,
)
from dra_metadata.kube._models import ClaimStatus, DeviceHealth, UnresolvedDeviceWarning

if TYPE_CHECKING:
    import httpx2

    from dra_metadata.kube._identity import Resolved

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
    """Reads the claims a pod's health entries point to; keeps what a watch can keep."""

    api: Api
    namespace: Resolved
    kept: dict[str, ClaimStatus] = field(default_factory=dict)
    forbidden: str | None = None
    """Why claims cannot be read (403): then none is asked for again."""
    told: set[str] = field(default_factory=set)

    async def named(
        self, http: httpx2.AsyncClient, view: PodHealthView, deadline: Deadline | None = None
    ) -> tuple[DeviceHealth, ...]:
        """The view's health with the devices named where that is unambiguous."""
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
            claims[name] = await self._read(http, name, deadline, refused, failures)
        self._warn(refused, failures)
        return resolve(view.health, references, claims)

    async def _read(
        self,
        http: httpx2.AsyncClient,
        name: str,
        deadline: Deadline | None,
        refused: list[str],
        failures: list[str],
    ) -> ClaimStatus | str:
        target = claim_target(name, self.namespace)
        try:
            status = claim_status_from_object(await aget_object(self.api, http, target, deadline))
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

    def _warn(self, refused: list[str], failures: list[str]) -> None:
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
                warnings.warn(text, UnresolvedDeviceWarning, stacklevel=4)
