"""Helpers of the capacity register tests of tests/service (issue 24): a basin of its own in the session server's
bank, with credits and a model of record registered through ``POST /bank/models``.

The session server's demo basin has no model of record (``support.seeded``), so that the other tests' jobs on the
bundled ``synthetic-50`` run without commitments. A register test therefore registers a basin of its own, whose
model is ``synthetic-50`` with one comment line of its own appended: the engine runs the same network, but the
file's SHA-256 is the test's alone, so only the test's jobs include the basin's commitments.
"""

from __future__ import annotations

import hashlib
import uuid
from dataclasses import dataclass

from capacitysim.io.bundled import model_path
from capacitysim.service.demo import DEMO_USERS, MUNICIPAL
from capacitysim.workflows.spdes import resolve_plant_path
from tests.bank_support import quantification

#: The basin's outlet in synthetic-50: the CSO1 regulator's manhole (MH0010 and MH0011 drain to it, MH0003 does not).
OUTLET = "MH0004"
#: Credits deposited in the basin [gpd].
CREDITS_GPD = 100_000


@dataclass
class Registered:
    tag: str
    basin: str
    plant: str
    model_name: str
    model_bytes: bytes
    plant_name: str
    plant_bytes: bytes
    sha256: str
    answer: dict

    def upload(self, client, what: str = "model") -> str:
        """Upload the basin's model (or plant file) as ``client``'s own; returns ``upload:<sha256>``."""
        name, data = (self.model_name, self.model_bytes) if what == "model" else (self.plant_name, self.plant_bytes)
        r = client.post("/uploads", params={"filename": name}, content=data)
        assert r.status_code == 201, r.text
        return r.json()["id"]


def registered_basin(server, prefix: str = "Register") -> Registered:
    """A new basin (with :data:`CREDITS_GPD` of the demo municipal user's credits, signed off) whose model of record the
    demo administrator registers through ``POST /bank/models`` from an upload (outlet :data:`OUTLET`, a plant of its
    own: the bundled sample-wwtp under a name of its own)."""
    from capacitysim.bank import Ledger

    tag = uuid.uuid4().hex[:8]
    basin, plant = f"{prefix} basin {tag}", f"{prefix} WWTP {tag}"
    model = model_path("synthetic-50").read_bytes() + f";; capacity register test {tag}\n".encode()
    plant_text = resolve_plant_path("sample-wwtp").read_text(encoding="utf-8")
    plant_text = "\n".join(f'name = "{plant}"' if line.startswith("name = ") else line for line in plant_text.splitlines())
    bank = server.data / "bank.sqlite"
    admin = DEMO_USERS["administrator"]
    with Ledger(bank, actor=admin) as lg:
        lg.add_basin(basin, reason="test: a basin of the capacity register tests")
    with Ledger(bank, actor=DEMO_USERS["municipal"]) as lg:  # recorded by one, signed off by another
        q = quantification(server.data / "quantifications", f"P-{tag}", CREDITS_GPD, owner=MUNICIPAL, basin=basin)
        txn = lg.deposit(basin, MUNICIPAL, CREDITS_GPD, f"P-{tag}", quantification=q)["txn"]
    with Ledger(bank, actor=admin) as lg:
        lg.sign_off(txn)
    reg = Registered(tag, basin, plant, f"system-{tag}.inp", model, f"plant-{tag}.toml", (plant_text + "\n").encode(),
                     hashlib.sha256(model).hexdigest(), {})
    with server.client("administrator") as adm:
        r = adm.post("/bank/models", json={"basin": basin, "model": reg.upload(adm), "outlet": OUTLET, "plant": plant,
                                           "reason": "test: the basin's model of record"})
        assert r.status_code == 201, r.text
        reg.answer = r.json()
    return reg
