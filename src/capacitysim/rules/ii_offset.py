"""Binghamton-Johnson City I/I offset program: quantifying I/I removed, and the offset a connection needs.

Pure functions (numpy broadcasting, no files): each credit value cites the table cell it comes from.
:func:`connection_offset` composes the connection side for one connection (average design flow, peaking,
peak flow, threshold, credits) into a :class:`ConnectionOffset`.
Every flow is a rate in gallons per day [gpd], the unit the program denominates credits in
(credit bank, section E).

Notes on the program text
-------------------------
* Quantification section A says infiltration "shall be according to the guidelines shown on
  Table 174-19.3"; the infiltration guidelines are Table 174-19.1 (Table 174-19.3 is the curve
  number table). This module applies Table 174-19.1 to infiltration and cites it so.
* Table 174-19.1 gives manhole joint leaks in gpm; the program denominates credits in gpd. A leak
  rate is taken to run 24 hours a day (as Table 174-19.2 note 1 says for sump pumps), i.e.
  gpd = gpm x 1,440.
* Inflow items by TR-55 (Table 174-19.2, second row): the table names the method and the storm but
  not whether the credit is the storm's runoff *volume* or its *peak rate*. Program policy
  ``inflow_credit_basis`` (:data:`INFLOW_CREDIT_BASES`): by default the 24-hour runoff volume of the
  program storm over the drained area, taken as gallons per day; the peak rate of the same storm's
  runoff (SCS unit hydrograph) is computed beside it (:func:`tr55_inflow_peak_rate_gpd`). On a roof
  the peak rate is about 33 times the volume basis.
* The threshold: the definitions (NEW OR MODIFIED SEWER CONNECTION, SEWER EXTENSION) need an offset
  for a connection "adding greater than 2,500 gallons per day of flow" / increasing flows "by more
  than 2,500 gallons per day", without the word peak; only section F (the credit amount) says
  "peak sewage flow rate". Program policy ``threshold_basis`` (:data:`THRESHOLD_BASES`): by default
  the average daily design flow is compared with 2,500 gpd; the outcome on the peak is reported
  beside it. Credits stay one to one on the peak (section F) in both.
* The professional engineer: the quantification guidelines say "The quantification of infiltration and
  inflow shall be prepared by a professional engineer, licensed in the State of New York, and presented in
  an I/I remediation engineering report"; Table 174-19.1 note 2 says "Calculations must be prepared by a
  New York State licensed professional engineer". Every report (:func:`quantify_project`) names the
  engineer and gives a NYS PE license number of the form NYSED issues (six digits,
  :func:`pe_license_number`); only the form is checked, not that the license exists or is registered.
  Records item B asks for a completed certification letter "(See Appendix A for letter format.)";
  Appendix A is not in the text held, so the letter's wording is not checked.
* The peak: section F sets the credits "equal to the estimated peak sewage flow rate increase" without
  saying how the peak is estimated. Program policy ``peaking_method`` (:data:`PEAKING_METHODS`): by
  default ``harmon_100gpcd``, the average design flow times Harmon's peaking factor for the population
  equivalent of that flow at 100 gallons per capita per day [Harmon]_ [TSS]_; ``harmon_population`` for
  the persons served the applicant states; ``fixed`` for a factor the applicant states. Harmon's
  formula was fitted to community sewers: for one building (tens of persons) it gives about 4.4, near
  its limit of 4.5 at no population, which is why the alternative is printed beside it.
* Offset ratio: section F fixes one to one. A ratio below one is refused
  (:class:`~capacitysim.errors.RefusedError`); a ratio above one is a program policy, flagged
  (:func:`check_offset_ratio`).

Every such choice is returned as a policy ``{"name", "value", "text", "alternative"}`` whose text
says "program interpretation — confirm with the bank administrator" (:data:`POLICY_FLAG`); it is
never presented as the rule.

References
----------
.. [BJC] Binghamton-Johnson City Joint Sewage Board, I/I Offset Program (effective 2013-01-01):
   definitions (NEW OR MODIFIED SEWER CONNECTION, SEWER EXTENSION: more than 2,500 gpd; OFFSET
   RATIO), sewer flow credit bank sections A-I, quantification guidelines A-B(1), Tables 174-19.1,
   174-19.2 and 174-19.3, records.
.. [TR55] USDA SCS (1986), Urban Hydrology for Small Watersheds, TR-55, 2nd ed., Chapter 2.
.. [TSS] Great Lakes-Upper Mississippi River Board (Ten States Standards), Recommended Standards
   for Wastewater Facilities (2014), section 11.243 and Figure 1 (ratio of peak hourly to average
   daily flow, Harmon's formula; new systems designed on 100 gallons per capita per day). The section
   number and the 100 gpcd are as this module has cited them; not checked against the 2014 text here
   (source to confirm). The same ratio, (18 + sqrt P) / (4 + sqrt P) with P the population in
   thousands, is Equation 110-1 of Missouri's 10 CSR 20-8.110 ("Ratio of peak hourly flow to design
   average flow"), a state rule that follows the Ten States Standards (checked).
.. [Harmon] W. G. Harmon (1918), "Forecasting sewage at Toledo under dry-weather conditions",
   Engineering News-Record 80, p. 1233 (journal details to confirm): PF = 1 + 14 / (4 + sqrt P),
   P the population in thousands, the same as (18 + sqrt P) / (4 + sqrt P).
"""

from __future__ import annotations

import copy
import datetime as _dt
import math
import numbers
import re
from collections.abc import Mapping
from dataclasses import dataclass

import numpy as np

# capacitysim.hydrology (numba, xarray: about 1 s to import) is imported inside the TR-55 functions
# only, so the credit bank, which needs the offset rules but not TR-55, starts fast in every process
# (capacitysim.hydrology.rdii, whose roof constants are imported below, loads numpy only).

from capacitysim.checks import (
    as_float_array,
    check_choice,
    check_count,
    check_finite_result,
    check_range,
    scalar_or_array,
)
from capacitysim.errors import InputError, RefusedError
from capacitysim.hydrology.rdii import ROOF_CN, ROOF_TC_HR
from capacitysim.units import (
    ACRES_PER_SQMI,
    CUBIC_FEET_PER_ACRE_INCH,
    GALLONS_PER_CUBIC_FOOT,
    GPD_PER_CFS,
    GPD_PER_GPM,
    SQFT_PER_ACRE,
)

# --- program constants -------------------------------------------------------------------------
#: Program effective date [BJC, preamble]; report part D lists connections completed since then.
PROGRAM_EFFECTIVE_DATE = _dt.date(2013, 1, 1)
#: A connection or extension adding more than this needs an offset [gpd] (definitions, NEW OR
#: MODIFIED SEWER CONNECTION and SEWER EXTENSION: "greater than 2,500 gallons per day").
OFFSET_THRESHOLD_GPD = 2500.0
#: Credit bank section F: credits required equal the peak sewage flow increase (one to one) [-].
DEFAULT_OFFSET_RATIO = 1.0
#: Smallest offset ratio [-]: section F fixes one to one; a ratio below one would let a connection
#: add more flow than the I/I removed for it, which the program does not allow.
MIN_OFFSET_RATIO = 1.0
#: Largest offset ratio [-]: other I/I programs use up to 4:1; 10 leaves room and catches typos
#: (the credit bank's ledger takes the same range).
MAX_OFFSET_RATIO = 10.0
#: Most items of one kind in one line of a project (manholes, sump pumps) [-]: a whole city has some
#: tens of thousands of manholes; a million is a typing error.
MAX_ITEM_COUNT = 1_000_000
#: Largest flow of one item, or of a connection [gpd]: 10^9 gpd (1,000 MGD) is more than the largest
#: treatment plant in New York City is permitted for; a larger figure is a unit error.
MAX_FLOW_GPD = 1.0e9
#: Largest area drained by one TR-55 item [ac]: 10^5 acres (156 mi2) is a whole sewershed and more;
#: a larger value is a unit error (ft2 given as acres).
MAX_ITEM_AREA_AC = 1.0e5

# --- program policies: where the program text is silent -----------------------------------------
#: What every program policy's text says: it is the tool's reading, not the rule.
CONFIRM_WITH_ADMINISTRATOR = "confirm with the bank administrator"
POLICY_FLAG = f"program interpretation — {CONFIRM_WITH_ADMINISTRATOR}"
#: Program policy ``offset_ratio``: how a ratio above one is flagged (section F fixes one to one).
OFFSET_RATIO_POLICY_TEXT = f"program policy above the one-to-one of section F — {CONFIRM_WITH_ADMINISTRATOR}"
#: Program policy ``threshold_basis``: the flow compared with the 2,500 gpd of the definitions, the
#: average daily design flow (the definitions say "gallons per day of flow", no peak) or the peak
#: sewage flow rate (the flow section F sets the credits on).
THRESHOLD_BASES = ("average", "peak")
#: Default ``threshold_basis`` (issue 14): the definitions' words, "greater than 2,500 gallons per day
#: of flow", read as the average daily design flow.
DEFAULT_THRESHOLD_BASIS = "average"
#: Why each ``threshold_basis`` is a reading of the text, not the text (the policy's text).
THRESHOLD_BASIS_TEXT = {
    "average": (f"{POLICY_FLAG}: the definitions of new or modified sewer connection and sewer extension say "
                "'greater than 2,500 gallons per day of flow'; section F sets the credits on the peak sewage "
                "flow rate; the average daily design flow is compared with 2,500 gpd, the credits are the peak"),
    "peak": (f"{POLICY_FLAG}: section F sets the credits on the peak sewage flow rate; the definitions of new "
             "or modified sewer connection and sewer extension say only 'greater than 2,500 gallons per day "
             "of flow'; the peak sewage flow rate is compared with 2,500 gpd"),
}
#: Program policy ``threshold_gpd``: a threshold other than the definitions' 2,500 gpd.
THRESHOLD_POLICY_TEXT = (f"{POLICY_FLAG}: a threshold other than the 2,500 gallons per day of the definitions "
                         "(new or modified sewer connection, sewer extension)")
