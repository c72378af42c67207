"""Design storm files: bundled storms load, bad files are refused with the file and key named."""

from __future__ import annotations

import pytest

from capacitysim.errors import DataFileError
from capacitysim.io.storms import load_storm


def test_bundled_binghamton_storm():
    spec = load_storm("binghamton-1yr-24h")
    assert spec.depth_in == 2.1 and spec.distribution == "II" and spec.duration_hr == 24.0
    assert "174-19.2" in spec.source
    assert float(spec.hyetograph().sum()) == pytest.approx(2.1)


def _write(tmp_path, text):
    p = tmp_path / "s.toml"
    p.write_text(text)
    return p


@pytest.mark.parametrize(
    "text, match",
    [
        ('depth_in = 2.0\ndistribution = "II"\n', "missing key\\(s\\) source"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\ncolour = "red"\n', "unknown key\\(s\\) colour"),
        ('depth_in = "two"\ndistribution = "II"\nsource = "x"\n', "depth_in must be a number"),
        ('depth_in = -2.0\ndistribution = "II"\nsource = "x"\n', "depth_in must be > 0"),
        ('depth_in = 2.0\ndistribution = "IV"\nsource = "x"\n', "distribution must be one of"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\ndt_min = 7\n', "dt_min must divide"),
        ("depth_in = = 2\n", "not valid TOML"),
        ('depth_in = true\ndistribution = "II"\nsource = "x"\n', "depth_in must be a number of inches; got True"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\ndt_min = "six"\n', "dt_min must be a number of minutes; got 'six'"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\nduration_hr = [24]\n', "duration_hr must be a number of hours"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\nreturn_period_yr = "1"\n', "return_period_yr must be a number of years"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\nreturn_period_yr = -1\n', "return_period_yr must be > 0"),
        ('depth_in = nan\ndistribution = "II"\nsource = "x"\n', "depth_in must be > 0 in; got nan"),
        ('depth_in = 2.0\ndistribution = "II"\nsource = "x"\ndt_min = inf\n', "dt_min must be in"),
    ],
)
def test_bad_storm_files(tmp_path, text, match):
    p = _write(tmp_path, text)
    with pytest.raises(DataFileError, match=match) as err:
        load_storm(p)
    assert str(p) in str(err.value)


def test_missing_storm_names_the_bundled_ones():
    with pytest.raises(DataFileError, match="bundled: binghamton-1yr-24h"):
        load_storm("no-such-storm")


def test_atomic_write_replaces_whole_files_with_umask_mode(tmp_path):
    import os

    from capacitysim.files import atomic_write_text

    p = atomic_write_text(tmp_path / "sub" / "a.txt", "one")
    atomic_write_text(p, "two")
    assert p.read_text() == "two"
    assert [f.name for f in p.parent.iterdir()] == ["a.txt"]  # no temporary left behind
    mask = os.umask(0)
    os.umask(mask)
    assert p.stat().st_mode & 0o777 == 0o666 & ~mask
