"""NYC stormwater performance standard for connections to combined sewers (15 RCNY Chapter 31).

Pure functions of the rule: the Allowable Flow by the rational method, the Stormwater Release
Rate of a new development and of an alteration, and the DEP modified rational detention volume.
Numbers written in the rule are module constants here, each with its section; numbers that come
from guidance or codes outside the rule (design intensity, runoff coefficients, the 10-year
intensity curve, orifice coefficients) live in the ``nyc-2012`` rule-set data file
(``capacitysim/data/rules/nyc-2012.toml``) with their sources and are passed in as arguments.

All functions broadcast (numpy): scalars in give scalars out.

References
----------
.. [1] 15 RCNY § 31-03 (as amended by NYC DEP, final rule of January 4, 2012, effective
   July 2012), "Stormwater performance standard for connections to combined sewer system",
   subdivision (a) paragraphs (1) to (4).
.. [2] NYC Plumbing Code (2022), § 1114.3.1 "Runoff rate", Eq. 11-1 (Q = Cw I A) and Eq. 11-2
   (area-weighted C); § 1114.3.1.1 "Storage volume", Eq. 11-3 (infiltration outflow) and
   Eq. 11-5 (critical duration tV = 0.27 (CWT AT / QDRR)^0.5 - 15).
.. [3] FHWA (2009), Urban Drainage Design Manual, HEC-22 3rd ed., Chapter 8 (detention; the
   modified rational method: storage = inflow volume of a storm of duration t at the IDF
   intensity i(t) minus the outflow volume, maximised over t).
"""

from __future__ import annotations

import calendar
import datetime as dt

import numpy as np

from capacitysim.checks import check_range, scalar_or_array
from capacitysim.errors import InputError
from capacitysim.units import INCHES_PER_FOOT, SECONDS_PER_HOUR, SECONDS_PER_MINUTE, SQFT_PER_ACRE

#: § 31-03(a)(1): the Stormwater Release Rate floor, "the greater of 0.25 cfs or ..." [cfs].
MIN_RELEASE_RATE_CFS = 0.25
#: § 31-03(a)(1): "... or 10% of the Allowable Flow" [-].
RELEASE_FRACTION_OF_ALLOWABLE = 0.10
#: Allowable Flow above which 10 % of it exceeds 0.25 cfs (derived from § 31-03(a)(1)) [cfs].
TEN_PERCENT_TAKES_OVER_CFS = MIN_RELEASE_RATE_CFS / RELEASE_FRACTION_OF_ALLOWABLE
#: PC § 1114.3.1.1 Eq. 11-3: Qinf = FAmin x isoil / 43,200 (43,200 = 12 in/ft x 3,600 s/h).
INFILTRATION_DIVISOR = INCHES_PER_FOOT * SECONDS_PER_HOUR
#: PC § 1114.3.1.1 Eq. 11-5 coefficient and offset (tV = 0.27 (CWT AT / QDRR)^0.5 - 15, AT in ft^2).
EQ_11_5_COEFFICIENT = 0.27
EQ_11_5_OFFSET_MIN = 15.0


def rational_flow_cfs(c, intensity_in_hr, area_ac, cfs_per_acre_in_hr=1.0):
    """Peak flow by the rational method Q = C i A [cfs].

    Parameters
    ----------
    c : float or array_like
        Runoff coefficient [-], in [0, 1].
    intensity_in_hr : float or array_like
        Rainfall intensity i [in/h], >= 0.
    area_ac : float or array_like
        Area A [ac], >= 0.
    cfs_per_acre_in_hr : float, default 1.0
        Units factor. PC § 1114.3.1 Eq. 11-1 states Q in cfs with A in acres and i in in/h, i.e.
        the conventional factor 1.0 (1 ac-in/h is exactly 1.0083 cfs, ``units.CFS_PER_ACRE_INCH_PER_HOUR``).

    References
    ----------
    NYC Plumbing Code (2022) § 1114.3.1, Eq. 11-1.
    """
    c = check_range("c", c, 0.0, 1.0)
    i = check_range("intensity_in_hr", intensity_in_hr, 0.0, unit="in/h")
    a = check_range("area_ac", area_ac, 0.0, unit="ac")
    k = check_range("cfs_per_acre_in_hr", cfs_per_acre_in_hr, 0.0, low_inclusive=False)
    return scalar_or_array(c * i * a * k)


