"""The text of a SWMM 5 ``.inp`` as the engine reads it: lines, tokens, sections, every file the model names,
and the copy of a model that a run reads.

Pure text (no engine, no model object), so the engine (:mod:`capacitysim.network.engine`), the reader
(:mod:`capacitysim.network.model`), the scenario writer (:mod:`capacitysim.network.scenario`) and the service
share it without importing one another.

The engine's own reading rules, reproduced here because a model is hostile until checked [2]_:

* **Lines** are read with ``fgets(line, MAXLINE, f)``, ``MAXLINE = 1024``: a physical line longer than 1,023
  characters is read as several engine lines, and the rest of it is parsed as a line of its own (a ``[FILES]``
  header hidden 1,023 characters into a comment is a header). A C string ends at its first NUL byte.
* **Tokens** (``getTokens``): everything from the first ``;`` is a comment, *even inside quotes*; tokens are
  separated by space, tab, CR and LF; a token that begins with ``"`` runs to the next ``"`` or the end of the
  line (``"[FILES]"`` is the token ``[FILES]``); a ``"`` elsewhere is part of the token; at most 40 tokens.
* **Keywords** (``findmatch``/``match``): a token matches the *first* keyword of the engine's list that is a
  prefix of it, ignoring the case of ASCII letters: ``[FILE]``, ``[FILES]`` and ``[filesystem]`` are all the
  ``[FILES]`` section, ``[JUNC]`` is ``[JUNCTIONS]``, ``SAVEX`` is ``SAVE``, ``HOTSTARTS`` is ``HOTSTART``.
  A section keyword is its name without the closing bracket (``[XSECT``, ``[POLLUT``, ``[SUBCATCHMENT``).
* **Two passes**: the first (``input_countObjects``) splits the first token with ``strtok`` (no quotes, no
  comment cut) and reads ``[OPTIONS]`` there; the second (``input_readData``) reads every other section with
  ``getTokens``. A quoted ``"[FILES]"`` is a header for the second pass only, so file references are found
  with the second pass's sections and options with the first's.

Every file a SWMM 5.2 run opens besides its input, report and output [1]_ [2]_:

==============  ==================================  =======================  ==============================
section         line                                file token               the engine
==============  ==================================  =======================  ==============================
``[FILES]``     ``USE|SAVE|SCRATCH|NO`` type name    3rd (type RAINFALL,      USE reads (RAINFALL, RUNOFF,
                                                    RUNOFF, HOTSTART, RDII,  HOTSTART opened ``r+b``), SAVE
                                                    INFLOWS, OUTFLOWS)       writes
``[RAINGAGES]`` name form intvl scf ``FILE`` f ...  6th                      reads
``[TIMESERIES]`` name ``FILE`` f                    3rd (``FILE`` exactly)   reads
``[TEMPERATURE]`` ``FILE`` f [start]                2nd                      reads (climate file)
``[LID_USAGE]`` subcatch lid n ... rptfile          9th (``*`` is none)      writes (relative to the cwd)
``[OPTIONS]``   ``TEMPDIR`` folder                  2nd                      scratch files (Windows only)
==============  ==================================  =======================  ==============================

References
----------
.. [1] Rossman, L.A. (2022). Storm Water Management Model User's Manual Version 5.2, EPA/600/R-22/030,
   Appendix D (input format: ``[OPTIONS]`` THREADS and TEMPDIR, ``[FILES]``, ``[RAINGAGES]``/``[TIMESERIES]``/
   ``[TEMPERATURE]`` FILE, ``[LID_USAGE]`` report file).
.. [2] US EPA, SWMM 5.2.4 source code: ``src/solver/input.c`` (``input_countObjects``, ``input_readData``,
   ``getTokens``, ``findmatch``, ``match``), ``keywords.c`` (``SectWords``, ``OptionWords``,
   ``FileModeWords``, ``FileTypeWords``, ``GageDataWords``, ``TempKeyWords``), ``consts.h`` (``MAXLINE``,
   ``MAXTOKS``, ``MAXFNAME``), ``iface.c``, ``gage.c``, ``table.c``, ``climate.c``, ``lid.c``, ``swmm5.c``
   (``addAbsolutePath``, ``getTempFileName``). https://github.com/USEPA/Stormwater-Management-Model
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from capacitysim.errors import InputError

#: The engine's input line buffer [characters] (consts.h ``MAXLINE``): ``fgets`` reads at most one less [2]_.
ENGINE_MAXLINE = 1024
#: Most tokens the engine keeps of a line (consts.h ``MAXTOKS``) [2]_.
ENGINE_MAXTOKS = 40
#: Longest file name the engine keeps [characters] (consts.h ``MAXFNAME``); longer ones are cut [2]_.
ENGINE_MAXFNAME = 259

#: The engine's section keywords in its own order (keywords.c ``SectWords``) and the canonical name of each [2]_.
SECTION_KEYWORDS = (
    ("[TITLE", "TITLE"), ("[OPTION", "OPTIONS"), ("[FILE", "FILES"), ("[RAINGAGE", "RAINGAGES"),
    ("[TEMPERATURE", "TEMPERATURE"), ("[EVAP", "EVAPORATION"), ("[SUBCATCHMENT", "SUBCATCHMENTS"),
    ("[SUBAREA", "SUBAREAS"), ("[INFIL", "INFILTRATION"), ("[AQUIFER", "AQUIFERS"), ("[GROUNDWATER", "GROUNDWATER"),
    ("[SNOWPACK", "SNOWPACKS"), ("[JUNC", "JUNCTIONS"), ("[OUTFALL", "OUTFALLS"), ("[STORAGE", "STORAGE"),
    ("[DIVIDER", "DIVIDERS"), ("[CONDUIT", "CONDUITS"), ("[PUMP", "PUMPS"), ("[ORIFICE", "ORIFICES"),
    ("[WEIR", "WEIRS"), ("[OUTLET", "OUTLETS"), ("[XSECT", "XSECTIONS"), ("[TRANSECT", "TRANSECTS"),
    ("[LOSS", "LOSSES"), ("[CONTROL", "CONTROLS"), ("[POLLUT", "POLLUTANTS"), ("[LANDUSE", "LANDUSES"),
    ("[BUILDUP", "BUILDUP"), ("[WASHOFF", "WASHOFF"), ("[COVERAGE", "COVERAGES"), ("[INFLOW", "INFLOWS"),
    ("[DWF", "DWF"), ("[PATTERN", "PATTERNS"), ("[RDII", "RDII"), ("[HYDROGRAPH", "HYDROGRAPHS"),
    ("[LOADING", "LOADINGS"), ("[TREATMENT", "TREATMENT"), ("[CURVE", "CURVES"), ("[TIMESERIES", "TIMESERIES"),
    ("[REPORT", "REPORT"), ("[COORDINATE", "COORDINATES"), ("[VERTICES", "VERTICES"), ("[POLYGON", "POLYGONS"),
    ("[LABEL", "LABELS"), ("[SYMBOL", "SYMBOLS"), ("[BACKDROP", "BACKDROP"), ("[TAG", "TAGS"),
    ("[PROFILE", "PROFILES"), ("[MAP", "MAP"), ("[LID_CONTROL", "LID_CONTROLS"), ("[LID_USAGE", "LID_USAGE"),
    ("[GWF", "GWF"), ("[ADJUSTMENT", "ADJUSTMENTS"), ("[EVENT", "EVENTS"), ("[STREET", "STREETS"),
    ("[INLET_USAGE", "INLET_USAGE"), ("[INLET", "INLETS"),
)
#: ``[OPTIONS]`` keywords in the engine's order (keywords.c ``OptionWords``, text.h) [2]_.
OPTION_WORDS = (
    "FLOW_UNITS", "INFILTRATION", "FLOW_ROUTING", "START_DATE", "START_TIME", "END_DATE", "END_TIME",
    "REPORT_START_DATE", "REPORT_START_TIME", "SWEEP_START", "SWEEP_END", "DRY_DAYS", "WET_STEP", "DRY_STEP",
    "ROUTING_STEP", "RULE_STEP", "REPORT_STEP", "ALLOW_PONDING", "INERTIAL_DAMPING", "SLOPE_WEIGHTING",
    "VARIABLE_STEP", "NORMAL_FLOW_LIMITED", "LENGTHENING_STEP", "MIN_SURFAREA", "COMPATIBILITY",
    "SKIP_STEADY_STATE", "TEMPDIR", "IGNORE_RAINFALL", "FORCE_MAIN_EQUATION", "LINK_OFFSETS", "MIN_SLOPE",
    "IGNORE_SNOWMELT", "IGNORE_GROUNDWATER", "IGNORE_ROUTING", "IGNORE_QUALITY", "MAX_TRIALS", "HEAD_TOLERANCE",
    "SYS_FLOW_TOL", "LAT_FLOW_TOL", "IGNORE_RDII", "MINIMUM_STEP", "THREADS", "SURCHARGE_METHOD",
)
_TEMPDIR, _THREADS = OPTION_WORDS.index("TEMPDIR"), OPTION_WORDS.index("THREADS")
#: ``[FILES]`` modes and types (keywords.c ``FileModeWords``, ``FileTypeWords``) [2]_.
FILE_MODE_WORDS = ("NO", "SCRATCH", "USE", "SAVE")
FILE_TYPE_WORDS = ("RAINFALL", "RUNOFF", "HOTSTART", "RDII", "INFLOWS", "OUTFLOWS")
#: ``[RAINGAGES]`` data sources and ``[TEMPERATURE]`` keywords (``GageDataWords``, ``TempKeyWords``) [2]_.
GAGE_DATA_WORDS = ("TIMESERIES", "FILE")
TEMP_KEY_WORDS = ("TIMESERIES", "FILE", "WINDSPEED", "SNOWMELT", "ADC")
#: ``[FILES]`` USE files the engine opens for reading *and* writing (``r+b``: rain.c, runoff.c, hotstart.c) [2]_.
USE_READ_WRITE = ("RAINFALL", "RUNOFF", "HOTSTART")

_SEPARATORS = " \t\r\n"
_ASCII_UPPER = {c: c - 32 for c in range(ord("a"), ord("z") + 1)}
_TOKEN = re.compile(r'"([^"\n]*)"?|([^ \t\r\n]+)')
_STRTOK_FIRST = re.compile(r"[^ \t\r\n]+")


def engine_upper(s: str) -> str:
    """``s`` with ASCII letters in upper case only, as the engine's ``UCHAR`` compares them [2]_."""
    return s.translate(_ASCII_UPPER)


