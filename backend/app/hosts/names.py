"""Host names, as a runner gives them at registration: one normal form, so that a look-alike cannot stand beside
the real one and nothing invisible or controlling reaches a page, a CSV or a terminal.

NFKC (full-width letters, ligatures and no-break spaces become their plain forms), blanks trimmed and inner runs of
blanks made one space, and no control, format (zero-width space, bidi overrides, soft hyphen), surrogate,
private-use or unassigned character, nor a line or paragraph separator. Unique among live hosts whatever the case:
the unique index on lower(name) (migration 0015) holds it even between two registrations at once."""
import unicodedata

MAX_NAME = 128
_REFUSED = {"Cc": "a control character", "Cf": "an invisible format character", "Cs": "a surrogate",
            "Co": "a private-use character", "Cn": "an unassigned character", "Zl": "a line separator",
            "Zp": "a paragraph separator"}


def normalise(raw: str) -> str:
    """The host name to store, or ValueError saying what is wrong with it."""
    name = unicodedata.normalize("NFKC", raw)
    for ch in name:
        why = _REFUSED.get(unicodedata.category(ch))
        if why:
            raise ValueError(f"a host name cannot hold {why} (U+{ord(ch):04X})")
    name = " ".join(name.split())
    if not name:
        raise ValueError("a host name cannot be blank")
    if len(name) > MAX_NAME:
        raise ValueError(f"a host name is at most {MAX_NAME} characters")
    return name
