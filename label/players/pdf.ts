// A PDF's pages as images, drawn by pdf.js (the document player's pages, and a PDF attachment in
// the form players): pdf.js is loaded from the server only when a PDF is shown.

/** Bitmap pixels per PDF point of a rendered page (216 dpi). */
const PAGE_DETAIL = 3;

/** The pages of the document as image URLs. */
export interface PageSource {
  pages: number;
  page(n: number): Promise<string>;
  close(): void;
}

export const imageSource = (url: string): PageSource => ({ pages: 1, page: async () => url, close: () => undefined });

/**
 * A PDF read by pdf.js (pdfjs-dist, served by this server at /label/vendor/, loaded only when a
 * PDF is shown): each page rendered at scale 1, so that an image pixel is a PDF point (72 dpi), as
 * the contract counts a region's box.
 */
export async function pdfSource(url: string): Promise<PageSource> {
  const pdfjs = (await import(new URL('vendor/pdf.min.mjs', document.baseURI).href)) as typeof import('pdfjs-dist');
  pdfjs.GlobalWorkerOptions.workerSrc = new URL('vendor/pdf.worker.min.mjs', document.baseURI).href;
  const doc = await pdfjs.getDocument({ url, isEvalSupported: false }).promise;
  const urls = new Map<number, string>();
  return {
    pages: doc.numPages,
    async page(n) {
      const known = urls.get(n);
      if (known) return known;
      const p = await doc.getPage(n);
      // The page is PDF points wide (the contract's coordinates), and holds a bitmap drawn at
      // PAGE_DETAIL times that, so that its print stays sharp when shown enlarged or zoomed in.
      const points = p.getViewport({ scale: 1 });
      const width = Math.round(points.width);
      const height = Math.round(points.height);
      const viewport = p.getViewport({ scale: PAGE_DETAIL });
      const canvas = document.createElement('canvas');
      canvas.width = Math.round(width * PAGE_DETAIL);
      canvas.height = Math.round(height * PAGE_DETAIL);
      await p.render({ canvas, viewport }).promise;
      const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${width}" height="${height}" viewBox="0 0 ${width} ${height}"><image width="${width}" height="${height}" href="${canvas.toDataURL('image/png')}"/></svg>`;
      const blob = new Blob([svg], { type: 'image/svg+xml' });
      const made = URL.createObjectURL(blob);
      urls.set(n, made);
      return made;
    },
    close() {
      for (const u of urls.values()) URL.revokeObjectURL(u);
      void doc.destroy();
    },
  };
}
