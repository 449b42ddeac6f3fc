"""Inventory collectors for disks, NICs, DIMMs (SMBIOS type 17), CPU clocks and the kernels' build,
on the fixture trees (host_this: this VM; host_small: hand-made) and on SMBIOS blobs built here
from the DMTF spec's layout."""

import struct
from pathlib import Path

import pytest
from runner_fakes import FIXTURES

from hostbench_runner import inventory
from hostbench_runner.config import SOURCE_KERNEL_BIN
from hostbench_runner.inventory import cpu, disks, kernel_build, memory, nics
from hostbench_runner.kernel import KernelCatalog

THIS = FIXTURES / "host_this"
SMALL = FIXTURES / "host_small"


# --- disks ---------------------------------------------------------------------------------------


def _by_name(items):
    return {d["name"]: d for d in items}


def test_disks_on_this_machine():
    got = disks.parse(disks.read(THIS, "/root/.local/state/hostbench-runner/work"))
    devices = _by_name(got["devices"])
    assert set(devices) == {"vda"}  # loop0 has no media (size 0)
    assert devices["vda"] == {
        "name": "vda", "model": None, "vendor": "0x1af4", "size_bytes": 536870912 * 512, "rotational": True,
        "scheduler": "mq-deadline", "logical_block_bytes": 512, "physical_block_bytes": 4096,
        "removable": False, "read_only": False, "driver": "virtio_blk", "virtual": False,
    }
    assert got["work_dir"] == {
        "path": "/root/.local/state/hostbench-runner/work", "mount_point": "/", "fstype": "ext4",
        "source": "/dev/vda", "options": "rw,relatime", "device": "vda", "partition": None,
    }


def test_disks_on_small_host():
    got = disks.parse(disks.read(SMALL, "/srv/data/hostbench/work"))
    devices = _by_name(got["devices"])
    assert set(devices) == {"sda", "nvme0n1", "dm-0"}  # loop3: no media
    sda, nvme, dm = devices["sda"], devices["nvme0n1"], devices["dm-0"]
    assert sda["model"] == "ST2000DM008-2FR102" and sda["size_bytes"] == 3907029168 * 512
    assert sda["rotational"] is True and sda["scheduler"] == "mq-deadline" and sda["driver"] == "sd"
    assert (sda["logical_block_bytes"], sda["physical_block_bytes"]) == (512, 4096)
    assert nvme["model"] == "Samsung SSD 980 PRO 1TB" and nvme["rotational"] is False
    assert nvme["scheduler"] == "none" and nvme["driver"] == "nvme" and nvme["virtual"] is False
    assert dm["virtual"] is True and dm["driver"] is None and dm["scheduler"] == "none"
    work = got["work_dir"]
    assert (work["mount_point"], work["fstype"], work["source"]) == ("/srv/data", "xfs", "/dev/sda1")
    assert (work["device"], work["partition"]) == ("sda", "sda1")


@pytest.mark.parametrize("path, mount_point, fstype, device, partition", [
    ("/srv/data/scratch space/hb", "/srv/data/scratch space", "ext4", "dm-0", None),  # \040 unescaped
    ("/srv/data/hostbench/tmp/work", "/srv/data/hostbench/tmp", "tmpfs", None, None),  # no block device
    ("/boot/efi", "/boot/efi", "vfat", "nvme0n1", "nvme0n1p1"),
    ("/srv/database/work", "/", "ext4", "nvme0n1", "nvme0n1p2"),  # /srv/data is no prefix of /srv/database
])
def test_work_dir_is_matched_to_the_longest_mount_point(path, mount_point, fstype, device, partition):
    work = disks.parse(disks.read(SMALL, path))["work_dir"]
    assert (work["mount_point"], work["fstype"], work["device"], work["partition"]) == (
        mount_point, fstype, device, partition)