#: Program policy ``inflow_credit_basis``: what a TR-55 inflow item credits, the 24-hour runoff
#: volume of the program storm taken as gallons per day, or the peak rate of the same storm's runoff.
INFLOW_CREDIT_BASES = ("volume", "peak")
#: Default ``inflow_credit_basis``: the runoff volume of the 24-hour storm as gpd (what the tool
#: credited before issue 14).
DEFAULT_INFLOW_CREDIT_BASIS = "volume"
#: Why each ``inflow_credit_basis`` is a reading of the text, not the text (the policy's text).
INFLOW_CREDIT_BASIS_TEXT = {
    "volume": (f"{POLICY_FLAG}: Table 174-19.2 says TR-55 inflow is 'to be calculated based on' TR-55 for the "
               "1-year, 24-hour Type II storm but not whether the credit is the storm's runoff volume or its "
               "peak rate; the 24-hour runoff volume is taken as gallons per day (section E)"),
    "peak": (f"{POLICY_FLAG}: Table 174-19.2 says TR-55 inflow is 'to be calculated based on' TR-55 for the "
             "1-year, 24-hour Type II storm but not whether the credit is the storm's runoff volume or its "
             "peak rate; the peak rate of the storm's runoff (SCS unit hydrograph) is taken as gallons per "
             "day, as section F takes the connection's peak sewage flow rate"),
}
#: Time of concentration of a TR-55 inflow item [hr] when the project gives none: 0.1 hr, the
#: minimum TR-55 (1986) ch. 3 ("Limitations") uses, as the roof leaders of a model scenario use
#: (:data:`capacitysim.hydrology.rdii.ROOF_TC_HR`). A roof's Tc is shorter; for a larger catch basin
#: or separated area give the item's own ``tc_hr`` (TR-55 ch. 3).
DEFAULT_INFLOW_TC_HR = ROOF_TC_HR
#: Range of an inflow item's Tc [hr]: TR-55 (1986) ch. 3 uses 0.1 hr at least; ch. 4 and 5
#: (graphical and tabular methods) are limited to Tc of 0.1 to 10 hr.
MIN_INFLOW_TC_HR = ROOF_TC_HR
MAX_INFLOW_TC_HR = 10.0
#: Step of the design storm of the peak-rate alternative [min]. NEH 630 ch. 16 takes the unit
#: duration D no more than 0.25 Tp, with Tp = D/2 + 0.6 Tc: at the minimum Tc of 0.1 hr,
#: D <= 0.25 x 0.6 x 0.1 / (1 - 0.125) hr = 1.03 min, so 1 min (a divisor of the 24-hour storm).
INFLOW_PEAK_STORM_STEP_MIN = 1.0
#: Curve number of a roof [-]: Table 174-19.3, "Paved parking lots, roofs, driveways, etc.": 98
#: in every hydrologic soil group (TR-55 Table 2-2a).
PROGRAM_ROOF_CN = ROOF_CN

#: Records section: records kept for a minimum of three years (longer during a dispute) [yr].
RECORD_RETENTION_YEARS = 3
#: DEFAULT definition: certificate of occupancy due within one year of the flow credit note [yr].
CERTIFICATE_OF_OCCUPANCY_YEARS = 1

# --- the professional engineer who prepares the quantification -----------------------------------
#: Quantification guidelines (first paragraph) and Table 174-19.1 note 2, as every refusal quotes them.
PE_REQUIREMENT = ("the quantification of infiltration and inflow shall be prepared by a professional engineer, "
                  "licensed in the State of New York (quantification guidelines; Table 174-19.1 note 2: "
                  "'Calculations must be prepared by a New York State licensed professional engineer')")
#: Digits of a New York State professional engineer license number: NYSED's Office of the Professions
#: lists PE licenses as six digits, leading zeros written ("PE 012345"). Only the form is checked;
#: whether the license exists and is registered is for NYSED's online verification (op.nysed.gov).
PE_LICENSE_DIGITS = 6
#: Words a license may be written with before its digits ("NY 012345", "NYS P.E. Lic. No. 012345"),
#: compared in capitals without dots; "#", ":" and "-" may separate them.
PE_LICENSE_PREFIX_WORDS = ("NY", "NYS", "PE", "LIC", "LICENSE", "LICENCE", "NO")
#: What a license must look like, in every refusal.
PE_LICENSE_ALLOWED = ('a New York State professional engineer license number: six digits, leading zeros '
                      'written, optionally after NY, NYS, PE, License or No. (e.g. "NY 012345", "PE 012345", '
                      '"012345"); not all zeros')
_PE_LICENSE_FORM = re.compile(r"(?P<prefix>[A-Za-z.#:\-\s]*?)\s*(?P<digits>[0-9]+)")

#: Table 174-19.1 (ASCE MOP 92), manhole joint leaks [gpm] by (surface, severity).
TABLE_174_19_1_GPM = {
    ("paved", "heavy"): 1.1,
    ("paved", "moderate"): 0.65,
    ("paved", "minor"): 0.27,
    ("unpaved", "heavy"): 4.6,
    ("unpaved", "moderate"): 2.3,
    ("unpaved", "minor"): 1.1,
}
SURFACES = ("paved", "unpaved")
SEVERITIES = ("heavy", "moderate", "minor")

#: Table 174-19.2, sump pumps: 5 gpm (Goulds ST51 at 20 ft of head), note 1: over 24 h a day [gpm].
SUMP_PUMP_GPM = 5.0
#: Table 174-19.2, TR-55 items: 1-year 24-hour storm, 2.1 in for the City of Binghamton (NRCC) [in].
PROGRAM_STORM_DEPTH_IN = 2.1
#: Table 174-19.2: the Type II standard rainfall distribution.
PROGRAM_STORM_DISTRIBUTION = "II"
#: Table 174-19.2, TR-55 items: "the 1-year, 24-hour storm event" [hr].
PROGRAM_STORM_DURATION_HR = 24
#: The curve number table the program prescribes for TR-55 inflow items.
PROGRAM_CN_TABLE = "BJC 174-19.3"

#: Inflow items quantified by TR-55 (Table 174-19.2, second row).
TR55_ITEM_TYPES = ("roof_drain", "catch_basin", "manhole_cover_drainage", "cross_connection", "separation")
#: Items Table 174-19.1 leaves to a PE "on a case-by-case basis" / "for each specific project".
CASE_BY_CASE_TYPES = ("pipe_segment", "lateral", "defective_cover", "manhole_joint_leak")

#: Ten States Standards Figure 1 (Harmon): PF = (18 + sqrt(P)) / (4 + sqrt(P)), P thousands [TSS].
HARMON_NUMERATOR = 18.0
HARMON_DENOMINATOR = 4.0
PERSONS_PER_THOUSAND = 1000.0
#: Ten States Standards 11.243: new systems designed on 100 gallons per capita per day [gpcd].
TSS_PER_CAPITA_GPCD = 100.0
#: How a connection's peaking factor was found (reported with the peak flow): fixed by the caller ...
PEAKING_BASIS_GIVEN = "given"
#: ... or by Harmon's formula [TSS, Figure 1].
PEAKING_BASIS_HARMON = "Harmon (Ten States Standards Figure 1)"
#: Program policy ``peaking_method``: how the "estimated peak sewage flow rate increase" of section F is
#: estimated from the connection's average design flow: Harmon's factor for the population equivalent at
#: 100 gpcd, Harmon's factor for the persons served the applicant states, or a factor the applicant states.
PEAKING_METHODS = ("harmon_100gpcd", "harmon_population", "fixed")
#: Default ``peaking_method`` (what ``credits connection`` did before issue 25): Harmon at 100 gpcd.
DEFAULT_PEAKING_METHOD = "harmon_100gpcd"
_PEAKING_SILENT = (f"{POLICY_FLAG}: section F sets the credits 'equal to the estimated peak sewage flow rate "
                   "increase' and does not say how the peak is estimated; ")
_HARMON = ("the peak is taken as the average design flow times Harmon's ratio of peak hourly to average daily flow, "
           "PF = 1 + 14 / (4 + sqrt(P)) (Harmon 1918; Ten States Standards Figure 1), ")
#: Why each ``peaking_method`` is a reading of the text, not the text (the policy's text).
PEAKING_METHOD_TEXT = {
    "harmon_100gpcd": _PEAKING_SILENT + _HARMON + ("P the population equivalent of the average flow at 100 gallons "
                                                   "per capita per day, in thousands (Ten States Standards)"),
    "harmon_population": _PEAKING_SILENT + _HARMON + "P the persons served the applicant states, in thousands",
    "fixed": _PEAKING_SILENT + ("the peak is taken as the average design flow times a peaking factor the applicant states "
                                "(--peaking-factor; e.g. from flow metering of a like connection)"),
}


def _lookup(name: str, values, allowed) -> np.ndarray:
    arr = np.asarray(values, dtype=str)
    for v in np.unique(arr):
        check_choice(name, str(v), allowed)
    return arr


def manhole_joint_leak_gpd(surface, severity, count=1.0):
    """Infiltration removed by sealing manhole joint leaks [gpd], Table 174-19.1.

    Parameters
    ----------
    surface : str or array_like of str
        ``"paved"`` or ``"unpaved"`` (Table 174-19.1 rows "Joint leaks - Paved/Unpaved areas").
    severity : str or array_like of str
        ``"heavy"`` (severe cracks throughout), ``"moderate"`` or ``"minor"`` (note 1).
    count : array_like, default 1
        Number of manholes [-], a whole number in [0, 1,000,000] (:data:`MAX_ITEM_COUNT`).

    Returns
    -------
    float or numpy.ndarray
        ``count x gpm x 1,440`` [gpd] (the table's gpm running 24 hours a day).

    References
    ----------
    BJC Table 174-19.1 (after ASCE Manual of Practice No. 92), note 1.
    """
    s = _lookup("surface", surface, SURFACES)
    v = _lookup("severity", severity, SEVERITIES)
    n = check_count("count", count, MAX_ITEM_COUNT)
    s, v, n = np.broadcast_arrays(s, v, n)
    gpm = np.vectorize(lambda a, b: TABLE_174_19_1_GPM[(a, b)], otypes=[np.float64])(s, v) if s.size else np.zeros(s.shape)
    return scalar_or_array(n * gpm * GPD_PER_GPM)


