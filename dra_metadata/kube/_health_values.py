"""The health values the kubelet reports, as a type (apart, so that reading health at run time
never imports typing: only this alias needs it)."""

from typing import Literal

Health = Literal["Healthy", "Unhealthy", "Unknown"]
"""The health the kubelet reports for an allocated device."""