def test_stacked_mounts_take_the_last_one():
    text = ("26 1 8:1 / /data rw - ext4 /dev/sda1 rw\n"
            "27 1 8:2 / /data rw shared:5 master:2 - xfs /dev/sda2 rw\n"
            "garbage line\n")
    mounts = disks.parse_mountinfo(text)
    assert [m["fstype"] for m in mounts] == ["ext4", "xfs"]
    assert disks.mount_of("/data/x", mounts)["source"] == "/dev/sda2"
    assert disks.mount_of("/elsewhere", mounts) is None


def test_scheduler_and_unknowns():
    assert disks.scheduler("none [mq-deadline] kyber bfq") == "mq-deadline"
    assert disks.scheduler("none") == "none"
    assert disks.scheduler("none mq-deadline") is None and disks.scheduler(None) is None
    got = disks.parse({"devices": {"sdz": {"size": "garbage"}}, "mountinfo": None, "work_dir": "/w"})
    assert got["devices"][0]["size_bytes"] is None and got["devices"][0]["rotational"] is None
    assert got["work_dir"]["mount_point"] is None and got["work_dir"]["device"] is None


# --- NICs ----------------------------------------------------------------------------------------


def test_nics_on_this_machine():
    got = _by_name(nics.parse(nics.read(THIS))["interfaces"])
    assert got["eth0"] == {"name": "eth0", "speed_mbps": None, "mtu": 1400, "driver": "virtio_net",
                           "operstate": "up", "duplex": None, "loopback": False, "virtual": False}
    assert got["lo"]["loopback"] is True and got["lo"]["virtual"] is True and got["lo"]["mtu"] == 65536
    assert got["ifb0"]["virtual"] is True and got["ifb0"]["loopback"] is False


def test_nics_on_small_host():
    got = _by_name(nics.parse(nics.read(SMALL))["interfaces"])
    assert got["eno1"]["speed_mbps"] == 10000 and got["eno1"]["mtu"] == 9000
    assert got["eno1"]["driver"] == "ixgbe" and got["eno1"]["duplex"] == "full"
    assert got["eno2"]["speed_mbps"] is None and got["eno2"]["operstate"] == "down"  # link down: no speed
    assert got["veth0"]["speed_mbps"] is None and got["veth0"]["virtual"] is True  # -1: unknown
    assert got["lo"]["loopback"] is True


# --- CPU clocks ----------------------------------------------------------------------------------


def test_cpu_base_and_max_clock():
    small = cpu.parse(cpu.read(SMALL))
    assert (small["base_mhz"], small["base_mhz_source"]) == (2100.0, "cpufreq base_frequency")
    assert (small["max_mhz"], small["max_mhz_source"]) == (3000.0, "cpufreq cpuinfo_max_freq")
    this = cpu.parse(cpu.read(THIS))
    assert this["base_mhz"] is None and this["max_mhz"] is None  # no cpufreq, no clock in "AMD EPYC"
    assert "clock_ghz_measured" not in this  # the backend fills it from the CPU kernel


def test_cpu_clock_fallbacks():
    def parse(model: str, **raw):
        return cpu.parse({"cpuinfo": f"processor : 0\nmodel name : {model}\nflags : sse2\n", **raw})

    got = parse("Intel(R) Xeon(R) Platinum 8375C CPU @ 2.90GHz")
    assert (got["base_mhz"], got["base_mhz_source"]) == (2900.0, "model name")
    got = parse("AMD EPYC 9R14 96-Core Processor", cppc_nominal_mhz="2600", amd_pstate_max_freq_khz="3700000")
    assert (got["base_mhz"], got["base_mhz_source"]) == (2600, "acpi_cppc nominal_freq")
    assert (got["max_mhz"], got["max_mhz_source"]) == (3700.0, "amd_pstate_max_freq")
    got = parse("AMD EPYC", max_freq_khz="0", base_freq_khz="junk")
    assert got["base_mhz"] is None and got["max_mhz"] is None


# --- memory: SMBIOS type 17 ------------------------------------------------------------------------


