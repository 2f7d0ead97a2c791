// `npm run docs`: builds the self-contained reference site into docs/site/ (or the folder given):
// one Redoc page per generation, one page per guide in docs/*.md, and an index linking them all.
// Pages load nothing from outside their own origin: Redoc's scripts are inlined, its attribution
// logo (which it would fetch from a CDN) is replaced by an inline SVG, and a Content-Security-Policy
// forbids any other origin.
import { mkdirSync, readFileSync, readdirSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { marked } from 'marked';
import { generations, root, runBin } from './lib.ts';

const outDir = path.resolve(process.argv[2] ?? path.join(root, 'docs', 'site'));
const docsDir = path.join(root, 'docs');
mkdirSync(path.join(outDir, 'guides'), { recursive: true });

const csp =
  `<meta http-equiv="Content-Security-Policy" content="default-src 'self' 'unsafe-inline' ` +
  `'unsafe-eval' data: blob:">`;
const logo =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="16"><text x="0" y="12" ' +
      'font-family="sans-serif" font-size="12">Redoc</text></svg>',
  );

const titles = { current: 'humantask API — current generation', legacy: 'humantask API — older generation' };
for (const gen of generations) {
  const file = path.join(outDir, `${gen}.html`);
  runBin('redocly', ['build-docs', gen, '--inlineBundle', '--title', titles[gen], '-o', file]);
  let html = readFileSync(file, 'utf8');
  html = html.replace('<head>', `<head>\n  ${csp}`);
  html = html.replaceAll(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g, logo);
  if (html.includes('cdn.redoc.ly/redoc/logo')) throw new Error(`${file}: Redoc's CDN logo was not replaced`);
  writeFileSync(file, html);
}

const page = (title: string, body: string, up: string) => `<!DOCTYPE html>
<html lang="en">
<head>
  <meta charset="utf-8">
  ${csp}
  <meta name="viewport" content="width=device-width, initial-scale=1">
  <title>${title}</title>
  <style>
    body { font: 16px/1.55 system-ui, sans-serif; max-width: 52rem; margin: 2rem auto; padding: 0 1rem; color: #1d2330; }
    code, pre { font: 14px/1.45 ui-monospace, monospace; background: #f3f4f6; }
    pre { padding: .8rem; overflow-x: auto; } table { border-collapse: collapse; }
    td, th { border: 1px solid #d0d4dc; padding: .3rem .6rem; vertical-align: top; }
    nav { margin-bottom: 1.5rem; }
  </style>
</head>
<body>
  <nav><a href="${up}index.html">humantask documentation</a></nav>
  <main>
${body}
  </main>
</body>
</html>
`;

const guides = readdirSync(docsDir)
  .filter((f) => f.endsWith('.md'))
  .sort()
  .map((f) => {
    const md = readFileSync(path.join(docsDir, f), 'utf8');
    const title = /^#\s+(.+)$/m.exec(md)?.[1] ?? f;
    const name = f.replace(/\.md$/, '');
    // Links between guides point at .md files in the repository and at .html pages on the site.
    const body = (marked.parse(md, { async: false }) as string).replaceAll(
      /href="([\w.-]+)\.md(#[^"]*)?"/g,
      (_m, target: string, hash = '') => `href="${target}.html${hash}"`,
    );
    writeFileSync(path.join(outDir, 'guides', `${name}.html`), page(title, body, '../'));
    return { name, title };
  });

const index = `<h1>humantask documentation</h1>
<h2>API reference</h2>
<ul>
  <li><a href="current.html">Current generation</a> (paths <code>/v1/...</code> at the server's origin)</li>
  <li><a href="legacy.html">Older generation</a> (paths <code>/v1/...</code> under <code>/legacy</code>)</li>
</ul>
<h2>Guides</h2>
<ul>
${guides.map((g) => `  <li><a href="guides/${g.name}.html">${g.title}</a></li>`).join('\n')}
</ul>`;
writeFileSync(path.join(outDir, 'index.html'), page('humantask documentation', index, ''));
console.log(`docs site written to ${outDir} (${2 + guides.length} pages + index)`);
