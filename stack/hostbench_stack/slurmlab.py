"""A real Slurm cluster on this machine, for the tests: Debian's munged, slurmctld and N slurmd, each slurmd in its
own network namespace (its own address, so every node uses Slurm's default port) and under its own node name
(`slurmd -N`). Everything lives in one state directory (its own munge key and socket, slurm.conf, spool and logs);
nothing in /etc is read or changed. No cgroups (this machine's are not delegated): proctrack/linuxproc, task/none.
Needs root, `ip`, and the Debian packages `slurmd slurmctld slurm-client munge` (SLURM_PACKAGES; the test suite
installs them with apt)."""
import os
import shutil
import signal
import socket
import subprocess
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

from hostbench_stack import netns
from hostbench_stack.build import apt_install, say

SLURM_PACKAGES = ["munge", "slurmd", "slurmctld", "slurm-client"]
SLURM_COMMANDS = {"munged": "munge", "slurmd": "slurmd", "slurmctld": "slurmctld", "sbatch": "slurm-client",
                  "srun": "slurm-client", "scontrol": "slurm-client", "sinfo": "slurm-client"}
CTLD_PORT = 6817
SLURMD_PORT = 6818


def missing() -> list[str]:
    """The Debian packages to install before a cluster can start (empty when all are here)."""
    return sorted({pkg for cmd, pkg in SLURM_COMMANDS.items() if shutil.which(cmd) is None})


def install() -> None:
    """Debian's Slurm and munge for the Slurm test, as root with apt (hostbench_stack.build.apt_install), when
    missing. Their daemons are not started (policy-rc.d) and, where systemd runs, left disabled: the test starts
    its own, on its own configuration. Failing, it says so; the test then skips and says why."""
    need = missing()
    if not need:
        return

    try:
        apt_install(need, "the Slurm test runs Debian's slurmctld, slurmd and munge", no_start="munge")
    except (RuntimeError, subprocess.CalledProcessError) as exc:
        say(f"not installed ({exc}); the Slurm test will skip and say why")
        return
    disable_units()


def disable_units() -> None:
    """Debian enables slurmd and slurmctld at install (munge: apt_install's no_start): disabled where systemd runs."""
    if Path("/run/systemd/system").is_dir() and shutil.which("systemctl"):
        for unit in ("slurmd", "slurmctld"):
            subprocess.run(["systemctl", "disable", "--now", f"{unit}.service"], capture_output=True, check=False)


def available() -> str | None:
    """None when a test cluster can start here, else why not."""
    why = netns.available()
    if why:
        return why
    if missing():
        return f"Slurm is not installed (Debian's {' '.join(missing())})"
    return None


