// Test mode's synthetic answers (synthetic.ts): transcripts of media, audiotranscription (timed
// segments of the nominal audio) and documenttranscription (regions on the first page).
import type { components } from '../../../generated/current.ts';
import type { Json } from '../model.ts';
import { asString, records } from '../../../shared/json.ts';
import { NOMINAL_AUDIO_SECONDS, NOMINAL_IMAGE, NOMINAL_PDF_PAGE } from './nominal.ts';
import { phrase, range, round1, type SeededRandom } from './random.ts';

type Schemas = components['schemas'];

export function audioTranscriptionResponse(_params: Json, rng: SeededRandom): Schemas['AudioTranscriptionResponse'] {
  const count = rng.int(1, 4);
  const slot = NOMINAL_AUDIO_SECONDS / count;
  const segments = range(count).map((i) => {
    const start = round1(i * slot + rng.next() * slot * 0.2);
    return { start_seconds: start, end_seconds: round1(start + slot * (0.5 + rng.next() * 0.3)), text: `${phrase(rng, 3, 8)}.` };
  });
  return { transcript: segments.map((s) => s.text).join(' '), segments };
}

const PAGE_MARGIN = 36;

export function documentTranscriptionResponse(params: Json, rng: SeededRandom): Schemas['DocumentTranscriptionResponse'] {
  const page = params.attachment_type === 'image' ? NOMINAL_IMAGE : NOMINAL_PDF_PAGE;
  // Each feature is transcribed as a region of its `type` (a line by default), labelled with its
  // `label` (or the deprecated `name` of tasks stored before).
  const features = records(params.features).flatMap((f) => {
    const label = asString(f.label ?? f.name);
    const type: 'block' | 'line' | 'word' = f.type === 'block' ? 'block' : f.type === 'word' ? 'word' : 'line';
    return label ? [{ label, type }] : [];
  });
  const bodyLines = range(rng.int(1, 3)).map(() => phrase(rng, 2, 6));
  // The page count is unknown, and every document has a first page: all regions go on page 1,
  // in rows from top to bottom (reading order): one per feature, then a block of body text and its lines.
  const rows = features.length + bodyLines.length;
  const rowHeight = Math.min(20, (page.height - 2 * PAGE_MARGIN) / rows);
  const textHeight = round1(rowHeight * 0.7);
  const maxWidth = page.width - 2 * PAGE_MARGIN;
  const region = (type: 'block' | 'line' | 'word', row: number, text: string, width: number, lines = 1) => ({
    type,
    text,
    page: 1,
    left: PAGE_MARGIN,
    top: round1(PAGE_MARGIN + row * rowHeight),
    width,
    height: round1(rowHeight * (lines - 1) + textHeight),
  });
  const someWidth = () => rng.decimal(maxWidth * 0.3, maxWidth);
  const featureLines = features.map(({ label, type }, row) => ({
    ...region(type, row, `${phrase(rng, 1, 2)} ${rng.int(100, 9999)}`, someWidth()),
    label,
  }));
  const block = region('block', features.length, bodyLines.join('\n'), someWidth(), bodyLines.length);
  const lines = bodyLines.map((text, i) => region('line', features.length + i, text, block.width));
  return { annotations: [...featureLines, block, ...lines] };
}
