"""Helpers shared by the CLI commands: JSON output, tables, unit options."""

from __future__ import annotations

import click

from capacitysim.io.files import dumps_json

json_option = click.option("--json", "as_json", is_flag=True, help="Print a JSON document instead of a table.")


def emit_json(obj) -> None:
    click.echo(dumps_json(obj))


def emit_table(rows: list[tuple[str, object]], title: str | None = None) -> None:
    """Print label/value rows aligned, with an optional title line."""
    if title:
        click.echo(title)
        click.echo("-" * len(title))
    width = max((len(label) for label, _ in rows), default=0)
    for label, value in rows:
        click.echo(f"{label:<{width}}  {value}")


def fmt(value: float, digits: int = 3) -> str:
    """A number for a table: fixed digits, thousands separators for large values."""
    if abs(value) >= 1000:
        return f"{value:,.{max(digits - 3, 0)}f}"
    return f"{value:.{digits}f}"


def check_output(path, inputs=(), *, option: str = "--report"):
    """Refuse an output path that would destroy an input: exit 2 through :class:`InputError`.

    Refused: the output is one of ``inputs`` (after resolving symlinks and ``..``), lies inside
    an input that is a folder (a Zarr store), is itself a symlink (never follow one out), or is a
    folder. Returns the path as given.
    """
    import os
    from pathlib import Path

    from capacitysim.errors import InputError

    if path is None:
        return None
    p = Path(path)
    if p.is_symlink():
        raise InputError(f"{option} {p}: is a symbolic link; give a plain file path (outputs never follow links)")
    if p.is_dir():
        raise InputError(f"{option} {p}: is a folder; give a file path")
    target = Path(os.path.realpath(p))
    for inp in inputs:
        if inp is None:
            continue
        src = Path(os.path.realpath(inp))
        if target == src:
            raise InputError(f"{option} {p}: is an input of this command ({inp}); it would be overwritten")
        if src.is_dir() and src in target.parents:
            raise InputError(f"{option} {p}: lies inside the input {inp}; write it elsewhere")
    return path


#: ``--export DIR``: the option of every command whose results can be exported (capacitysim.io.export).
class ProgressBar:
    """A tqdm bar on stderr, created at a workflow's first progress call (when the total is known).

    ``update(done, total, **postfix)`` moves it to ``done`` of ``total`` and shows ``postfix``
    (``runs=``, ``failed=``); used as a context manager, it closes the bar however the run ends.
    """

    def __init__(self, unit: str, desc: str):
        self.unit, self.desc, self.bar = unit, desc, None

    def update(self, done: int, total: int, **postfix) -> None:
        if self.bar is None:
            from tqdm import tqdm

            self.bar = tqdm(total=total, unit=self.unit, desc=self.desc, file=click.get_text_stream("stderr"),
                            dynamic_ncols=True, smoothing=0.1)
        self.bar.set_postfix(**postfix, refresh=False)
        self.bar.update(done - self.bar.n)

    def stage(self, name: str, message: str = "") -> None:
        """A process's stage (:class:`capacitysim.processes.base.Process`): the bar shows steps only."""

    def step(self, done: int, total: int, message: str = "", **counts) -> None:
        """A process's step: the bar moves to ``done`` of ``total``, ``counts`` shown beside it."""
        self.update(done, total, **counts)

    def __enter__(self) -> ProgressBar:
        return self

    def __exit__(self, *exc) -> None:
        if self.bar is not None:
            self.bar.close()


export_option = click.option(
    "--export", "export_dir", type=click.Path(file_okay=False), default=None,
    help="Write the results into this folder: CSV tables with units in the headers, GeoJSON of the network "
         "(when the model has coordinates), results.nc (NetCDF, CF units) and manifest.json (files and SHA-256).")


def check_export_dir(path, inputs=(), *, option: str = "--export"):
    """Refuse an export folder that is a file, a symbolic link, an input or lies inside an input (exit 2).

    The folder may exist (files of the same names are replaced, each atomically) or not (it is created).
    Returns the path as given (None when not given).
    """
    from capacitysim.files import check_output_folder

    if path is None:
        return None
    check_output_folder(path, inputs, option=option, purpose="the export")
    return path


#: The submittal options every workflow command takes (capacitysim.io.submittal.SUBMITTAL_FIELDS).
_SUBMITTAL_OPTIONS = (
    ("--submittal", "submittal_file", "TOML file with a [submittal] table (project number, applicant, engineer...)."),
    ("--project-number", "project_number", "Project or application number (shown on the report and in the JSON)."),
    ("--applicant", "applicant", "Applicant (owner or developer)."),
    ("--engineer", "engineer", "Engineer of record (name)."),
    ("--engineer-license", "engineer_license", "Engineer of record's licence number."),
    ("--site-address", "site_address", "Site address."),
    ("--bbl", "bbl", "NYC borough-block-lot of the site (1-00012-0045)."),
    ("--plant-name", "plant", "Treatment plant name."),
    ("--spdes-permit", "spdes_permit", "SPDES permit number of the plant (NY0024414)."),
)


#: Prefix of the submittal options' parameter names (a command's own --plant is another thing).
_SUB = "submittal__"


def submittal_options(f):
    """Add the submittal identification options to a command (they arrive as keyword arguments
    named ``submittal__<field>``; :func:`submittal_values` takes them out)."""
    for opt, dest, help_ in reversed(_SUBMITTAL_OPTIONS):
        f = click.option(opt, _SUB + dest, default=None, help=help_)(f)
    return f


def submittal_values(kwargs: dict) -> dict:
    """Remove the submittal options from a command's keyword arguments: the fields given (``--submittal FILE``'s,
    overridden by the single options), the value of a process's ``submittal`` input."""
    from capacitysim.io.submittal import load_submittal

    values = {dest: kwargs.pop(_SUB + dest, None) for _, dest, _ in _SUBMITTAL_OPTIONS}
    path = values.pop("submittal_file")
    given = {} if path is None else {k: v for k, v in load_submittal(path).to_dict().items() if v is not None}
    return given | {k: v for k, v in values.items() if v is not None}


def run_process(process_id: str, values: dict, *, progress=None, work_dir=None, before=None):
    """Validate the command's values with the process's one validator (``source="cli"``: options named as given)
    and run it; ``before(inputs)`` runs between the two (the command's checks of its output paths)."""
    from capacitysim.processes import get

    proc = get(process_id)
    inputs = proc.validate(values, source="cli")
    if before is not None:
        before(inputs)
    return proc, inputs, proc.run(inputs, progress=progress, work_dir=work_dir)
