// The older single-geometry image types (annotation: boxes, pointannotation, lineannotation,
// polygonannotation) on the image player: their params become one geometry, and the answer goes
// out in their own form: elements without `uuid` and `type`, a line with `spline: true` when the
// task asks for splines, and a `linked` attribute naming the other annotation by its 0-based index
// in `annotations` (AnnotationAttribute). The draft keeps the image player's form.
import type { Shape } from './image/model.ts';
import type { Params } from './image/model.ts';
import { uuidV4 } from './image/uuid.ts';
import { imagePlayer } from './imageannotation.ts';
import type { PlayerFactory } from './types.ts';

const kinds = { annotation: 'box', pointannotation: 'point', lineannotation: 'line', polygonannotation: 'polygon' } as const;
const isTrue = (v: unknown) => v === true || String(v).toLowerCase() === 'true';
const isRecord = (v: unknown): v is Record<string, unknown> => typeof v === 'object' && v !== null && !Array.isArray(v);

export const legacyImage: PlayerFactory = (container, assignment, draft, context) => {
  const type = assignment.task.type as keyof typeof kinds;
  const kind = kinds[type];
  const p = assignment.task.params as Record<string, unknown>;
  const splines = type === 'lineannotation' && isTrue(p.splines);
  const params = {
    attachment: p.attachment,
    attachment_type: 'image',
    layers: p.layers,
    annotation_attributes: p.annotation_attributes,
    geometries: {
      [kind]: {
        objects_to_annotate: p.objects_to_annotate ?? [],
        ...(kind === 'box' ? { min_width: p.min_width, min_height: p.min_height } : {}),
        ...(kind === 'line' || kind === 'polygon' ? { min_vertices: p.min_vertices, max_vertices: p.max_vertices ?? undefined } : {}),
      },
    },
  } as unknown as Params;
  // A redo starts from the earlier answer, in the older form: each element gets an id and its type.
  const given = draft as { annotations?: unknown } | undefined;
  const start =
    Array.isArray(given?.annotations) && given.annotations.some((a) => isRecord(a) && typeof a.uuid !== 'string')
      ? {
          annotations: given.annotations.filter(isRecord).map((a) => ({ ...a, uuid: uuidV4(), type: kind })),
        }
      : draft;
  const player = imagePlayer(container, params, start, context, { splines, regionsByIndex: true });
  return {
    ...player,
    getResponse() {
      const answer = player.getResponse();
      if (!answer.ok) return answer;
      const elements = (answer.response as { annotations: (Record<string, unknown> & Pick<Shape, 'uuid'>)[] }).annotations;
      const index = new Map(elements.map((e, i) => [e.uuid, i]));
      const linked = new Set(
        Object.entries((p.annotation_attributes ?? {}) as Record<string, { type?: string }>)
          .filter(([, d]) => d?.type === 'linked')
          .map(([name]) => name),
      );
      const annotations = elements.map(({ uuid: _uuid, type: _type, ...rest }) => {
        const attributes = rest.attributes as Record<string, unknown> | undefined;
        if (attributes)
          for (const name of linked)
            if (typeof attributes[name] === 'string') attributes[name] = index.get(attributes[name] as string) ?? 0;
        return splines ? { ...rest, spline: true } : rest;
      });
      return { ok: true, response: { annotations } as never };
    },
  };
};