def findmatch(token: str, keywords) -> int:
    """The index of the first keyword that is a prefix of ``token`` (leading spaces skipped, ASCII case ignored),
    or -1: the engine's ``findmatch``/``match`` [2]_."""
    t = engine_upper(token.lstrip(" "))
    for i, k in enumerate(keywords):
        if k and t.startswith(k):
            return i
    return -1


def engine_lines(text: str) -> list[str]:
    """The lines the engine reads from ``text`` (latin-1 decoded bytes): ``fgets`` with ``MAXLINE`` [2]_.

    Each item is the raw chunk (its newline included when it has one); a physical line longer than
    ``MAXLINE - 1`` characters gives several chunks.
    """
    out: list[str] = []
    step = ENGINE_MAXLINE - 1
    for raw in _split_newlines(text):
        if len(raw) <= step:
            out.append(raw)
        else:
            out.extend(raw[i:i + step] for i in range(0, len(raw), step))
    return out


def _split_newlines(text: str) -> list[str]:
    parts = text.split("\n")
    lines = [p + "\n" for p in parts[:-1]]
    if parts[-1]:
        lines.append(parts[-1])
    return lines


def engine_tokens(line: str) -> list[str]:
    """The tokens the engine's ``getTokens`` finds in one engine line (quotes removed) [2]_."""
    s = line.split("\x00", 1)[0].split(";", 1)[0]
    out = []
    for m in _TOKEN.finditer(s):
        out.append(m.group(1) if m.group(2) is None else m.group(2))
        if len(out) == ENGINE_MAXTOKS:
            break
    return out


