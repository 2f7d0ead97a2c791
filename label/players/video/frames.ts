// The frames of a videoplaybackannotation task, drawn one at a time into a canvas the image canvas
// shows: frame images (`attachments`, frame n is the n-th image), or a video (`attachment`, frame n
// is the video at n / frame_rate seconds, reached by seeking a <video> element that is never shown).
// Only the latest frame asked for is drawn; earlier requests still loading are dropped. The files
// come through the server's media route (the player maps the URLs: label/media.ts), so from the
// app's own origin; a video whose host answers no byte ranges is read whole and played from memory
// (without ranges a <video> cannot seek).

export interface FrameSize {
  width: number;
  height: number;
  count: number;
}

const once = (target: EventTarget, ok: string, bad = 'error') =>
  new Promise<void>((resolve, reject) => {
    const done = () => {
      target.removeEventListener(ok, done);
      target.removeEventListener(bad, fail);
      resolve();
    };
    const fail = () => {
      target.removeEventListener(ok, done);
      target.removeEventListener(bad, fail);
      reject(new Error(`${bad} while waiting for ${ok}`));
    };
    target.addEventListener(ok, done);
    target.addEventListener(bad, fail);
  });

export class Frames {
  readonly canvas = document.createElement('canvas');
  private readonly images = new Map<number, Promise<HTMLImageElement>>();
  private video: HTMLVideoElement | null = null;
  private blobUrl: string | null = null;
  private wanted = -1;
  private drawing: Promise<void> | null = null;
  /** The frame the canvas holds now. */
  shown = -1;

  constructor(
    private readonly urls: readonly string[],
    private readonly videoUrl: string | undefined,
    private readonly rate: number,
  ) {}

  private image(i: number): Promise<HTMLImageElement> {
    let p = this.images.get(i);
    if (!p) {
      const img = new Image();
      img.decoding = 'async';
      p = once(img, 'load').then(() => img);
      img.src = this.urls[i] ?? '';
      this.images.set(i, p);
      p.catch(() => this.images.delete(i));
    }
    return p;
  }

  /** Loads the first frame: the frames' size (the first frame's) and how many there are. */
  async open(): Promise<FrameSize> {
    let width: number;
    let height: number;
    let count: number;
    if (this.videoUrl) {
      const v = document.createElement('video');
      v.muted = true;
      v.preload = 'auto';
      v.playsInline = true;
      this.video = v;
      const meta = once(v, 'loadeddata');
      v.src = this.videoUrl;
      await meta;
      // A host that answers no byte ranges leaves the video unseekable: it is then read whole and
      // played from memory.
      if (!v.seekable.length || v.seekable.end(0) <= 0) {
        const got = await fetch(this.videoUrl).catch(() => null);
        if (got?.ok) {
          this.blobUrl = URL.createObjectURL(await got.blob());
          const again = once(v, 'loadeddata');
          v.src = this.blobUrl;
          await again;
        }
      }
      // A recording without its duration in the header says Infinity until the end was seen.
      if (!Number.isFinite(v.duration)) {
        const known = once(v, 'durationchange');
        v.currentTime = 1e7;
        await known;
      }
      width = v.videoWidth;
      height = v.videoHeight;
      count = Math.max(1, Math.ceil(v.duration * this.rate - 1e-6));
    } else {
      const first = await this.image(0);
      width = first.naturalWidth;
      height = first.naturalHeight;
      count = this.urls.length;
    }
    this.canvas.width = width;
    this.canvas.height = height;
    await this.show(0);
    return { width, height, count };
  }

  /** Draws frame `f` (resolves once the latest frame asked for is drawn; false if `f` was overtaken). */
  async show(f: number): Promise<boolean> {
    this.wanted = f;
    while (this.drawing) await this.drawing;
    if (this.wanted !== f) return false;
    if (this.shown === f) return true;
    this.drawing = this.draw(f).finally(() => {
      this.drawing = null;
    });
    await this.drawing;
    return this.shown === f;
  }

  private async draw(f: number): Promise<void> {
    const ctx = this.canvas.getContext('2d');
    if (!ctx) return;
    let source: CanvasImageSource;
    if (this.video) {
      const v = this.video;
      const at = Math.min(f / this.rate, Math.max(0, v.duration - 0.001));
      if (Math.abs(v.currentTime - at) > 1e-4 || v.readyState < 2) {
        const seeked = once(v, 'seeked');
        v.currentTime = at;
        await seeked;
      }
      source = v;
    } else {
      source = await this.image(f);
      // The next frames load while this one is looked at.
      for (let i = f + 1; i <= f + 3 && i < this.urls.length; i++) this.image(i).catch(() => undefined);
    }
    ctx.clearRect(0, 0, this.canvas.width, this.canvas.height);
    ctx.drawImage(source, 0, 0, this.canvas.width, this.canvas.height);
    this.shown = f;
  }

  destroy(): void {
    if (this.video) {
      this.video.removeAttribute('src');
      this.video.load();
    }
    if (this.blobUrl) URL.revokeObjectURL(this.blobUrl);
  }
}
