// JSON Lines: every task as the API shows it (the export's view), one a line.
import type { Task } from '../../domain/model.ts';
import type { ExportFormatDefinition, FormatContext } from './format.ts';

async function* jsonLines(tasks: AsyncIterable<Task>, ctx: FormatContext): AsyncIterable<string> {
  for await (const task of tasks) yield `${JSON.stringify(ctx.view(task))}\n`;
}

export const jsonlFormat: ExportFormatDefinition = {
  name: 'jsonl',
  types: null,
  suffix: 'jsonl.gz',
  writer: { kind: 'file', write: jsonLines },
};