def _first_strtok(line: str) -> str | None:
    m = _STRTOK_FIRST.search(line.split("\x00", 1)[0])
    return m.group(0) if m else None


def section_of(token: str) -> str | None:
    """The canonical name of the section a header token opens (``[FILE]`` -> ``FILES``), or None [2]_."""
    k = findmatch(token, [w for w, _ in SECTION_KEYWORDS])
    return None if k < 0 else SECTION_KEYWORDS[k][1]


@dataclass(frozen=True)
class EngineLine:
    """One line as the engine reads it: its number (1-based, as the engine counts), raw text, tokens, and the
    section of each pass (``section``: the data pass, ``options_section``: the pass that reads ``[OPTIONS]``;
    ``None`` before the first header, ``"?"`` after a header the engine does not know)."""

    number: int
    raw: str
    tokens: tuple[str, ...]
    section: str | None
    options_section: str | None
    header: bool
    #: a header for the first pass (its ``strtok`` token starts with ``[``), which decides what is an option line
    header1: bool = False

    @property
    def option(self) -> bool:
        """Whether the engine reads this line as an ``[OPTIONS]`` line (first pass, not a header) [2]_."""
        return self.options_section == "OPTIONS" and not self.header1


#: Sections whose lines can name a file (:func:`file_references`): only their lines are tokenized.
FILE_SECTIONS = frozenset({"OPTIONS", "FILES", "RAINGAGES", "TIMESERIES", "TEMPERATURE", "LID_USAGE"})


