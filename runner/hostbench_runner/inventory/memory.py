"""Memory: MemTotal from /proc/meminfo; DIMMs from the SMBIOS type 17 ("Memory Device") structures
that Linux exposes as /sys/firmware/dmi/entries/17-*/raw (readable by root only; a VM may have none).

The structure is parsed here from the DMTF SMBIOS specification (DSP0134), offsets from the start of
the structure: 0x0C size, 0x0E form factor, 0x10/0x11 device/bank locator, 0x12 memory type,
0x15 speed, 0x17 manufacturer, 0x1A part number, 0x1C extended size, 0x20 configured speed,
0x54/0x58 extended (configured) speed. A field beyond the structure's length is absent (older
SMBIOS versions), never read from the string area that follows.
"""

from __future__ import annotations

import re
import struct
from pathlib import Path
from typing import Any

from .files import list_dir, read_bytes, read_text

DMI_ENTRIES = "sys/firmware/dmi/entries"

MEMORY_TYPES = {
    0x01: "Other", 0x02: "Unknown", 0x03: "DRAM", 0x04: "EDRAM", 0x05: "VRAM", 0x06: "SRAM", 0x07: "RAM",
    0x08: "ROM", 0x09: "Flash", 0x0A: "EEPROM", 0x0B: "FEPROM", 0x0C: "EPROM", 0x0D: "CDRAM", 0x0E: "3DRAM",
    0x0F: "SDRAM", 0x10: "SGRAM", 0x11: "RDRAM", 0x12: "DDR", 0x13: "DDR2", 0x14: "DDR2 FB-DIMM",
    0x18: "DDR3", 0x19: "FBD2", 0x1A: "DDR4", 0x1B: "LPDDR", 0x1C: "LPDDR2", 0x1D: "LPDDR3", 0x1E: "LPDDR4",
    0x1F: "Logical non-volatile device", 0x20: "HBM", 0x21: "HBM2", 0x22: "DDR5", 0x23: "LPDDR5", 0x24: "HBM3",
}
FORM_FACTORS = {
    0x01: "Other", 0x02: "Unknown", 0x03: "SIMM", 0x04: "SIP", 0x05: "Chip", 0x06: "DIP", 0x07: "ZIP",
    0x08: "Proprietary Card", 0x09: "DIMM", 0x0A: "TSOP", 0x0B: "Row of chips", 0x0C: "RIMM", 0x0D: "SODIMM",
    0x0E: "SRIMM", 0x0F: "FB-DIMM", 0x10: "Die",
}
_UNKNOWN_TYPES = {"Other", "Unknown"}


def read(root: Path) -> dict[str, Any]:
    entries = [name for name in list_dir(root, DMI_ENTRIES) if re.fullmatch(r"17-\d+", name)]
    raw17 = [read_bytes(root, f"{DMI_ENTRIES}/{name}/raw", 4096) for name in entries]
    return {
        "meminfo": read_text(root, "proc/meminfo"),
        "dmi_entries": len(entries),  # listed, whether or not readable
        "smbios17": [blob for blob in raw17 if blob is not None],
    }


def _strings(blob: bytes, length: int) -> list[str]:
    """The string set after the formatted area: NUL-terminated, ended by a double NUL."""
    area = blob[length:]
    end = area.find(b"\x00\x00")
    if end >= 0:
        area = area[:end]
    return [s.decode("ascii", errors="replace").strip() for s in area.split(b"\x00")] if area else []


