"""``--export DIR``: CSV rows are the model's elements, GeoJSON geometries and attributes, NetCDF with CF units.

One real capacity demonstration (SWMM, before and after) of a copy of the bundled synthetic-50 model to
which a [MAP] UNITS line, a CRS comment and [VERTICES] of one link were added; the exports are read
back and cross-checked against the result document (--json) and the model's own text.
"""

from __future__ import annotations

import csv
import hashlib
import json
import math
from pathlib import Path

import numpy as np
import pytest
import xarray as xr
from click.testing import CliRunner

from capacitysim.cli import cli
from capacitysim.errors import InputError
from capacitysim.io.bundled import model_path
from capacitysim.io.export import (
    export_demonstration,
    export_network,
    model_geometry,
)
from capacitysim.io.export.geometry import ModelGeometry, check_crs
from capacitysim.network.model import parse_inp

VERTICES = [(300.0, 40.0), (350.0, 30.0)]  # two interior points of P0002 (MH0002 -> MH0001)


def _model_with_map(tmp: Path, crs_line: str | None = ";;CRS: EPSG:2263", units: str = "Feet") -> Path:
    text = model_path("synthetic-50").read_text(encoding="latin-1")
    extra = "\n[MAP]\nDIMENSIONS 0 0 3000 1000\nUNITS " + units + "\n"
    if crs_line:
        extra += crs_line + "\n"
    extra += "\n[VERTICES]\n;;Link X Y\n" + "".join(f"P0002 {x} {y}\n" for x, y in VERTICES)
    p = tmp / "net.inp"
    p.write_text(text + extra, encoding="latin-1")
    return p


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    tmp = tmp_path_factory.mktemp("export")
    inp = _model_with_map(tmp)
    out = tmp / "exported"
    r = CliRunner().invoke(cli, ["capacity", "--model", str(inp), "--storm", "binghamton-1yr-24h", "--connect", "MH0017=60000",
                                 "--export", str(out), "--report", str(tmp / "report.html"), "--json"], catch_exceptions=False)
    assert r.exit_code in (0, 1), r.output
    return {"inp": inp, "out": out, "doc": json.loads(r.stdout), "model": parse_inp(inp), "tmp": tmp}


