// Shapes on an image (annotation, pointannotation, lineannotation, polygonannotation,
// imageannotation): matched-region averaging. The shapes of all answers are clustered per geometry
// and label with the scorers' matching (Hungarian on IoU or closeness, at the threshold); a
// cluster found by answers of more than half the weight is kept, the rest dropped. A kept
// object's geometry: boxes and points the weighted mean of their coordinates, ellipses the mean
// centre and radii (the rotation of the best-ranked answer's); lines, polygons and cuboids, whose
// vertices need not correspond, the cluster's medoid shape (the one closest to the others). Its
// other fields (label, attributes, ids) are the best-ranked answer's shape's.
import { type GeometryKind, kindOf, type PreparedShape, prepareShape, shapeSimilarity } from '../scorers/geometry.ts';
import { num, records, str } from '../scorers/common.ts';
import { type Ballot, byMajority, type Cluster, clusterItems, type Json, medoidOf, weightedMean } from './common.ts';

const AVERAGED: Partial<Record<GeometryKind, readonly string[]>> = {
  box: ['left', 'top', 'width', 'height'],
  point: ['x', 'y'],
  ellipse: ['x', 'y', 'rx', 'ry'],
};

function mergedShape(cluster: Cluster<PreparedShape>, ballot: Ballot): Json {
  const shapes = cluster.members.map((m) => m.item);
  const weights = cluster.members.map((m) => ballot.weights[m.answer] ?? 0);
  const first = shapes[0] as PreparedShape;
  const keys = AVERAGED[first.kind];
  if (!keys) {
    const pick = medoidOf(shapes, weights, (x, y) => shapeSimilarity(x, y, ballot.tolerance));
    return (shapes[pick] as PreparedShape).raw;
  }
  const out: Json = { ...first.raw };
  for (const key of keys)
    out[key] = weightedMean(
      shapes.map((s) => num(s.raw[key])),
      weights,
    );
  return out;
}

function combineShapes(ballot: Ballot, read: (answer: Json) => PreparedShape[]): Json {
  const lists = ballot.answers.map(read);
  const clusters = clusterItems(
    lists,
    ballot,
    (s) => JSON.stringify([s.kind, s.label]),
    (x, y) => shapeSimilarity(x, y, ballot.tolerance),
    ballot.threshold,
  );
  const best = ballot.answers[ballot.rank[0] ?? 0] ?? {};
  return { ...best, annotations: clusters.filter((c) => byMajority(c, ballot.weights)).map((c) => mergedShape(c, ballot)) };
}

export const singleGeometry =
  (kind: GeometryKind) =>
  (ballot: Ballot): Json =>
    combineShapes(ballot, (answer) => records(answer.annotations).map((s) => prepareShape(kind, str(s.label), s)));

export const imageAnnotation = (ballot: Ballot): Json =>
  combineShapes(ballot, (answer) => records(answer.annotations).map((s) => prepareShape(kindOf(s.type), str(s.label), s)));