def sump_pump_gpd(count=1.0):
    """Inflow removed by disconnecting sump pumps [gpd]: 5 gpm over 24 hours = 7,200 gpd each.

    Parameters
    ----------
    count : array_like, default 1
        Number of sump pumps [-], a whole number in [0, 1,000,000] (2.5 pumps is a typing error).

    References
    ----------
    BJC Table 174-19.2, row "Sump pumps" and note 1 (5 gpm over a twenty-four-hour-per-day period).
    """
    n = check_count("count", count, MAX_ITEM_COUNT)
    return scalar_or_array(n * SUMP_PUMP_GPM * GPD_PER_GPM)


def program_cn(cover, soil_group):
    """Curve number from Table 174-19.3 (``curve_number(..., table="BJC 174-19.3")``)."""
    from capacitysim.hydrology import curve_number

    return curve_number(cover, soil_group, table=PROGRAM_CN_TABLE)


def tr55_inflow_gpd(area_ac, cn, precip_in=PROGRAM_STORM_DEPTH_IN):
    r"""Inflow removed by a TR-55 item [gpd]: the 24-hour runoff volume of the program storm.

    .. math:: Q_{gpd} = Q_{in} \cdot A_{ac} \cdot 3{,}630 \ \mathrm{ft^3/(ac \cdot in)} \cdot 7.48052 \ \mathrm{gal/ft^3}

    with :math:`Q_{in}` the TR-55 runoff depth of the 1-year 24-hour storm (2.1 in).

    Parameters
    ----------
    area_ac : array_like
        Area drained by the disconnected roof drain, catch basin, cover or separated system [ac], in
        [0, 100,000] (:data:`MAX_ITEM_AREA_AC`).
    cn : array_like
        Curve number of that area from Table 174-19.3 [-] (see :func:`program_cn`).
    precip_in : array_like, default 2.1
        24-hour rainfall [in]; the program fixes 2.1 in (Table 174-19.2).

    Returns
    -------
    float or numpy.ndarray
        Gallons of runoff in the 24-hour storm, as gallons per day [gpd].

    References
    ----------
    BJC Table 174-19.2 (TR-55, 1-year 24-hour Type II storm, 2.1 in) and Table 174-19.3; TR-55
    (1986) Chapter 2, equations 2-1 to 2-4.
    """
    from capacitysim.hydrology import runoff_depth

    a = check_range("area_ac", area_ac, 0.0, MAX_ITEM_AREA_AC, unit="ac")
    q_in = np.asarray(runoff_depth(precip_in, cn))
    return scalar_or_array(q_in * a * CUBIC_FEET_PER_ACRE_INCH * GALLONS_PER_CUBIC_FOOT)


def tr55_inflow_peak_rate_gpd(area_ac, cn, tc_hr=DEFAULT_INFLOW_TC_HR, precip_in=PROGRAM_STORM_DEPTH_IN):
    r"""Peak rate of a TR-55 item's runoff in the program storm, expressed in gallons per day [gpd].

    The alternative of the program policy ``inflow_credit_basis`` (:data:`INFLOW_CREDIT_BASES`): the
    1-year 24-hour Type II storm (:func:`~capacitysim.hydrology.design_storm`, 1-min steps,
    :data:`INFLOW_PEAK_STORM_STEP_MIN`), its curve-number excess routed by the SCS dimensionless
    unit hydrograph (:func:`~capacitysim.hydrology.unit_hydrograph_runoff`), the highest flow
    [cfs] times 646,317 gpd/cfs (:data:`~capacitysim.units.GPD_PER_CFS`).

    .. math:: Q_{gpd} = \max_t q(t)\,[\mathrm{cfs}] \cdot 86{,}400 \ \mathrm{s/d} \cdot 7.48052 \ \mathrm{gal/ft^3}

    Parameters
    ----------
    area_ac : array_like
        Area drained [ac], in [0, 100,000] (:data:`MAX_ITEM_AREA_AC`); 0 gives 0.
    cn : array_like
        Curve number [-] from Table 174-19.3 (a roof: 98, :data:`PROGRAM_ROOF_CN`).
    tc_hr : array_like, default 0.1
        Time of concentration [hr], in [0.1, 10] (TR-55 ch. 3 minimum, ch. 4-5 limits); default
        :data:`DEFAULT_INFLOW_TC_HR`.
    precip_in : float, default 2.1
        24-hour rainfall [in]; the program fixes 2.1 in (Table 174-19.2).

    Returns
    -------
    float or numpy.ndarray
        The peak flow of the storm's runoff as a daily rate [gpd] (about 33 times
        :func:`tr55_inflow_gpd` on a roof at Tc 0.1 hr).

    References
    ----------
    BJC Table 174-19.2 (TR-55, 1-year 24-hour Type II storm, 2.1 in) and Table 174-19.3; TR-55 (1986)
    Chapter 2 (eq. 2-3) and Chapter 3 (minimum Tc 0.1 hr); NEH 630 (2007) Chapter 16 (dimensionless
    unit hydrograph, D <= 0.25 Tp) and Chapter 15 (L = 0.6 Tc).
    """
    from capacitysim.hydrology import design_storm, unit_hydrograph_runoff

    a = check_range("area_ac", area_ac, 0.0, MAX_ITEM_AREA_AC, unit="ac")
    c = as_float_array("cn", cn)  # its range is checked by unit_hydrograph_runoff
    tc = check_range("tc_hr", tc_hr, MIN_INFLOW_TC_HR, MAX_INFLOW_TC_HR, unit="hr")
    a, c, tc = np.broadcast_arrays(a, c, tc)
    out = np.zeros(a.shape)
    wet = a > 0.0
    if wet.any():
        storm = design_storm(precip_in, PROGRAM_STORM_DISTRIBUTION, dt_min=INFLOW_PEAK_STORM_STEP_MIN,
                             duration_hr=PROGRAM_STORM_DURATION_HR)
        flow = unit_hydrograph_runoff(a[wet] / ACRES_PER_SQMI, c[wet], tc[wet], storm)
        out[wet] = np.asarray(flow.max(dim="time_hr")).reshape(-1) * GPD_PER_CFS
    return scalar_or_array(out)


def separation_qualifies(to_receiving_water, redirected_to_combined=False):
    """Whether a sewer separation project qualifies for credits (quantification section B(1)).

    The new separated stormwater system must be conveyed to a receiving water and not redirected
    back to the combined sewer system in any way.
    """
    return np.logical_and(np.asarray(to_receiving_water, bool), ~np.asarray(redirected_to_combined, bool))


def separation_gpd(area_ac, cn, to_receiving_water, redirected_to_combined=False):
    """Credit of a sewer separation project [gpd]: TR-55 inflow if it qualifies (B(1)), else 0.

    References
    ----------
    BJC quantification section B(1); Table 174-19.2; Table 174-19.3.
    """
    ok = separation_qualifies(to_receiving_water, redirected_to_combined)
    return scalar_or_array(np.where(ok, np.asarray(tr55_inflow_gpd(area_ac, cn)), 0.0))


def case_by_case_gpd(gpd=None, gpm=None, *, justification: str = "", engineer: str = "", field: str = "item"):
    """A PE's figure for a case-by-case item (Table 174-19.1 note 2) [gpd].

    Exactly one of ``gpd`` or ``gpm`` (converted over 24 hours); a justification (calculations,
    flow metering, televised inspection, previous studies) and the engineer are required.

    Raises
    ------
    InputError
        Figure missing or negative, both given, no justification or no engineer.
    """
    if (gpd is None) == (gpm is None):
        raise InputError(f"{field}: give the PE's figure once, as gpd or gpm")
    if not str(justification).strip():
        raise InputError(f"{field}: a case-by-case figure needs a justification (Table 174-19.1 note 2)")
    if not str(engineer).strip():
        raise InputError(f"{field}: a case-by-case figure must be prepared by a NYS licensed PE (Table 174-19.1 note 2); name the engineer")
    if gpd is not None:
        return scalar_or_array(check_range(f"{field}.gpd", gpd, 0.0, MAX_FLOW_GPD, unit="gpd"))
    return scalar_or_array(check_range(f"{field}.gpm", gpm, 0.0, MAX_FLOW_GPD / GPD_PER_GPM, unit="gpm") * GPD_PER_GPM)


# --- the connection side ------------------------------------------------------------------------


def harmon_peaking_factor(population_thousands):
    r"""Ratio of peak hourly to average daily sewage flow by Harmon's formula.

    .. math:: PF = \frac{18 + \sqrt{P}}{4 + \sqrt{P}}

    Parameters
    ----------
    population_thousands : array_like
        Population served P [thousands of persons], >= 0.

    Returns
    -------
    float or numpy.ndarray
        PF [-], 4.5 at P = 0, falling towards 1.

    References
    ----------
    Ten States Standards (2014), Recommended Standards for Wastewater Facilities, 11.243 and Figure 1.
    """
    p = check_range("population_thousands", population_thousands, 0.0)
    r = np.sqrt(p)
    return scalar_or_array((HARMON_NUMERATOR + r) / (HARMON_DENOMINATOR + r))


def equivalent_population_thousands(average_flow_gpd, per_capita_gpcd=TSS_PER_CAPITA_GPCD):
    """Population equivalent of an average flow [thousands]: flow / 100 gpcd (Ten States 11.243)."""
    q = check_range("average_flow_gpd", average_flow_gpd, 0.0, unit="gpd")
    c = check_range("per_capita_gpcd", per_capita_gpcd, 0.0, low_inclusive=False, unit="gpcd")
    return scalar_or_array(q / c / PERSONS_PER_THOUSAND)