def may_be_header(raw: str) -> bool:
    """Whether a line can open a section for either pass (its first token starts with ``[``, quoted or not)."""
    s = raw.lstrip(" \t\r\n")
    return s.startswith("[") or s.startswith('"[')


def read_engine_lines(text: str) -> list[EngineLine]:
    """Every engine line of ``text`` with its sections (see :class:`EngineLine`) [2]_; the tokens of header lines
    and of lines of :data:`FILE_SECTIONS` (an empty tuple for the others: they cannot name a file)."""
    out = []
    sec2 = sec1 = None
    for n, raw in enumerate(engine_lines(text), start=1):
        header = header1 = False
        toks: list[str] = []
        if may_be_header(raw):
            toks = engine_tokens(raw)
            first = _first_strtok(raw)
            if first is not None and first.startswith("["):
                sec1 = section_of(first) or "?"
                header1 = True
            if toks and toks[0].startswith("["):
                sec2 = section_of(toks[0]) or "?"
                header = True
        elif sec2 in FILE_SECTIONS or sec1 == "OPTIONS":
            toks = engine_tokens(raw)
        out.append(EngineLine(n, raw, tuple(toks), sec2, sec1, header, header1))
    return out


def engine_options(text: str, lines: list[EngineLine] | None = None) -> dict[str, str]:
    """The ``[OPTIONS]`` the engine uses: keyword (its canonical name, :data:`OPTION_WORDS`) -> value token.

    As the engine reads them [2]_: in the first pass's ``[OPTIONS]`` (a quoted header does not end it), each line's
    first token matched by prefix, ASCII case ignored (``end_dateXYZ`` is ``END_DATE``), and the *last* line of a
    keyword wins. What capacitysim estimates or checks from a model's options must read them so.
    """
    out: dict[str, str] = {}
    for ln in lines if lines is not None else read_engine_lines(text):
        if ln.option and len(ln.tokens) >= 2:
            k = findmatch(ln.tokens[0], OPTION_WORDS)
            if k >= 0:
                out[OPTION_WORDS[k]] = ln.tokens[1]
    return out


