"""NYC detention design as a process (``capacitysim detention``, :func:`capacitysim.design_detention`, the service's
``detention-design``): :func:`capacitysim.workflows.detention.design_site`."""

from __future__ import annotations

import datetime as dt

from capacitysim.processes.base import Input, NullProgress, Process, bundled
from capacitysim.processes.common import file_schema, submittal_input, submittal_of


def _approved(value, field):
    from capacitysim.io.submittal import approval_date

    return approval_date(value, field)


def _rules(value, field):
    from capacitysim.io.site_files import load_rule_set

    return load_rule_set(value)


def _is_rules(value) -> bool:
    from capacitysim.io.site_files import RuleSet

    return isinstance(value, RuleSet)


def _is_site(value) -> bool:
    from capacitysim.io.site_files import Site

    return isinstance(value, Site)


class DetentionDesign(Process):
    id = "detention-design"
    title = "Detention design (NYC)"
    description = "Size the detention system and orifice of a NYC site (15 RCNY § 31-03), checked in SWMM."
    command = "capacitysim detention"
    kind = "detention-design"
    stages = (("started", 0), ("inputs-checked", 10), ("designed", 80), ("report-written", 95))
    inputs = (
        Input("site", file_schema("site", "Site TOML"), required=True, cli="SITE_FILE", file="site", typed=_is_site),
        # a bundled rule set by name; the command line and the API also take a TOML file (extends = "nyc-2012")
        Input("rule", {"type": "string", "enum": sorted(bundled("rule")) or ["nyc-2012"], "default": "nyc-2012",
                       "description": "Bundled rule set."}, cli="--rule", convert=_rules,
              text=lambda v, f: _rules(v, f), typed=lambda v: _is_rules(v) or isinstance(v, str) and v.endswith(".toml")),
        Input("swmm", {"type": "boolean", "default": True, "description": "Check the design in SWMM."}, cli="--no-swmm"),
        Input("approved_on", {"type": "string", "format": "date",
                              "description": "Date DEP approved the system (not after today), over the site file's "
                                             "[submittal] approved_on: dates the triennial certification of 15 RCNY "
                                             "§ 31-04(a)(8) (CLI --approved-on)."},
              cli="--approved-on", convert=_approved, text=_approved, typed=lambda v: isinstance(v, dt.date)),
        submittal_input(),
    )

    def finish(self, inputs, name, source):
        from capacitysim.io.site_files import RuleSet, load_rule_set

        if not isinstance(inputs.rule, RuleSet):
            inputs["rule"] = load_rule_set(inputs.rule or "nyc-2012")

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.io.site_files import load_site
        from capacitysim.workflows.detention import design_site

        progress = progress or NullProgress()
        rules = inputs.rule
        site = inputs.site if _is_site(inputs.site) else load_site(inputs.site, rules)
        swmm = inputs.get("swmm", True)
        progress.stage("inputs-checked", f"site and rule set {rules.name} read; designing"
                       + (" and checking in SWMM" if swmm else ""))
        result = design_site(site, rules, swmm=swmm, work_dir=work_dir, submittal=submittal_of(inputs, site.submittal),
                             approved_on=inputs.approved_on)
        progress.stage("designed", f"design done: verdict {result.status}")
        return result

    def report(self, result, path, doc=None):
        from capacitysim.report.detention import write_report

        write_report(result, path)
        return path