def average_design_flow_gpd(units, gpd_per_unit):
    """Average design sewage flow of a connection [gpd]: sum of units x design flow per unit.

    Parameters
    ----------
    units : array_like
        Number of units of each use (bedrooms, seats, employees ...) [-], >= 0; last axis = uses.
    gpd_per_unit : array_like
        Design flow per unit [gpd/unit], >= 0 (a design flow table such as NYSDEC 2014 Table B-3).
    """
    with np.errstate(over="ignore", invalid="ignore"):
        flow = check_range("units", units, 0.0) * check_range("gpd_per_unit", gpd_per_unit, 0.0, unit="gpd per unit")
        total = flow.sum(axis=-1) if flow.ndim else flow
    check_finite_result("average design flow", total, "these units and flows per unit")
    return scalar_or_array(total)


def peak_sewage_flow_gpd(average_flow_gpd, peaking_factor=None, population_thousands=None):
    """Estimated peak sewage flow of a new or modified connection [gpd].

    ``average x PF``; PF defaults to Harmon's (Ten States Standards) for the population given, or
    for the population equivalent of the average flow at 100 gpcd when none is given.

    References
    ----------
    BJC credit bank section F (credits equal the estimated peak sewage flow rate increase); Ten
    States Standards (2014) 11.243 and Figure 1.
    """
    q = check_range("average_flow_gpd", average_flow_gpd, 0.0, unit="gpd")
    with np.errstate(over="ignore"):
        peak = q * np.asarray(peaking_factor_for(q, peaking_factor, population_thousands))
    check_finite_result("peak sewage flow", peak, f"average_flow_gpd and peaking_factor {peaking_factor!r}")
    return scalar_or_array(peak)


def peaking_factor_for(average_flow_gpd, peaking_factor=None, population_thousands=None):
    """The peaking factor :func:`peak_sewage_flow_gpd` applies [-]: the one given (>= 1), else
    Harmon's for the population given, else for the population equivalent at 100 gpcd."""
    if peaking_factor is not None:
        return scalar_or_array(check_range("peaking_factor", peaking_factor, 1.0))
    if population_thousands is None:
        population_thousands = equivalent_population_thousands(average_flow_gpd)
    return harmon_peaking_factor(population_thousands)


def peaking_method_for(peaking_factor=None, population_persons=None) -> str:
    r"""The program policy ``peaking_method`` a connection's inputs select (:data:`PEAKING_METHODS`).

    Section F sets the credits "equal to the estimated peak sewage flow rate increase"; the program does
    not say how the peak is estimated. :func:`peak_sewage_flow_gpd` multiplies the average design flow by

    * ``"fixed"`` (``peaking_factor`` given): the factor the applicant states (e.g. from flow metering of a
      like connection), >= 1;
    * ``"harmon_population"`` (``population_persons`` given): Harmon's factor for the persons served;
    * ``"harmon_100gpcd"`` (neither; :data:`DEFAULT_PEAKING_METHOD`): Harmon's factor for the population
      equivalent of the average flow at 100 gallons per capita per day,

    .. math:: PF = 1 + \frac{14}{4 + \sqrt{P}} = \frac{18 + \sqrt{P}}{4 + \sqrt{P}}, \qquad
              P = \frac{Q_{avg}\ [\mathrm{gpd}]}{100\ \mathrm{gpcd} \times 1{,}000}

    with P in thousands of persons. For 22 bedrooms at 110 gpd (2,420 gpd), P = 24.2 persons = 0.0242
    thousand and PF = 4.369.

    Sources: Harmon (1918) for the formula (the ratio of peak hourly to average daily flow; journal
    details to confirm); Ten States Standards (2014), Recommended Standards for Wastewater Facilities,
    Figure 1 for the same ratio and the 100 gpcd of new systems (section 11.243 as this module cites it;
    to confirm against the 2014 text). Missouri 10 CSR 20-8.110, Equation 110-1, a state rule following
    the Ten States Standards, gives the same ratio of peak hourly flow to design average flow with P in
    thousands (checked). Harmon's formula was fitted to community sewers; for one building it is near its
    limit of 4.5, so the alternative (a factor the applicant states, ``--peaking-factor``) is printed
    beside it.

    Raises
    ------
    InputError
        A peaking factor below one or not a number; a negative population.
    """
    if peaking_factor is not None:
        check_range("peaking_factor", peaking_factor, 1.0)
        return "fixed"
    if population_persons is not None:
        check_range("population_persons", population_persons, 0.0, unit="persons")
        return "harmon_population"
    return DEFAULT_PEAKING_METHOD


def offset_required(flow_gpd, threshold_gpd=OFFSET_THRESHOLD_GPD):
    """Whether a connection needs an offset: it adds *more than* 2,500 gpd (definitions).

    Exactly 2,500 gpd needs none. Which flow is compared (average daily design flow or peak sewage
    flow rate) is the program policy ``threshold_basis`` of :func:`connection_offset`; this function
    compares the flow it is given.

    Parameters
    ----------
    flow_gpd : array_like
        The flow compared [gpd], >= 0 (positional: it was called ``peak_flow_gpd``).
    threshold_gpd : array_like, default 2,500
        [gpd], >= 0.

    References
    ----------
    BJC definitions NEW OR MODIFIED SEWER CONNECTION ("adding greater than 2,500 gallons per day of
    flow") and SEWER EXTENSION ("by more than 2,500 gallons per day").
    """
    q = check_range("flow_gpd", flow_gpd, 0.0, unit="gpd")
    t = check_range("threshold_gpd", threshold_gpd, 0.0, unit="gpd")
    out = q > t
    return bool(out) if out.ndim == 0 else out


def threshold_decision(peak_flow_gpd, average_flow_gpd=None, *, threshold_basis: str = DEFAULT_THRESHOLD_BASIS,
                       threshold_gpd=OFFSET_THRESHOLD_GPD) -> dict:
    """Whether one connection needs an offset, under the program policy ``threshold_basis``: the one rule the
    bank, its reports and ``credits connection`` apply.

    Parameters
    ----------
    peak_flow_gpd : float
        Estimated peak sewage flow rate increase [gpd] (credit bank section F).
    average_flow_gpd : float, optional
        Average daily flow of the connection [gpd]. When the policy compares the average and none is
        known, the peak is compared instead, and the result says so (``compared``: it needs an offset
        whenever the average would, so nothing needing one passes as free).
    threshold_basis : {"average", "peak"}
        Program policy ``threshold_basis`` (:data:`THRESHOLD_BASIS_TEXT`).
    threshold_gpd : float, default 2,500

    Returns
    -------
    dict
        ``offset_required``, ``compared`` (``average`` or ``peak``), ``compared_flow_gpd`` [gpd],
        ``threshold_gpd`` [gpd], ``note`` (why the peak stood in for the average, or None) and ``policy``
        (``threshold_basis`` with its alternative's outcome, when both flows are known).

    References
    ----------
    BJC definitions NEW OR MODIFIED SEWER CONNECTION ("adding greater than 2,500 gallons per day of flow")
    and SEWER EXTENSION; credit bank section F (credits on the peak sewage flow rate).
    """
    basis = check_threshold_basis(threshold_basis)
    peak = float(check_range("peak_flow_gpd", peak_flow_gpd, 0.0, unit="gpd"))
    flows = {"peak": peak, "average": None if average_flow_gpd is None
             else float(check_range("average_flow_gpd", average_flow_gpd, 0.0, unit="gpd"))}
    compared, note = basis, None
    if flows[compared] is None:
        compared = "peak"
        note = ("no average daily flow is recorded: the peak is compared with the threshold (it exceeds it whenever "
                "the average does)")
    required = bool(offset_required(flows[compared], threshold_gpd))
    other = next(b for b in THRESHOLD_BASES if b != basis)
    alternative = {"value": other, "text": THRESHOLD_BASIS_TEXT[other]}
    if flows[other] is not None:
        alt = bool(offset_required(flows[other], threshold_gpd))
        alternative.update(threshold_flow_gpd=flows[other], offset_required=alt, changes_outcome=alt != required)
    return {"offset_required": required, "compared": compared, "compared_flow_gpd": flows[compared],
            "threshold_gpd": float(threshold_gpd), "note": note,
            "policy": {"name": "threshold_basis", "value": basis, "text": THRESHOLD_BASIS_TEXT[basis],
                       "alternative": alternative}}


def check_offset_ratio(ratio) -> dict:
    """Check an offset ratio against section F: one to one is the rule, above is a policy, below is refused.

    Parameters
    ----------
    ratio : float
        Gallons of I/I removed per gallon of connection flow allowed (definition OFFSET RATIO) [-].

    Returns
    -------
    dict
        ``{"offset_ratio": 1.0, "policy": None}`` for exactly one (section F); for a ratio in (1, 10]
        ``{"offset_ratio": r, "policy": {"name": "offset_ratio", "value": r, "text":``
        :data:`OFFSET_RATIO_POLICY_TEXT` ``, "alternative": {"value": 1.0, "text": ...}}}``.

    Raises
    ------
    InputError
        Not a number (text, a boolean, None), not finite, or above 10 (:data:`MAX_OFFSET_RATIO`,
        a typing error).
    RefusedError
        Below one: section F makes the credits "equal to the estimated peak sewage flow rate
        increase", a one-to-one offset ratio; less would offset less than the flow added.

    References
    ----------
    BJC definition OFFSET RATIO; credit bank section F ("referred to as a one-to-one offset ratio").
    """
    if isinstance(ratio, np.ndarray) and ratio.ndim == 0:
        ratio = ratio.item()
    if isinstance(ratio, bool) or not isinstance(ratio, numbers.Real):
        raise InputError(f"offset_ratio must be a number in [{MIN_OFFSET_RATIO:g}, {MAX_OFFSET_RATIO:g}] "
                         f"(section F: one-to-one), got {ratio!r}")
    r = float(ratio)
    if not math.isfinite(r):
        raise InputError(f"offset_ratio must be a finite number in [{MIN_OFFSET_RATIO:g}, {MAX_OFFSET_RATIO:g}] "
                         f"(section F: one-to-one), got {r!r}")
    if r < MIN_OFFSET_RATIO:
        raise RefusedError(f"offset_ratio {r:g} is below the one-to-one offset ratio of section F (credits "
                           "'equal to the estimated peak sewage flow rate increase'); allowed: 1, or more "
                           "as a program policy")
    if r > MAX_OFFSET_RATIO:
        raise InputError(f"offset_ratio must be in [{MIN_OFFSET_RATIO:g}, {MAX_OFFSET_RATIO:g}] (above "
                         f"{MAX_OFFSET_RATIO:g} is taken for a typing error), got {r:g}")
    if r == DEFAULT_OFFSET_RATIO:
        return {"offset_ratio": r, "policy": None}
    return {"offset_ratio": r,
            "policy": {"name": "offset_ratio", "value": r, "text": OFFSET_RATIO_POLICY_TEXT,
                       "alternative": {"value": DEFAULT_OFFSET_RATIO,
                                       "text": "section F: credits equal to the estimated peak sewage flow "
                                               "rate increase (one-to-one)"}}}


