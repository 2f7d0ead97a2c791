// A small WebM video made in the test, with no tool outside the repository: Chromium encodes the
// frames to VP8 (WebCodecs, on a page of a loopback origin, where it is a secure context) and this
// file muxes them into a WebM (EBML: header, segment info with the duration, one video track, one
// cluster of SimpleBlocks, every frame a keyframe). Enough for a <video> to play and seek exactly.
import type { Page } from 'playwright-core';

/** An EBML element: its id's bytes, an 8-byte size, the payload. */
function element(id: number, payload: Buffer): Buffer {
  const idBytes = Buffer.from(id.toString(16), 'hex'); // the ids used here have whole bytes
  const size = Buffer.alloc(8);
  size.writeBigUInt64BE(BigInt(payload.length));
  size[0] = 0x01; // the length marker of an 8-byte size (sizes here are far below 2^56)
  return Buffer.concat([idBytes, size, payload]);
}
const uint = (id: number, value: number) => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(value);
  return element(id, b);
};
const text = (id: number, value: string) => element(id, Buffer.from(value, 'ascii'));
const float = (id: number, value: number) => {
  const b = Buffer.alloc(8);
  b.writeDoubleBE(value);
  return element(id, b);
};

/** Encodes the SVG frames to VP8 in the page (each `frameMs` long) and returns the WebM file. */
export async function webmFromFrames(page: Page, svgs: string[], width: number, height: number, frameMs: number): Promise<Buffer> {
  const chunks = await page.evaluate(
    async ({ svgs, width, height, frameMs }) => {
      const out: { data: number[]; ms: number }[] = [];
      const encoder = new VideoEncoder({
        output: (chunk) => {
          const data = new Uint8Array(chunk.byteLength);
          chunk.copyTo(data);
          out.push({ data: Array.from(data), ms: Math.round(chunk.timestamp / 1000) });
        },
        error: (e) => {
          throw e;
        },
      });
      encoder.configure({ codec: 'vp8', width, height, bitrate: 500_000 });
      const canvas = new OffscreenCanvas(width, height);
      const ctx = canvas.getContext('2d') as OffscreenCanvasRenderingContext2D;
      for (const [i, svg] of svgs.entries()) {
        const img = new Image();
        img.src = `data:image/svg+xml,${encodeURIComponent(svg)}`;
        await img.decode();
        ctx.drawImage(img, 0, 0, width, height);
        const frame = new VideoFrame(canvas, { timestamp: i * frameMs * 1000, duration: frameMs * 1000 });
        encoder.encode(frame, { keyFrame: true });
        frame.close();
      }
      await encoder.flush();
      return out;
    },
    { svgs, width, height, frameMs },
  );
  const blocks = chunks.map((c) => {
    const head = Buffer.from([0x81, 0, 0, 0x80]); // track 1, relative time (below), keyframe
    head.writeInt16BE(c.ms, 1);
    return element(0xa3, Buffer.concat([head, Buffer.from(c.data)]));
  });
  const header = element(
    0x1a45dfa3,
    Buffer.concat([
      uint(0x4286, 1),
      uint(0x42f7, 1),
      uint(0x42f2, 4),
      uint(0x42f3, 8),
      text(0x4282, 'webm'),
      uint(0x4287, 2),
      uint(0x4285, 2),
    ]),
  );
  const info = element(
    0x1549a966,
    Buffer.concat([
      uint(0x2ad7b1, 1_000_000),
      text(0x4d80, 'humantask-test'),
      text(0x5741, 'humantask-test'),
      float(0x4489, svgs.length * frameMs),
    ]),
  );
  const video = element(0xe0, Buffer.concat([uint(0xb0, width), uint(0xba, height)]));
  const tracks = element(
    0x1654ae6b,
    element(0xae, Buffer.concat([uint(0xd7, 1), uint(0x73c5, 1), uint(0x83, 1), text(0x86, 'V_VP8'), video])),
  );
  const cluster = element(0x1f43b675, Buffer.concat([uint(0xe7, 0), ...blocks]));
  return Buffer.concat([header, element(0x18538067, Buffer.concat([info, tracks, cluster]))]);
}