def _csv(path: Path) -> list[dict]:
    with open(path, newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


@pytest.mark.swmm
def test_csv_has_one_row_per_element_with_units_in_headers(run):
    m, out, doc = run["model"], run["out"], run["doc"]
    nodes, links = _csv(out / "nodes.csv"), _csv(out / "links.csv")
    assert [r["id"] for r in nodes] == [n["id"] for n in doc["nodes"]]
    assert sorted(r["id"] for r in nodes) == sorted(m.node_ids())
    assert sorted(r["id"] for r in links) == sorted(l[0] for l in m.links())
    for col in ("max_hgl_before [ft]", "max_hgl_after [ft]", "max_hgl_change [ft]", "flooding_volume_after [ft3]",
                "surcharge_time_after [h]", "x", "y", "failed", "failed_criteria"):
        assert col in nodes[0], col
    for col in ("peak_flow_before [cfs]", "peak_flow_after [cfs]", "max_q_over_qfull_after [-]", "full_flow [cfs]"):
        assert col in links[0], col
    assert not any(k.endswith(("_ft", "_cfs", "_cf")) for k in nodes[0]), "raw unit suffixes in a header"
    # the same numbers as the result document, element by element
    by_id = {r["id"]: r for r in doc["nodes"]}
    for r in nodes:
        assert float(r["max_hgl_before [ft]"]) == pytest.approx(by_id[r["id"]]["max_hgl_ft_before"], rel=1e-12)
        assert float(r["max_hgl_change [ft]"]) == pytest.approx(float(r["max_hgl_after [ft]"]) - float(r["max_hgl_before [ft]"]), abs=1e-9)
    lb = {r["id"]: r for r in doc["links"]}
    for r in links:
        assert float(r["peak_flow_after [cfs]"]) == pytest.approx(lb[r["id"]]["peak_flow_cfs_after"], rel=1e-12)
    # the failed checks mark their elements, and only those
    failed = {c["element"] for c in doc["checks"] if c["passed"] is False and c["element"] in by_id}
    assert failed, "the 60,000 gpd connection fails at least one node check"
    assert {r["id"] for r in nodes if r["failed"] == "yes"} == failed
    assert all("True" not in v and "False" not in v for r in nodes for v in r.values())


@pytest.mark.swmm
def test_geojson_points_lines_vertices_and_crs(run):
    g = json.loads((run["out"] / "network.geojson").read_text(encoding="utf-8"))
    m = run["model"]
    coords = {r.tokens[0]: (float(r.tokens[1]), float(r.tokens[2])) for r in m.rows("COORDINATES")}
    assert g["type"] == "FeatureCollection"
    assert g["crs"] == {"type": "name", "properties": {"name": "urn:ogc:def:crs:EPSG::2263"}}
    assert g["map_units"] == "ft"
    points = [f for f in g["features"] if f["geometry"]["type"] == "Point"]
    lines = [f for f in g["features"] if f["geometry"]["type"] == "LineString"]
    assert len(points) == len(coords) == len(m.node_ids())
    assert len(lines) == len(m.links())
    for f in points:
        assert tuple(f["geometry"]["coordinates"]) == coords[f["properties"]["id"]]
    ends = {l[0]: (l[2], l[3]) for l in m.links()}
    for f in lines:
        a, b = ends[f["properties"]["id"]]
        line = [tuple(p) for p in f["geometry"]["coordinates"]]
        assert line[0] == coords[a] and line[-1] == coords[b]
        assert line[1:-1] == (VERTICES if f["properties"]["id"] == "P0002" else [])
    # the same attributes as the CSV, under the same names
    with open(run["out"] / "nodes.csv", encoding="utf-8") as fh:
        header = next(csv.reader(fh))
    assert set(header) <= set(points[0]["properties"])
    row = {r["id"]: r for r in _csv(run["out"] / "links.csv")}
    for f in lines:
        assert f["properties"]["peak_flow_after [cfs]"] == pytest.approx(float(row[f["properties"]["id"]]["peak_flow_after [cfs]"]))


@pytest.mark.swmm
def test_netcdf_opens_in_xarray_with_cf_units(run):
    ds = xr.open_dataset(run["out"] / "results.nc")
    try:
        assert ds.attrs["Conventions"] == "CF-1.8"
        assert list(ds.scenario.values) == ["before", "after"]
        assert ds.sizes["node"] == len(run["model"].node_ids())
        assert ds.max_hgl_ft.attrs["units"] == "ft" and ds.max_hgl_ft.attrs["long_name"]
        assert ds.peak_flow_cfs.attrs["units"] == "ft3 s-1"
        assert ds.flooding_volume_cf.attrs["units"] == "ft3"
        assert ds.max_q_over_qfull.attrs["units"] == "1"
        assert ds.surcharge_hr.attrs["units"] == "h"
        for name, var in ds.data_vars.items():
            assert "long_name" in var.attrs, name
            if var.dtype.kind == "f":
                assert "units" in var.attrs, name
        nodes = _csv(run["out"] / "nodes.csv")
        got = ds.max_hgl_ft.sel(scenario="after").values
        assert np.allclose(got, [float(r["max_hgl_after [ft]"]) for r in nodes], rtol=0, atol=0)
        assert ds.attrs["model_sha256"] == run["doc"]["model_sha256"]
    finally:
        ds.close()


@pytest.mark.swmm
def test_manifest_names_every_file_with_its_sha256(run):
    man = json.loads((run["out"] / "manifest.json").read_text(encoding="utf-8"))
    names = [f["name"] for f in man["files"]]
    assert names == ["nodes.csv", "links.csv", "network.geojson", "results.nc", "hydrographs.csv", "profile.csv", "network.gpkg"]
    for f in man["files"]:
        assert hashlib.sha256((run["out"] / f["name"]).read_bytes()).hexdigest() == f["sha256"]
    assert man["crs"] == "EPSG:2263" and "line" in man["crs_source"]
    assert sorted(p.name for p in run["out"].iterdir()) == sorted(names + ["manifest.json"]), "no temporary file left"


@pytest.mark.swmm
def test_stored_document_alone_exports_the_same_rows(run, tmp_path):
    """A stored result document (a service job's results) exports without the runs: same rows, same numbers."""
    doc = json.loads(json.dumps(run["doc"]))
    export_demonstration(tmp_path, doc)
    full = {r["id"]: r for r in _csv(run["out"] / "links.csv")}
    part = _csv(tmp_path / "links.csv")
    assert len(part) == len(full)
    for r in part:
        for col in ("peak_flow_before [cfs]", "max_d_over_d_after [-]"):
            a, b = r[col], full[r["id"]][col]
            assert (a == b == "") or float(a) == pytest.approx(float(b), rel=1e-12), (r["id"], col)
    g = json.loads((tmp_path / "network.geojson").read_text(encoding="utf-8"))
    assert g["crs"]["properties"]["name"].endswith("EPSG::2263")


@pytest.mark.swmm
def test_a_failed_export_writes_nothing_and_keeps_the_previous_one(run, tmp_path):
    """Every file is rendered before any is written: a dataset NetCDF cannot hold leaves the folder as it was."""
    import shutil

    dest = tmp_path / "exp"
    shutil.copytree(run["out"], dest)
    before = {p.name: p.read_bytes() for p in dest.iterdir()}
    ds = xr.Dataset({"peak_flow_cfs": ("link", np.array([1 + 2j]))}, coords={"link": np.array(["L1"], dtype=object)})
    with pytest.raises(ValueError):
        export_network(dest, ds, title="bad")
    assert {p.name: p.read_bytes() for p in dest.iterdir()} == before
    empty = tmp_path / "new"
    with pytest.raises(ValueError):
        export_network(empty, ds, title="bad")
    assert not empty.exists() or not any(empty.iterdir())


def test_crs_from_the_model_the_option_or_none(tmp_path):
    m = parse_inp(_model_with_map(tmp_path, crs_line=None))
    g = model_geometry(m)
    assert g.crs is None and g.map_units == "ft" and "no CRS" in g.crs_source
    assert model_geometry(m, "epsg:6539").crs == "EPSG:6539"
    deg = tmp_path / "deg"
    deg.mkdir()
    text = model_path("synthetic-50").read_text(encoding="latin-1")
    # degrees with coordinates beyond longitude/latitude: no CRS is claimed
    (deg / "a.inp").write_text(text + "\n[MAP]\nUNITS Degrees\n", encoding="latin-1")
    assert model_geometry(parse_inp(deg / "a.inp")).crs is None
    # the same network placed near Binghamton in longitude/latitude: WGS 84 (OGC:CRS84)
    lines, section = [], ""
    for line in text.splitlines():
        if line.startswith("["):
            section = line.strip()
        toks = line.split()
        if section == "[COORDINATES]" and len(toks) == 3 and not line.startswith(";"):
            line = f"{toks[0]} {-75.9 + float(toks[1]) / 1e5:.7f} {42.1 + float(toks[2]) / 1e5:.7f}"
        lines.append(line)
    (deg / "b.inp").write_text("\n".join(lines) + "\n[MAP]\nUNITS Degrees\n", encoding="latin-1")
    b = parse_inp(deg / "b.inp")
    assert model_geometry(b).crs == "OGC:CRS84"
    with pytest.raises(InputError, match="EPSG:2263"):
        check_crs("2263")


def test_no_coordinates_gives_no_features_and_says_so(tmp_path):
    text = model_path("synthetic-50").read_text(encoding="latin-1").split("[COORDINATES]")[0]
    p = tmp_path / "bare.inp"
    p.write_text(text, encoding="latin-1")
    g = model_geometry(parse_inp(p))
    assert g.nodes == {} and g.links == {} and g.crs is None and "no [COORDINATES]" in g.crs_source
    assert ModelGeometry.from_dict(g.to_dict()) == g


@pytest.mark.swmm
def test_export_into_a_file_or_an_input_is_refused(run, tmp_path):
    f = tmp_path / "a-file"
    f.write_text("x")
    for target in (f, run["inp"]):
        r = CliRunner().invoke(cli, ["capacity", "--model", str(run["inp"]), "--connect", "MH0017=1000", "--export", str(target)])
        assert r.exit_code == 2, r.output
        assert "--export" in r.output and "Traceback" not in r.output
    r = CliRunner().invoke(cli, ["capacity", "--model", str(run["inp"]), "--connect", "MH0017=1000", "--crs", "lambert"])
    assert r.exit_code == 2 and "--crs 'lambert'" in r.output


def test_node_table_export_rows_per_node_and_storm(tmp_path):
    """Per-node rows (a headroom document: one row per node and storm) -> CSV rows, Points, a node x storm Dataset."""
    from capacitysim.io.export import export_node_table

    rows = [{"node": "MH0003", "storm": "1yr", "max_connection_gpd": 12000.0, "bounded": False,
             "governing_check": {"criterion": "peak inflow at the plant within +1 %", "element": "PLANT"}, "runs": 5},
            {"node": "MH0003", "storm": "5yr", "max_connection_gpd": None, "bounded": False, "governing_check": None, "runs": 3},
            {"node": "MH0017", "storm": "1yr", "max_connection_gpd": 0.0, "bounded": True, "governing_check": None, "runs": 2}]
    geom = model_geometry(parse_inp(model_path("synthetic-50")))
    export_node_table(tmp_path, rows, id_key="node", index=("node", "storm"), geometry=geom, title="headroom")
    table = _csv(tmp_path / "nodes.csv")
    assert [(r["id"], r["storm"]) for r in table] == [(r["node"], r["storm"]) for r in rows]
    assert list(table[0]) == ["id", "storm", "max_connection [gpd]", "bounded", "governing_check_criterion",
                              "governing_check_element", "runs"]
    assert [r["bounded"] for r in table] == ["no", "no", "yes"] and table[1]["max_connection [gpd]"] == ""
    g = json.loads((tmp_path / "network.geojson").read_text(encoding="utf-8"))
    pts = [f for f in g["features"] if f["geometry"]["type"] == "Point"]
    assert [tuple(f["geometry"]["coordinates"]) for f in pts] == [geom.nodes[r["node"]] for r in rows]
    assert sum(f["geometry"]["type"] == "LineString" for f in g["features"]) == len(geom.links)
    ds = xr.open_dataset(tmp_path / "results.nc")
    try:
        assert dict(ds.sizes) == {"node": 2, "storm": 2}
        assert ds.max_connection_gpd.attrs["units"] == "gallon day-1"
        v = ds.max_connection_gpd
        assert float(v.sel(node="MH0003", storm="1yr")) == 12000.0 and float(v.sel(node="MH0017", storm="1yr")) == 0.0
        assert math.isnan(float(v.sel(node="MH0003", storm="5yr"))) and math.isnan(float(v.sel(node="MH0017", storm="5yr")))
    finally:
        ds.close()


def _decode(blob: bytes):
    """A GeoPackageBinary blob -> (srs_id, [(x, y), ...]) (OGC 12-128r18 section 2.1.3; WKB little endian)."""
    import struct

    assert blob[:2] == b"GP" and blob[2] == 0
    flags = blob[3]
    srs_id = struct.unpack_from("<i", blob, 4)[0]
    envelope = {0: 0, 1: 32, 2: 48, 3: 48, 4: 64}[(flags >> 1) & 0b111]
    wkb = blob[8 + envelope:]
    assert wkb[0] == 1
    kind = struct.unpack_from("<I", wkb, 1)[0]
    if kind == 1:
        return srs_id, [struct.unpack_from("<2d", wkb, 5)]
    n = struct.unpack_from("<I", wkb, 5)[0]
    return srs_id, [struct.unpack_from("<2d", wkb, 9 + 16 * i) for i in range(n)]


@pytest.mark.swmm
def test_geopackage_tables_srs_and_geometries(run):
    """network.gpkg: a GeoPackage by the standard's own tables, the stated CRS, the same points and lines."""
    import sqlite3

    m = run["model"]
    coords = {r.tokens[0]: (float(r.tokens[1]), float(r.tokens[2])) for r in m.rows("COORDINATES")}
    con = sqlite3.connect(run["out"] / "network.gpkg")
    try:
        assert con.execute("PRAGMA application_id").fetchone()[0] == 0x47504B47
        assert con.execute("PRAGMA integrity_check").fetchone()[0] == "ok"
        srs = {r[0]: r for r in con.execute("SELECT srs_id, organization, organization_coordsys_id, definition FROM gpkg_spatial_ref_sys")}
        assert {4326, -1, 0, 2263} <= set(srs) and srs[2263][1:3] == ("EPSG", 2263)
        assert "2263" in srs[2263][3] or srs[2263][3] == "undefined"
        assert dict(con.execute("SELECT table_name, geometry_type_name FROM gpkg_geometry_columns")) == {"nodes": "POINT", "links": "LINESTRING"}
        cols = [d[1] for d in con.execute('PRAGMA table_info("links")')]
        header = list(_csv(run["out"] / "links.csv")[0])
        assert cols == ["fid", "geom", *header]
        nodes = con.execute('SELECT id, geom, "max_hgl_after [ft]" FROM nodes').fetchall()
        assert len(nodes) == len(coords)
        by_id = {r["id"]: r for r in run["doc"]["nodes"]}
        for nid, blob, hgl in nodes:
            srs_id, pts = _decode(blob)
            assert srs_id == 2263 and pts == [coords[nid]]
            assert hgl == pytest.approx(by_id[nid]["max_hgl_ft_after"], rel=1e-12)
        lines = dict(con.execute("SELECT id, geom FROM links").fetchall())
        assert len(lines) == len(m.links())
        _, p2 = _decode(lines["P0002"])
        assert p2 == [coords["MH0002"], *VERTICES, coords["MH0001"]]
        ext = con.execute("SELECT min_x, min_y, max_x, max_y FROM gpkg_contents WHERE table_name = 'nodes'").fetchone()
        xs, ys = [c[0] for c in coords.values()], [c[1] for c in coords.values()]
        assert ext == (min(xs), min(ys), max(xs), max(ys))
    finally:
        con.close()


@pytest.mark.swmm
def test_hydrographs_and_profile_tables_are_the_documents(run):
    doc = run["doc"]
    hyd = _csv(run["out"] / "hydrographs.csv")
    assert list(hyd[0]) == ["node", "point", "run", "elapsed [h]", "total_inflow [cfs]"]
    assert len(hyd) == sum(len(h["elapsed_hr_before"]) + len(h["elapsed_hr_after"]) for h in doc["hydrographs"])
    for h in doc["hydrographs"]:
        after = [r for r in hyd if r["node"] == h["node"] and r["run"] == "after"]
        assert [float(r["total_inflow [cfs]"]) for r in after] == pytest.approx(h["total_inflow_cfs_after"], rel=1e-12)
    prof = _csv(run["out"] / "profile.csv")
    assert [p["node"] for p in prof] == [p["node"] for p in doc["profile"]]
    assert [float(p["max_hgl_after [ft]"]) for p in prof] == pytest.approx([p["max_hgl_after_ft"] for p in doc["profile"]])


@pytest.mark.swmm
def test_a_model_without_coordinates_exports_tables_and_no_features(run, tmp_path):
    """No [COORDINATES]: the tables and the NetCDF as usual, a GeoJSON without features, no GeoPackage, and
    the manifest says why."""
    doc = dict(run["doc"], geometry=ModelGeometry(crs_source="the model has no [COORDINATES]").to_dict())
    written = export_demonstration(tmp_path, doc)
    assert "network.gpkg" not in written
    g = json.loads((tmp_path / "network.geojson").read_text(encoding="utf-8"))
    assert g["features"] == [] and "crs" not in g
    man = json.loads((tmp_path / "manifest.json").read_text(encoding="utf-8"))
    assert man["crs"] is None and man["crs_source"] == "the model has no [COORDINATES]" and man["links_with_lines"] == 0
    assert len(_csv(tmp_path / "nodes.csv")) == len(doc["nodes"])