def check_threshold_basis(threshold_basis) -> str:
    """The program policy ``threshold_basis``: ``"average"`` or ``"peak"`` (:data:`THRESHOLD_BASES`).

    Raises
    ------
    InputError
        Naming the value and the allowed ones.
    """
    if not isinstance(threshold_basis, str) or threshold_basis not in THRESHOLD_BASES:
        raise InputError(f"threshold_basis must be one of {', '.join(THRESHOLD_BASES)} (the flow compared with "
                         f"the 2,500 gpd of the definitions), got {threshold_basis!r}")
    return threshold_basis


def credits_required_gpd(peak_flow_gpd, offset_ratio=DEFAULT_OFFSET_RATIO, threshold_gpd=OFFSET_THRESHOLD_GPD, *,
                         threshold_flow_gpd=None):
    """Flow credits a connection must withdraw [gpd]: ratio x peak flow when an offset is required, else 0.

    Parameters
    ----------
    peak_flow_gpd : array_like
        Estimated peak sewage flow rate increase [gpd]: the credits are set on it (section F).
    offset_ratio : array_like, default 1
        Gallons of I/I removed per gallon allowed (OFFSET RATIO), checked by
        :func:`check_offset_ratio`: 1 is section F; above 1 (up to 10) a program policy; below 1
        refused.
    threshold_gpd : array_like, default 2,500
    threshold_flow_gpd : array_like, optional
        The flow compared with the threshold [gpd]: the average daily design flow under the default
        ``threshold_basis`` of :func:`connection_offset`. ``None`` compares ``peak_flow_gpd`` itself
        (``threshold_basis="peak"``; the behaviour of callers written before issue 14).

    Raises
    ------
    InputError
        For a negative or non-finite flow, an offset ratio that is not a finite number or above 10.
    RefusedError
        For an offset ratio below one (section F).

    References
    ----------
    BJC definitions (OFFSET RATIO; NEW OR MODIFIED SEWER CONNECTION) and credit bank section F.
    """
    q = check_range("peak_flow_gpd", peak_flow_gpd, 0.0, unit="gpd")
    if np.ndim(offset_ratio) == 0:
        r = check_offset_ratio(offset_ratio)["offset_ratio"]
    else:
        r = as_float_array("offset_ratio", offset_ratio)
        for value in np.unique(r):
            check_offset_ratio(float(value))
    compared = q if threshold_flow_gpd is None else check_range("threshold_flow_gpd", threshold_flow_gpd, 0.0, unit="gpd")
    need = np.asarray(offset_required(compared, threshold_gpd))
    with np.errstate(over="ignore"):
        credits = np.where(need, q * r, 0.0)
    check_finite_result("credits required", credits, "this peak flow and offset ratio")
    return scalar_or_array(credits)


def policy_line(policy: Mapping) -> str:
    """One line of text output for a program policy: ``policy: NAME = VALUE: WHY (program interpretation — ...)``.

    The flag :data:`POLICY_FLAG` is printed once, at the end, whatever the policy's text starts with.
    """
    why = str(policy["text"])
    for flag in (f"{POLICY_FLAG}: ", f" — {CONFIRM_WITH_ADMINISTRATOR}"):
        why = why.replace(flag, "")
    return f"policy: {policy['name']} = {policy['value']}: {why} ({POLICY_FLAG})"


def program_storm() -> dict:
    """The design storm of the TR-55 inflow items, as an I/I remediation engineering report states it.

    Returns
    -------
    dict
        ``depth_in`` [in] (2.1 in, :data:`PROGRAM_STORM_DEPTH_IN`), ``distribution`` (``"Type II"``),
        ``duration_hr`` [hr] (24, :data:`PROGRAM_STORM_DURATION_HR`) and ``cn_table`` (the curve
        number table, :data:`PROGRAM_CN_TABLE`).

    References
    ----------
    BJC Table 174-19.2, row "Roof drains, catch basins, ...": TR-55, "the 1-year, 24-hour storm event
    utilizing the Type II Standard Rainfall Distribution", 2.1 inches for the City of Binghamton;
    Table 174-19.3 (curve numbers).
    """
    return {"depth_in": PROGRAM_STORM_DEPTH_IN, "distribution": f"Type {PROGRAM_STORM_DISTRIBUTION}",
            "duration_hr": PROGRAM_STORM_DURATION_HR, "cn_table": PROGRAM_CN_TABLE}


@dataclass(frozen=True)
class DesignFlowUse:
    """One use of a connection and its average design flow.

    Attributes
    ----------
    use : str
        Name of the use in the design flow table (``residence_bedroom``, ``restaurant_seat`` ...).
    count : float
        Number of units of the use [-] (bedrooms, seats, employees ...).
    unit : str
        What one unit is (``bedroom``, ``seat`` ...).
    gpd_per_unit : float
        Design flow per unit [gpd/unit].
    average_gpd : float
        ``count x gpd_per_unit`` [gpd].
    source : str
        Where the table says ``gpd_per_unit`` comes from.
    verified : bool
        Whether the table marks ``gpd_per_unit`` as checked against its source.
    """

    use: str
    count: float
    unit: str
    gpd_per_unit: float
    average_gpd: float
    source: str
    verified: bool

    def to_dict(self) -> dict:
        """The use as ``capacitysim credits connection --json`` prints it (same keys, same order)."""
        return {"use": self.use, "count": self.count, "unit": self.unit, "gpd_per_unit": self.gpd_per_unit,
                "average_gpd": self.average_gpd, "source": self.source, "verified": self.verified}


@dataclass(frozen=True)
class ConnectionOffset:
    """The peak sewage flow of a new or modified sewer connection and the flow credits it needs.

    Attributes
    ----------
    uses : tuple of DesignFlowUse
        Each use with its average design flow, in the order given.
    average_gpd : float
        Average design sewage flow, the sum over the uses [gpd].
    peaking_factor : float
        Ratio of peak hourly to average daily flow applied [-].
    peaking_basis : str
        :data:`PEAKING_BASIS_GIVEN` or :data:`PEAKING_BASIS_HARMON`.
    peak_flow_gpd : float
        Estimated peak sewage flow rate increase, ``average_gpd x peaking_factor`` [gpd].
    threshold_gpd : float
        A connection adding more than this needs an offset [gpd] (2,500 gpd).
    offset_required : bool
        ``threshold_flow_gpd > threshold_gpd`` (exactly the threshold needs none).
    offset_ratio : float
        Gallons of I/I removed per gallon of connection flow allowed [-].
    credits_required_gpd : float
        Flow credits to withdraw, ``offset_ratio x peak_flow_gpd`` when an offset is required, else 0 [gpd].
    design_flow_table : str
        The design flow table the flows per unit come from (a path, or the bundled table's name).
    unverified_values : tuple of str
        The uses whose flow per unit the table does not mark as verified.
    threshold_basis : str
        Program policy: the flow compared with the threshold, ``"average"`` or ``"peak"``.
    threshold_flow_gpd : float
        That flow [gpd]: ``average_gpd`` or ``peak_flow_gpd``.
    offset_required_on_average : bool
        ``average_gpd > threshold_gpd``.
    offset_required_on_peak : bool
        ``peak_flow_gpd > threshold_gpd``.
    policies : tuple of dict
        The program policies applied, each ``{"name", "value", "text", "alternative"}``:
        ``threshold_basis`` and ``peaking_method`` always, ``offset_ratio`` above one, ``threshold_gpd``
        other than 2,500. The alternative of ``peaking_method`` = ``harmon_100gpcd`` is ``fixed`` (the
        applicant's factor: no figures); of the others, ``harmon_100gpcd`` with its ``peaking_factor``,
        ``peak_flow_gpd``, ``offset_required``, ``credits_required_gpd`` and ``changes_outcome``.
    """

    uses: tuple[DesignFlowUse, ...]
    average_gpd: float
    peaking_factor: float
    peaking_basis: str
    peak_flow_gpd: float
    threshold_gpd: float
    offset_required: bool
    offset_ratio: float
    credits_required_gpd: float
    design_flow_table: str
    unverified_values: tuple[str, ...]
    threshold_basis: str
    threshold_flow_gpd: float
    offset_required_on_average: bool
    offset_required_on_peak: bool
    policies: tuple[dict, ...]

    def to_dict(self) -> dict:
        """The result as ``capacitysim credits connection --json`` prints it (same keys, same order; lists, not
        tuples). The keys before issue 14 come first, in their order; the new ones follow."""
        from capacitysim.rules.document import envelope

        return envelope({
            "uses": [u.to_dict() for u in self.uses],
            "average_gpd": self.average_gpd,
            "peaking_factor": self.peaking_factor,
            "peaking_basis": self.peaking_basis,
            "peak_flow_gpd": self.peak_flow_gpd,
            "threshold_gpd": self.threshold_gpd,
            "offset_required": self.offset_required,
            "offset_ratio": self.offset_ratio,
            "credits_required_gpd": self.credits_required_gpd,
            "design_flow_table": self.design_flow_table,
            "unverified_values": list(self.unverified_values),
            "threshold_basis": self.threshold_basis,
            "threshold_flow_gpd": self.threshold_flow_gpd,
            "offset_required_on_average": self.offset_required_on_average,
            "offset_required_on_peak": self.offset_required_on_peak,
            "policies": [copy.deepcopy(p) for p in self.policies],
        }, "credits-connection")  # the envelope (issue 27, item 3); the policies are above


