"""The public Python API: one function per workflow, each its process (:mod:`capacitysim.processes`), as the CLI's
commands and the service's processes are.

Each validates its arguments with the process's validator (a bad value is an
:class:`~capacitysim.errors.InputError` naming the argument, the value and what is allowed), runs it and returns
the workflow's typed result; ``result.to_dict()`` is the document the CLI prints with
``--json`` (the same keys, the same verdict). Files may be given by path or, where capacitysim bundles
one, by name (``"synthetic-50"``, ``"binghamton-1yr-24h"``, ``"nyc-2012"``).

>>> import capacitysim
>>> d = capacitysim.capacity_demonstration("synthetic-50", connections=["MH0017=60000"],
...                                        storm="binghamton-1yr-24h")           # doctest: +SKIP
>>> d.verdict, d.to_dict()["failed_checks"]                                       # doctest: +SKIP
"""

from __future__ import annotations

import os


def _run(process_id: str, work_dir=None, **raw):
    from capacitysim.processes import get

    proc = get(process_id)
    return proc.run(proc.validate(raw), work_dir=work_dir)


def capacity_demonstration(model, connections=(), remediations=(), *, storm=None, criteria=None, spinup_hr=None,
                           work_dir=None, plant=None, committed=None, application=None):
    """Run a capacity demonstration: the SWMM model before and after the change, judged element by element.

    Parameters
    ----------
    model : str or path
        A SWMM ``.inp`` file, or the name of a bundled model (``capacitysim list models``).
    connections : sequence of str or Connection
        New connections, ``"NODE=GPD"`` [gpd, average daily flow].
    remediations : sequence of str or Remediation
        I/I remediation, ``"basin=OUTLET,gpd=GPD"``, ``"basin=OUTLET,fraction=F"`` or source removals.
    storm : str or path, optional
        A design storm (bundled name or TOML file); default the model's own rainfall.
    criteria : Criteria or dict, optional
        Acceptance criteria (program policies, :class:`capacitysim.rules.capacity.Criteria`).
    spinup_hr : float, optional
        Dry-weather spin-up prepended to the model's period [h] (default by the named policy).
    work_dir : path, optional
        Keep the runs in this folder (default: a temporary folder removed by ``close()``).
    plant : str, optional
        The plant outfall (default: chosen from the network).
    committed : str, path or dict, optional
        The credit bank file (as ``capacity --committed BANK``), or its commitments document
        (:func:`capacitysim.workflows.committed.capacity_commitments`): the flows committed on the model
        are injected with the connections (program policy ``committed_baseline``, as ``capacity --committed``).
    application : str, optional
        With a bank file: the applicant's own application, left out of the commitments.

    Returns
    -------
    capacitysim.workflows.demonstration.Demonstration
        ``verdict`` ("pass", "fail", "untrusted"), ``checks`` and ``to_dict()``; use it as a context
        manager (or call ``close()``) to remove its temporary run folder.

    References
    ----------
    BJC I/I offset program, credit bank H(1) (demonstration of adequate hydraulic capacity).
    """
    return _run("capacity-demonstration", work_dir, model=model, connections=list(connections),
                remediations=list(remediations), storm=storm, criteria=criteria, spinup_hr=spinup_hr, plant=plant,
                committed=committed, application=application)


def design_detention(site, rules="nyc-2012", *, swmm: bool = True, work_dir=None):
    """Design the detention system and orifice of a NYC site (15 RCNY § 31-03).

    Parameters
    ----------
    site : path or Site
        A site TOML file (or a loaded :class:`capacitysim.io.site_files.Site`).
    rules : str, path or RuleSet, default "nyc-2012"
        The rule set: a bundled name, a TOML file (``extends = "nyc-2012"``) or a loaded one.
    swmm : bool, default True
        Check the design in EPA SWMM.
    work_dir : path, optional
        Keep the SWMM run in this folder.

    Returns
    -------
    capacitysim.workflows.detention.DetentionResult

    Raises
    ------
    capacitysim.errors.RefusedError
        A site the rule refuses (not a combined sewer, an infiltration credit without in-situ evidence...).

    References
    ----------
    15 RCNY § 31-03(a)(1)-(4); NYC Plumbing Code § 1114.3.1.
    """
    return _run("detention-design", work_dir, site=site, rule=rules, swmm=swmm)


