"""Reads a YOLO dataset as Ultralytics' loader does (data.yaml with PyYAML, each label file's rows
with numpy as float32, classes and normalized coordinates checked) and prints it in pixels."""
import json
import os
import sys

import numpy as np
import yaml

root, width, height = sys.argv[1], float(sys.argv[2]), float(sys.argv[3])
with open(os.path.join(root, "data.yaml"), encoding="utf-8") as f:
    data = yaml.safe_load(f)
names = data["names"]
assert data["nc"] == len(names)
out = {"names": [names[i] for i in range(len(names))], "files": {}}
for name in sorted(os.listdir(os.path.join(root, "labels"))):
    with open(os.path.join(root, "labels", name), encoding="utf-8") as f:
        rows = [x.split() for x in f.read().strip().splitlines() if len(x)]
    shapes = []
    for row in rows:
        values = np.array(row, dtype=np.float32)
        cls, coords = int(values[0]), values[1:]
        assert 0 <= cls < len(names), f"class {cls} out of range"
        assert (coords >= 0).all() and (coords <= 1).all(), "coordinates not normalized"
        if len(coords) == 4:
            cx, cy, w, h = coords
            shapes.append({"label": names[cls], "box": [float((cx - w / 2) * width), float((cy - h / 2) * height), float(w * width), float(h * height)]})
        else:
            assert len(coords) >= 6 and len(coords) % 2 == 0, "a segment has at least 3 points"
            points = coords.reshape(-1, 2) * np.array([width, height])
            shapes.append({"label": names[cls], "points": points.tolist()})
    out["files"][name[: -len(".txt")]] = shapes
print(json.dumps(out))