def connection_offset(unit_counts: Mapping[str, float], design_flows: Mapping[str, Mapping], *,
                      design_flow_table: str = "design flow table", peaking_factor=None, population_persons=None,
                      offset_ratio=DEFAULT_OFFSET_RATIO, threshold_gpd=OFFSET_THRESHOLD_GPD,
                      threshold_basis: str = DEFAULT_THRESHOLD_BASIS, field: str = "use") -> ConnectionOffset:
    """The peak sewage flow of a new or modified sewer connection and the flow credits it must withdraw.

    Steps, each by the function named:

    1. Average design flow of each use, ``count x gpd_per_unit`` [gpd], summed over the uses
       (:func:`average_design_flow_gpd`). The program leaves connection flow rates to "the new or
       modified sewer connection application program" [BJC, applications paragraph], which is not in
       the text held; the flows per unit come from the design flow table given (NYSDEC 2014 Table B-3
       style by default).
    2. Peaking factor [-] (:func:`peaking_factor_for`), program policy ``peaking_method``
       (:func:`peaking_method_for`): ``peaking_factor`` if given (``fixed``), else Harmon's for
       ``population_persons`` / 1,000 [thousands] (``harmon_population``), else for the population
       equivalent of the average flow at 100 gpcd (``harmon_100gpcd``, the default) [Harmon, TSS Figure 1].
    3. Peak sewage flow = average x peaking factor [gpd] (:func:`peak_sewage_flow_gpd`): the
       "estimated peak sewage flow rate increase" of credit bank section F [BJC].
    4. Offset required (:func:`offset_required`): the flow of the program policy ``threshold_basis``
       *more than* 2,500 gpd [BJC, definitions NEW OR MODIFIED SEWER CONNECTION, "adding greater than
       2,500 gallons per day of flow", and SEWER EXTENSION]. The definitions do not say peak; the
       default compares the average daily design flow, ``"peak"`` the peak sewage flow. Both outcomes
       are reported (``offset_required_on_average``, ``offset_required_on_peak``).
    5. Credits required [gpd] (:func:`credits_required_gpd`): ``offset_ratio x peak flow`` when an
       offset is required, else 0 (section F, one to one on the peak, whatever the basis of step 4).
       The ratio is checked by :func:`check_offset_ratio` (below one refused, above one a policy).

    Scalars only (one connection): no files, no printing.

    Parameters
    ----------
    unit_counts : Mapping of str to float
        Number of units [-] of each use (bedrooms, seats ...), by the use's name in ``design_flows``;
        each >= 0.
    design_flows : Mapping of str to Mapping
        The design flow table's uses: ``{name: {"gpd_per_unit": [gpd/unit], "unit": str, "source": str,
        "verified": bool (optional, default False)}}`` (``read_design_flows(...)["uses"]``).
    design_flow_table : str, default "design flow table"
        What the table is (a path), named in the result and in the error for an unknown use.
    peaking_factor : float, optional
        A fixed peaking factor [-], >= 1, instead of Harmon's.
    population_persons : float, optional
        Persons served [persons], >= 0, for Harmon's factor (default the average flow / 100 gpcd).
    offset_ratio : float, default 1
        Gallons of I/I removed per gallon allowed [-]: 1 is section F; (1, 10] a program policy,
        flagged in ``policies``; below 1 refused.
    threshold_gpd : float, default 2,500
        A connection adding more than this needs an offset [gpd]; another value is flagged in
        ``policies``.
    threshold_basis : {"average", "peak"}, default "average"
        Program policy: the flow compared with ``threshold_gpd`` (:data:`THRESHOLD_BASES`).
    field : str, default "use"
        How the caller names a use, in the error for an unknown use (the CLI: ``--use``).

    Returns
    -------
    ConnectionOffset
        Each use's average flow, the average and peak flows [gpd], the peaking factor [-] and its
        basis, whether an offset is required (on the basis chosen, and on each basis) and the credits
        required [gpd], with the program policies applied and their alternatives (``threshold_basis``
        first, then ``peaking_method``; ``offset_ratio`` and ``threshold_gpd`` when not the rule's).

    Raises
    ------
    InputError
        A use not in ``design_flows``; a count or flow per unit that is negative, not finite or
        overflows; a peaking factor below one; a negative population; an offset ratio that is not a
        finite number or above 10; a ``threshold_basis`` other than "average" or "peak".
    RefusedError
        An offset ratio below one (section F).

    References
    ----------
    BJC definitions (NEW OR MODIFIED SEWER CONNECTION, SEWER EXTENSION, OFFSET RATIO), the applications
    paragraph, and credit bank sections E (credits in gpd) and F; Ten States Standards (2014) 11.243
    and Figure 1.
    """
    basis_policy = check_threshold_basis(threshold_basis)
    ratio = check_offset_ratio(offset_ratio)
    uses, average_gpd, unverified = [], 0.0, []
    for name, count in unit_counts.items():  # step 1
        if name not in design_flows:
            raise InputError(f"{field} {name!r} is not in {design_flow_table} (known: {', '.join(design_flows)})")
        row = design_flows[name]
        use_gpd = float(average_design_flow_gpd(count, row["gpd_per_unit"]))
        average_gpd += use_gpd
        verified = bool(row.get("verified", False))
        uses.append(DesignFlowUse(use=name, count=float(count), unit=row["unit"], gpd_per_unit=float(row["gpd_per_unit"]),
                                  average_gpd=use_gpd, source=row["source"], verified=verified))
        if not verified:
            unverified.append(name)
    population_thousands = None if population_persons is None else population_persons / PERSONS_PER_THOUSAND
    pf = float(peaking_factor_for(average_gpd, peaking_factor, population_thousands))  # step 2
    peaking = PEAKING_BASIS_GIVEN if peaking_factor is not None else PEAKING_BASIS_HARMON
    peak_gpd = float(peak_sewage_flow_gpd(average_gpd, peaking_factor, population_thousands))  # step 3
    flows = {"average": average_gpd, "peak": peak_gpd}
    required = {b: bool(offset_required(flows[b], threshold_gpd)) for b in THRESHOLD_BASES}  # step 4
    need = {b: float(credits_required_gpd(peak_gpd, ratio["offset_ratio"], threshold_gpd, threshold_flow_gpd=flows[b]))
            for b in THRESHOLD_BASES}  # step 5
    other = next(b for b in THRESHOLD_BASES if b != basis_policy)
    policies = [{"name": "threshold_basis", "value": basis_policy, "text": THRESHOLD_BASIS_TEXT[basis_policy],
                 "alternative": {"value": other, "text": THRESHOLD_BASIS_TEXT[other], "threshold_flow_gpd": flows[other],
                                 "offset_required": required[other], "credits_required_gpd": need[other],
                                 "changes_outcome": required[other] != required[basis_policy]}}]
    method = peaking_method_for(peaking_factor, population_persons)
    if method == DEFAULT_PEAKING_METHOD:  # the alternative's factor is the applicant's: nothing to compute
        alternative = {"value": "fixed", "text": PEAKING_METHOD_TEXT["fixed"]}
    else:  # the alternative is the default, computed
        alt_peak = float(peak_sewage_flow_gpd(average_gpd))
        alt_flows = {"average": average_gpd, "peak": alt_peak}
        alt_required = bool(offset_required(alt_flows[basis_policy], threshold_gpd))
        alt_need = float(credits_required_gpd(alt_peak, ratio["offset_ratio"], threshold_gpd,
                                              threshold_flow_gpd=alt_flows[basis_policy]))
        alternative = {"value": DEFAULT_PEAKING_METHOD, "text": PEAKING_METHOD_TEXT[DEFAULT_PEAKING_METHOD],
                       "peaking_factor": float(peaking_factor_for(average_gpd)), "peak_flow_gpd": alt_peak,
                       "offset_required": alt_required, "credits_required_gpd": alt_need,
                       "changes_outcome": alt_required != required[basis_policy] or alt_need != need[basis_policy]}
    policies.append({"name": "peaking_method", "value": method, "text": PEAKING_METHOD_TEXT[method],
                     "alternative": alternative})
    if ratio["policy"] is not None:
        one_to_one = float(credits_required_gpd(peak_gpd, DEFAULT_OFFSET_RATIO, threshold_gpd,
                                                threshold_flow_gpd=flows[basis_policy]))
        policy = copy.deepcopy(ratio["policy"])
        policy["alternative"].update(credits_required_gpd=one_to_one, changes_outcome=one_to_one != need[basis_policy])
        policies.append(policy)
    threshold = float(check_range("threshold_gpd", threshold_gpd, 0.0, unit="gpd"))
    if threshold != OFFSET_THRESHOLD_GPD:
        on_rule = bool(offset_required(flows[basis_policy], OFFSET_THRESHOLD_GPD))
        policies.append({"name": "threshold_gpd", "value": threshold, "text": THRESHOLD_POLICY_TEXT,
                         "alternative": {"value": OFFSET_THRESHOLD_GPD, "text": "definitions: more than 2,500 gallons per day",
                                         "offset_required": on_rule,
                                         "credits_required_gpd": float(credits_required_gpd(
                                             peak_gpd, ratio["offset_ratio"], OFFSET_THRESHOLD_GPD,
                                             threshold_flow_gpd=flows[basis_policy])),
                                         "changes_outcome": on_rule != required[basis_policy]}})
    return ConnectionOffset(
        uses=tuple(uses),
        average_gpd=average_gpd,
        peaking_factor=pf,
        peaking_basis=peaking,
        peak_flow_gpd=peak_gpd,
        threshold_gpd=threshold,
        offset_required=required[basis_policy],
        offset_ratio=ratio["offset_ratio"],
        credits_required_gpd=need[basis_policy],
        design_flow_table=design_flow_table,
        unverified_values=tuple(unverified),
        threshold_basis=basis_policy,
        threshold_flow_gpd=flows[basis_policy],
        offset_required_on_average=required["average"],
        offset_required_on_peak=required["peak"],
        policies=tuple(policies),
    )


