"""Reads Pascal VOC annotations as torchvision's VOCDetection.parse_voc_xml does (the XML made a
dict, repeated tags a list) and prints each image's boxes."""
import collections
import json
import os
import sys
import xml.etree.ElementTree as ET


def parse_voc_xml(node):
    voc_dict = {}
    children = list(node)
    if children:
        def_dic = collections.defaultdict(list)
        for dc in map(parse_voc_xml, children):
            for ind, v in dc.items():
                def_dic[ind].append(v)
        if node.tag == "annotation":
            def_dic["object"] = [def_dic["object"]]
        voc_dict = {node.tag: {ind: v[0] if len(v) == 1 else v for ind, v in def_dic.items()}}
    if node.text:
        text = node.text.strip()
        if not children:
            voc_dict[node.tag] = text
    return voc_dict


root = os.path.join(sys.argv[1], "VOCdevkit", "VOC2012")
with open(os.path.join(root, "ImageSets", "Main", "trainval.txt"), encoding="utf-8") as f:
    ids = [x.strip() for x in f if x.strip()]
out = {}
for image_id in ids:
    ann = parse_voc_xml(ET.parse(os.path.join(root, "Annotations", image_id + ".xml")).getroot())["annotation"]
    objects = ann["object"] if isinstance(ann["object"], list) else [ann["object"]]
    out[image_id] = {
        "size": [int(ann["size"]["width"]), int(ann["size"]["height"])],
        "path": ann["path"],
        "boxes": [{"label": o["name"], "box": [int(o["bndbox"][k]) for k in ("xmin", "ymin", "xmax", "ymax")]} for o in objects if o],
    }
print(json.dumps(out))
