// A customer's instruction as a worker sees it: Markdown or HTML sanitized by the labeling app's own
// rules (label/instruction.ts: never copied), in the task view and in a project's preview.
import { useEffect, useRef } from 'preact/hooks';
import { instructionHtml } from '../label/instruction.ts';

/**
 * Where the console loads a task's files from. Files of the console's own origin, data: and blob:
 * URLs load as they are; a file on a customer's host is not loaded by the page (its policy keeps
 * images and media to its own origin, decision 23) until the members' media route exists.
 */
export const media = (url: string) => url;

export function Instruction({ text }: { text: string }) {
  const ref = useRef<HTMLDivElement>(null);
  useEffect(() => {
    if (ref.current) ref.current.innerHTML = instructionHtml(text, media);
  }, [text]);
  return <div class="instruction" ref={ref} />;
}
