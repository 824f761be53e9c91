"""The GitHub workflows: the deploy waits for the tests, runs the built site in the browser
before publishing, writes only where it publishes, and runs no action by a movable tag."""

import re

import yaml

from conftest import ROOT

WORKFLOWS = ROOT / ".github" / "workflows"
PINNED = re.compile(r"^\s*(?:-\s+)?uses:\s*([\w.-]+/[\w./-]+)@([0-9a-f]{40})\s+#\s*(v\d+\.\d+\.\d+)\s*$")


def load(name):
    workflow = yaml.safe_load((WORKFLOWS / name).read_text(encoding="utf-8"))
    workflow["on"] = workflow.pop(True, workflow.get("on"))   # YAML 1.1 reads the key `on` as True
    return workflow


def writes(permissions):
    if permissions in ("write-all",):
        return ["everything"]
    return sorted(k for k, v in (permissions or {}).items() if v == "write")


def test_every_action_is_pinned_by_commit_with_its_release_beside_it():
    uses = [(path.name, line) for path in sorted(WORKFLOWS.glob("*.yml"))
            for line in path.read_text(encoding="utf-8").splitlines() if re.match(r"^\s*(-\s+)?uses:", line)]
    assert len(uses) >= 5
    unpinned = [(name, line.strip()) for name, line in uses if not PINNED.match(line)]
    assert unpinned == [], "pin each action as OWNER/NAME@<40-hex commit>  # vX.Y.Z"


def test_the_deploy_starts_only_after_the_tests_passed_on_a_push_to_main():
    tests, deploy = load("test.yml"), load("deploy.yml")
    trigger = deploy["on"]
    assert list(trigger) == ["workflow_run"], "no other way to publish skips the tests"
    assert trigger["workflow_run"]["workflows"] == [tests["name"]]
    assert trigger["workflow_run"]["types"] == ["completed"] and trigger["workflow_run"]["branches"] == ["main"]
    condition = " ".join(deploy["jobs"]["build"]["if"].split())
    for part in ("github.event.workflow_run.conclusion == 'success'", "github.event.workflow_run.event == 'push'",
                 "github.event.workflow_run.head_repository.full_name == github.repository"):
        assert part in condition
    checkout = deploy["jobs"]["build"]["steps"][0]
    assert checkout["uses"].startswith("actions/checkout@")
    assert checkout["with"]["ref"] == "${{ github.event.workflow_run.head_sha }}", "build the commit that was tested"


def test_only_the_deploy_job_holds_write_permissions():
    for name in ("test.yml", "deploy.yml"):
        workflow = load(name)
        assert writes(workflow.get("permissions")) == [], f"{name}: the workflow's own permissions write"
        for job_name, job in workflow["jobs"].items():
            expected = ["id-token", "pages"] if (name, job_name) == ("deploy.yml", "deploy") else []
            assert "permissions" in job or not expected
            assert writes(job.get("permissions")) == expected, (name, job_name)
    deploy = load("deploy.yml")["jobs"]
    assert deploy["build"]["permissions"] == {"contents": "read"}
    assert deploy["deploy"]["needs"] == "build"


def test_the_built_site_runs_in_the_browser_between_the_build_and_the_upload():
    steps = load("deploy.yml")["jobs"]["build"]["steps"]

    def index(predicate, what):
        found = [i for i, step in enumerate(steps) if predicate(step)]
        assert len(found) == 1, what
        return found[0]

    build = index(lambda s: "tools.site build" in s.get("run", ""), "one build step")
    browser = index(lambda s: "tools.site_run" in s.get("run", ""), "one browser run")
    upload = index(lambda s: s.get("uses", "").startswith("actions/upload-pages-artifact@"), "one upload")
    assert build < browser < upload
    output = re.search(r"--output (\S+)", steps[build]["run"]).group(1)
    command = steps[browser]["run"].split()
    assert command[:4] == ["python", "-m", "tools.site_run", output], "it runs the site just built"
    assert "--solved" in command and '"$GITHUB_STEP_SUMMARY"' in command
    assert steps[upload]["with"]["path"].strip("./") == output.strip("./")
    assert not steps[browser].get("continue-on-error"), "a failed browser run must stop the upload"
