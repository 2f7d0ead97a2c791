// audiotranscription: the audio with its waveform, play, pause and seek, and the transcript written
// as timed segments (the contract's AudioTranscriptionResponse: `segments` ordered and not
// overlapping, `transcript` their texts joined by single spaces). The audio plays in an <audio>
// element; its bytes are read once more and decoded with the Web Audio API for the waveform (a
// peak per pixel column, drawn on a canvas); both come through the server's media route, from the
// app's own origin. If the audio cannot be decoded, it plays all the same, without the waveform. A click on the waveform
// seeks; Alt+Enter closes a segment at the playhead (from where the previous one ended) and puts the
// caret in its text, so a person listens, pauses at the end of a phrase, and types it. Escape plays and pauses even while typing.
import { checkAnswer } from '../../shared/answer-rules.ts';
import { asRecord, records } from '../../shared/json.ts';
import type { Shortcut } from '../keys.ts';
import { el, type PlayerFactory } from './types.ts';

interface Segment {
  start: number;
  end: number;
  text: string;
}

const r2 = (v: number) => Math.round(v * 100) / 100;
const num = (v: unknown) => (typeof v === 'number' && Number.isFinite(v) ? v : 0);
const clock = (s: number) => `${Math.floor(s / 60)}:${(s % 60).toFixed(2).padStart(5, '0')}`;
const inField = (t: EventTarget | null) => t instanceof HTMLElement && /^(INPUT|TEXTAREA|SELECT)$/.test(t.tagName);

/** Peaks per column: the least and greatest sample of each of `columns` stretches of the (first) channel. */
function peaks(buffer: AudioBuffer, columns: number): Float32Array {
  const data = buffer.getChannelData(0);
  const out = new Float32Array(columns * 2);
  const per = data.length / columns;
  for (let c = 0; c < columns; c++) {
    let lo = 0;
    let hi = 0;
    const end = Math.min(data.length, Math.floor((c + 1) * per));
    for (let i = Math.floor(c * per); i < end; i++) {
      const v = data[i] as number;
      if (v < lo) lo = v;
      if (v > hi) hi = v;
    }
    out[2 * c] = lo;
    out[2 * c + 1] = hi;
  }
  return out;
}

