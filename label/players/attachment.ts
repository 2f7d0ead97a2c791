// A task's attachment shown as what it is: text as text, media in their elements (loaded through
// the server, `media`), websites and PDFs framed (sandboxed as every customer frame is, straight
// from their host: a web page cannot be passed on faithfully) with a link to open them.
import { frameAttributes } from '../../server/domain/markup-allowlist.ts';
import type { MediaAddress } from '../media.ts';
import { el } from './types.ts';

export type AttachmentType = 'text' | 'image' | 'video' | 'audio' | 'website' | 'pdf';

export function attachmentView(type: AttachmentType, attachment: string, media: MediaAddress): HTMLElement {
  const box = el('figure', { class: 'attachment', 'data-attachment-type': type });
  switch (type) {
    case 'text':
      box.append(el('blockquote', {}, attachment));
      break;
    case 'image':
      box.append(el('img', { src: media(attachment), alt: 'The image to categorize' }));
      break;
    case 'video':
      box.append(el('video', { src: media(attachment), controls: '', preload: 'metadata' }));
      break;
    case 'audio':
      box.append(el('audio', { src: media(attachment), controls: '', preload: 'metadata' }));
      break;
    default:
      box.append(
        el('iframe', {
          src: attachment,
          title: type === 'pdf' ? 'The PDF document' : 'The website',
          ...frameAttributes,
        }),
        el(
          'figcaption',
          {},
          el(
            'a',
            { href: attachment, target: '_blank', rel: 'noopener noreferrer' },
            `Open the ${type === 'pdf' ? 'PDF' : 'website'} in a new tab`,
          ),
        ),
      );
  }
  return box;
}
