// `npm pack` (prepack): the labeling app as the published package serves it, in dist/label/ (app.js,
// its chunks, pdf.js's files), made by the same build a clone makes in memory (server/label.ts). The
// package then ships neither label/'s sources nor the browser libraries they import.
import path from 'node:path';
import { writeLabelApp } from '../server/label.ts';
import { root } from './lib.ts';

const outdir = path.join(root, 'dist', 'label');
const files = await writeLabelApp(outdir);
console.log(`labeling app: ${files.length} files in ${path.relative(root, outdir)}/`);