def dimm(*, locator="DIMM 0", bank="P0 CHANNEL A", size=16384, mtype=0x1A, speed=3200, configured=2933,
         extended_size=0, length=0x28, extended_speed=0, extended_configured=0, form=0x09,
         manufacturer="Samsung", part="M393A2K43DB3-CWE", handle=0x1100) -> bytes:
    """A Memory Device structure laid out as DSP0134 (SMBIOS 3.x) 7.18 defines it."""
    blob = bytearray(max(length, 0x5C))
    struct.pack_into("<BBH", blob, 0, 17, length, handle)
    struct.pack_into("<HHHHH", blob, 0x04, 0x1000, 0xFFFE, 72, 64, size)  # array, error, widths, size
    struct.pack_into("<BBBBB", blob, 0x0E, form, 0, 1, 2, mtype)  # form factor, set, locators 1 and 2, type
    struct.pack_into("<HH", blob, 0x13, 0x0080, speed)  # type detail (synchronous), speed
    struct.pack_into("<BBBB", blob, 0x17, 3, 4, 0, 5)  # manufacturer, serial, no asset tag, part number
    struct.pack_into("<BIH", blob, 0x1B, 2, extended_size, configured)  # rank 2, extended size, configured
    struct.pack_into("<II", blob, 0x54, extended_speed, extended_configured)
    strings = [locator, bank, manufacturer, "SERIAL-1234", part]
    return bytes(blob[:length]) + b"".join(s.encode() + b"\0" for s in strings) + b"\0"


def test_smbios_ddr4_two_channels_and_an_empty_slot():
    blobs = [dimm(), dimm(locator="DIMM 0", bank="P0 CHANNEL B"),
             dimm(locator="DIMM 0", bank="P0 CHANNEL C", size=0, speed=0, configured=0, mtype=0x02)]
    got = memory.summarize_dimms(blobs)
    assert got["dimm_type"] == "DDR4" and got["speed_mts"] == 2933 and got["rated_speed_mts"] == 3200
    assert got["channels"] == 2 and got["dimms_populated"] == 2 and got["dimm_slots"] == 3
    first = got["dimms"][0]
    assert first == {"locator": "DIMM 0", "bank": "P0 CHANNEL A", "size_bytes": 16 << 30, "type": "DDR4",
                     "form_factor": "DIMM", "data_width_bits": 64, "speed_mts": 3200, "configured_speed_mts": 2933,
                     "manufacturer": "Samsung", "part_number": "M393A2K43DB3-CWE"}
    assert "SERIAL-1234" not in str(got)  # serial numbers are not inventory
    assert got["dimms"][2]["size_bytes"] == 0 and got["dimms"][2]["type"] is None


def test_smbios_sizes_and_extended_fields():
    big = memory.parse_smbios17(dimm(size=0x7FFF, extended_size=65536))
    assert big["size_bytes"] == 64 << 30
    small = memory.parse_smbios17(dimm(size=0x8000 | 512))  # KB granularity
    assert small["size_bytes"] == 512 << 10
    unknown = memory.parse_smbios17(dimm(size=0xFFFF))
    assert unknown["size_bytes"] is None
    ddr5 = memory.parse_smbios17(dimm(mtype=0x22, length=0x5C, speed=0xFFFF, configured=0xFFFF,
                                      extended_speed=8000, extended_configured=7200))
    assert ddr5["type"] == "DDR5" and ddr5["speed_mts"] == 8000 and ddr5["configured_speed_mts"] == 7200


def test_smbios_2_3_structure_has_no_configured_speed():
    got = memory.parse_smbios17(dimm(length=0x1B, size=0x7FFF, extended_size=65536))
    # fields past the structure's length are absent, even though bytes (the strings) follow
    assert got["configured_speed_mts"] is None and got["size_bytes"] is None
    assert got["speed_mts"] == 3200 and got["part_number"] == "M393A2K43DB3-CWE"
    assert memory.summarize_dimms([dimm(length=0x1B)])["speed_mts"] == 3200  # the rated speed then


