// Named entities: CoNLL-2003 (each task a document: `-DOCSTART-`, then a token a line with its
// IOB2 tag, as spaCy's `convert` reads it) and spaCy's offsets form (`{"text", "entities": [[start, end, label]]}`,
// which `Doc.char_span` takes). Offsets are in code points, as the contract counts them (and
// Python does).
import type { Json, Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FormatContext } from './format.ts';

interface Entity {
  start: number;
  end: number;
  label: string;
}

/** The task's text and its entities (in code points), none overlapping: a later one that overlaps is left out. */
function entitiesOf(task: Task, ctx: FormatContext): { text: string; entities: Entity[] } | null {
  const r = task.response as Json | null;
  if (task.status !== 'completed' || !r || 'error' in r) {
    ctx.skip('tasks without a completed response');
    return null;
  }
  const text = String(task.params.text ?? '');
  const spans = (Array.isArray(r.annotations) ? (r.annotations as Json[]) : [])
    .map((a) => ({ start: Number(a.start), end: Number(a.end), label: String(a.label) }))
    .filter((e) => Number.isInteger(e.start) && Number.isInteger(e.end) && e.end > e.start)
    .sort((a, b) => a.start - b.start || b.end - a.end);
  const entities: Entity[] = [];
  for (const e of spans) {
    if (entities.length && e.start < entities.at(-1)!.end) ctx.skip('entities overlapping another (one tag a token)');
    else entities.push(e);
  }
  return { text, entities };
}

/** Whitespace-separated tokens with their code-point offsets. */
function tokens(chars: string[]): { token: string; start: number; end: number }[] {
  const out: { token: string; start: number; end: number }[] = [];
  let start = -1;
  for (let i = 0; i <= chars.length; i++) {
    const space = i === chars.length || /\s/u.test(chars[i]!);
    if (!space && start < 0) start = i;
    if (space && start >= 0) {
      out.push({ token: chars.slice(start, i).join(''), start, end: i });
      start = -1;
    }
  }
  return out;
}

/** A document's first line (spaCy's converter splits documents at this spelling of it). */
const DOCSTART = '-DOCSTART- -X- O O';

async function* conll2003(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<string> {
  for await (const task of tasks) {
    const found = entitiesOf(task, ctx);
    if (!found) continue;
    const rows: string[] = [];
    let previous: Entity | null = null;
    for (const t of tokens(Array.from(found.text))) {
      // A token belongs to the entity it overlaps: a span inside a token widens to the whole token.
      const entity = found.entities.find((e) => e.start < t.end && e.end > t.start) ?? null;
      const tag = entity ? `${entity === previous ? 'I' : 'B'}-${entity.label}` : 'O';
      previous = entity;
      rows.push(`${t.token} -X- _ ${tag}`);
    }
    if (rows.length) yield `${DOCSTART}\n\n${rows.join('\n')}\n\n`;
  }
}

async function* spacy(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<string> {
  for await (const task of tasks) {
    const found = entitiesOf(task, ctx);
    if (!found) continue;
    yield `${JSON.stringify({ text: found.text, entities: found.entities.map((e) => [e.start, e.end, e.label]), task_id: task.taskId })}\n`;
  }
}

const ner = new Set(['namedentityrecognition']);
export const conllFormat: ExportFormatDefinition = {
  name: 'conll2003',
  types: ner,
  suffix: 'conll.gz',
  writer: { kind: 'file', write: conll2003 },
};
export const spacyFormat: ExportFormatDefinition = {
  name: 'spacy',
  types: ner,
  suffix: 'spacy.jsonl.gz',
  writer: { kind: 'file', write: spacy },
};