def weighted_runoff_coefficient(areas, coefficients, axis=-1):
    """Area-weighted runoff coefficient Cw = (1/A) sum(A_k C_k) [-].

    Parameters
    ----------
    areas : array_like
        Areas of each surface type (any consistent unit), >= 0, summing to > 0 along ``axis``.
    coefficients : array_like
        Runoff coefficient C_k of each surface type [-], in [0, 1].

    References
    ----------
    NYC Plumbing Code (2022) § 1114.3.1, Eq. 11-2.
    """
    a = check_range("areas", areas, 0.0)
    c = check_range("coefficients", coefficients, 0.0, 1.0)
    total = a.sum(axis=axis)
    if np.any(total <= 0):
        raise InputError("areas must sum to more than 0 to weight runoff coefficients")
    return scalar_or_array((a * c).sum(axis=axis) / total)


def allowable_flow_cfs(site_area_ac, drainage_plan_c, design_intensity_in_hr, cfs_per_acre_in_hr=1.0):
    """Allowable Flow of a site by the rational method with the drainage-plan C [cfs].

    The rule defines the Allowable Flow as "the stormwater flow from a development that can be
    released into an existing storm or combined sewer based on existing sewer design criteria";
    DEP computes it as Q = C i A with the runoff coefficient C of the sewer's drainage plan for the
    site, the design intensity of the rule set and the total site area.

    Parameters
    ----------
    site_area_ac : float or array_like
        Total site area [ac], > 0.
    drainage_plan_c : float or array_like
        Runoff coefficient of the receiving sewer's drainage plan [-], in (0, 1].
    design_intensity_in_hr : float or array_like
        Design rainfall intensity [in/h], > 0 (rule set ``design_intensity_in_hr``).
    cfs_per_acre_in_hr : float, default 1.0
        Units factor of the rational method (see :func:`rational_flow_cfs`).

    References
    ----------
    15 RCNY § 31-02 (definition of Allowable Flow) and § 31-03(a)(1); NYC Plumbing Code (2022)
    § 1114.3.1 Eq. 11-1 for the rational method and the 5.95 in/h intensity.
    """
    area = check_range("site_area_ac", site_area_ac, 0.0, low_inclusive=False, unit="ac")
    c = check_range("drainage_plan_c", drainage_plan_c, 0.0, 1.0, low_inclusive=False)
    i = check_range("design_intensity_in_hr", design_intensity_in_hr, 0.0, low_inclusive=False, unit="in/h")
    return rational_flow_cfs(c, i, area, cfs_per_acre_in_hr)


def release_rate_cfs(allowable_flow_cfs):
    """Stormwater Release Rate of a new development [cfs].

    The greater of 0.25 cfs or 10 % of the Allowable Flow; when the Allowable Flow is less than
    0.25 cfs, the Allowable Flow itself. So the rate is the Allowable Flow below 0.25 cfs,
    0.25 cfs from 0.25 to 2.5 cfs, and 10 % of the Allowable Flow above 2.5 cfs.

    Parameters
    ----------
    allowable_flow_cfs : float or array_like
        Allowable Flow [cfs], >= 0.

    References
    ----------
    15 RCNY § 31-03(a)(1): "The Stormwater Release Rate must be no more than the greater of
    0.25 cfs or 10% of the Allowable Flow or, if the Allowable Flow is less than 0.25 cfs, no
    more than the Allowable Flow."
    """
    q = check_range("allowable_flow_cfs", allowable_flow_cfs, 0.0, unit="cfs")
    rate = np.where(
        q < MIN_RELEASE_RATE_CFS,
        q,
        np.maximum(MIN_RELEASE_RATE_CFS, RELEASE_FRACTION_OF_ALLOWABLE * q),
    )
    return scalar_or_array(rate)