@dataclass(frozen=True)
class FileRef:
    """A file the engine would open because of one line of a model.

    ``access`` is ``read``, ``read-write`` (a USE file the engine opens ``r+b``), ``write`` or ``folder``
    (TEMPDIR); ``relative_to`` is ``input`` (the engine prefixes the input file's folder to a relative name)
    or ``cwd`` (``[FILES] ... RDII`` and the ``[LID_USAGE]`` report file are opened as written).
    """

    line: int
    section: str
    what: str
    token: int
    name: str
    access: str
    relative_to: str

    def describe(self) -> str:
        return f"line {self.line}, [{self.section}] {self.what}"


def file_references(text: str, lines: list[EngineLine] | None = None) -> list[FileRef]:
    """Every file reference of a model, found with the engine's own rules (module docstring) [1]_ [2]_."""
    refs: list[FileRef] = []
    for ln in lines if lines is not None else read_engine_lines(text):
        t = ln.tokens
        if ln.option and len(t) >= 2 and findmatch(t[0], OPTION_WORDS) == _TEMPDIR:  # read by the first pass
            refs.append(FileRef(ln.number, "OPTIONS", "TEMPDIR", 1, t[1], "folder", "cwd"))
        if ln.header or not t:
            continue
        sec = ln.section
        if sec == "FILES":
            if len(t) < 3:
                continue
            mode, kind = findmatch(t[0], FILE_MODE_WORDS), findmatch(t[1], FILE_TYPE_WORDS)
            if mode < 0 or kind < 0:
                continue  # the engine refuses the line (ERROR 205)
            m, k = FILE_MODE_WORDS[mode], FILE_TYPE_WORDS[kind]
            if m == "SAVE":
                access = "write"
            elif m == "USE":
                access = "read-write" if k in USE_READ_WRITE else "read"
            else:  # NO, SCRATCH: the name is kept but a scratch file is used; treat it as a write all the same
                access = "write"
            refs.append(FileRef(ln.number, sec, f"{m} {k}", 2, t[2], access, "cwd" if k == "RDII" else "input"))
        elif sec == "RAINGAGES":
            if len(t) >= 8 and findmatch(t[4], GAGE_DATA_WORDS) == 1:
                refs.append(FileRef(ln.number, sec, "FILE", 5, t[5], "read", "input"))
        elif sec == "TIMESERIES":
            if len(t) >= 3 and engine_upper(t[1]) == "FILE":
                refs.append(FileRef(ln.number, sec, "FILE", 2, t[2], "read", "input"))
        elif sec == "TEMPERATURE":
            if len(t) >= 2 and findmatch(t[0], TEMP_KEY_WORDS) == 1:
                refs.append(FileRef(ln.number, sec, "FILE", 1, t[1], "read", "input"))
        elif sec == "LID_USAGE":
            if len(t) >= 9 and t[8] != "*":
                refs.append(FileRef(ln.number, sec, "report file", 8, t[8], "write", "cwd"))
    return refs


def quote_token(tok: str) -> str:
    """A token written so that ``getTokens`` reads it back unchanged (``""`` for an empty one)."""
    if tok == "" or any(c in tok for c in _SEPARATORS) or tok.startswith('"'):
        return f'"{tok}"'
    return tok


def safe_file_name(name: str, default: str = "file") -> str:
    """A bare file name (no folder, no character SWMM or a shell reads specially) from any name in a model."""
    base = name.replace("\\", "/").rstrip("/").rsplit("/", 1)[-1]
    base = re.sub(r"[^A-Za-z0-9._ -]+", "_", base).strip("._ ")[:100]
    return base or default


def check_engine_path(path: Path, what: str) -> str:
    """``path`` as a file name the engine reads back whole (no ``;``, ``"``, newline or NUL; at most MAXFNAME)."""
    s = str(path)
    if any(c in s for c in ';"\n\r\x00') or len(s) > ENGINE_MAXFNAME:
        raise InputError(f"{what}: the path {s!r} cannot be given to SWMM (it must have at most {ENGINE_MAXFNAME} "
                         "characters and no ; \" or line break); use a shorter folder")
    return s


