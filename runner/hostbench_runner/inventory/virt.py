"""Virtualization: the CPUID hypervisor flag, DMI vendor/product, /sys/hypervisor, the paravirtual
clock sources a hypervisor provides (kvm-clock exists only under KVM), container hints."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from .files import read_text, read_value

# DMI sys_vendor / product_name substrings that name a hypervisor or cloud.
DMI_HYPERVISORS = [
    ("amazon ec2", "amazon"), ("google", "google"), ("microsoft corporation", "hyperv"),
    ("vmware", "vmware"), ("qemu", "kvm"), ("kvm", "kvm"), ("innotek", "virtualbox"),
    ("virtualbox", "virtualbox"), ("xen", "xen"), ("openstack", "kvm"), ("bochs", "bochs"),
    ("parallels", "parallels"), ("alibaba cloud", "alibaba"), ("digitalocean", "kvm"),
    ("hetzner", "kvm"), ("oraclecloud", "oracle"),
]
# Clock sources only a hypervisor offers its guests.
PARAVIRT_CLOCKS = [("kvm-clock", "kvm"), ("xen", "xen"), ("hyperv_clocksource_tsc_page", "hyperv"),
                   ("hyperv_clocksource_msr", "hyperv")]


def read(root: Path) -> dict[str, Any]:
    return {
        "cpuinfo": read_text(root, "proc/cpuinfo"),
        "sys_vendor": read_value(root, "sys/class/dmi/id/sys_vendor"),
        "product_name": read_value(root, "sys/class/dmi/id/product_name"),
        "hypervisor_type": read_value(root, "sys/hypervisor/type"),
        "clocksources": read_value(root, "sys/devices/system/clocksource/clocksource0/available_clocksource"),
        "systemd_container": read_value(root, "run/systemd/container"),
        "dockerenv": (root / ".dockerenv").exists(),
    }


def _cpu_flags(cpuinfo: str | None) -> set[str] | None:
    for line in (cpuinfo or "").splitlines():
        key, _, value = line.partition(":")
        if key.strip() == "flags":
            return set(value.split())
    return None


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    flags = _cpu_flags(raw.get("cpuinfo"))
    cpuid_flag = None if flags is None else "hypervisor" in flags
    vendor, product = raw.get("sys_vendor"), raw.get("product_name")
    dmi_text = f"{vendor or ''} {product or ''}".lower()
    hypervisor = next((name for needle, name in DMI_HYPERVISORS if needle in dmi_text), None)
    if hypervisor is None and raw.get("hypervisor_type"):
        hypervisor = raw["hypervisor_type"].lower()
    clocks = set((raw.get("clocksources") or "").split())
    if hypervisor is None:
        hypervisor = next((name for clock, name in PARAVIRT_CLOCKS if clock in clocks), None)

    if cpuid_flag or hypervisor:
        virtualized: bool | None = True
    elif cpuid_flag is False:
        virtualized = False  # x86 without the CPUID hypervisor bit
    else:
        virtualized = None

    container = raw.get("systemd_container") or ("docker" if raw.get("dockerenv") else None)
    return {
        "virtualized": virtualized,
        "hypervisor": hypervisor,
        "cpuid_hypervisor_flag": cpuid_flag,
        "sys_vendor": vendor,
        "product_name": product,
        "container": container,
    }