def alteration_release_rate_cfs(allowable_flow_cfs, altered_area, site_area):
    """Stormwater Release Rate of the altered area of an alteration [cfs].

    The release rate of the entire site (:func:`release_rate_cfs`) multiplied by the ratio of the
    altered area to the total site area. No new points of discharge are permitted (checked by the
    caller, not a number).

    Parameters
    ----------
    allowable_flow_cfs : float or array_like
        Allowable Flow of the entire site [cfs], >= 0.
    altered_area, site_area : float or array_like
        Altered area and total site area, in the same unit; 0 < altered_area <= site_area.

    References
    ----------
    15 RCNY § 31-03(a)(2).
    """
    altered = check_range("altered_area", altered_area, 0.0, low_inclusive=False)
    site = check_range("site_area", site_area, 0.0, low_inclusive=False)
    over = altered > site
    if np.any(over):
        raise InputError(
            f"altered_area must not exceed site_area (§ 31-03(a)(2) prorates by altered / total area); "
            f"got {np.broadcast_to(altered, over.shape)[over].flat[0]:g} > {np.broadcast_to(site, over.shape)[over].flat[0]:g}"
        )
    return scalar_or_array(np.asarray(release_rate_cfs(allowable_flow_cfs)) * altered / site)


def infiltration_outflow_cfs(footprint_sf, soil_rate_in_hr):
    """Outflow by infiltration of an open-bottom system Qinf = FAmin x isoil / 43,200 [cfs].

    Parameters
    ----------
    footprint_sf : float or array_like
        Minimum footprint (infiltrating bottom area) of the system [ft^2], >= 0.
    soil_rate_in_hr : float or array_like
        Soil infiltration rate [in/h] measured in situ, >= 0.

    References
    ----------
    NYC Plumbing Code (2022) § 1114.3.1.1, Eq. 11-3; 15 RCNY § 31-03(a)(3) for when DEP credits it.
    """
    fa = check_range("footprint_sf", footprint_sf, 0.0, unit="ft2")
    rate = check_range("soil_rate_in_hr", soil_rate_in_hr, 0.0, unit="in/h")
    return scalar_or_array(fa * rate / INFILTRATION_DIVISOR)


def idf_intensity_in_hr(duration_min, a, b):
    """Intensity of an IDF curve of the form i = a / (t + b) [in/h].

    Parameters
    ----------
    duration_min : float or array_like
        Storm duration t [min], >= 0.
    a : float
        Curve coefficient [in/h x min], > 0 (rule set ``idf_10yr.a``).
    b : float
        Curve offset [min], >= 0 (rule set ``idf_10yr.b_min``).

    References
    ----------
    HEC-22 (2009) ch. 3 and ch. 8 (i = a / (t + b) curves in the rational and modified rational
    methods). The 10-year constants of the nyc-2012 rule set are derived, not sourced (see there).
    """
    t = check_range("duration_min", duration_min, 0.0, unit="min")
    a = check_range("a", a, 0.0, low_inclusive=False)
    b = check_range("b", b, 0.0)
    return scalar_or_array(a / (t + b))


def eq_11_5_duration_min(c, area_sf, release_cfs):
    """Critical storm duration of PC Eq. 11-5: tV = 0.27 (C A / QDRR)^0.5 - 15 [min].

    Parameters
    ----------
    c : float or array_like
        Weighted runoff coefficient of the tributary area [-].
    area_sf : float or array_like
        Tributary area [ft^2] (Eq. 11-5 defines AT in square feet).
    release_cfs : float or array_like
        Detention facility maximum release rate QDRR [cfs], > 0.

    References
    ----------
    NYC Plumbing Code (2022) § 1114.3.1.1, Eq. 11-5 (10-year storm, variable outflow).
    """
    c = check_range("c", c, 0.0, 1.0)
    a = check_range("area_sf", area_sf, 0.0, unit="ft2")
    q = check_range("release_cfs", release_cfs, 0.0, low_inclusive=False, unit="cfs")
    return scalar_or_array(EQ_11_5_COEFFICIENT * np.sqrt(c * a / q) - EQ_11_5_OFFSET_MIN)


