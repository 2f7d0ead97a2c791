"""Reads a COCO file with pycocotools (the COCO API) and prints, per image, what it holds."""
import contextlib
import json
import sys

from pycocotools.coco import COCO

# The COCO API tells what it loads on standard output: that goes to standard error here.
with contextlib.redirect_stdout(sys.stderr):
    coco = COCO(sys.argv[1])
names = {c["id"]: c for c in coco.loadCats(coco.getCatIds())}
out = {"categories": [names[i]["name"] for i in sorted(names)], "keypoint_categories": [c["name"] for c in names.values() if "keypoints" in c], "images": []}
for image in coco.loadImgs(coco.getImgIds()):
    anns = []
    for ann in coco.loadAnns(coco.getAnnIds(imgIds=[image["id"]])):
        entry = {"label": names[ann["category_id"]]["name"], "bbox": ann["bbox"], "area": ann["area"]}
        if "keypoints" in ann:
            entry["keypoints"] = ann["keypoints"]
        else:
            # The mask pycocotools draws from the polygon or the RLE: its pixel count.
            entry["mask_pixels"] = int(coco.annToMask(ann).sum())
            entry["rle"] = isinstance(ann["segmentation"], dict)
        anns.append(entry)
    out["images"].append({"task_id": image["humantask_task_id"], "width": image["width"], "height": image["height"], "annotations": anns})
print(json.dumps(out))
