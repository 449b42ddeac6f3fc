"""A second host on this machine: a network namespace joined to this one by a veth pair, with addresses
from 10.231.0.0/16 only on those two ends (nothing else is routed there). Used by the browser suite's fleet
test; it needs root and `ip` (iproute2)."""
import hashlib
import os
import shutil
import signal
import subprocess
import time
from dataclasses import dataclass


@dataclass
class Netns:
    name: str
    outer_ip: str
    inner_ip: str

    @property
    def outer_if(self) -> str:
        return f"{self.name[:10]}o"

    @property
    def inner_if(self) -> str:
        return f"{self.name[:10]}i"

    def create(self) -> "Netns":
        self.destroy()
        steps = [
            ["netns", "add", self.name],
            ["link", "add", self.outer_if, "type", "veth", "peer", "name", self.inner_if],
            ["link", "set", self.inner_if, "netns", self.name],
            ["addr", "add", f"{self.outer_ip}/30", "dev", self.outer_if],
            ["link", "set", self.outer_if, "up"],
            ["-n", self.name, "addr", "add", f"{self.inner_ip}/30", "dev", self.inner_if],
            ["-n", self.name, "link", "set", self.inner_if, "up"],
            ["-n", self.name, "link", "set", "lo", "up"],
        ]
        try:
            for args in steps:
                subprocess.run(["ip", *args], check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as exc:
            self.destroy()
            raise RuntimeError(f"ip {' '.join(exc.cmd[1:])}: {exc.stderr.strip()}") from exc
        return self

    def link(self, up: bool) -> None:
        """Cut (False) or restore (True) the namespace's only link: a network partition, both ways at once."""
        subprocess.run(["ip", "link", "set", self.outer_if, "up" if up else "down"], check=True, capture_output=True)

    def pids(self) -> list[int]:
        r = subprocess.run(["ip", "netns", "pids", self.name], check=False, capture_output=True, text=True)
        return [int(p) for p in r.stdout.split() if p.isdigit()]

    def destroy(self) -> None:
        """Every process left in the namespace is killed, then the namespace and the veth pair go."""
        for sig in (signal.SIGTERM, signal.SIGKILL):
            pids = self.pids()
            for pid in pids:
                try:
                    os.kill(pid, sig)
                except ProcessLookupError:
                    pass
            if pids:
                time.sleep(1.0)
        subprocess.run(["ip", "netns", "del", self.name], check=False, capture_output=True)
        subprocess.run(["ip", "link", "del", self.outer_if], check=False, capture_output=True)


def available() -> str | None:
    """None when a namespace can be made here, else why not."""
    if os.geteuid() != 0:
        return "network namespaces need root"
    if shutil.which("ip") is None:
        return "the `ip` command (iproute2) is missing"
    return None


def free_pair(first: int = 120, last: int = 160) -> tuple[str, str]:
    """A 10.231.N.0/30 not on any interface here: (outer, inner)."""
    used = subprocess.run(["ip", "-o", "-4", "addr", "show"], check=False, capture_output=True, text=True).stdout
    for n in range(first, last):
        if f" 10.231.{n}." not in used:
            return f"10.231.{n}.1", f"10.231.{n}.2"
    raise RuntimeError(f"no free 10.231.N.0/30 for N in {first}..{last - 1}")


def bridge_add(name: str) -> list[str]:
    """`ip` arguments that make a bridge with an address of its own (locally administered, from its name). Left to
    itself a bridge takes the lowest MAC of its ports, and when that is a veth's own address, TCP from the namespace
    behind that veth to the bridge's IP never completes (SYN-ACKs lost; ping still works): seen 2026-11-29 in the
    fault test's 4-host bridge, one runner unable to register for 10 minutes, cured at once by setting the address."""
    digest = hashlib.sha1(name.encode()).digest()[:5]  # noqa: S324 - a name's stable address, not a secret
    mac = ":".join(f"{b:02x}" for b in (0x02, *digest))
    return ["link", "add", name, "address", mac, "type", "bridge"]
