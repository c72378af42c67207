"""A demonstration data folder for ``make serve``: users of every role, a seeded bank, a recent flow record.

``python -m capacitysim.service.demo DIR`` creates (or reuses) ``DIR`` with:

* four users, one per role, and prints their bearer tokens (``DIR/tokens.json``, mode 0600: a demo only); the
  engineer and the municipal user bound in the bank to the municipal user they act for;
* the flow credit bank with the municipal user *Village of Johnson City*, the basin *Johnson City CSO 4* (the basin of the bundled project files), a certified
  project and 20,000 gpd of credits signed off by the administrator;
* the basin's model of record (issue 24, the capacity register): the bundled ``synthetic-50`` copied into
  ``DIR/models/<sha256>/`` (where ``POST /bank/models`` keeps the models it registers) and registered with its
  outlet :data:`OUTLET` and the bundled ``sample-wwtp`` plant, so a capacity demonstration on ``synthetic-50``
  and a SPDES check of ``sample-wwtp`` include the bank's commitments by themselves, and the register page
  (``/ui/bank/register``) shows them;
* an upload of the bundled plant's made-up daily flow record shifted to end yesterday
  (:func:`recent_flow_record`), so a SPDES check as of today, citable by a withdrawal, can be run
  (the bundled record ends in 2024; the bank accepts SPDES evidence at most 90 days old): one record of it
  for each demo user (uploads belong to their uploader), all named by the one ``upload:<sha256>``.

The store, the bank and ``tokens.json`` are mode 0600.
"""

from __future__ import annotations

import datetime as _dt
import hashlib
import json
import os
import sys
from pathlib import Path

from capacitysim.files import atomic_write_text

DEMO_USERS = {"administrator": "Ada Lee", "engineer": "Eli Engineer", "municipal": "Mia Municipal",
              "reviewer": "Rae Reviewer"}
MUNICIPAL = "Village of Johnson City"
BASIN = "Johnson City CSO 4"
PROJECT = "JC-2024-07"
DEPOSIT_GPD = 20000
#: The bundled project file of :data:`PROJECT` (its quantification is the deposit's evidence).
PROJECT_FILE = "oak-street-sump-and-manholes.toml"
#: The bundled model registered as the basin's model of record, and the basin's outlet in it (the CSO1 regulator's
#: manhole: MH0010 and MH0011 drain to it; MH0003, which drains straight to the plant, does not: credit bank section A).
MODEL = "synthetic-50"
OUTLET = "MH0004"
#: The bundled plant the basin drains to (registered by its name: it has no SPDES permit number).
PLANT = "sample-wwtp"


def recent_flow_record(end: _dt.date | None = None) -> str:
    """The bundled sample plant's made-up record (``date,flow_mgd``) over the three years ending ``end``
    (default yesterday): :func:`capacitysim.workflows.spdes.synthetic_plant_flows`, no outage."""
    from capacitysim.workflows.spdes import synthetic_plant_flows

    end = end or (_dt.date.today() - _dt.timedelta(days=1))
    start = end.replace(year=end.year - 3) + _dt.timedelta(days=1)
    df = synthetic_plant_flows(start=start.isoformat(), end=end.isoformat(), outage=None)
    lines = ["date,flow_mgd"] + [f"{d},{'' if f != f else format(f, '.4f')}" for d, f in
                                 zip(df["date"].astype(str), df["flow_mgd"])]
    return "\n".join(lines) + "\n"


def add_upload(store, data_dir: Path, name: str, text: str, user) -> str:
    """Store ``text`` as ``user``'s upload (as ``POST /uploads`` does); returns ``upload:<sha256>``."""
    data = text.encode()
    sha = hashlib.sha256(data).hexdigest()
    path = data_dir / "uploads" / sha / name
    if store.upload(sha, user["id"]) is None:
        if not path.is_file():
            atomic_write_text(path, text)
        store.add_upload(sha, name, len(data), str(path), user)
    return f"upload:{sha}"


def model_of_record(data: Path) -> Path:
    """The bundled :data:`MODEL` copied where the service keeps registered models (``DIR/models/<sha256>/``)."""
    import shutil

    from capacitysim.io.bundled import model_path
    from capacitysim.service.register_api import MODELS_DIR

    src = Path(model_path(MODEL))
    sha = hashlib.sha256(src.read_bytes()).hexdigest()
    dest = data / MODELS_DIR / sha / src.name
    if not dest.is_file():
        dest.parent.mkdir(parents=True, exist_ok=True)
        shutil.copyfile(src, dest)
    return dest


def plant_name() -> str:
    """The name of the bundled :data:`PLANT` (the key a SPDES check of it is found by in the bank)."""
    from capacitysim.io.plant_flows import read_plant_file
    from capacitysim.workflows.spdes import resolve_plant_path

    return read_plant_file(resolve_plant_path(PLANT)).name