def parse_smbios17(blob: bytes) -> dict[str, Any] | None:
    """One Memory Device structure; None when it is not one (or is cut short)."""
    if len(blob) < 0x15 or blob[0] != 17:
        return None
    length = blob[1]
    if length < 0x15 or length > len(blob):
        return None
    strings = _strings(blob, length)

    def word(off: int) -> int | None:
        return struct.unpack_from("<H", blob, off)[0] if off + 2 <= length else None

    def dword(off: int) -> int | None:
        return struct.unpack_from("<I", blob, off)[0] if off + 4 <= length else None

    def byte(off: int) -> int | None:
        return blob[off] if off < length else None

    def string(off: int) -> str | None:
        idx = byte(off)
        if not idx or idx > len(strings):
            return None
        text = strings[idx - 1]
        # Firmware placeholders are no facts.
        if not text or text.lower() in {"unknown", "not specified", "none", "to be filled by o.e.m.", "undefined"}:
            return None
        return text

    size = word(0x0C)
    size_bytes: int | None
    if size is None or size == 0xFFFF:
        size_bytes = None  # unknown
    elif size == 0:
        size_bytes = 0  # no module installed in this slot
    elif size == 0x7FFF:
        ext = dword(0x1C)
        size_bytes = (ext & 0x7FFFFFFF) << 20 if ext else None
    else:
        size_bytes = (size & 0x7FFF) << (10 if size & 0x8000 else 20)

    def speed(off: int, ext_off: int) -> int | None:
        value = word(off)
        if value == 0xFFFF:
            value = dword(ext_off)
            value = value & 0x7FFFFFFF if value else None
        return value or None  # 0: unknown

    mtype = MEMORY_TYPES.get(byte(0x12) or 0)
    width = word(0x0A)
    return {
        "locator": string(0x10),
        "bank": string(0x11),
        "size_bytes": size_bytes,
        "type": mtype if mtype not in _UNKNOWN_TYPES else None,
        "form_factor": FORM_FACTORS.get(byte(0x0E) or 0),
        "data_width_bits": width if width not in (None, 0, 0xFFFF) else None,
        "speed_mts": speed(0x15, 0x54),  # the module's rated maximum
        "configured_speed_mts": speed(0x20, 0x58),  # what the memory controller runs it at
        "manufacturer": string(0x17),
        "part_number": string(0x1A),
    }


_CHANNEL = re.compile(r"channel\s*[-_ ]?\s*[A-Za-z0-9]+", re.IGNORECASE)


def channel_key(dimm: dict[str, Any]) -> str | None:
    """The channel a DIMM sits in, only when the firmware's locator names it ("P0 CHANNEL A",
    "ChannelB-DIMM0", "P0_Node0_Channel1_Dimm0"); the text before the match keeps sockets apart."""
    for text in (dimm.get("locator"), dimm.get("bank")):
        if text:
            m = _CHANNEL.search(text)
            if m:
                return re.sub(r"[\s_-]+", " ", text[: m.end()]).strip().lower()
    return None


def summarize_dimms(blobs: list[bytes]) -> dict[str, Any]:
    slots = [d for d in (parse_smbios17(b) for b in blobs) if d is not None]
    populated = [d for d in slots if d["size_bytes"]]
    types = {d["type"] for d in populated if d["type"]}
    configured = [d["configured_speed_mts"] for d in populated if d["configured_speed_mts"]]
    rated = [d["speed_mts"] for d in populated if d["speed_mts"]]
    channels = {channel_key(d) for d in populated}
    return {
        "dimm_slots": len(slots),
        "dimms_populated": len(populated),
        "dimm_type": types.pop() if len(types) == 1 else None,
        # The controller runs every channel at the slowest module's speed.
        "speed_mts": min(configured) if configured else (min(rated) if rated else None),
        "rated_speed_mts": min(rated) if rated else None,
        "channels": len(channels) if populated and None not in channels else None,
        "dimms": slots,
    }


def parse(raw: dict[str, Any]) -> dict[str, Any]:
    total = None
    m = re.search(r"^MemTotal:\s*(\d+)\s*kB\s*$", raw.get("meminfo") or "", re.MULTILINE)
    if m:
        total = int(m[1]) * 1024
    out: dict[str, Any] = {
        "total_bytes": total, "dimm_type": None, "speed_mts": None, "rated_speed_mts": None,
        "channels": None, "dimm_slots": None, "dimms_populated": None, "dimms": None,
        "dimm_source": None, "dimm_note": None,
    }
    blobs = raw.get("smbios17") or []
    if blobs:
        out.update(summarize_dimms(blobs))
        out["dimm_source"] = "smbios"
    elif raw.get("dmi_entries"):
        out["dimm_note"] = "SMBIOS memory device entries are readable by root only"
    else:
        out["dimm_note"] = "the firmware exposes no SMBIOS memory device entries (common in VMs)"
    return out
