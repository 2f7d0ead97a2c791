"""Reads MOT Challenge ground truth as its devkits do (comma-separated rows, numpy) and prints the
boxes of each sequence by track and frame, with the sequence's info (configparser)."""
import configparser
import json
import os
import sys

import numpy as np

out = {}
for seq in sorted(os.listdir(sys.argv[1])):
    gt = os.path.join(sys.argv[1], seq, "gt", "gt.txt")
    rows = np.loadtxt(gt, delimiter=",", ndmin=2) if os.path.getsize(gt) else np.zeros((0, 10))
    info = configparser.ConfigParser()
    info.read(os.path.join(sys.argv[1], seq, "seqinfo.ini"))
    out[seq] = {
        "length": int(info["Sequence"]["seqLength"]),
        "rows": [[int(r[0]), int(r[1]), float(r[2]), float(r[3]), float(r[4]), float(r[5])] for r in rows],
    }
print(json.dumps(out))