def design_detention_variants(site, variants: dict, rules="nyc-2012"):
    """Design many variants of a NYC site at once, by the engine of :func:`design_detention` (no SWMM check).

    Parameters
    ----------
    site : path or Site
    variants : dict of str to array_like (n,)
        Per-variant values (``length_ft``, ``height_ft``, ``drainage_plan_c``, ``orifice_diameter_in``...,
        see :func:`capacitysim.workflows.detention.design_batch`).
    rules : str, path or RuleSet, default "nyc-2012"

    Returns
    -------
    capacitysim.workflows.detention.DetentionBatch
    """
    from capacitysim.io.site_files import RuleSet, Site, load_rule_set, load_site
    from capacitysim.workflows.detention import design_batch

    rule_set = rules if isinstance(rules, RuleSet) else load_rule_set(rules)
    site_obj = site if isinstance(site, Site) else load_site(site, rule_set)
    return design_batch(site_obj, rule_set, variants)


def spdes_check(*, flows=None, dmr=None, watershed=None, limit_mgd=None, basis=None, as_of=None, added_gpd=(), **options):
    """Treatment capacity: a plant's flow record against its SPDES flow limit.

    For a plant discharging within the NYC watershed (``watershed=True``): would a new connection be
    prohibited under 15 RCNY § 18-37(b)? For another plant: the permitted-flow headroom after the
    added flow (§ 18-37(b) does not apply).

    Parameters
    ----------
    flows : path, optional
        Daily flow CSV (``date``, ``flow_mgd``), or the bundled ``sample-wwtp``; with ``limit_mgd`` [MGD].
    dmr : path, optional
        An EPA ECHO DMR download (the limit is read from it unless ``limit_mgd`` is given).
    watershed : bool
        Whether the plant discharges within the NYC watershed (required unless a plant file says it).
    basis : {"month", "30day", "12month"}, optional
        The permit's averaging basis (default: the plant file's, else month).
    as_of : date-like, optional
        The date of the check (default: the application date, else today: a named policy).
    added_gpd : sequence of float
        Average daily flow of the new connection(s) [gpd].
    **options
        ``plant`` (a plant file), ``application_date``, ``strict_record_age``, ``date_column``,
        ``flow_column``, ``units``, ``outfall``, ``location``, ``submittal`` as the CLI's options.

    Returns
    -------
    capacitysim.workflows.spdes.SpdesCheck

    References
    ----------
    15 RCNY § 18-37(b).
    """
    return _run("spdes-check", flows=flows, dmr=dmr, watershed=watershed, limit_mgd=limit_mgd, basis=basis,
                as_of=as_of, added_gpd=list(added_gpd), **options)


def headroom(model, storms=(), nodes=None, *, basin=None, remediations=(), plant=None, peaking="pattern", spinup_hr=None,
             tolerance_pct=5.0, max_gpd=10_000_000.0, min_gpd=100.0, method="screen", criteria=None, workers=None,
             scheduler=None, out=None, resume: bool = False):
    """Capacity headroom: the largest connection each node can take, bracketed by SWMM runs.

    Parameters
    ----------
    model : str or path
        A SWMM ``.inp`` file, or the name of a bundled model.
    storms : sequence of str or path
        Design storms (bundled names or TOML files); default the model's own rainfall.
    nodes : sequence of str, optional
        The nodes searched (default: every junction, or those of ``basin``).
    basin : str, optional
        Search the junctions of this basin (its outlet).
    remediations, plant, peaking, spinup_hr, criteria
        As :func:`capacity_demonstration`.
    tolerance_pct : float, default 5
        Bracket width: failing / passing <= 1 + tolerance [%].
    max_gpd, min_gpd : float
        Largest and smallest connection searched [gpd].
    method : {"screen", "bisection"}
    workers : int, optional
        Local worker processes (default one per core; 0 runs in this process).
    scheduler : str, optional
        Address of a ``dask.distributed`` scheduler.
    out : path, optional
        Folder of the outputs (headroom.zarr streamed, resumable with ``resume``).

    Returns
    -------
    capacitysim.workflows.headroom.HeadroomResult
        ``to_dict()``: the document ``capacitysim headroom --json`` prints.
    """
    return _run("headroom", model=model, storms=list(storms) or None, nodes=None if nodes is None else list(nodes),
                basin=basin, remediations=list(remediations), plant=plant, peaking=peaking, spinup_hr=spinup_hr,
                tolerance_pct=tolerance_pct, max_gpd=max_gpd, min_gpd=min_gpd, method=method, criteria=criteria,
                workers=workers, scheduler=scheduler, out=out, resume=resume or None)


def quantify_credits(project, inflow_basis=None):
    """The itemised I/I remediation engineering report of a project (BJC Tables 174-19.1 to 174-19.3).

    Parameters
    ----------
    project : path
        A project TOML file, or the name of a bundled one.
    inflow_basis : {"volume", "peak"}, optional
        Program policy ``inflow_credit_basis`` (default volume).

    Returns
    -------
    dict
        The document ``capacitysim credits quantify --json`` prints (``to_dict()`` is itself).
    """
    return _run("credits-quantification", project=project, inflow_basis=inflow_basis)