# --- the professional engineer of an I/I remediation engineering report ---------------------------

#: Longest value quoted in a refusal [characters]: a message stays one line.
_MAX_QUOTED_CHARS = 80


def _quoted(value) -> str:
    """``repr(value)`` cut to a one-line message; None (a key not given) is "nothing"."""
    if value is None:
        return "nothing"
    text = repr(value)
    return text if len(text) <= _MAX_QUOTED_CHARS else text[: _MAX_QUOTED_CHARS - 3] + "..."


def pe_license_number(pe_license, *, field: str = "pe_license") -> str:
    """The six digits of a New York State professional engineer license number, from the license as written.

    Accepted: six digits (leading zeros written), optionally after the words NY, NYS, PE (or P.E.), Lic.,
    License, Licence, No. in any order and case, with spaces, "#", ":" or "-" between them:
    ``"NY 012345"``, ``"PE 012345"``, ``"012345"`` and ``"NYS P.E. License No. 012345"`` all give ``"012345"``.

    Parameters
    ----------
    pe_license : str
        The license as the report gives it (project file ``[project] pe_license``).
    field : str, default "pe_license"
        How the caller names it, in the refusal.

    Returns
    -------
    str
        The six digits (``project.pe_license_number`` of ``credits quantify --json``).

    Raises
    ------
    InputError
        Naming ``field``, the value and what is allowed (:data:`PE_LICENSE_ALLOWED`), for

        * nothing (None, "", blanks): the quantification "shall be prepared by a professional engineer,
          licensed in the State of New York" (:data:`PE_REQUIREMENT`);
        * a number rather than text: TOML's ``pe_license = 012345`` is not even valid, and ``12345``
          has lost its leading zero; the license is quoted;
        * another count of digits (``"NY 12345"``, ``"NY 0123456"``) or other words (``"NJ 012345"``,
          ``"NY 012345 (example)"``);
        * all zeros (``"NY 000000"``, what the bundled examples gave before): a placeholder, not a license.

        Only the form is checked: whether the license exists and is registered is for NYSED's online
        license verification, not this tool.

    References
    ----------
    BJC quantification guidelines, first paragraph, and Table 174-19.1 note 2; NYSED Office of the
    Professions (the license number of a New York PE).
    """
    if pe_license is None or (isinstance(pe_license, str) and not pe_license.strip()):
        raise InputError(f"{field} is required: {PE_REQUIREMENT}; give {PE_LICENSE_ALLOWED}; got {_quoted(pe_license)}")
    if not isinstance(pe_license, str):
        raise InputError(f"{field} must be text (quoted: a number loses its leading zeros) holding "
                         f"{PE_LICENSE_ALLOWED}; got {_quoted(pe_license)}")
    form = _PE_LICENSE_FORM.fullmatch(pe_license.strip())
    words = [] if form is None else re.sub(r"[#:\-]", " ", form["prefix"].replace(".", "")).upper().split()
    if form is None or len(form["digits"]) != PE_LICENSE_DIGITS or any(w not in PE_LICENSE_PREFIX_WORDS for w in words):
        raise InputError(f"{field} must be {PE_LICENSE_ALLOWED}; got {_quoted(pe_license)}")
    if int(form["digits"]) == 0:
        raise InputError(f"{field} {_quoted(pe_license)} is not a license number (all zeros is a placeholder); "
                         f"give {PE_LICENSE_ALLOWED}")
    return form["digits"]


def check_engineer(engineer, *, field: str = "engineer") -> str:
    """The name of the professional engineer who prepared the quantification: non-blank text.

    Raises
    ------
    InputError
        None, not text, or blank: the quantification "shall be prepared by a professional engineer, licensed
        in the State of New York" (:data:`PE_REQUIREMENT`), who is named.
    """
    if not isinstance(engineer, str) or not engineer.strip():
        raise InputError(f"{field} must name the professional engineer who prepared the quantification "
                         f"({PE_REQUIREMENT}); allowed: non-blank text; got {_quoted(engineer)}")
    return engineer


def certify_project(project: Mapping, *, where: str = "") -> dict:
    """The project table of an I/I remediation engineering report, its engineer and NYS PE license checked.

    Parameters
    ----------
    project : Mapping
        The ``[project]`` table: ``engineer`` and ``pe_license`` required (:func:`check_engineer`,
        :func:`pe_license_number`); the other keys are carried through.
    where : str, optional
        Prefix of the field names in a refusal (a file's ``"PATH [project]: "``).

    Returns
    -------
    dict
        A copy of ``project`` with ``pe_license_number`` (the six digits) after ``pe_license``; the keys
        the bank reads (``id``, ``engineer``, ``pe_license_number``, ``basin``, ``municipal_user``) keep their
        names.

    Raises
    ------
    InputError
        No engineer, or no or a malformed license, naming the field, the value and what is allowed.

    References
    ----------
    BJC quantification guidelines ("shall be prepared by a professional engineer, licensed in the State of
    New York, and presented in an I/I remediation engineering report"); Table 174-19.1 note 2.
    """
    check_engineer(project.get("engineer"), field=f"{where}engineer")
    number = pe_license_number(project.get("pe_license"), field=f"{where}pe_license")
    out = {}
    for key, value in project.items():
        if key != "pe_license_number":
            out[key] = value
        if key == "pe_license":
            out["pe_license_number"] = number
    return out


# --- an I/I remediation engineering report, item by item ------------------------------------------

#: Every item type a project may list, with the table that quantifies it.
ITEM_TYPES = {
    "manhole_joint_leak": "Table 174-19.1",
    "sump_pump": "Table 174-19.2",
    "roof_drain": "Table 174-19.2 (TR-55) with Table 174-19.3",
    "catch_basin": "Table 174-19.2 (TR-55) with Table 174-19.3",
    "manhole_cover_drainage": "Table 174-19.2 (TR-55) with Table 174-19.3",
    "cross_connection": "Table 174-19.2 (TR-55) with Table 174-19.3",
    "separation": "Table 174-19.2 (TR-55) with Table 174-19.3; section B(1)",
    "pipe_segment": "Table 174-19.1 (case by case, note 2)",
    "lateral": "Table 174-19.1 (case by case, note 2)",
    "defective_cover": "Table 174-19.1 (case by case, note 2)",
}


def check_inflow_credit_basis(inflow_credit_basis) -> str:
    """The program policy ``inflow_credit_basis``: ``"volume"`` or ``"peak"`` (:data:`INFLOW_CREDIT_BASES`).

    Raises
    ------
    InputError
        Naming the value and the allowed ones.
    """
    if not isinstance(inflow_credit_basis, str) or inflow_credit_basis not in INFLOW_CREDIT_BASES:
        raise InputError(f"inflow_credit_basis must be one of {', '.join(INFLOW_CREDIT_BASES)} (what a TR-55 inflow "
                         f"item credits: the 24-hour runoff volume as gpd, or the peak rate), got {inflow_credit_basis!r}")
    return inflow_credit_basis


