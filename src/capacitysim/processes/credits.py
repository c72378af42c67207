"""I/I credit quantification as a process (``capacitysim credits quantify``, :func:`capacitysim.quantify_credits`,
the service's ``credits-quantification``): :func:`capacitysim.rules.ii_offset.quantify_project` on a project file."""

from __future__ import annotations

from capacitysim.processes.base import Input, NullProgress, Process
from capacitysim.processes.common import file_schema


class Quantification(dict):
    """The quantification document (a dict) as a result: ``to_dict()`` is itself."""

    def to_dict(self) -> dict:
        return dict(self)


def _bases() -> tuple[list, str]:
    from capacitysim.rules import ii_offset

    return list(ii_offset.INFLOW_CREDIT_BASES), ii_offset.DEFAULT_INFLOW_CREDIT_BASIS


class CreditsQuantification(Process):
    id = "credits-quantification"
    title = "I/I credit quantification"
    description = "The itemised I/I remediation engineering report of a project (BJC Tables 174-19.1 to 174-19.3)."
    command = "capacitysim credits quantify"
    stages = (("started", 0), ("inputs-checked", 10), ("quantified", 95))
    inputs = (
        Input("project", file_schema("project", "Project TOML"), required=True, cli="PROJECT_FILE", file="project"),
        Input("inflow_basis", {"type": "string", "enum": _bases()[0], "default": _bases()[1],
                               "description": "Program policy inflow_credit_basis."}, cli="--inflow-basis"),
    )

    def run(self, inputs, progress=None, work_dir=None):
        from capacitysim.io.project_files import read_project
        from capacitysim.rules import ii_offset

        progress = progress or NullProgress()
        proj = read_project(inputs.project)
        progress.stage("inputs-checked", f"project {proj['project'].get('id')}: {len(proj['items'])} item(s)")
        doc = ii_offset.quantify_project(proj["project"], proj["items"],
                                         inflow_credit_basis=inputs.get("inflow_basis", ii_offset.DEFAULT_INFLOW_CREDIT_BASIS))
        progress.stage("quantified", f"{doc['total_gpd']:,.0f} gpd of I/I removal quantified")
        return Quantification(doc)