def modified_rational_volume_cf(c, area_ac, outflow_cfs, a, b, cfs_per_acre_in_hr=1.0):
    """Required detention volume by the modified rational method, maximised over duration [ft^3].

    For a storm of duration t at the IDF intensity i(t) = a / (t + b), the stored volume is the
    inflow C i(t) A over t minus a constant outflow Qo over t:
    V(t) = 60 t (k C A a / (t + b) - Qo). Setting dV/dt = 0 gives the critical duration
    t* = sqrt(b k C A a / Qo) - b and the maximum V* = 60 (sqrt(k C A a) - sqrt(b Qo))^2
    (my algebra; it reproduces PC Eq. 11-5 exactly when a = 0.27^2 x 43,560 / 15 and b = 15).
    When t* <= 0 (the outflow passes even the shortest storm) no storage is needed.

    Parameters
    ----------
    c : float or array_like
        Weighted runoff coefficient of the tributary area [-].
    area_ac : float or array_like
        Tributary area [ac].
    outflow_cfs : float or array_like
        Constant outflow Qo during the storm [cfs] (release rate plus any credited infiltration
        or recycling withdrawal), > 0.
    a, b : float
        IDF constants of the 10-year curve [in/h x min], [min].
    cfs_per_acre_in_hr : float, default 1.0
        Units factor of the rational method.

    Returns
    -------
    volume_cf, duration_min : float or ndarray
        V* [ft^3] and t* [min] (0 when no storage is needed).

    References
    ----------
    HEC-22 (2009) ch. 8 (modified rational method); NYC Plumbing Code (2022) § 1114.3.1.1
    Eq. 11-5 (10-year storm, critical duration). PC Eq. 11-6 (the code's own volume equation)
    could not be read in full and is NOT used.
    """
    c = check_range("c", c, 0.0, 1.0)
    area = check_range("area_ac", area_ac, 0.0, unit="ac")
    qo = check_range("outflow_cfs", outflow_cfs, 0.0, low_inclusive=False, unit="cfs")
    a = check_range("a", a, 0.0, low_inclusive=False)
    b = check_range("b", b, 0.0, low_inclusive=False)
    k = float(cfs_per_acre_in_hr)
    kca = k * c * area * a
    t_star = np.sqrt(b * kca / qo) - b
    vol = SECONDS_PER_MINUTE * (np.sqrt(kca) - np.sqrt(b * qo)) ** 2
    none_needed = t_star <= 0
    vol = np.where(none_needed, 0.0, vol)
    t_star = np.where(none_needed, 0.0, t_star)
    return scalar_or_array(vol), scalar_or_array(t_star)


def modified_rational_storage_curve_cf(duration_min, c, area_ac, outflow_cfs, a, b, cfs_per_acre_in_hr=1.0):
    """Stored volume V(t) = 60 t (k C A a/(t + b) - Qo) of the modified rational method [ft^3].

    The curve whose maximum :func:`modified_rational_volume_cf` gives in closed form; the report
    tabulates it and the tests maximise it numerically.

    References
    ----------
    HEC-22 (2009) ch. 8.
    """
    t = check_range("duration_min", duration_min, 0.0, unit="min")
    i = a / (t + b)
    return scalar_or_array(SECONDS_PER_MINUTE * t * (cfs_per_acre_in_hr * c * area_ac * i - outflow_cfs))


def acres(area_sf):
    """Square feet to acres (``units.SQFT_PER_ACRE``)."""
    return scalar_or_array(np.asarray(area_sf, dtype=float) / SQFT_PER_ACRE)


#: 15 RCNY § 31-03(a), the scope of the release rate: "The following provisions apply to the issuance of
#: permits for sewer availability certifications and connections to combined sewer systems for new
#: buildings and alterations as defined in the Construction/Plumbing Codes and related requirements for
#: any horizontal building enlargement or any proposed increase in impervious surfaces."
#: The two kinds of alteration it names, as a site file's ``alteration_type`` spells them.
ALTERATION_TYPES = {
    "horizontal_enlargement": "horizontal building enlargement",
    "impervious_increase": "increase in impervious surfaces",
}
#: The citation of :data:`ALTERATION_TYPES`.
ALTERATION_SCOPE_CITATION = "15 RCNY § 31-03(a) (alterations for any horizontal building enlargement or any proposed increase in impervious surfaces)"