def seed(data_dir, *, register_model: bool = True) -> dict:
    """Create the demo folder's users, bank and flow record (once: a folder seeded already answers its tokens).

    With ``register_model`` (the demo), the basin's model of record is registered (:func:`model_of_record`); the
    tests' shared server passes False, so that its jobs on ``synthetic-50`` run without commitments (their
    documents equal to the CLI's without ``--committed``).

    Returns
    -------
    dict
        ``{"tokens": {role: token}, "names": {role: name}, "flows": "upload:<sha256>"}`` (new dicts: the caller may
        change them).
    """
    from capacitysim.service.store import Store

    data = Path(data_dir).resolve()
    data.mkdir(parents=True, exist_ok=True)
    tokens_file = data / "tokens.json"
    if tokens_file.is_file():
        return json.loads(tokens_file.read_text())
    store = Store(data / "service.sqlite")
    try:
        return _seed(store, data, tokens_file, register_model)
    finally:
        store.close()


def quantification_of_record(data: Path) -> Path:
    """The PE's quantification the demo deposit cites: the bundled project file of :data:`PROJECT`
    quantified (``capacitysim credits quantify --json``), written once into the demo's data folder."""
    from capacitysim.io.files import bundled_dir
    from capacitysim.io.project_files import read_project
    from capacitysim.rules import ii_offset

    out = data / f"{PROJECT}-quantification.json"
    if not out.is_file():
        proj = read_project(bundled_dir("models") / "projects" / PROJECT_FILE)
        atomic_write_text(out, json.dumps(ii_offset.quantify_project(proj["project"], proj["items"]), indent=2))
    return out


def _seed(store, data: Path, tokens_file: Path, register_model: bool = True) -> dict:
    from capacitysim.bank import Ledger
    from capacitysim.service.auth import new_token
    from capacitysim.service.db import private_file

    names = dict(DEMO_USERS)  # the caller's copy (a test adding users to it leaves the demo's own alone)
    admin = names["administrator"]
    bank = data / "bank.sqlite"
    if not bank.is_file():
        Ledger(bank, create=True, actor=admin, administrator=admin).close()
        on = (_dt.date.today() - _dt.timedelta(days=30)).isoformat()
        with Ledger(bank, actor=admin) as lg:
            lg.add_entity(MUNICIPAL, municipal=True, reason="demo")
            if register_model:
                lg.add_basin(BASIN, OUTLET, model=model_of_record(data), plant=plant_name(),
                             reason=f"demo: the bundled {MODEL} as the basin's model of record")
            else:
                lg.add_basin(BASIN, reason="demo")
        # recorded by the municipal user, signed off by the administrator (the recorder never signs off)
        with Ledger(bank, actor=DEMO_USERS["municipal"]) as lg:
            txn = lg.deposit(BASIN, MUNICIPAL, DEPOSIT_GPD, PROJECT, quantification=str(quantification_of_record(data)),
                             certified_on=on)["txn"]
        with Ledger(bank, actor=admin) as lg:
            lg.sign_off(txn)  # signed off today: a row is dated on its day (program policy no_backdating)
            # the demo's engineer and municipal user act for the municipal user (program policy service_user_binding)
            for role in ("engineer", "municipal"):
                if not lg.acts_for(names[role], MUNICIPAL):
                    lg.bind_user(names[role], MUNICIPAL, role=role, reason="demo")
    private_file(bank)
    tokens = {}
    users = {}
    for role, name in names.items():
        token, key_id, digest = new_token()
        users[role] = store.add_user(name, role, key_id, digest)
        tokens[role] = token
    record = recent_flow_record()
    flows = ""
    for user in users.values():
        flows = add_upload(store, data, "recent-wwtp.csv", record, user)
    out = {"tokens": tokens, "names": names, "flows": flows}
    atomic_write_text(tokens_file, json.dumps(out, indent=2))
    os.chmod(tokens_file, 0o600)
    return out


def main(argv=None) -> None:
    argv = sys.argv[1:] if argv is None else argv
    if len(argv) != 1:
        print("usage: python -m capacitysim.service.demo DATA_DIR", file=sys.stderr)
        sys.exit(2)
    out = seed(argv[0])
    for role, token in out["tokens"].items():
        print(f"{role:<14} {out['names'][role]:<14} {token}")
    print(f"recent flow record for spdes-check: \"flows\": \"{out['flows']}\"")
    print(f"the basin {BASIN!r} has the model of record {MODEL} (outlet {OUTLET}, plant {PLANT}): see /ui/bank/register")


if __name__ == "__main__":
    main()
