"""Stamp a release: fingerprint every shipped notebook and describe the build.

The site is built from a staged copy of content/ in which every notebook carries
`metadata.course.release` (its fingerprint and the release version). The manifest
and the stamped notebooks also go into the course wheel, in the course's release folder
(exercises/_release/, which exercises/course.py names), so a kernel knows which release it runs
and can hand a learner a fresh copy (engine.core.release). So does the course's inventory
(exercises/_release/inventory.json: the notebooks, their labs, exercises and questions, read
from them by engine.core.inventory), which the registry reads in the browser, where the wheel
holds no content/.
"""

import hashlib
import json
import os
import shutil
import time
from pathlib import Path

from engine.core import inventory
from exercises.course import COURSE

RELEASE = COURSE.release.relative_to(COURSE.content.parent).as_posix()     # "exercises/_release"


def fingerprint(path):
    """A short hash of a notebook as written in content/."""
    return hashlib.sha256(Path(path).read_bytes()).hexdigest()[:16]


def build_time():
    """UTC build time; SOURCE_DATE_EPOCH, when set, makes builds reproducible."""
    epoch = int(os.environ.get("SOURCE_DATE_EPOCH", time.time()))
    return time.strftime("%Y-%m-%d %H:%M UTC", time.gmtime(epoch))


def stage_contents(content_dir, staging_dir):
    """Copy content_dir to staging_dir with every notebook stamped; return the manifest."""
    content_dir, staging_dir = Path(content_dir), Path(staging_dir)
    shutil.rmtree(staging_dir, ignore_errors=True)
    shutil.copytree(content_dir, staging_dir,
                    ignore=shutil.ignore_patterns(".ipynb_checkpoints", "__pycache__", "course-progress.json*"))
    notebooks = {p.relative_to(staging_dir).as_posix(): fingerprint(p)
                 for p in sorted(staging_dir.rglob("*.ipynb"))}
    version = hashlib.sha256(json.dumps(notebooks, sort_keys=True).encode()).hexdigest()[:10]
    for path, print_ in notebooks.items():
        file = staging_dir / path
        notebook = json.loads(file.read_text(encoding="utf-8"))
        course = notebook.setdefault("metadata", {}).setdefault("course", {})
        course["release"] = {"fingerprint": print_, "version": version}
        file.write_text(json.dumps(notebook, indent=1, ensure_ascii=False) + "\n", encoding="utf-8")
    return {"version": version, "built": build_time(), "notebooks": notebooks}


def wheel_files(manifest, staging_dir):
    """{path in the wheel: bytes}: the manifest, the course's inventory and the stamped notebooks,
    under the course's release folder (:data:`RELEASE`)."""
    files = {f"{RELEASE}/manifest.json": json.dumps(manifest, indent=1).encode(),
             f"{RELEASE}/{inventory.INDEX}": inventory.to_json(inventory.scan(staging_dir, COURSE)).encode()}
    for path in manifest["notebooks"]:
        files[f"{RELEASE}/notebooks/{path}"] = (Path(staging_dir) / path).read_bytes()
    return files
