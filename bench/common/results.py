"""Writing result files so that a reader never sees half of one."""

import json
import os
from pathlib import Path


def write_json(path, data):
    """Writes `data` as indented JSON to `path`, through a temporary file
    renamed into place (an interrupted run leaves the old file intact)."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    temporary = path.with_name(path.name + ".tmp")
    temporary.write_text(json.dumps(data, indent=2) + "\n")
    os.replace(temporary, path)
    return path