@dataclass
class Cluster:
    state: Path
    nodes: int = 4
    prefix: str = "hbs"
    net: "ClusterNet | None" = None
    procs: dict[str, subprocess.Popen[bytes]] = field(default_factory=dict)

    @property
    def node_names(self) -> list[str]:
        return [f"{self.prefix}{i}" for i in range(1, self.nodes + 1)]

    @property
    def conf(self) -> Path:
        return self.state / "slurm.conf"

    @property
    def controller_ip(self) -> str:
        """This machine's address on the cluster's bridge: slurmctld's, and where the nodes reach a server here."""
        assert self.net is not None
        return self.net.gateway

    @property
    def node_addrs(self) -> list[str]:
        assert self.net is not None
        return self.net.addrs

    def env(self) -> dict[str, str]:
        """The environment a Slurm command (sbatch, srun, scontrol) needs to talk to this cluster."""
        return dict(os.environ, SLURM_CONF=str(self.conf))

    def start(self) -> "Cluster":
        try:
            self._start()
        except BaseException:
            self.stop()
            raise
        return self

    def _start(self) -> None:
        self.state.mkdir(parents=True, exist_ok=True)
        for sub in ("munge", "ctld", "log"):
            (self.state / sub).mkdir(exist_ok=True)
        self.net = ClusterNet.free(self.nodes).create()
        for name in self.node_names:
            (self.state / "spool" / name).mkdir(parents=True, exist_ok=True)
        key = self.state / "munge" / "munge.key"
        key.write_bytes(os.urandom(1024))
        key.chmod(0o600)
        sock = self.state / "munge" / "munge.socket"
        self._spawn("munged", ["munged", "--foreground", "--force", f"--key-file={key}", f"--socket={sock}",
                               f"--pid-file={self.state / 'munge' / 'munged.pid'}",
                               f"--seed-file={self.state / 'munge' / 'seed'}",
                               f"--log-file={self.state / 'log' / 'munged.log'}"])
        _wait(lambda: sock.exists(), 20, "munged's socket")
        self.conf.write_text(self._slurm_conf(sock))
        self._spawn("slurmctld", ["slurmctld", "-D", "-i", "-f", str(self.conf)])
        _wait(lambda: self._scontrol_ok(), 60, "slurmctld answering `scontrol ping`")
        assert self.net is not None
        for ns, name in zip(self.net.namespaces, self.node_names, strict=True):
            # nsenter joins the network namespace only (`ip netns exec` would also remount /sys, without the
            # cgroup mounts slurmd's start looks for)
            self._spawn(f"slurmd-{name}", ["nsenter", f"--net=/run/netns/{ns}", "slurmd", "-D", "-N", name,
                                           "-f", str(self.conf)])
        _wait(lambda: self.idle_nodes() == set(self.node_names), 90, "every slurmd registered and idle")

    def _slurm_conf(self, sock: Path) -> str:
        s = self.state
        nodes = "\n".join(f"NodeName={name} NodeAddr={addr} CPUs=1 RealMemory=256 State=UNKNOWN"
                          for name, addr in zip(self.node_names, self.node_addrs, strict=True))
        return f"""# written by hostbench_stack/slurmlab.py for one test run
ClusterName=hostbench
SlurmctldHost={socket.gethostname().split('.')[0]}({self.controller_ip})
MailProg=/bin/true
SlurmctldPort={CTLD_PORT}
SlurmdPort={SLURMD_PORT}
SlurmUser=root
SlurmdUser=root
AuthType=auth/munge
CredType=cred/munge
AuthInfo=socket={sock}
StateSaveLocation={s / 'ctld'}
SlurmdSpoolDir={s / 'spool'}/%n
SlurmctldPidFile={s / 'ctld' / 'slurmctld.pid'}
SlurmdPidFile={s / 'spool'}/%n/slurmd.pid
SlurmctldLogFile={s / 'log' / 'slurmctld.log'}
SlurmdLogFile={s / 'log'}/slurmd-%n.log
ProctrackType=proctrack/linuxproc
TaskPlugin=task/none
JobAcctGatherType=jobacct_gather/none
AccountingStorageType=accounting_storage/none
SelectType=select/linear
MpiDefault=none
SwitchType=switch/none
SlurmdParameters=config_overrides
ReturnToService=2
TreeWidth=65533
SlurmctldTimeout=30
SlurmdTimeout=60
InactiveLimit=0
KillWait=5
MinJobAge=60
{nodes}
PartitionName=hb Nodes=ALL Default=YES MaxTime=30 State=UP
"""

    def _spawn(self, name: str, argv: list[str]) -> None:
        log = open(self.state / "log" / f"{name}.out", "ab")  # noqa: SIM115 - the child keeps it
        self.procs[name] = subprocess.Popen(argv, stdout=log, stderr=subprocess.STDOUT, env=self.env(),
                                            start_new_session=True)
        log.close()

    def _scontrol_ok(self) -> bool:
        self._check_alive()
        r = subprocess.run(["scontrol", "ping"], env=self.env(), capture_output=True, text=True, timeout=20)
        return "UP" in r.stdout

    def _check_alive(self) -> None:
        for name, p in self.procs.items():
            if p.poll() is not None:
                raise RuntimeError(f"{name} exited ({p.returncode}); see {self.state / 'log'}")

    def node_states(self) -> dict[str, str]:
        """Node name -> its state as `sinfo` prints it (idle, alloc, drain, down, ...)."""
        r = subprocess.run(["sinfo", "-h", "-N", "-o", "%N %T"], env=self.env(), capture_output=True, text=True,
                           timeout=20)
        return dict(line.split(maxsplit=1) for line in r.stdout.splitlines() if line.strip())

    def idle_nodes(self) -> set[str]:
        self._check_alive()
        return {n for n, st in self.node_states().items() if st == "idle"}

    def node_reason(self, node: str) -> str:
        r = subprocess.run(["scontrol", "show", "node", node], env=self.env(), capture_output=True, text=True,
                           timeout=20)
        for part in r.stdout.split("\n"):
            if part.strip().startswith("Reason="):
                return part.strip()[len("Reason="):]
        return ""

    def stop(self) -> None:
        """Every daemon is stopped (TERM, then KILL), the namespaces go; the state directory stays for its logs."""
        for name in sorted(self.procs, key=lambda n: (not n.startswith("slurmd"), n != "slurmctld")):
            p = self.procs[name]
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGTERM)
        deadline = time.monotonic() + 15
        for p in self.procs.values():
            try:
                p.wait(max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                os.killpg(p.pid, signal.SIGKILL)
                p.wait(10)
        if self.net is not None:
            self.net.destroy()
            self.net = None


def _wait(ok: Callable[[], bool], timeout_s: float, what: str) -> None:
    deadline = time.monotonic() + timeout_s
    while time.monotonic() < deadline:
        if ok():
            return
        time.sleep(0.5)
    raise RuntimeError(f"timed out after {timeout_s:.0f} s waiting for {what}")


@dataclass
class ClusterNet:
    """The cluster's network: a bridge on this machine (10.233.K.1/24) and one namespace per node on it
    (10.233.K.2, .3, ...), each routing everything else to the bridge's address. The nodes reach each other on the
    bridge (srun inside a batch job starts steps on the other nodes) and this machine without IP forwarding."""
    k: int
    nodes: int

    @classmethod
    def free(cls, nodes: int) -> "ClusterNet":
        used = subprocess.run(["ip", "-o", "-4", "addr", "show"], check=False, capture_output=True, text=True).stdout
        for k in range(1, 250):
            if f" 10.233.{k}." not in used and not Path(f"/run/netns/hbs{k}n1").exists():
                return cls(k, nodes)
        raise RuntimeError("no free 10.233.K.0/24 for the Slurm test cluster")

    @property
    def bridge(self) -> str:
        return f"hbsbr{self.k}"

    @property
    def gateway(self) -> str:
        return f"10.233.{self.k}.1"

    @property
    def namespaces(self) -> list[str]:
        return [f"hbs{self.k}n{i}" for i in range(1, self.nodes + 1)]

    @property
    def addrs(self) -> list[str]:
        return [f"10.233.{self.k}.{i + 1}" for i in range(1, self.nodes + 1)]

    def create(self) -> "ClusterNet":
        steps = [netns.bridge_add(self.bridge),
                 ["addr", "add", f"{self.gateway}/24", "dev", self.bridge], ["link", "set", self.bridge, "up"]]
        for i, (ns, addr) in enumerate(zip(self.namespaces, self.addrs, strict=True), start=1):
            outer, inner = f"hbs{self.k}o{i}", f"hbs{self.k}i{i}"
            steps += [["netns", "add", ns], ["link", "add", outer, "type", "veth", "peer", "name", inner],
                      ["link", "set", inner, "netns", ns], ["link", "set", outer, "master", self.bridge],
                      ["link", "set", outer, "up"], ["-n", ns, "addr", "add", f"{addr}/24", "dev", inner],
                      ["-n", ns, "link", "set", inner, "up"], ["-n", ns, "link", "set", "lo", "up"],
                      ["-n", ns, "route", "add", "default", "via", self.gateway]]
        try:
            for args in steps:
                subprocess.run(["ip", *args], check=True, capture_output=True, text=True)
        except subprocess.CalledProcessError as exc:
            self.destroy()
            raise RuntimeError(f"ip {' '.join(exc.cmd[1:])}: {exc.stderr.strip()}") from exc
        return self

    def destroy(self) -> None:
        """Every process left in a namespace is killed, then the namespaces, their links and the bridge go."""
        for ns in self.namespaces:
            netns.Netns(ns, "", "").destroy()  # (its veth name is not ours: `ip link del` of it finds nothing)
        for i in range(1, self.nodes + 1):
            subprocess.run(["ip", "link", "del", f"hbs{self.k}o{i}"], check=False, capture_output=True)
        subprocess.run(["ip", "link", "del", self.bridge], check=False, capture_output=True)
