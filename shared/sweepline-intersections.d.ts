// The part of sweepline-intersections (it ships no types) that answer-rules.ts uses.
declare module 'sweepline-intersections' {
  /** The points where the outlines of a GeoJSON geometry cross or touch themselves (or each other). */
  export default function findIntersections(
    geojson: { type: 'Polygon'; coordinates: number[][][] },
    ignoreSelfIntersections?: boolean,
  ): [number, number][];
}
