"""Fake metadata trees for tests: files written exactly as a DRA driver writes them.

>>> tree = MetadataTree(tmp_path)                                       # doctest: +SKIP
>>> tree.add_claim("gpu-claim", "gpu", "gpu.example.com", ["gpu-0"])    # doctest: +SKIP
>>> dra_metadata.read_claim_metadata("gpu-claim", "gpu", root=tmp_path)  # doctest: +SKIP

With pytest, the ``dra_metadata_tree`` fixture (installed with the package) gives a MetadataTree
on a temporary directory with ``DRA_METADATA_ROOT`` pointing at it, so code that reads metadata
without a ``root=`` works unchanged in tests. This module does not need pytest.
"""

from __future__ import annotations

import errno
import os
import shutil
import stat
import uuid
from collections.abc import Callable, Iterable, Sequence
from dataclasses import replace
from pathlib import Path

from dra_metadata._model._errors import MetadataNotFoundError, MetadataWriteError
from dra_metadata._model._metadata import DeviceMetadata, DeviceMetadataRequest, ObjectMeta
from dra_metadata._model._models import Device
from dra_metadata._model._versions import KNOWN_API_VERSIONS
from dra_metadata._model._wire import _check_versions
from dra_metadata._reading._paths import StrPath, _check_name, metadata_file_name, request_dir
from dra_metadata._reading._read import read_metadata_file
from dra_metadata._writing._write import check_mode
from dra_metadata.writer import WriteMode, update_metadata_file, write_metadata_file

__all__ = ["DeviceSpec", "MetadataTree"]

DeviceSpec = Device | str
"""A Device, or just a device name; the tree fills in the driver and, if empty, the pool."""

_UID_NAMESPACE = uuid.UUID("4f0d2a5e-8b7c-4d3e-9a1f-6c5b4a392817")


