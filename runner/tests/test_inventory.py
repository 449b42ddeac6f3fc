from pathlib import Path

from runner_fakes import FIXTURES

from hostbench_runner import inventory
from hostbench_runner.inventory import COLLECTORS, Collector, cpu, governor, gpus, memory, os_info, run_collector, virt

THIS = FIXTURES / "host_this"
SMALL = FIXTURES / "host_small"


def test_cpu_on_this_machine():
    got = cpu.parse(cpu.read(THIS))
    assert got["vendor"] == "AuthenticAMD"
    assert got["model"] == "AMD EPYC"
    assert (got["family"], got["model_number"], got["stepping"]) == (26, 2, 1)
    assert (got["sockets"], got["cores"], got["threads"]) == (1, 2, 2)
    assert got["cores_per_socket"] == 2 and got["threads_per_core"] == 1
    assert got["best_isa"] == "avx512" and got["vector_bits"] == 512 and got["fma"] is True
    assert {"sse2", "avx", "avx2", "fma", "avx512f"} <= set(got["isa"])
    assert got["max_mhz"] is None  # no cpufreq in this VM: unknown, not guessed
    assert got["fma_units"] is None
    assert got["l1d_bytes"] == 48 * 1024 and got["l1i_bytes"] == 32 * 1024
    assert got["l2_bytes"] == 1024 * 1024 and got["l3_bytes"] == 32 * 1024 * 1024


def test_cpu_on_small_two_socket_host():
    got = cpu.parse(cpu.read(SMALL))
    assert got["vendor"] == "GenuineIntel"
    assert got["model"].startswith("Intel(R) Xeon(R) CPU E5-2620 v4")
    assert (got["sockets"], got["cores"], got["threads"]) == (2, 2, 4)
    assert got["cores_per_socket"] == 1 and got["threads_per_core"] == 2
    assert got["best_isa"] == "avx2" and got["vector_bits"] == 256
    assert "avx512f" not in got["isa"] and "sse3" in got["isa"]
    assert got["max_mhz"] == 3000.0
    assert got["cpuinfo_mhz"] == 1199.926
    assert got["l3_bytes"] == 20480 * 1024


def test_cpu_arm_cpuinfo_without_model_name():
    text = (
        "processor\t: 0\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 sve\n"
        "CPU implementer\t: 0x41\nCPU architecture: 8\nCPU variant\t: 0x1\nCPU part\t: 0xd40\n\n"
        "processor\t: 1\nBogoMIPS\t: 50.00\nFeatures\t: fp asimd sve\nCPU implementer\t: 0x41\nCPU part\t: 0xd40\n"
    )
    topology = {"cpu0": {"package": "0", "core": "0"}, "cpu1": {"package": "0", "core": "1"}}
    got = cpu.parse({"cpuinfo": text, "topology": topology, "caches": [], "online": "0-1"})
    assert got["vendor"] == "ARM" and got["model"] is None
    assert got["model_number"] == 0xD40
    assert (got["sockets"], got["cores"], got["threads"]) == (1, 2, 2)
    assert got["isa"] == ["neon", "sve"] and got["best_isa"] == "sve" and got["vector_bits"] is None


def test_cpu_with_nothing_readable_is_all_unknown():
    got = cpu.parse({"cpuinfo": None, "topology": {}, "caches": [], "online": None, "max_freq_khz": None})
    assert got["threads"] is None and got["sockets"] is None and got["best_isa"] is None
    assert got["isa"] == [] and got["l3_bytes"] is None


def test_helpers():
    assert cpu.cpu_list_count("0-3,8,10-11") == 7
    assert cpu.size_bytes("48K") == 49152 and cpu.size_bytes("2M") == 2 << 20
    assert cpu.size_bytes("weird") is None


def test_memory():
    this = memory.parse(memory.read(THIS))
    assert this["total_bytes"] == 24684092 * 1024
    assert this["dimm_type"] is None and this["channels"] is None and this["dimms"] is None  # no SMBIOS here
    assert memory.parse(memory.read(SMALL))["total_bytes"] == 4 << 30
    assert memory.parse({"meminfo": "garbage"})["total_bytes"] is None


def test_os():
    this = os_info.parse(os_info.read(THIS))
    assert this["distribution"] == "Debian GNU/Linux 12 (bookworm)"
    assert this["kernel"] == "6.18.44-fc-v657" and this["system"] == "Linux"
    assert this["arch"] is None  # not readable from a fixture tree
    small = os_info.parse(os_info.read(SMALL))
    assert small["distribution"] == "Ubuntu 22.04.3 LTS" and small["distribution_id"] == "ubuntu"
    assert small["kernel"] == "5.15.0-91-generic"


