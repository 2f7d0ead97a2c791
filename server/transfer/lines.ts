// The records of an import's file, read from its bytes in bounded memory: JSON Lines split at each
// line feed, CSV at each line feed outside a quoted field. Each record comes with its line number
// and the byte offset after it, so that reading can start again exactly after the last record
// written (an import's cursor). A record longer than the limit is not kept (its bytes are dropped
// as they come); it is still reported, to be refused by its number.

export interface FileRecord {
  /** The number of the record's first line in the file, from 1. */
  line: number;
  /** The record without its line ending; null when it was longer than the limit. */
  text: string | null;
  /** The byte offset in the file after the record and its line ending. */
  end: number;
  /** The number of the line after the record. */
  nextLine: number;
}

const LF = 0x0a;
const CR = 0x0d;
const QUOTE = 0x22;
const BOM = Buffer.from([0xef, 0xbb, 0xbf]);

/**
 * The records of a file's bytes from `start` (a record boundary: 0, or a cursor), `quoted`: line
 * feeds inside double quotes do not end a record (CSV). Blank records are skipped.
 */
export async function* fileRecords(
  chunks: AsyncIterable<Buffer>,
  start: { offset: number; line: number },
  maxRecordBytes: number,
  quoted: boolean,
): AsyncGenerator<FileRecord> {
  let offset = start.offset;
  let line = start.line;
  let parts: Buffer[] = [];
  let size = 0;
  let tooLong = false;
  let inQuotes = false;
  let newlines = 0;
  let bomChecked = start.offset > 0;
  let carry: Buffer | null = null;
  const take = (piece: Buffer) => {
    if (tooLong) return;
    size += piece.length;
    if (size > maxRecordBytes) {
      tooLong = true;
      parts = [];
    } else parts.push(piece);
  };
  const finish = (): FileRecord | null => {
    let text: string | null = null;
    if (!tooLong) {
      let bytes = parts.length === 1 ? parts[0]! : Buffer.concat(parts);
      if (bytes.length > 0 && bytes[bytes.length - 1] === CR) bytes = bytes.subarray(0, bytes.length - 1);
      text = bytes.toString('utf8');
    }
    const record = { line, text, end: offset, nextLine: line + newlines + 1 };
    line = record.nextLine;
    parts = [];
    size = 0;
    tooLong = false;
    newlines = 0;
    return text !== null && text.trim() === '' ? null : record;
  };
  for await (let chunk of chunks) {
    if (carry) {
      chunk = Buffer.concat([carry, chunk]);
      carry = null;
    }
    if (!bomChecked) {
      // The byte order mark may arrive split over the first pieces.
      if (chunk.length < 3 && BOM.subarray(0, chunk.length).equals(chunk)) {
        carry = chunk;
        continue;
      }
      bomChecked = true;
      if (chunk.subarray(0, 3).equals(BOM)) {
        chunk = chunk.subarray(3);
        offset += 3;
      }
    }
    let from = 0;
    while (from < chunk.length) {
      let at: number;
      if (!quoted) at = chunk.indexOf(LF, from);
      else {
        at = -1;
        for (let i = from; i < chunk.length; i++) {
          const c = chunk[i]!;
          if (c === QUOTE) inQuotes = !inQuotes;
          else if (c === LF) {
            // A quote left open ends at the line feed where its record passes the limit.
            if (!inQuotes || tooLong || size + (i - from) > maxRecordBytes) {
              at = i;
              break;
            }
            newlines++;
          }
        }
      }
      if (at === -1) {
        take(chunk.subarray(from));
        offset += chunk.length - from;
        break;
      }
      take(chunk.subarray(from, at));
      offset += at + 1 - from;
      from = at + 1;
      // A record over the limit ends at the next line feed, quoted or not: reading goes on from there.
      inQuotes = false;
      const record = finish();
      if (record) yield record;
    }
  }
  if (carry) {
    take(carry);
    offset += carry.length;
  }
  if (size > 0 || tooLong) {
    const record = finish();
    if (record) yield record;
  }
}