def metered_credit(pre_flow, pre_rain, post_flow, post_rain, *, area_ac, tz="America/New_York", flow_units=None,
                   rain_units=None, basis=None, claim=None, level=None, n_boot=None, seed=None, pe_name=None,
                   pe_license=None, dry_include=None, dry_exclude=None):
    """The I/I a rehabilitation removed, measured from meter and gauge records before and after it (issue 29).

    Parameters
    ----------
    pre_flow, pre_rain, post_flow, post_rain : path
        Flow-meter and rain-gauge records (CSV or logger exports) of the sub-basin before and after the work.
    area_ac : float
        The sub-basin's sewer area [ac].
    tz : str
        Time zone of timestamps written without an offset (IANA name).
    flow_units, rain_units, basis, claim, level, n_boot, seed, pe_name, pe_license, dry_include, dry_exclude
        As ``capacitysim credits meter`` takes them (policies ``metered_credit_basis``, ``metered_credit_claim``,
        ``metered_credit_level``).

    Returns
    -------
    capacitysim.workflows.metered_credit.MeteredCredit
        ``credit`` (the interval and the figure claimed), ``periods``, ``warnings``; ``to_dict()`` is the document
        ``capacitysim credits meter --json`` prints.
    """
    return _run("metered-credit", pre_flow=pre_flow, pre_rain=pre_rain, post_flow=post_flow, post_rain=post_rain,
                area_ac=area_ac, tz=tz, flow_units=flow_units, rain_units=rain_units, basis=basis, claim=claim,
                level=level, n_boot=n_boot, seed=seed, pe_name=pe_name, pe_license=pe_license,
                dry_include=None if dry_include is None else list(dry_include),
                dry_exclude=None if dry_exclude is None else list(dry_exclude))


def connection_credits(uses: dict, design_flows=None, *, peaking_factor=None, population_persons=None,
                       threshold_basis: str = "average", offset_ratio: float = 1.0):
    """Credits a new connection must withdraw under the BJC I/I offset program (section F, one to one).

    Parameters
    ----------
    uses : dict of str to float
        Units of each use of the design-flow table (``{"residence_bedroom": 6}``).
    design_flows : path, optional
        A design-flow table TOML (default: the bundled one).
    peaking_factor : float, optional
        The peaking factor [-] (default: Harmon's, from the population).
    population_persons : float, optional
        Population served [persons] for Harmon's factor.
    threshold_basis : {"average", "peak"}, default "average"
        The flow compared with the 2,500 gpd threshold: a named program policy (the definitions say
        "greater than 2,500 gallons per day of flow"; section F sets the credits on the peak).
    offset_ratio : float, default 1
        Section F fixes one to one; below is refused, above is a flagged program policy.

    Returns
    -------
    capacitysim.rules.ii_offset.ConnectionOffset
    """
    from capacitysim.io.project_files import read_design_flows
    from capacitysim.rules.ii_offset import connection_offset

    table = read_design_flows() if design_flows is None else read_design_flows(design_flows)
    return connection_offset(uses, table["uses"], design_flow_table=table["path"], peaking_factor=peaking_factor,
                             population_persons=population_persons, threshold_basis=threshold_basis, offset_ratio=offset_ratio)


def run_sweep(sweep, out, *, workers=None, scheduler=None, resume: bool = False, yes_large: bool = False):
    """Run a scenario sweep (SWMM, detention or runoff) on dask into a Zarr store.

    Parameters
    ----------
    sweep : path or SweepSpec
        A sweep TOML file.
    out : path
        The Zarr store (refused when it exists unless ``resume``).
    workers : int, optional
        Local worker processes (default one per core; 0 runs in this process).
    scheduler : str, optional
        Address of a ``dask.distributed`` scheduler.
    resume : bool
        Continue an interrupted sweep.
    yes_large : bool
        Allow a sweep above the size that needs confirmation.

    Returns
    -------
    capacitysim.workflows.sweep.SweepRun
        ``to_dict()``; :func:`open_sweep` reads the store as an :class:`xarray.Dataset`.
    """
    return _run("sweep", sweep=sweep, out=os.fspath(out), workers=workers, scheduler=scheduler, resume=resume or None,
                yes_large=yes_large or None)


def open_sweep(path):
    """A sweep's results as an :class:`xarray.Dataset`, one dimension per swept parameter.

    Parameters
    ----------
    path : path
        The Zarr store :func:`run_sweep` wrote.

    Returns
    -------
    xarray.Dataset
    """
    from capacitysim.workflows.sweep import open_results

    return open_results(path)


__all__ = ["capacity_demonstration", "connection_credits", "design_detention", "design_detention_variants", "headroom",
           "metered_credit", "open_sweep", "quantify_credits", "run_sweep", "spdes_check"]
