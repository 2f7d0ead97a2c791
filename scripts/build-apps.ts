// `npm pack` (prepack): the browser apps as the published package serves them, the labeling app in
// dist/label/ (app.js, its chunks, pdf.js's files) and the console in dist/console/, made by the
// same build a clone makes in memory (server/browser-app.ts). The package then ships neither the
// apps' sources nor the browser libraries they import.
import path from 'node:path';
import { writeBrowserApp } from '../server/browser-app.ts';
import { consoleBuild } from '../server/console.ts';
import { labelBuild } from '../server/label.ts';
import { root } from './lib.ts';

for (const app of [labelBuild, consoleBuild]) {
  const { outdir, files } = await writeBrowserApp(app);
  console.log(`${app.title.toLowerCase()}: ${files.length} files in ${path.relative(root, outdir)}/`);
}