def _whole_line(line: str, ref: FileRef) -> str:
    """A rewritten line, refused when the engine would not read it whole (``MAXLINE``): the rest of a longer line
    would be read as a line of its own, which no check has seen."""
    if len(line) >= ENGINE_MAXLINE - 1:
        raise InputError(f"{ref.describe()}: with its file name written out in full the line has {len(line):,} "
                         f"characters, more than the engine reads as one line ({ENGINE_MAXLINE - 2:,}); remove what "
                         "follows the file name on that line")
    return line


def _rewritten(lines: list[EngineLine], new_name) -> list[str]:
    """One output line per engine line: a line that names a file rebuilt from its tokens with each file token
    replaced by ``new_name(ref)`` (written as given; None keeps the token), and refused when the engine would not
    read it whole (:func:`_whole_line`); every other line byte for byte (its line end dropped)."""
    by_line: dict[int, list[FileRef]] = {}
    for ref in file_references("", lines):
        by_line.setdefault(ref.line, []).append(ref)
    out = []
    for ln in lines:
        refs = by_line.get(ln.number, ())
        toks = [quote_token(t) for t in ln.tokens]
        changed = False
        for ref in refs:
            new = new_name(ref)
            if new is not None:
                toks[ref.token] = new
                changed = True
        out.append(_whole_line(" ".join(toks), refs[0]) if changed else ln.raw.rstrip("\r\n"))
    return out


class ConfinedModelError(InputError):
    """A model names a file the service does not let it touch (HTTP 400 / exit 2)."""


def confine_model_text(text: str, allowed: set[str] | frozenset[str], *, field: str = "model") -> tuple[str, list[dict]]:
    """The text of a model that may read only the files uploaded with it, for the service.

    Every file the engine would read (:func:`file_references`) must be named by the bare name of one of
    ``allowed`` (the names of the files uploaded with the model); anything else, an absolute path, a folder,
    ``..``, is refused with one message that never depends on whether such a file exists on the server (the
    server is never asked). Files the engine would write (``[FILES] SAVE``, the ``[LID_USAGE]`` report file,
    ``TEMPDIR``) are renamed to bare, safe names: the run puts them in its own folder
    (:func:`prepare_inp_text`). Lines are rewritten as the engine reads them (:func:`engine_lines`).

    Returns
    -------
    (str, list of dict)
        The text, and one record per reference: ``line``, ``section``, ``what``, ``name`` (as written), ``as``
        (the name the run uses).

    Raises
    ------
    ConfinedModelError
        Naming the line, the section and the name as written.
    """
    record = []

    def bare(ref: FileRef) -> str:
        if ref.access in ("read", "read-write"):
            if ref.name not in allowed:
                shown = ref.name if len(ref.name) <= 80 else ref.name[:77] + "..."
                names = ", ".join(sorted(allowed)) or "none were uploaded"
                raise ConfinedModelError(
                    f"{field}: {ref.describe()} names the file {shown!r}: a model run by the service reads only "
                    f"the files uploaded with it, named by their bare file name (uploaded with this model: {names})")
            new = ref.name
        else:
            new = safe_file_name(ref.name, "tempdir" if ref.access == "folder" else "saved")
        record.append({"line": ref.line, "section": ref.section, "what": ref.what, "name": ref.name, "as": new})
        return quote_token(new)

    return "\n".join(_rewritten(read_engine_lines(text), bare)) + "\n", record