def test_virtualization():
    this = virt.parse(virt.read(THIS))
    assert this["virtualized"] is True and this["cpuid_hypervisor_flag"] is True
    assert this["sys_vendor"] is None  # no DMI in this VM; its kvm-clock clock source names KVM
    assert this["hypervisor"] == "kvm"
    small = virt.parse(virt.read(SMALL))
    assert small["virtualized"] is False and small["sys_vendor"] == "Dell Inc."
    ec2 = virt.parse({"cpuinfo": "flags : fpu hypervisor", "sys_vendor": "Amazon EC2", "product_name": "c7a.large"})
    assert ec2 == {**ec2, "virtualized": True, "hypervisor": "amazon"}
    arm = virt.parse({"cpuinfo": "Features : fp asimd"})
    assert arm["virtualized"] is None


def test_governor():
    assert governor.parse(governor.read(THIS)) == {"governor": None, "driver": None, "boost": None}
    assert governor.parse(governor.read(SMALL)) == {"governor": "performance", "driver": "intel_cpufreq", "boost": True}
    mixed = governor.parse({"governors": {"cpu0": "performance", "cpu1": "powersave"}})
    assert mixed["governor"] == "mixed: performance,powersave"


def test_gpus_are_the_nvidia_display_controllers_on_the_pci_bus(tmp_path):
    def device(addr, vendor, cls, info=None):
        d = tmp_path / "sys/bus/pci/devices" / addr
        d.mkdir(parents=True)
        (d / "vendor").write_text(vendor + "\n")
        (d / "class").write_text(cls + "\n")
        (d / "device").write_text("0x2335\n")
        if info is not None:
            (tmp_path / "proc/driver/nvidia/gpus" / addr).mkdir(parents=True)
            (tmp_path / "proc/driver/nvidia/gpus" / addr / "information").write_text(info)

    assert gpus.parse(gpus.read(tmp_path)) is None  # no PCI bus to read: unknown
    device("0000:00:02.0", "0x8086", "0x030000")  # an Intel VGA: CUDA cannot use it
    device("0000:00:1f.6", "0x10de", "0x020000")  # an NVIDIA network controller
    assert gpus.parse(gpus.read(tmp_path)) == []  # a bus with no GPU for the CUDA kernel: none
    device("0000:18:00.0", "0x10de", "0x030200", "Model: \t\t NVIDIA H200\nIRQ:   \t\t 189\n")
    device("0000:2a:00.0", "0x10DE", "0x030000")  # no driver loaded: no model
    assert gpus.parse(gpus.read(tmp_path)) == [
        {"pci": "0000:18:00.0", "vendor": "nvidia", "device_id": "0x2335", "model": "NVIDIA H200"},
        {"pci": "0000:2a:00.0", "vendor": "nvidia", "device_id": "0x2335", "model": None},
    ]


def test_a_failing_collector_becomes_an_error_section():
    def broken(raw):
        raise RuntimeError("cannot parse")

    got = run_collector(Collector("cpu", cpu.read, broken), SMALL)
    assert got == {"error": "RuntimeError: cannot parse"}


def test_collect_on_a_fixture_tree_has_every_section(monkeypatch):
    def broken(raw):
        raise ValueError("boom")

    patched = [c if c.name != "memory" else Collector("memory", c.read, broken) for c in COLLECTORS]
    monkeypatch.setattr(inventory, "COLLECTORS", patched)
    got = inventory.collect(SMALL, kernel_info=lambda: {"version": "1"})
    assert set(got) == {"cpu", "memory", "disks", "nics", "os", "virtualization", "governor", "gpus", "runner",
                        "kernel"}
    assert got["gpus"] is None  # the fixture has no PCI bus: unknown, not "none"
    assert got["memory"] == {"error": "ValueError: boom"}
    assert got["cpu"]["sockets"] == 2 and got["kernel"] == {"version": "1", "cc": None, "cflags": None}


def test_collect_on_a_missing_tree_never_raises(tmp_path):
    got = inventory.collect(tmp_path / "nothing")
    assert got["memory"]["total_bytes"] is None and got["kernel"] is None
    assert got["disks"] == {"devices": [], "work_dir": None, "targets": []} and got["nics"] == {"interfaces": []}


def test_collect_live_host():
    got = inventory.collect(Path("/"))
    assert "error" not in got["cpu"] and got["runner"]["version"]


def test_best_isa_uses_the_cpu_kernels_names():
    def best(flags):
        return cpu.parse({"cpuinfo": f"processor : 0\nflags : {flags}\n"})["best_isa"]

    assert best("sse sse2 avx") == "sse2"  # AVX without AVX2: the kernel has no AVX-only path
    assert best("sse sse2 avx avx2 fma") == "avx2"
    assert best("sse2 avx2 avx512f") == "avx512"
    assert best("fpu") == "scalar"
