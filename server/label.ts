// The labeling app at /label/: label/public/ as it is, and label/main.ts bundled into /label/app.js,
// made and served as every browser app of ours is (server/browser-app.ts: built at pack time into
// dist/label/ for the package, in memory on the first request in a clone; compressed, cached, under
// one policy). three.js, for the lidar player, is split off into a chunk the app imports when such a
// task opens (/label/chunks/view-<hash>.js). pdf.js (pdfjs-dist) is served as it ships, at
// /label/vendor/, for the document player to load only when a task's document is a PDF.
import { createRequire } from 'node:module';
import path from 'node:path';
import type { Router } from 'express';
import { browserApp, type BrowserApp } from './browser-app.ts';

/** Where pdf.js's package is in a clone (pdfjs-dist, a development dependency). */
const pdfjs = () => path.dirname(createRequire(import.meta.url).resolve('pdfjs-dist/package.json'));

export const labelBuild: BrowserApp = {
  name: 'label',
  entry: 'main.ts',
  title: 'The labeling app',
  // The files of pdf.js the app loads: the library and its worker.
  vendor: {
    files: new Set(['pdf.min.mjs', 'pdf.worker.min.mjs']),
    dir: () => path.join(pdfjs(), 'build'),
    packageDir: pdfjs,
    packageName: 'pdfjs-dist',
  },
};

/**
 * The app, its pages allowed to load files from `mediaOrigins` besides their own
 * (STORAGE_MEDIA_ORIGINS): the media route answers a `media: presigned` connection's files with a
 * redirect to the bucket (SECURITY.md, "The labeling app").
 */
export function labelApp(mediaOrigins: readonly string[] = []): Router {
  return browserApp(labelBuild, mediaOrigins);
}