def quantify_item(item: dict, *, engineer: str = "", field: str = "item",
                  inflow_credit_basis: str = DEFAULT_INFLOW_CREDIT_BASIS) -> dict:
    """Quantify one I/I remediation item (already parsed to plain values) [gpd].

    Parameters
    ----------
    item : dict
        ``type`` (a key of :data:`ITEM_TYPES`) and its fields: ``surface``, ``severity``,
        ``count`` (manhole joint leaks); ``count`` (sump pumps); ``area_ac``, ``cover``, ``soil``
        and optionally ``tc_hr`` [hr] (TR-55 items; default :data:`DEFAULT_INFLOW_TC_HR`) and
        ``receiving_water``, ``redirected_to_combined`` (separation); ``gpd`` or ``gpm`` with
        ``justification`` (case-by-case items, and manhole joint leaks a PE determines case by
        case). ``location`` and ``description`` are carried through.
    engineer : str
        The NYS licensed PE preparing the quantification (required for case-by-case figures).
    inflow_credit_basis : {"volume", "peak"}, default "volume"
        Program policy: what a TR-55 item credits (:data:`INFLOW_CREDIT_BASES`).

    Returns
    -------
    dict
        ``type``, ``location``, ``description``, ``quantity``, ``basis`` (the table cell and the
        arithmetic), ``reference``, ``gpd``, ``qualifies`` and ``note``. A TR-55 item adds ``cn``,
        ``runoff_in``, ``tc_hr``, ``inflow_credit_volume_gpd`` (:func:`tr55_inflow_gpd`),
        ``inflow_credit_peak_rate_gpd`` (:func:`tr55_inflow_peak_rate_gpd`) and
        ``inflow_credit_basis``; its ``gpd`` is the one of the basis (0 when it does not qualify).

    References
    ----------
    BJC quantification sections A, B and B(1); Tables 174-19.1, 174-19.2 and 174-19.3.
    """
    basis_policy = check_inflow_credit_basis(inflow_credit_basis)
    kind = item.get("type")
    check_choice(f"{field}.type", kind, ITEM_TYPES)
    out = {
        "type": kind,
        "location": str(item.get("location", "")),
        "description": str(item.get("description", "")),
        "reference": ITEM_TYPES[kind],
        "qualifies": True,
        "note": "",
    }
    figure_given = item.get("gpd") is not None or item.get("gpm") is not None
    if kind in CASE_BY_CASE_TYPES and (figure_given or kind != "manhole_joint_leak"):
        gpd = case_by_case_gpd(item.get("gpd"), item.get("gpm"), justification=item.get("justification", ""),
                               engineer=engineer, field=field)
        how = f"{item['gpm']:g} gpm x {GPD_PER_GPM:g} min/day" if item.get("gpm") is not None else "PE's figure"
        if item.get("analysis"):  # a measured credit (issue 29): the document it cites, its SHA-256 and PE
            how = "metered (flow metering, Table 174-19.1 note 2)"
            out["analysis"] = dict(item["analysis"])
        out.update(quantity="case by case", basis=f"{how}; {item['justification']}",
                   reference="Table 174-19.1 (case by case, note 2)", gpd=float(gpd))
        return out
    if kind == "manhole_joint_leak":
        surface, severity = item.get("surface"), item.get("severity")
        check_choice(f"{field}.surface", surface, SURFACES)
        check_choice(f"{field}.severity", severity, SEVERITIES)
        count = float(check_count(f"{field}.count", item.get("count", 1), MAX_ITEM_COUNT))
        gpm = TABLE_174_19_1_GPM[(surface, severity)]
        out.update(quantity=f"{count:g} manhole(s)",
                   basis=f"Table 174-19.1, joint leaks, {surface} areas, {severity}: {gpm:g} gpm x {GPD_PER_GPM:g} min/day x {count:g}",
                   gpd=float(manhole_joint_leak_gpd(surface, severity, count)))
        return out
    if kind == "sump_pump":
        count = float(check_count(f"{field}.count", item.get("count", 1), MAX_ITEM_COUNT))
        out.update(quantity=f"{count:g} sump pump(s)",
                   basis=f"Table 174-19.2, sump pumps: {SUMP_PUMP_GPM:g} gpm x {GPD_PER_GPM:g} min/day x {count:g} (note 1)",
                   gpd=float(sump_pump_gpd(count)))
        return out
    # TR-55 inflow items
    area_ac = float(check_range(f"{field}.area_ac", item.get("area_ac"), 0.0, MAX_ITEM_AREA_AC, unit="ac"))
    if item.get("cover") is None or item.get("soil") is None:
        raise InputError(f"{field}: a TR-55 item needs cover and soil (Table 174-19.3)")
    for key in ("cover", "soil"):
        if not isinstance(item[key], str):
            raise InputError(f"{field}.{key} must be a name (text) from Table 174-19.3; got {item[key]!r}")
    from capacitysim.hydrology import runoff_depth

    tc_given = item.get("tc_hr")
    tc_hr = DEFAULT_INFLOW_TC_HR if tc_given is None else float(
        check_range(f"{field}.tc_hr", tc_given, MIN_INFLOW_TC_HR, MAX_INFLOW_TC_HR, unit="hr"))
    cn = float(program_cn(item["cover"], item["soil"]))
    q_in = float(runoff_depth(PROGRAM_STORM_DEPTH_IN, cn))
    credit = {"volume": float(tr55_inflow_gpd(area_ac, cn)), "peak": float(tr55_inflow_peak_rate_gpd(area_ac, cn, tc_hr))}
    area_sqft = area_ac * SQFT_PER_ACRE
    tc_source = "given" if tc_given is not None else "TR-55 ch. 3 minimum"
    out.update(
        quantity=f"{area_sqft:,.0f} ft2 ({area_ac:.4f} ac)",
        basis=(f"TR-55, {PROGRAM_STORM_DEPTH_IN:g} in 1-yr 24-h Type II storm; CN {cn:g} "
               f"(Table 174-19.3, {item['cover']}, soil {str(item['soil']).upper()}); Q = {q_in:.3f} in "
               f"over {area_ac:.4f} ac; credited: "
               + ("24-h runoff volume as gpd" if basis_policy == "volume" else
                  f"peak rate (SCS unit hydrograph, Tc {tc_hr:g} hr {tc_source}) as gpd")),
        cn=cn, runoff_in=q_in, tc_hr=tc_hr, gpd=credit[basis_policy],
        inflow_credit_volume_gpd=credit["volume"], inflow_credit_peak_rate_gpd=credit["peak"],
        inflow_credit_basis=basis_policy,
    )
    if kind == "separation":
        water = str(item.get("receiving_water", "") or "").strip()
        redirected = bool(item.get("redirected_to_combined", False))
        if not water or redirected:
            out.update(qualifies=False, gpd=0.0,
                       note=("does not qualify: the separated stormwater must be conveyed to a receiving water and "
                             "not redirected to the combined sewer (section B(1))"))
        else:
            out["note"] = f"stormwater conveyed to {water}"
    return out


def quantify_items(items: list[dict], *, engineer: str = "", pe_license: str | None = None,
                   inflow_credit_basis: str = DEFAULT_INFLOW_CREDIT_BASIS) -> dict:
    """Quantify every item of an I/I remediation project; ``total_gpd`` sums the qualifying items.

    A report is :func:`quantify_project`, which requires the engineer's NYS PE license too; this function
    refuses a figure without the engineer's name and checks ``pe_license`` when it is given (callers that
    read the project with :func:`capacitysim.io.project_files.read_project` have had it checked there).

    Parameters
    ----------
    items : list of dict
        The items (see :func:`quantify_item`).
    engineer : str
        The NYS licensed PE preparing the quantification: required, non-blank (:func:`check_engineer`).
    pe_license : str, optional
        The PE's NYS license; checked by :func:`pe_license_number` when given.
    inflow_credit_basis : {"volume", "peak"}, default "volume"
        Program policy: what the TR-55 items credit (:data:`INFLOW_CREDIT_BASES`).

    Returns
    -------
    dict
        ``items`` (each from :func:`quantify_item`); ``total_gpd`` [gpd] on the basis chosen;
        ``inflow_credit_basis``; ``inflow_credit_volume_gpd`` and ``inflow_credit_peak_rate_gpd``
        [gpd], the qualifying TR-55 items on each basis; ``total_gpd_on_volume`` and
        ``total_gpd_on_peak_rate`` [gpd], the project on each basis; ``policies``, the program
        policy ``inflow_credit_basis`` with its alternative (only when the project has a TR-55
        item: otherwise the basis changes nothing).

    Raises
    ------
    InputError
        No engineer; a malformed ``pe_license``; an unknown ``inflow_credit_basis``; a bad item.

    References
    ----------
    BJC quantification guidelines (prepared by a professional engineer licensed in the State of New York);
    Table 174-19.2 (TR-55 items); credit bank section E (gpd).
    """
    basis_policy = check_inflow_credit_basis(inflow_credit_basis)
    check_engineer(engineer)
    if pe_license is not None:
        pe_license_number(pe_license)
    rows = [quantify_item(it, engineer=engineer, field=f"item[{i}]", inflow_credit_basis=basis_policy)
            for i, it in enumerate(items)]
    counted = [r for r in rows if r["qualifies"]]
    key = {"volume": "inflow_credit_volume_gpd", "peak": "inflow_credit_peak_rate_gpd"}
    inflow = {b: float(sum(r[key[b]] for r in counted if "inflow_credit_basis" in r)) for b in INFLOW_CREDIT_BASES}
    total = {b: float(sum(r[key[b]] if "inflow_credit_basis" in r else r["gpd"] for r in counted)) for b in INFLOW_CREDIT_BASES}
    policies = []
    if any("inflow_credit_basis" in r for r in rows):
        other = next(b for b in INFLOW_CREDIT_BASES if b != basis_policy)
        policies.append({"name": "inflow_credit_basis", "value": basis_policy, "text": INFLOW_CREDIT_BASIS_TEXT[basis_policy],
                         "alternative": {"value": other, "text": INFLOW_CREDIT_BASIS_TEXT[other], "total_gpd": total[other],
                                         "inflow_credit_gpd": inflow[other],
                                         "changes_outcome": total[other] != total[basis_policy]}})
    return {"items": rows, "total_gpd": total[basis_policy], "inflow_credit_basis": basis_policy,
            "inflow_credit_volume_gpd": inflow["volume"], "inflow_credit_peak_rate_gpd": inflow["peak"],
            "total_gpd_on_volume": total["volume"], "total_gpd_on_peak_rate": total["peak"], "policies": policies}


def quantify_project(project: Mapping, items: list[dict], *,
                     inflow_credit_basis: str = DEFAULT_INFLOW_CREDIT_BASIS) -> dict:
    """The I/I remediation engineering report of a project: its engineer and license checked, every item quantified.

    What ``capacitysim credits quantify PROJECT --json`` prints.

    Parameters
    ----------
    project : Mapping
        The ``[project]`` table: ``engineer`` and ``pe_license`` required (:func:`certify_project`); ``id``,
        ``name``, ``basin``, ``municipal_user`` ... carried through.
    items : list of dict
        The items (see :func:`quantify_item`).
    inflow_credit_basis : {"volume", "peak"}, default "volume"
        Program policy: what the TR-55 items credit (:data:`INFLOW_CREDIT_BASES`).

    Returns
    -------
    dict
        ``kind`` (:data:`QUANTIFICATION_KIND`), ``project`` (the table with ``pe_license_number``, the license's six digits), ``storm``
        (:func:`program_storm`) and every key of :func:`quantify_items` (``total_gpd`` [gpd] ...). The bank
        reads ``project.id``, ``project.engineer``, ``project.pe_license_number``, ``project.basin``,
        ``project.municipal_user`` and ``total_gpd``.

    Raises
    ------
    InputError
        No engineer or no NYS PE license (or one of another form), naming the field, the value and what
        is allowed; and whatever :func:`quantify_items` refuses.

    References
    ----------
    BJC quantification guidelines: "The quantification of infiltration and inflow shall be prepared by a
    professional engineer, licensed in the State of New York, and presented in an I/I remediation
    engineering report"; Table 174-19.1 note 2.
    """
    meta = certify_project(project)
    result = quantify_items(items, engineer=meta["engineer"], pe_license=meta["pe_license"],
                            inflow_credit_basis=inflow_credit_basis)
    from capacitysim.rules.document import envelope

    # the envelope (issue 27, item 3): the policies are in ``result``
    return envelope({"kind": QUANTIFICATION_KIND, "project": meta, "storm": program_storm(), **result}, QUANTIFICATION_KIND)


#: The ``kind`` of the document :func:`quantify_project` returns (``credits quantify --json``): the bank reads
#: only documents of this kind as a deposit's quantification.
QUANTIFICATION_KIND = "ii-quantification"
