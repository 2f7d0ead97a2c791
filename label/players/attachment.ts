// A task's attachment shown as what it is: text as text, media in their elements (loaded through
// the server, `media`), a PDF's pages drawn by pdf.js as the document player draws them (read
// through the server too: Chromium shows no PDF in a sandboxed frame), websites framed (sandboxed
// as every customer frame is, straight from their host: a web page cannot be passed on faithfully)
// with a link to open them.
import { frameAttributes } from '../../shared/markup-allowlist.ts';
import type { MediaAddress } from '../media.ts';
import { pdfSource } from './pdf.ts';
import { el } from './types.ts';

export type AttachmentType = 'text' | 'image' | 'video' | 'audio' | 'website' | 'pdf';

export function attachmentView(type: AttachmentType, attachment: string, media: MediaAddress): HTMLElement {
  const box = el('figure', { class: 'attachment', 'data-attachment-type': type });
  switch (type) {
    case 'text':
      box.append(el('blockquote', {}, attachment));
      break;
    case 'image':
      box.append(zoomable(el('img', { src: media(attachment), alt: 'The image to categorize' })));
      break;
    case 'video':
      box.append(el('video', { src: media(attachment), controls: '', preload: 'metadata' }));
      break;
    case 'audio':
      box.append(el('audio', { src: media(attachment), controls: '', preload: 'metadata' }));
      break;
    case 'pdf':
      box.append(
        pdfPages(media(attachment)),
        el('figcaption', {}, el('a', { href: attachment, target: '_blank', rel: 'noopener noreferrer' }, 'Open the PDF in a new tab')),
      );
      break;
    default:
      box.append(
        el('iframe', {
          src: attachment,
          title: 'The website',
          ...frameAttributes,
        }),
        el('figcaption', {}, el('a', { href: attachment, target: '_blank', rel: 'noopener noreferrer' }, 'Open the website in a new tab')),
      );
  }
  return box;
}

/** Every page of the PDF at `url`, one image each, drawn by pdf.js (loaded now). */
function pdfPages(url: string): HTMLElement {
  const pages = el('div', { class: 'pdf-pages', role: 'group', 'aria-label': 'The PDF document' });
  const status = el('p', { class: 'muted', role: 'status' }, 'Loading the PDF…');
  pages.append(status);
  void (async () => {
    const source = await pdfSource(url);
    for (let n = 1; n <= source.pages; n++) {
      status.textContent = `Drawing page ${n} of ${source.pages}…`;
      pages.insertBefore(zoomable(el('img', { src: await source.page(n), alt: `Page ${n} of ${source.pages} of the PDF` })), status);
    }
    status.remove();
  })().catch(() => {
    status.textContent = 'The PDF could not be shown here: open it in a new tab.';
  });
  return pages;
}

/**
 * The image as a button that opens it in a viewer: the whole window, zoomed with `+` `-` (and the
 * wheel, around the pointer) from the fitted size up to 8 × the image's own, `0` fits it again,
 * dragged or scrolled to pan; `Escape` closes it and gives the focus back.
 */
function zoomable(img: HTMLImageElement): HTMLElement {
  const open = el('button', { type: 'button', class: 'zoomable', 'aria-label': `Zoom: ${img.alt}` }, img);
  open.addEventListener('click', () => showImage(img, open));
  return open;
}

function showImage(img: HTMLImageElement, opener: HTMLElement) {
  const big = el('img', { src: img.src, alt: img.alt, draggable: 'false' });
  const scroller = el('div', { class: 'viewer-image', tabindex: '0', role: 'img', 'aria-label': img.alt }, big);
  const level = el('output', { class: 'zoom' });
  const out = el('button', { type: 'button' }, 'Zoom out ', el('kbd', {}, '-'));
  const inn = el('button', { type: 'button' }, 'Zoom in ', el('kbd', {}, '+'));
  const fitButton = el('button', { type: 'button' }, 'Fit ', el('kbd', {}, '0'));
  const close = el('button', { type: 'button' }, 'Close ', el('kbd', {}, 'Esc'));
  const dialog = el(
    'div',
    { class: 'overlay viewer', role: 'dialog', 'aria-modal': 'true', 'aria-label': `Zoomed: ${img.alt}` },
    el('div', { class: 'dialog viewer-dialog' }, el('div', { class: 'actions' }, out, inn, fitButton, level, close), scroller),
  );
  const natural = () => big.naturalWidth || img.naturalWidth || 1;
  /** Screen pixels per image pixel when the whole image fits the viewer. */
  const fitted = () => Math.min(scroller.clientWidth / natural(), scroller.clientHeight / (big.naturalHeight || img.naturalHeight || 1), 1);
  let scale = 0;
  const zoomTo = (next: number, at = { x: scroller.clientWidth / 2, y: scroller.clientHeight / 2 }) => {
    const was = scale || fitted();
    scale = Math.min(Math.max(next, fitted()), 8);
    // The image point under `at` stays under it.
    const [px, py] = [(scroller.scrollLeft + at.x) / was, (scroller.scrollTop + at.y) / was];
    big.style.width = `${Math.round(natural() * scale)}px`;
    scroller.scrollLeft = px * scale - at.x;
    scroller.scrollTop = py * scale - at.y;
    level.textContent = `${Math.round((scale / fitted()) * 100)} %`;
  };
  const shut = () => {
    dialog.remove();
    opener.focus();
  };
  out.addEventListener('click', () => zoomTo(scale * 0.8));
  inn.addEventListener('click', () => zoomTo(scale * 1.25));
  fitButton.addEventListener('click', () => zoomTo(0));
  close.addEventListener('click', shut);
  scroller.addEventListener(
    'wheel',
    (e) => {
      e.preventDefault();
      const box = scroller.getBoundingClientRect();
      zoomTo(scale * Math.exp(-e.deltaY * 0.0015), { x: e.clientX - box.left, y: e.clientY - box.top });
    },
    { passive: false },
  );
  let drag: { x: number; y: number } | null = null;
  scroller.addEventListener('pointerdown', (e) => {
    drag = { x: e.clientX, y: e.clientY };
    scroller.setPointerCapture(e.pointerId);
  });
  scroller.addEventListener('pointermove', (e) => {
    if (!drag) return;
    scroller.scrollLeft -= e.clientX - drag.x;
    scroller.scrollTop -= e.clientY - drag.y;
    drag = { x: e.clientX, y: e.clientY };
  });
  scroller.addEventListener('pointerup', () => {
    drag = null;
  });
  // Its keys are its own while it is open: none reaches the task's shortcuts.
  dialog.addEventListener('keydown', (e) => {
    const run = {
      Escape: shut,
      '+': () => zoomTo(scale * 1.25),
      '=': () => zoomTo(scale * 1.25),
      '-': () => zoomTo(scale * 0.8),
      '0': () => zoomTo(0),
    }[e.key];
    if (e.key !== 'Tab') e.stopPropagation();
    if (!run) return;
    e.preventDefault();
    run();
  });
  document.body.append(dialog);
  const start = () => zoomTo(0);
  if (big.complete) start();
  else big.addEventListener('load', start, { once: true });
  scroller.focus();
}