#: The marker of a named program policy: where the rule is silent, capacitysim applies a named
#: interpretation, never presented as the rule.
PROGRAM_INTERPRETATION = "program interpretation — confirm with DEP"
#: Named policy MASTER_PLAN_REQUIRED: a development built in phases or on subdivided lots is designed
#: only under a master/phased plan. The rule text read (15 RCNY § 31-03 and § 31-04(a), 2012) holds no
#: such provision; the Statement of Basis and Purpose of the 2012 final rule says the rule "clarifies
#: that stormwater management systems for developments that include multiple construction phases or
#: subdivision of lots must be submitted to DEP for review and approval as a master/phased plan site
#: connection application proposal". capacitysim therefore refuses a phased or subdivided site whose
#: file names no master plan, as this named policy.
MASTER_PLAN_POLICY = "MASTER_PLAN_REQUIRED"
MASTER_PLAN_CITATION = (
    f"{PROGRAM_INTERPRETATION} (policy {MASTER_PLAN_POLICY}): the 2012 final rule's Statement of Basis and Purpose "
    "says systems of developments with multiple construction phases or subdivision of lots 'must be submitted to DEP "
    "for review and approval as a master/phased plan site connection application proposal'; no section of the rule "
    "text read (15 RCNY § 31-03, § 31-04(a)) states it"
)

#: The owner's obligations for a detention system, 15 RCNY § 31-04(a)(8), one record per obligation
#: (``text`` paraphrased, ``citation`` the paragraph and its sentence). The paragraph reads: "Any
#: detention or retention system and any replacement of such a system proposed and implemented in order
#: to comply with this rule must be properly maintained throughout the useful life of the system and
#: maintenance records maintained, until replacement as approved by DEP. This obligation applies to
#: current property owners, their successors, assigns, and other persons in control of the property, and
#: shall be made binding in a deed restriction or other form satisfactory to DEP. Three years after the
#: date of approval of a retention or detention system and every three years thereafter the operation of
#: the system shall be inspected by a licensed professional engineer, a registered architect or a
#: licensed master plumber. Such architect, engineer or master plumber shall submit certification to DEP
#: that the system is free of debris and sediments, that its orifice is unobstructed and flowing and that
#: the system is otherwise operating in compliance with this rule."
MAINTENANCE_OBLIGATIONS = (
    {"text": "The detention system (and any replacement) must be properly maintained throughout its useful life, "
             "with maintenance records kept, until replacement as approved by DEP.",
     "citation": "15 RCNY § 31-04(a)(8), first sentence (maintenance and maintenance records)"},
    {"text": "The obligation binds current owners, their successors, assigns and other persons in control of the "
             "property, and must be made binding in a deed restriction or other form satisfactory to DEP.",
     "citation": "15 RCNY § 31-04(a)(8), second sentence (deed restriction)"},
    {"text": "Three years after approval and every three years thereafter, a licensed professional engineer, registered "
             "architect or licensed master plumber must inspect the system and certify to DEP that it is free of debris "
             "and sediments, that its orifice is unobstructed and flowing, and that it otherwise operates in compliance.",
     "citation": "15 RCNY § 31-04(a)(8), third and fourth sentences (triennial inspection and certification)"},
)

#: § 31-04(a)(8), third sentence: "Three years after the date of approval of a retention or detention
#: system and every three years thereafter ..." - the interval of the inspection and certification [years].
TRIENNIAL_INTERVAL_YEARS = 3
#: § 31-04(a)(8), third sentence: "... shall be inspected by a licensed professional engineer, a registered
#: architect or a licensed master plumber." The professions that may inspect and certify, in the rule's order.
TRIENNIAL_CERTIFIERS = ("licensed professional engineer", "registered architect", "licensed master plumber")
#: The citation of the triennial inspection and certification (the third record of :data:`MAINTENANCE_OBLIGATIONS`).
TRIENNIAL_CITATION = MAINTENANCE_OBLIGATIONS[2]["citation"]
#: Due dates a result lists when asked for no horizon: the first five (fifteen years after approval) [-].
TRIENNIAL_DUE_DATES_LISTED = 5
#: Most due dates :func:`triennial_certifications` returns (3,000 years of them) [-].
MAX_TRIENNIAL_DUE_DATES = 1000
#: Named policy LEAP_DAY_FEB_28: when "three years after" a February 29 approval falls in a year without
#: February 29. The rule does not say; NY General Construction Law § 58 reads a year in a statute or
#: instrument as twelve months (and § 31 a month as a calendar month), so the count ends in February of
#: the year counted, and capacitysim takes its last day, February 28: never later than three years after.
LEAP_DAY_POLICY = "LEAP_DAY_FEB_28"
LEAP_DAY_CITATION = (
    f"{PROGRAM_INTERPRETATION} (policy {LEAP_DAY_POLICY}): 15 RCNY § 31-04(a)(8) does not say when three years after a "
    "February 29 approval falls in a year without February 29; a year counted as twelve calendar months (NY General "
    "Construction Law §§ 58, 31) ends in February, on its last day, February 28; in a leap year on February 29"
)


