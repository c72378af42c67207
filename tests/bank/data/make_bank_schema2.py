"""How ``bank-schema2.sqlite`` was made: a schema-2 credit bank written by the capacitysim code of commit
7277bcb (before issue 14: no administrators, no sign-off, no lots), used by ``tests/bank/test_migration.py``.

It cannot run against the current package (it uses the schema-2 ledger). To rebuild the file:
copy ``src/capacitysim/bank/{ledger,schema,refs}.py`` of commit 7277bcb (``git show 7277bcb:PATH``) into
a package ``capacitysim_bank_v2`` on ``sys.path`` (imports of ``capacitysim.bank`` renamed to it), then
``python make_bank_schema2.py tests/bank/data/bank-schema2.sqlite``.

Its history (clock set per operation; the 2019 rows are purged, leaving carry-forward rows):

* 2019-03-01 Johnson City deposits project JC-2019-1, 10,000 gpd; 2019-06-01 it grants 1,000 gpd to Other LLC;
* 2024-02-01 Binghamton deposits BG-2024-1, 8,000 gpd; 2024-02-10 Johnson City deposits JC-2024-2, 6,000 gpd;
* 2024-03-01 Binghamton sells 5,000 gpd to Dev LLC; 2024-03-05 Johnson City sells 2,000 gpd to Dev LLC;
* 2024-04-01 Dev LLC withdraws 3,000 gpd for A-2024-1 (approved on run ids, as schema 2 allowed);
* 2024-04-02 Johnson City withdraws 2,600 gpd for A-2024-2 (pending); 2024-04-03 A-2024-3, 2,700 gpd, returned;
* 2024-05-01 Johnson City condemns 500 gpd of Dev LLC's credits citing its own project JC-2024-2;
* 2025-06-01 purge of the rows before 2020-01-01.
"""
import datetime as dt
import sys
from pathlib import Path
sys.path.insert(0, "/tmp/v2code/gen")
from capacitysim_bank_v2.ledger import Ledger

out = Path(sys.argv[1])
for side in ("", "-wal", "-shm"):
    Path(str(out) + side).unlink(missing_ok=True)
clock = {"now": dt.datetime(2019, 1, 10, 12, tzinfo=dt.timezone.utc)}
def at(y, m, d):
    clock["now"] = dt.datetime(y, m, d, 12, tzinfo=dt.timezone.utc)
B = "Susquehanna North"
JC, BG, DEV, OTH = "Village of Johnson City", "City of Binghamton", "Dev LLC", "Other LLC"
led = Ledger(out, create=True, actor="jclerk", clock=lambda: clock["now"])
led.add_entity(JC, municipal=True); led.add_entity(BG, municipal=True); led.add_entity(DEV); led.add_entity(OTH)
led.add_basin(B, outlet="CSO-N")
at(2019, 3, 1); led.deposit(B, JC, 10000, "JC-2019-1", certified_on="2019-03-01", certificate="JC cert 2019-1")
at(2019, 6, 1); led.transfer(B, JC, OTH, 1000, document="memorandum of grant 2019-4")
at(2024, 2, 1); led.deposit(B, BG, 8000, "BG-2024-1", certified_on="2024-02-01", certificate="BG cert 2024-1")
at(2024, 2, 10); led.deposit(B, JC, 6000, "JC-2024-2", certified_on="2024-02-05")
at(2024, 3, 1); led.transfer(B, BG, DEV, 5000, document="bill of sale BG-DEV 2024-3 (notarized)")
at(2024, 3, 5); led.transfer(B, JC, DEV, 2000, document="bill of sale JC-DEV 2024-7 (notarized)")
at(2024, 4, 1); led.withdraw(B, DEV, 3000, "A-2024-1", principal=JC, capacity_ref="cap-run-17", spdes_ref="spdes-3", on="2024-04-01", node="MH-12")
at(2024, 4, 2); led.withdraw(B, JC, 2600, "A-2024-2", node="MH-40")
at(2024, 4, 3); led.withdraw(B, JC, 2700, "A-2024-3"); led.return_credits("A-2024-3", reason="application withdrawn")
at(2024, 5, 1); led.condemn(B, DEV, JC, 500, project="JC-2024-2", document="Village resolution 2024-33")
clock["now"] = dt.datetime(2025, 6, 1, 12, tzinfo=dt.timezone.utc)
led.purge("2020-01-01", reason="retention: records older than three years")
v = led.verify(check_files=False)
assert v["ok"], v
print(led.balances())
print(led.head())
led.close()
