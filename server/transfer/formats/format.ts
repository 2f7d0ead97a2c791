// What every export format is: a pure function from tasks (in the list's order) to the bytes of a
// file, or to the files of a folder (written as a tar archive). It reads nothing and writes nothing
// itself: what it needs beyond the tasks (a task as the API shows it, an image's size, a scratch
// file for a second section written after the first) comes in its context. Memory stays bounded
// by a task at a time (plus what a format must remember of all tasks: COCO's category names).
import type { Json, Task } from '../../domain/model.ts';

export interface ImageSize {
  width: number;
  height: number;
}

/** A place to write text now and read it back once, later (a file in the system's temp folder). */
export interface Scratch {
  write(text: string): Promise<void>;
  /** What was written, in pieces; the scratch is gone after. */
  drain(): AsyncIterable<string>;
}

export interface FormatContext {
  /** The task as the export's view (generation) shows it. */
  view(task: Task): Json;
  /** The image's size of a task (metadata, the export's option, test mode's stand-in), or null. */
  imageSize(task: Task): ImageSize | null;
  /** Counts what the format left out, by reason (shown in the export's `skipped`). */
  skip(reason: string, count?: number): void;
  /** The labels of the project's ontology (when the filter names one project), in order. */
  ontologyLabels: string[];
  scratch(): Scratch;
}

/** One file of a folder format. */
export interface FolderEntry {
  name: string;
  content: string;
}

export type ExportFormatWriter =
  | { kind: 'file'; write(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<string> }
  | { kind: 'folder'; write(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<FolderEntry> };

export interface ExportFormatDefinition {
  name: string;
  /** The task types it writes; null: every type. */
  types: ReadonlySet<string> | null;
  /** The file name's end after the export id (`jsonl.gz`, `yolo.tar.gz`). */
  suffix: string;
  writer: ExportFormatWriter;
}
