// The export formats, by name (the contract's ExportFormat).
import { cocoFormat } from './coco.ts';
import { csvFormat } from './csv.ts';
import type { ExportFormatDefinition } from './format.ts';
import { jsonlFormat } from './jsonl.ts';
import { motFormat } from './mot.ts';
import { conllFormat, spacyFormat } from './ner.ts';
import { srtFormat, webvttFormat } from './subtitles.ts';
import { vocFormat } from './voc.ts';
import { yoloFormat } from './yolo.ts';

export const exportFormats: ReadonlyMap<string, ExportFormatDefinition> = new Map(
  [jsonlFormat, csvFormat, cocoFormat, yoloFormat, vocFormat, conllFormat, spacyFormat, webvttFormat, srtFormat, motFormat].map((f) => [
    f.name,
    f,
  ]),
);