export const audiotranscription: PlayerFactory = (container, assignment, draft, context) => {
  const params = asRecord(assignment.task.params);
  const url = typeof params.attachment === 'string' ? params.attachment : '';
  const segments: Segment[] = records(asRecord(draft).segments).map((s) => ({
    start: num(s.start_seconds),
    end: num(s.end_seconds),
    text: typeof s.text === 'string' ? s.text : '',
  }));
  let duration = 0;
  let buffer: AudioBuffer | null = null;
  let blobUrl: string | null = null;
  let frame = 0;

  const audio = el('audio', { controls: '', preload: 'auto', 'aria-label': 'The audio' });
  const wave = el('canvas', {
    class: 'waveform',
    role: 'slider',
    tabindex: '0',
    'aria-label': 'Waveform: click to seek',
    'aria-valuemin': '0',
    'aria-valuenow': '0',
  });
  const time = el('span', { class: 'audio-time', 'aria-live': 'off' }, '0:00.00');
  const message = el('span', { class: 'message', 'aria-live': 'polite' });
  const list = el('ol', { class: 'segments', 'aria-label': 'Segments' });
  const addButton = el('button', { type: 'button' }, el('kbd', {}, 'Alt+Enter'), ' Segment up to the playhead');
  addButton.addEventListener('click', () => addSegment());
  const language = typeof params.language === 'string' ? params.language : '';
  container.append(
    el(
      'div',
      { class: 'audio-player' },
      el(
        'p',
        { class: 'muted' },
        language ? `Spoken language: ${language}. Transcribe as spoken; do not translate.` : 'Transcribe as spoken; do not translate.',
      ),
      wave,
      el('div', { class: 'audio-controls' }, audio, time, message),
      el('h2', {}, 'Transcript'),
      list,
      addButton,
    ),
  );
  const say = (text: string) => {
    message.textContent = text;
  };

  // ---- the waveform --------------------------------------------------------------------------
  let drawn: { width: number; peaks: Float32Array } | null = null;
  function paint() {
    frame = 0;
    const dpr = window.devicePixelRatio || 1;
    const width = Math.max(100, Math.round(wave.clientWidth * dpr));
    const height = Math.max(40, Math.round(wave.clientHeight * dpr));
    if (wave.width !== width || wave.height !== height) Object.assign(wave, { width, height });
    const ctx = wave.getContext('2d');
    if (!ctx) return;
    ctx.clearRect(0, 0, width, height);
    const x = (t: number) => (duration ? (t / duration) * width : 0);
    segments.forEach((s, i) => {
      ctx.fillStyle = i % 2 ? 'rgba(67, 99, 216, .18)' : 'rgba(60, 180, 75, .2)';
      ctx.fillRect(x(s.start), 0, Math.max(1, x(s.end) - x(s.start)), height);
      ctx.fillStyle = '#333';
      ctx.font = `${12 * dpr}px sans-serif`;
      ctx.fillText(String(i + 1), x(s.start) + 3 * dpr, 13 * dpr);
    });
    if (buffer) {
      if (drawn?.width !== width) drawn = { width, peaks: peaks(buffer, width) };
      const mid = height / 2;
      ctx.fillStyle = '#4363d8';
      for (let c = 0; c < width; c++) {
        const lo = drawn.peaks[2 * c] as number;
        const hi = drawn.peaks[2 * c + 1] as number;
        ctx.fillRect(c, mid - hi * mid, 1, Math.max(1, (hi - lo) * mid));
      }
    } else {
      ctx.fillStyle = '#999';
      ctx.fillRect(0, height / 2, width, 1);
    }
    ctx.fillStyle = '#c0392b';
    ctx.fillRect(x(audio.currentTime) - dpr, 0, 2 * dpr, height);
    time.textContent = `${clock(audio.currentTime)} / ${clock(duration)}`;
    wave.setAttribute('aria-valuenow', audio.currentTime.toFixed(2));
    wave.setAttribute('aria-valuetext', `${clock(audio.currentTime)} of ${clock(duration)}`);
    if (!audio.paused) frame = requestAnimationFrame(paint);
  }
  const repaint = () => {
    if (!frame) frame = requestAnimationFrame(paint);
  };
  for (const e of ['play', 'pause', 'seeked', 'timeupdate']) audio.addEventListener(e, repaint);
  audio.addEventListener('loadedmetadata', () => {
    if (Number.isFinite(audio.duration)) duration = audio.duration;
    wave.setAttribute('aria-valuemax', duration.toFixed(2));
    repaint();
  });
  window.addEventListener('resize', repaint);

  function seek(t: number) {
    audio.currentTime = Math.min(Math.max(0, t), duration || 0);
    repaint();
  }
  wave.addEventListener('pointerdown', (e) => {
    const box = wave.getBoundingClientRect();
    seek(((e.clientX - box.left) / box.width) * duration);
  });
  wave.addEventListener('keydown', (e) => {
    const step = { ArrowLeft: -1, ArrowRight: 1, PageDown: -5, PageUp: 5 }[e.key];
    if (step === undefined) return;
    e.preventDefault();
    e.stopPropagation();
    seek(audio.currentTime + step);
  });

  // The audio plays from its own URL (streamed, seeking by byte ranges). Its bytes are also read
  // once for the waveform, decoded at 8 kHz (enough for the peaks, and a sixth of the memory of
  // 48 kHz: an hour of stereo is about 230 MB); above 100 MB there is no waveform. When the audio's
  // server answers no byte ranges, the <audio> cannot seek: it then plays those bytes from memory.
  // Both through the server's media route (the page's CSP allows no other origin).
  const loaded = context.media(url);
  audio.src = loaded;
  let bytes: ArrayBuffer | null = null;
  const seekable = () => audio.seekable.length > 0 && audio.seekable.end(0) > 0;
  function fromMemory() {
    if (!bytes || blobUrl || seekable() || audio.readyState < 1) return;
    const at = audio.currentTime;
    blobUrl = URL.createObjectURL(new Blob([bytes]));
    audio.src = blobUrl;
    audio.currentTime = at;
  }
  audio.addEventListener('loadedmetadata', fromMemory);
  (async () => {
    const got = await fetch(loaded);
    if (!got.ok) throw new Error(`HTTP ${got.status}`);
    if (Number(got.headers.get('content-length')) > 100_000_000) {
      await got.body?.cancel();
      return say('No waveform: the audio is too long to draw here; it plays all the same.');
    }
    bytes = await got.arrayBuffer();
    fromMemory();
    // decodeAudioData detaches the bytes it is given: it gets a copy.
    buffer = await new OfflineAudioContext(1, 1, 8000).decodeAudioData(bytes.slice(0));
    duration = buffer.duration;
    drawn = null;
    wave.setAttribute('aria-valuemax', duration.toFixed(2));
    repaint();
  })().catch(() => {
    say('No waveform: the audio could not be read here; it plays all the same.');
    repaint();
  });

  // ---- the segments --------------------------------------------------------------------------
  function renderList(focus?: number) {
    list.replaceChildren(
      ...segments.map((s, i) => {
        const n = i + 1;
        const number = (value: number, what: 'start' | 'end') => {
          const input = el('input', {
            type: 'number',
            min: '0',
            step: '0.01',
            value: String(value),
            class: 'seconds',
            'aria-label': `Segment ${n}: ${what} (seconds)`,
          });
          // Kept as it is typed (a submit from the box sends what it shows); the list and the
          // waveform are redrawn when the box is left.
          input.addEventListener('input', () => {
            const v = input.value === '' ? Number.NaN : Number(input.value);
            if (!Number.isFinite(v) || v < 0) return;
            s[what] = r2(v);
            context.changed();
          });
          input.addEventListener('change', () => edited());
          return input;
        };
        const text = el('textarea', { rows: '2', class: 'segment-text', 'aria-label': `Segment ${n}: text` });
        text.value = s.text;
        text.addEventListener('input', () => {
          s.text = text.value;
          context.changed();
        });
        text.addEventListener('focus', () => {
          current = i;
        });
        const play = el('button', { type: 'button', 'aria-label': `Play segment ${n}` }, '▶');
        play.addEventListener('click', () => playSegment(i));
        const remove = el('button', { type: 'button', 'aria-label': `Remove segment ${n}` }, '×');
        remove.addEventListener('click', () => {
          segments.splice(i, 1);
          edited();
        });
        return el(
          'li',
          { 'data-index': String(i) },
          el('div', { class: 'segment-times' }, number(s.start, 'start'), '–', number(s.end, 'end'), play, remove),
          text,
        );
      }),
    );
    if (focus !== undefined) list.querySelectorAll('textarea')[focus]?.focus();
  }
  let current = -1;
  function edited(focus?: number) {
    renderList(focus);
    repaint();
    context.changed();
  }

  let stopAt: number | null = null;
  audio.addEventListener('timeupdate', () => {
    if (stopAt !== null && audio.currentTime >= stopAt) {
      audio.pause();
      stopAt = null;
    }
  });
  function playSegment(i: number) {
    const s = segments[i];
    if (!s) return;
    seek(s.start);
    stopAt = s.end;
    void audio.play().catch(() => undefined);
  }

  /** A segment from where the previous one ended (or 0) to the playhead; its text gets the caret. */
  function addSegment() {
    const at = r2(audio.currentTime);
    const from = r2(Math.max(0, ...segments.filter((s) => s.end <= at + 1e-9).map((s) => s.end)));
    if (at <= from) return say('Play or seek past the end of the last segment first: a segment ends at the playhead.');
    const inside = segments.findIndex((s) => s.start < at && at < s.end);
    if (inside >= 0) return say(`The playhead is inside segment ${inside + 1}: seek past its end, or change its times.`);
    audio.pause();
    segments.push({ start: from, end: at, text: '' });
    segments.sort((a, b) => a.start - b.start);
    const i = segments.findIndex((s) => s.start === from && s.end === at);
    say(`Segment ${i + 1}: ${clock(from)} to ${clock(at)}. Type what is said, then play on (Escape).`);
    current = i;
    edited(i);
  }

  /** Alt+[ and Alt+]: the start or end of the segment being typed becomes the playhead. */
  function setEdge(which: 'start' | 'end') {
    const s = segments[current];
    if (!s) return say('Put the caret in a segment first.');
    s[which] = r2(audio.currentTime);
    edited(current);
  }

  function togglePlay() {
    stopAt = null;
    if (audio.paused) void audio.play().catch(() => say('The audio cannot play.'));
    else audio.pause();
  }
  renderList();

  // ---- keys ----------------------------------------------------------------------------------
  // The keymap leaves keys typed into a field to the field; these few work there too.
  const whileTyping: Record<string, () => void> = {
    'Alt+ArrowLeft': () => seek(audio.currentTime - 2),
    'Alt+ArrowRight': () => seek(audio.currentTime + 2),
    'Alt+[': () => setEdge('start'),
    'Alt+]': () => setEdge('end'),
  };
  const typing = (e: KeyboardEvent) => {
    if (!inField(e.target) || !e.altKey || e.ctrlKey || e.metaKey) return;
    const run = whileTyping[`Alt+${e.key}`] ?? whileTyping[`Alt+${e.code === 'BracketLeft' ? '[' : e.code === 'BracketRight' ? ']' : ''}`];
    if (!run) return;
    e.preventDefault();
    run();
  };
  const space = (e: KeyboardEvent) => {
    if (e.key !== ' ' || e.ctrlKey || e.altKey || e.metaKey || e.repeat) return;
    if (e.target instanceof HTMLElement && e.target.closest('input, textarea, select, button, audio, [contenteditable]')) return;
    if (document.querySelector('.overlay:not([hidden])')) return;
    e.preventDefault();
    togglePlay();
  };
  document.addEventListener('keydown', typing);
  document.addEventListener('keydown', space);
  const noDialog = () => !document.querySelector('.overlay:not([hidden])');
  const shortcuts: Shortcut[] = [
    { keys: ['Escape'], label: 'Play or pause (also while typing)', when: noDialog, run: togglePlay },
    { keys: ['Space'], label: 'Play or pause (outside the text boxes)', run: () => undefined },
    { keys: ['Alt+Enter'], label: 'A segment up to the playhead, from where the last one ended; type its text', run: addSegment },
    {
      keys: ['Alt+ArrowLeft', 'Alt+ArrowRight'],
      label: 'Seek 2 s back or forward (also while typing)',
      run: (e) => whileTyping[`Alt+${e.key}`]?.(),
    },
    {
      keys: ['Alt+[', 'Alt+]'],
      label: 'Set the start or end of the segment being typed to the playhead',
      run: (e) => whileTyping[`Alt+${e.key}`]?.(),
    },
    { keys: ['Home'], label: 'Back to the start', run: () => seek(0) },
  ];

  const ordered = () => [...segments].sort((a, b) => a.start - b.start || a.end - b.end);
  return {
    shortcuts,
    getDraft: () => ({ segments: segments.map((s) => ({ start_seconds: s.start, end_seconds: s.end, text: s.text })) }),
    getResponse() {
      const list = ordered();
      for (const [i, s] of list.entries()) {
        if (!s.text.trim()) return { ok: false, problem: `Segment ${i + 1} has no text: type what is said, or remove it.` };
        if (s.end < s.start) return { ok: false, problem: `Segment ${i + 1} ends before it starts.` };
        if (duration && s.end > duration + 0.01)
          return { ok: false, problem: `Segment ${i + 1} ends after the audio (${clock(duration)}).` };
        const previous = list[i - 1];
        if (previous && s.start < previous.end)
          return { ok: false, problem: `Segment ${i + 1} starts before segment ${i} ends: segments do not overlap.` };
      }
      const response = {
        transcript: list.map((s) => s.text.trim()).join(' '),
        segments: list.map((s) => ({ start_seconds: s.start, end_seconds: s.end, text: s.text.trim() })),
      };
      const [rule] = checkAnswer({ type: 'audiotranscription', params }, response);
      if (rule) return { ok: false, problem: rule };
      return { ok: true, response: response as never };
    },
    destroy() {
      cancelAnimationFrame(frame);
      audio.pause();
      document.removeEventListener('keydown', typing);
      document.removeEventListener('keydown', space);
      window.removeEventListener('resize', repaint);
      if (blobUrl) URL.revokeObjectURL(blobUrl);
    },
  };
};