@pytest.mark.parametrize("locators, channels", [
    ([("ChannelA-DIMM0", "BANK 0"), ("ChannelA-DIMM1", "BANK 1"), ("ChannelB-DIMM0", "BANK 2")], 2),
    ([("P0_Node0_Channel0_Dimm0", "P0 CHANNEL A"), ("P1_Node1_Channel0_Dimm0", "P1 CHANNEL A")], 2),
    ([("DIMM_A1", "NODE 1"), ("DIMM_B1", "NODE 1")], None),  # no channel named: unknown, not guessed
])
def test_channels_only_when_the_firmware_names_them(locators, channels):
    blobs = [dimm(locator=loc, bank=bank) for loc, bank in locators]
    assert memory.summarize_dimms(blobs)["channels"] == channels


def test_smbios_refuses_what_is_not_a_memory_device():
    assert memory.parse_smbios17(b"") is None
    assert memory.parse_smbios17(b"\x10" + dimm()[1:]) is None  # type 16
    assert memory.parse_smbios17(dimm()[:0x10]) is None  # cut short
    placeholder = memory.parse_smbios17(dimm(manufacturer="Not Specified", part="Unknown"))
    assert placeholder["manufacturer"] is None and placeholder["part_number"] is None


def test_memory_reads_smbios_entries_from_a_tree(tmp_path):
    (tmp_path / "proc").mkdir()
    (tmp_path / "proc/meminfo").write_text("MemTotal:       32768000 kB\n")
    entries = tmp_path / "sys/firmware/dmi/entries"
    for name, blob in (("17-0", dimm()), ("17-1", dimm(bank="P0 CHANNEL B")), ("16-0", b"\x10\x17")):
        (entries / name).mkdir(parents=True)
        (entries / name / "raw").write_bytes(blob)
    got = memory.parse(memory.read(tmp_path))
    assert got["total_bytes"] == 32768000 * 1024 and got["dimm_source"] == "smbios"
    assert got["dimm_type"] == "DDR4" and got["channels"] == 2 and got["speed_mts"] == 2933
    (entries / "17-0" / "raw").unlink()
    (entries / "17-1" / "raw").unlink()  # listed but not readable (as for a non-root runner)
    got = memory.parse(memory.read(tmp_path))
    assert got["dimm_type"] is None and got["dimms"] is None and "root" in got["dimm_note"]


# --- the kernels' build and the whole inventory -----------------------------------------------------------


def test_kernel_build_from_hbk_version():
    got = kernel_build({"v": 1, "version": "1.0.0", "build": {"cc": "gcc 12.2.0", "cflags": "-O2 -g"}})
    assert got == {"version": "1.0.0", "cc": "gcc 12.2.0", "cflags": "-O2 -g"}
    assert kernel_build({"version": "fake", "compiler": "python"}) == {"version": "fake", "cc": "python",
                                                                       "cflags": None}
    assert kernel_build("1.0.0") is None and kernel_build(None) is None


@pytest.mark.skipif(not SOURCE_KERNEL_BIN.is_file(), reason="runner/kernels not built")
def test_real_hbk_reports_compiler_and_flags():
    got = kernel_build(KernelCatalog(SOURCE_KERNEL_BIN).build_info())
    assert got["version"] and got["cc"] and "-O" in got["cflags"]


def test_collect_reports_the_work_dirs_filesystem():
    got = inventory.collect(SMALL, work_dir="/srv/data/hostbench/work")
    assert got["disks"]["work_dir"]["fstype"] == "xfs" and got["disks"]["work_dir"]["device"] == "sda"
    assert {n["name"] for n in got["nics"]["interfaces"]} == {"eno1", "eno2", "lo", "veth0"}


def test_collect_live_host_has_disks_and_nics(tmp_path: Path):
    got = inventory.collect("/", work_dir=tmp_path)
    assert "error" not in got["disks"] and "error" not in got["nics"]
    assert got["disks"]["work_dir"]["fstype"]
    assert any(n["loopback"] for n in got["nics"]["interfaces"])