def prepare_inp_text(text: str, source_dir: Path, run_dir: Path | None = None, copies: list | None = None) -> str:
    """The text of a copy of a model that runs from another folder with one engine thread.

    * the text as the engine reads it: a line longer than the engine's buffer becomes the lines the engine
      would read (:func:`engine_lines`), so every later reader agrees with the engine line by line;
    * ``THREADS 1`` in ``[OPTIONS]`` (added when absent);
    * every file the engine reads (:func:`file_references`) made absolute with respect to the input's folder
      (``source_dir``): quoted names with spaces and Windows separators are understood;
    * every file the engine would write (``[FILES] SAVE``, the ``[LID_USAGE]`` report file, ``TEMPDIR``)
      redirected into ``run_dir`` under a safe base name, so a model can never make a run write outside its own
      folder. Without ``run_dir`` (a text that is run later from elsewhere) they are left as they are, and the
      run that finally reads the text redirects them.
    * with ``copies`` (a list) and ``run_dir``: every file the engine opens for reading *and* writing (a
      ``[FILES] USE`` RAINFALL, RUNOFF or HOTSTART file, opened ``r+b``) is pointed at a copy in ``run_dir``, and
      ``(source, copy)`` is appended to ``copies`` for the caller to make: the engine then writes nothing but
      its own folder, even where it opens an input for writing.

    Lines not edited are kept byte for byte (the text is latin-1 decoded bytes; line ends become LF).
    """
    lines = read_engine_lines(text)
    resolved: set[str] = set()

    def absolute(ref: FileRef) -> str | None:
        if ref.access in ("write", "folder"):
            if run_dir is None:
                return None
            target = Path(run_dir) / safe_file_name(ref.name, "tempdir" if ref.access == "folder" else "saved")
        else:
            target = resolve_model_path(ref.name, source_dir)
            resolved.add(str(target))
            if ref.access == "read-write" and copies is not None and run_dir is not None:
                copy = Path(run_dir) / f"use-{ref.line}-{safe_file_name(ref.name)}"
                copies.append((target, copy))
                target = copy
        return f'"{check_engine_path(target, ref.describe())}"'

    out: list[str] = []
    threads_seen = in_options = False
    for ln, line in zip(lines, _rewritten(lines, absolute)):
        if ln.header1 and in_options and not threads_seen:
            _insert_before_blank_tail(out, "THREADS              1")
            threads_seen = True
        in_options = ln.options_section == "OPTIONS"
        if ln.option and ln.tokens and findmatch(ln.tokens[0], OPTION_WORDS) == _THREADS:
            line, threads_seen = "THREADS              1", True
        out.append(line)
    if in_options and not threads_seen:
        out.append("THREADS              1")
    text_out = "\n".join(out) + "\n"
    if run_dir is not None:
        _check_run_copy(text_out, Path(run_dir), resolved | {str(c) for _, c in (copies or [])})
    return text_out


def _check_run_copy(text: str, run_dir: Path, resolved: set[str]) -> None:
    """The run's copy, read again as the engine reads it, names no file but those this module wrote into it: every
    write in ``run_dir``, every read one it resolved. A divergence is the tool's own failure, never run."""
    for ref in file_references(text):
        # a read is a name this module wrote (absolute, or a Windows name not found here, which the engine then
        # reports missing); a write is in the run folder
        ok = Path(ref.name).parent == run_dir if ref.access in ("write", "folder") else ref.name in resolved
        if not ok:
            raise InputError(f"{ref.describe()}: the run's copy of the model would make the engine open {ref.name!r}, "
                             "which capacitysim did not put there; the model is refused (report this model as a "
                             "capacitysim defect)")


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


def section_lines(text: str):
    """(section, line) for every engine line of a model's text that is not a header, the section named as the
    engine reads it (canonical upper-case name, ``[FILE]`` -> ``FILES``; ``"?"`` after an unknown header)."""
    for ln in read_engine_lines(text):
        if ln.header:
            continue
        yield (ln.section or ""), ln.raw.rstrip("\r\n")


def external_files(text: str, source_dir: Path) -> list[dict]:
    """Every external file a model names: section, verb (READ/USE/SAVE/WRITE/FOLDER), path as written and resolved."""
    found = []
    for ref in file_references(text):
        if ref.section == "FILES":
            verb, kind = ref.what.split(" ", 1)
        else:
            verb = {"read": "READ", "write": "WRITE", "folder": "FOLDER"}.get(ref.access, "READ")
            kind = ref.section
        found.append({"section": ref.section, "verb": verb, "kind": kind, "name": ref.name, "access": ref.access,
                      "path": str(resolve_model_path(ref.name, source_dir))})
    return found