class MetadataTree:
    """A metadata tree under ``root``, as the container runtime would mount it.

    Files are written with the versions and the write mode given here (newest versions first,
    atomic replace: what the beta writer does), unless a call says otherwise. Claim UIDs are
    derived from namespace and name, so trees are reproducible. Names are checked as the
    readers check them (InvalidNameError), and nothing is ever written or removed through a
    symlink below the root (MetadataWriteError). With pytest, the fixture ``dra_metadata_tree``
    gives one on a temporary directory and points ``DRA_METADATA_ROOT`` at it.

    Examples:
        >>> import tempfile
        >>> from dra_metadata.testing import MetadataTree
        >>> root = tempfile.mkdtemp()
        >>> tree = MetadataTree(root, mode="in-place")
        >>> path = tree.add_claim("nic", "vf", "sriov.example.com", ["vf-0"])
        >>> network = dra_metadata.NetworkDeviceData("net1")
        >>> device = dra_metadata.Device(name="vf-0", network_data=network)
        >>> tree.update("nic", "vf", "sriov.example.com", devices=[device]).generation
        2
        >>> dra_metadata.read_claim_metadata("nic", "vf", root=root).devices[0].network_data
        NetworkDeviceData(interface_name='net1')
    """

    def __init__(
        self,
        root: StrPath,
        *,
        versions: Iterable[str] = KNOWN_API_VERSIONS,
        mode: WriteMode = "atomic",
        namespace: str = "default",
        pool: str = "worker-0",
    ) -> None:
        self.root = Path(root)
        self.versions = _check_versions(versions)
        self.mode: WriteMode = check_mode(mode)
        self.namespace = _check_name("namespace", namespace)
        self.pool = pool

    def __repr__(self) -> str:
        return (
            f"MetadataTree({str(self.root)!r}, mode={self.mode!r}, "
            f"namespace={self.namespace!r}, pool={self.pool!r}, versions={list(self.versions)!r})"
        )

    def path(
        self, claim_name: str, request_name: str, driver: str, *, template: bool = False
    ) -> Path:
        """Where a driver's file for that claim and request lives in this tree."""
        directory = request_dir(claim_name, request_name, template=template, root=self.root)
        return directory / metadata_file_name(driver)

    def _devices(self, driver: str, devices: Sequence[DeviceSpec]) -> list[Device]:
        if isinstance(devices, str):
            raise TypeError(
                f"devices must be a sequence of Devices or names, not a str: [{devices!r}]?"
            )
        built = []
        for device in devices:
            if isinstance(device, str):
                built.append(Device(driver=driver, pool=self.pool, name=device))
            elif not isinstance(device, Device):
                raise TypeError(
                    f"each device must be a Device or a name, not {type(device).__name__}"
                )
            elif device.driver in {"", driver}:
                built.append(replace(device, driver=driver, pool=device.pool or self.pool))
            else:
                raise ValueError(
                    f"device {device.name!r} belongs to driver {device.driver!r}, not {driver!r}: "
                    "each driver writes its own file"
                )
        return built

    def _write(
        self,
        path: Path,
        metadata: DeviceMetadata,
        versions: Iterable[str] | None,
        mode: WriteMode | None,
    ) -> Path:
        return write_metadata_file(
            path,
            metadata,
            versions=self.versions if versions is None else versions,
            mode=self.mode if mode is None else mode,
            root=self.root,
        )

    def add_claim(
        self,
        claim_name: str,
        request_name: str,
        driver: str,
        devices: Sequence[DeviceSpec],
        *,
        namespace: str | None = None,
        uid: str | None = None,
        generation: int = 1,
        versions: Iterable[str] | None = None,
        mode: WriteMode | None = None,
    ) -> Path:
        """Write ``driver``'s file for a request of a claim referenced by name; return its path.

        ``request_name`` may name a subrequest (``gpu/high-memory``): the file goes to the
        top-level request's directory and keeps the full name inside, as upstream does.
        """
        return self._add(
            claim_name,
            claim_name,
            request_name,
            driver,
            devices,
            pod_claim_name=None,
            namespace=namespace,
            uid=uid,
            generation=generation,
            versions=versions,
            mode=mode,
        )

    def add_template_claim(
        self,
        pod_claim_name: str,
        request_name: str,
        driver: str,
        devices: Sequence[DeviceSpec],
        *,
        claim_name: str | None = None,
        namespace: str | None = None,
        uid: str | None = None,
        generation: int = 1,
        versions: Iterable[str] | None = None,
        mode: WriteMode | None = None,
    ) -> Path:
        """Write a file for a claim made from a ResourceClaimTemplate (``podClaimName`` set).

        ``claim_name`` is the generated claim's name (default ``<pod_claim_name>-<suffix>``).
        """
        _check_name("pod_claim_name", pod_claim_name)
        generated = (
            claim_name or f"{pod_claim_name}-{uuid.uuid5(_UID_NAMESPACE, pod_claim_name).hex[:5]}"
        )
        return self._add(
            pod_claim_name,
            generated,
            request_name,
            driver,
            devices,
            pod_claim_name=pod_claim_name,
            namespace=namespace,
            uid=uid,
            generation=generation,
            versions=versions,
            mode=mode,
        )

    def _add(
        self,
        directory_claim: str,
        claim_name: str,
        request_name: str,
        driver: str,
        devices: Sequence[DeviceSpec],
        *,
        pod_claim_name: str | None,
        namespace: str | None,
        uid: str | None,
        generation: int,
        versions: Iterable[str] | None,
        mode: WriteMode | None,
    ) -> Path:
        claim_namespace = (
            self.namespace if namespace is None else _check_name("namespace", namespace)
        )
        _check_name("claim_name", claim_name)
        path = self.path(directory_claim, request_name, driver, template=pod_claim_name is not None)
        metadata = DeviceMetadata(
            metadata=ObjectMeta(
                name=claim_name,
                namespace=claim_namespace,
                uid=uid or str(uuid.uuid5(_UID_NAMESPACE, f"{claim_namespace}/{claim_name}")),
                generation=generation,
            ),
            pod_claim_name=pod_claim_name,
            requests=[
                DeviceMetadataRequest(name=request_name, devices=self._devices(driver, devices))
            ],
        )
        return self._write(path, metadata, versions, mode)

    def update(
        self,
        claim_name: str,
        request_name: str,
        driver: str,
        *,
        devices: Sequence[DeviceSpec] | None = None,
        change: Callable[[DeviceMetadata], DeviceMetadata] | None = None,
        template: bool = False,
        versions: Iterable[str] | None = None,
        mode: WriteMode | None = None,
    ) -> DeviceMetadata:
        """Rewrite a driver's file with generation + 1, as a deferred update does.

        Give the new ``devices`` (they replace the request's devices, e.g. now with network
        data) or a ``change`` function. Returns what was written.
        """
        if (devices is None) == (change is None):
            raise ValueError("give either devices or change")
        path = self.path(claim_name, request_name, driver, template=template)
        new: Callable[[DeviceMetadata], DeviceMetadata] | Sequence[Device]
        new = change if change is not None else self._devices(driver, devices or ())
        return update_metadata_file(
            path,
            new,
            versions=self.versions if versions is None else versions,
            mode=self.mode if mode is None else mode,
            root=self.root,
        )

    def remove(
        self,
        claim_name: str,
        request_name: str | None = None,
        driver: str | None = None,
        *,
        template: bool = False,
    ) -> None:
        """Remove a driver's file, a request's files, or a whole claim (as unprepare does).

        MetadataNotFoundError (a FileNotFoundError) when there is nothing to remove.
        """
        if request_name is None:
            if driver is not None:
                raise ValueError("a driver's files are per request: give request_name too")
            target = request_dir(claim_name, "x", template=template, root=self.root).parent
        elif driver is None:
            target = request_dir(claim_name, request_name, template=template, root=self.root)
        else:
            target = self.path(claim_name, request_name, driver, template=template)
        self._refuse_symlinked_directories(target if driver is None else target.parent)
        try:
            if driver is None:
                shutil.rmtree(target)
            else:
                target.unlink()
        except FileNotFoundError:
            raise MetadataNotFoundError(
                "nothing to remove: it does not exist", path=target
            ) from None
        except OSError as error:
            raise MetadataWriteError(
                f"remove: {error.strerror}", path=target, os_errno=error.errno
            ) from None

    def _refuse_symlinked_directories(self, directory: Path) -> None:
        """Refuse a symlink as ``directory`` or as any directory between it and the root."""
        current = self.root
        for name in directory.relative_to(self.root).parts:
            current /= name
            try:
                is_link = stat.S_ISLNK(os.lstat(current).st_mode)
            except OSError:
                return  # missing: the removal says so
            if is_link:
                raise MetadataWriteError(
                    f"refusing to remove through the symbolic link {current} (it points to "
                    f"{current.readlink()}): a MetadataTree never follows a symlink below "
                    "its root",
                    path=directory,
                    os_errno=errno.ELOOP,
                )

    def read(
        self, claim_name: str, request_name: str, driver: str, *, template: bool = False
    ) -> DeviceMetadata:
        """Read back one driver's file of this tree."""
        return read_metadata_file(self.path(claim_name, request_name, driver, template=template))
