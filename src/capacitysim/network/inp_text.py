"""The text of a SWMM 5 ``.inp`` as the engine reads it: sections, tokens, the external files a
model names, and the copy of a model that a run reads.

Pure text (no engine, no model object), so the engine (:mod:`capacitysim.network.engine`), the
reader (:mod:`capacitysim.network.model`) and the scenario writer
(:mod:`capacitysim.network.scenario`) share it without importing one another.

References
----------
.. [1] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2, EPA/600/R-22/030,
   Appendix D (input format: ``[OPTIONS]`` THREADS, ``[FILES]``, ``[TIMESERIES]``/``[RAINGAGES]``/
   ``[TEMPERATURE]`` FILE).
"""

from __future__ import annotations

import re
from pathlib import Path

_SECTION_RE = re.compile(r"^\s*\[([^\]]+)\]")


#: Sections whose lines can name an external file [1]_.
_FILE_SECTIONS = ("TIMESERIES", "RAINGAGES", "FILES", "TEMPERATURE")
#: [FILES] verbs that make the engine write a file (SAVE) or read one (USE) [1]_.
_FILE_VERBS = ("SAVE", "USE")


def prepare_inp_text(text: str, source_dir: Path, run_dir: Path | None = None) -> str:
    """The text of a copy of a model that runs from another folder with one engine thread.

    * ``THREADS 1`` in ``[OPTIONS]`` (added when absent);
    * every external file the engine reads (``[TIMESERIES]``/``[RAINGAGES]`` ``FILE``,
      ``[TEMPERATURE] FILE``, ``[FILES] USE ...``) made absolute with respect to the input's
      folder (``source_dir``): quoted names with spaces and Windows separators are understood;
    * every file the engine would write (``[FILES] SAVE ...``) redirected into ``run_dir`` (its
      base name kept), so a model can never make a run write outside its own folder.

    Lines not edited are kept byte for byte (the text is latin-1 decoded bytes).
    """
    out: list[str] = []
    section = ""
    threads_seen = False
    for line in text.splitlines():
        m = _SECTION_RE.match(line)
        if m:
            if section == "OPTIONS" and not threads_seen:
                _insert_before_blank_tail(out, "THREADS              1")
                threads_seen = True
            section = m.group(1).strip().upper()
            out.append(line)
            continue
        if section == "OPTIONS":
            toks = quoted_tokens(line)
            if toks and toks[0].upper() == "THREADS":
                out.append("THREADS              1")
                threads_seen = True
                continue
        elif section in _FILE_SECTIONS and (section == "FILES" or "FILE" in line.upper()):
            toks = quoted_tokens(line)  # only lines that can name a file are tokenized (time series can be long)
            if toks:
                line = file_reference_line(line, toks, section, source_dir, run_dir)
        out.append(line)
    if section == "OPTIONS" and not threads_seen:
        out.append("THREADS              1")
    return "\n".join(out) + "\n"


def quoted_tokens(line: str) -> list[str]:
    """Tokens of a data line with their quotes kept (``;`` comments outside quotes removed)."""
    inq, cut = False, len(line)
    for k, ch in enumerate(line):
        if ch == '"':
            inq = not inq
        elif ch == ";" and not inq:
            cut = k
            break
    return re.findall(r'"[^"]*"|\S+', line[:cut])


def _insert_before_blank_tail(lines: list[str], new: str) -> None:
    i = len(lines)
    while i > 0 and not lines[i - 1].strip():
        i -= 1
    lines.insert(i, new)


def resolve_model_path(raw: str, source_dir: Path) -> Path:
    """A file name as written in a model -> an absolute path (relative to the model's folder).

    Quotes are removed; a Windows name (``data\\rain.dat``, ``C:\\x\\rain.dat``) whose file does not
    exist as written is tried with ``/`` separators, and a drive-letter path by its base name in
    the model's folder.
    """
    name = raw.strip().strip('"')
    p = Path(name)
    if not p.is_absolute():
        p = source_dir / p
    if p.exists() or "\\" not in name:
        return p.resolve() if p.exists() else p
    alt = name.replace("\\", "/")
    if re.match(r"^[A-Za-z]:/", alt):  # a drive letter: the file as shipped beside the model
        cand = source_dir / Path(alt).name
        return cand.resolve() if cand.exists() else Path(alt)
    q = Path(alt) if Path(alt).is_absolute() else source_dir / alt
    return q.resolve() if q.exists() else q


def file_reference_line(line: str, toks: list[str], section: str, source_dir: Path, run_dir: Path | None) -> str:
    """One line with its external file name made absolute (inputs) or moved into ``run_dir`` (outputs)."""
    upper = [t.upper() for t in toks]
    if section == "FILES":
        if len(toks) < 3 or upper[0] not in _FILE_VERBS:
            return line
        idx = 2
    elif "FILE" in upper:
        idx = upper.index("FILE") + 1
    else:
        return line
    if idx >= len(toks):
        return line
    if section == "FILES" and upper[0] == "SAVE":
        base = Path(toks[idx].strip('"').replace("\\", "/")).name or "saved"
        target = (run_dir / base) if run_dir is not None else None
        if target is None:
            return line
        new = f'"{target}"'
    else:
        target = resolve_model_path(toks[idx], source_dir)
        new = f'"{target}"'
    start = _token_start(line, toks, idx)
    return line[:start] + new + line[start + len(toks[idx]):]


def _token_start(line: str, toks: list[str], idx: int) -> int:
    pos = 0
    for k, t in enumerate(toks):
        pos = line.index(t, pos)
        if k == idx:
            return pos
        pos += len(t)
    raise ValueError(idx)


def section_lines(text: str):
    """(section in upper case, line) for every line of a model's text under a section header."""
    section = ""
    for line in text.splitlines():
        m = _SECTION_RE.match(line)
        if m:
            section = m.group(1).strip().upper()
            continue
        yield section, line


def external_files(text: str, source_dir: Path) -> list[dict]:
    """Every external file a model names: section, verb (READ/USE/SAVE), path as written and resolved."""
    found = []
    for section, line in section_lines(text):
        toks = quoted_tokens(line)
        if not toks:
            continue
        upper = [t.upper() for t in toks]
        if section == "FILES" and len(toks) >= 3 and upper[0] in _FILE_VERBS:
            found.append({"section": section, "verb": upper[0], "kind": upper[1], "name": toks[2].strip('"'),
                          "path": str(resolve_model_path(toks[2], source_dir))})
        elif section in ("TIMESERIES", "RAINGAGES", "TEMPERATURE") and "FILE" in upper and upper.index("FILE") + 1 < len(toks):
            raw = toks[upper.index("FILE") + 1]
            found.append({"section": section, "verb": "READ", "kind": section, "name": raw.strip('"'),
                          "path": str(resolve_model_path(raw, source_dir))})
    return found