def policies_named(document) -> list:
    """The named policies of this rule (:data:`MASTER_PLAN_POLICY`, :data:`LEAP_DAY_POLICY`) whose texts a
    detention document cites, as :class:`~capacitysim.rules.policy.Policy` (the envelope's ``policies``)."""
    import json

    from capacitysim.rules.policy import Policy

    text = json.dumps(document, default=str, ensure_ascii=False)
    known = (Policy(MASTER_PLAN_POLICY, True, MASTER_PLAN_CITATION, scope="detention design"),
             Policy(LEAP_DAY_POLICY, "February 28", LEAP_DAY_CITATION, scope="detention design"))
    return [p for p in known if f"(policy {p.name})" in text]


def triennial_certifications(approved_on, *, through=None, count=None):
    """The due dates of the triennial inspection and certification of a detention system.

    15 RCNY § 31-04(a)(8), third and fourth sentences: "Three years after the date of approval of a
    retention or detention system and every three years thereafter the operation of the system shall
    be inspected by a licensed professional engineer, a registered architect or a licensed master
    plumber. Such architect, engineer or master plumber shall submit certification to DEP that the
    system is free of debris and sediments, that its orifice is unobstructed and flowing and that the
    system is otherwise operating in compliance with this rule." Who may certify is
    :data:`TRIENNIAL_CERTIFIERS`.

    The k-th due date is the approval date moved k x 3 calendar years (k = 1, 2, ...): the same month and
    day, each counted from the approval date, never from the previous due date. An approval on
    February 29 falls due on February 28 of a year without February 29 and on February 29 of a leap
    year (named policy :data:`LEAP_DAY_POLICY`, :data:`LEAP_DAY_CITATION`: the rule does not say):
    2024-02-29 gives 2027-02-28, 2030-02-28, 2033-02-28, 2036-02-29.

    Parameters
    ----------
    approved_on : datetime.date
        Date of DEP's approval of the system [date]. A ``datetime`` (with a time) is refused.
    through : datetime.date, optional
        Horizon [date]: only the due dates on or before it (none when it comes before the first).
    count : int, optional
        Most due dates returned [-], 1 to :data:`MAX_TRIENNIAL_DUE_DATES`; default
        :data:`TRIENNIAL_DUE_DATES_LISTED` when ``through`` is not given, else all up to ``through``.
        Due dates after year 9999 are not returned (a ``datetime.date`` stops there).

    Returns
    -------
    tuple of datetime.date
        The due dates [date], earliest first.

    Raises
    ------
    InputError
        ``approved_on`` or ``through`` not a date, ``count`` not a whole number in range.

    References
    ----------
    15 RCNY § 31-04(a)(8) (NYC DEP final rule of January 4, 2012); NY General Construction Law § 58 (year)
    and § 31 (month), for the February 29 policy.
    """
    for name, value in (("approved_on", approved_on), ("through", through)):
        if value is None and name == "through":
            continue
        if not isinstance(value, dt.date) or isinstance(value, dt.datetime):
            raise InputError(f"{name} must be a date (datetime.date, YYYY-MM-DD); got {value!r}")
    if count is None:
        count = TRIENNIAL_DUE_DATES_LISTED if through is None else MAX_TRIENNIAL_DUE_DATES
    if isinstance(count, bool) or not isinstance(count, int) or not 1 <= count <= MAX_TRIENNIAL_DUE_DATES:
        raise InputError(f"count must be a whole number from 1 to {MAX_TRIENNIAL_DUE_DATES}; got {count!r}")
    out = []
    for k in range(1, count + 1):
        year = approved_on.year + k * TRIENNIAL_INTERVAL_YEARS
        if year > dt.MAXYEAR:
            break
        day = min(approved_on.day, calendar.monthrange(year, approved_on.month)[1])
        due = dt.date(year, approved_on.month, day)
        if through is not None and due > through:
            break
        out.append(due)
    return tuple(out)
