// `npm run docs`: builds the self-contained reference site into docs/site/ (or the folder given):
// one Redoc page per contract (both generations and the worker API), one page per user guide in docs/*.md (guides/), one per internal
// document in docs/internal/*.md (internal/), and an index linking them all. The references link to
// each other and to the guides, and show code samples of every operation (scripts/code-samples.ts); links to repository files outside docs/ are not on the site and
// become plain text.
// Pages load nothing from outside their own origin: Redoc's scripts are inlined, its attribution
// logo (which it would fetch from a CDN) is replaced by an inline SVG, and a Content-Security-Policy
// forbids any other origin.
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, readdirSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import path from 'node:path';
import { marked } from 'marked';
import { parse, stringify } from 'yaml';
import { addCodeSamples } from './code-samples.ts';
import { apis, root, runBin } from './lib.ts';

const siteDir = path.resolve(process.argv[2] ?? path.join(root, 'docs', 'site'));
// Built beside its place and moved there whole: a server that finds the folder finds every page in it,
// and servers started side by side that each build it do not write into one another's pages.
const outDir = `${siteDir}.building-${process.pid}`;
rmSync(outDir, { recursive: true, force: true });
const docsDir = path.join(root, 'docs');
for (const sub of ['guides', 'internal']) mkdirSync(path.join(outDir, sub), { recursive: true });

const csp = `<meta http-equiv="Content-Security-Policy" content="default-src 'self' 'unsafe-inline' ` + `'unsafe-eval' data: blob:">`;
const logo =
  'data:image/svg+xml,' +
  encodeURIComponent(
    '<svg xmlns="http://www.w3.org/2000/svg" width="60" height="16"><text x="0" y="12" ' +
      'font-family="sans-serif" font-size="12">Redoc</text></svg>',
  );

const titles = {
  current: 'humantask API — current generation',
  legacy: 'humantask API — older generation',
  workforce: 'humantask worker API',
};
const other = {
  current: ['legacy', "the older generation's reference"],
  legacy: ['current', "the current generation's reference"],
  workforce: ['current', "the current generation's reference (workers managed with an API key: tag Workforce)"],
} as const;
const work = mkdtempSync(path.join(tmpdir(), 'humantask-docs-'));
try {
  for (const gen of apis) {
    // The bundled contract, with what only the site needs: links to the rest of the site, and server
    // descriptions without Markdown (Redoc shows them as plain text).
    const doc = parse(readFileSync(path.join(root, 'generated', `${gen}.openapi.yaml`), 'utf8'));
    const [otherGen, otherTitle] = other[gen];
    doc.info.description =
      `> **humantask documentation:** [getting started](guides/getting-started.html) · ` +
      `[${otherTitle}](${otherGen}.html) · [all guides](index.html)\n\n` +
      doc.info.description;
    for (const server of doc.servers ?? []) if (server.description) server.description = server.description.replaceAll('`', '');
    addCodeSamples(gen, doc);
    const source = path.join(work, `${gen}.openapi.yaml`);
    writeFileSync(source, stringify(doc));
    const file = path.join(outDir, `${gen}.html`);
    runBin('redocly', ['build-docs', source, '--inlineBundle', '--title', titles[gen], '-o', file]);
    let html = readFileSync(file, 'utf8');
    html = html.replace('<head>', `<head>\n  ${csp}`);
    html = html.replaceAll(/https:\/\/cdn\.redoc\.ly\/redoc\/logo-mini(?:-full)?\.svg/g, logo);
    if (html.includes('cdn.redoc.ly/redoc/logo')) throw new Error(`${file}: Redoc's CDN logo was not replaced`);
    writeFileSync(file, html);
  }
} finally {
  rmSync(work, { recursive: true, force: true });
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
    nav { margin-bottom: 1.5rem; } nav a { margin-right: 1rem; }
  </style>
</head>
<body>
  <nav><a href="${up}index.html">humantask documentation</a><a href="${up}guides/getting-started.html">Getting started</a><a href="${up}current.html">Current API reference</a><a href="${up}legacy.html">Older API reference</a><a href="${up}workforce.html">Worker API reference</a></nav>
  <main>
${body}
  </main>
</body>
</html>
`;

// Headings get GitHub's ids (lowercase, punctuation dropped, spaces as hyphens, a repeat numbered),
// so that a guide's `#the-image-player` links work on the site as they do on GitHub.
const headingIds = new Map<string, number>();
marked.use({
  renderer: {
    heading({ tokens, depth }) {
      const html = this.parser.parseInline(tokens);
      const base = html
        .replace(/<[^>]+>/g, '')
        .replace(/&[a-z0-9#]+;/gi, '')
        .toLowerCase()
        .trim()
        .replace(/[^\p{L}\p{N}\s_-]/gu, '')
        .replace(/\s/g, '-');
      const seen = headingIds.get(base) ?? 0;
      headingIds.set(base, seen + 1);
      return `<h${depth} id="${seen ? `${base}-${seen}` : base}">${html}</h${depth}>\n`;
    },
  },
});

/** Plain text of inline Markdown (for <title>), and its HTML (for links). */
const inlineHtml = (md: string) => marked.parseInline(md, { async: false }) as string;
const plain = (md: string) => inlineHtml(md).replace(/<[^>]+>/g, '');

/** Where a document of docs/ is on the site, by its path relative to docs/. */
const sitePage = (rel: string) => (rel.startsWith('internal/') ? rel : `guides/${rel}`).replace(/\.md$/, '.html');

/**
 * A document's links, for the site: to another document of docs/ -> its page; to a repository file
 * outside docs/ (bench results, the README) -> plain text naming the file, as the site has no copy.
 */
function siteLinks(html: string, rel: string): string {
  const from = path.posix.dirname(sitePage(rel));
  return html.replaceAll(
    /<a href="([^"#:]+)(#[^"]*)?"([^>]*)>([\s\S]*?)<\/a>/g,
    (_whole, target: string, hash = '', attrs: string, text: string) => {
      const inRepo = path.posix.normalize(path.posix.join('docs', path.posix.dirname(rel), target));
      // Guides (docs/*.md) and internal documents (docs/internal/*.md) have pages; decision records do not.
      if (/^docs\/(internal\/)?[^/]+\.md$/.test(inRepo)) {
        return `<a href="${path.posix.relative(from, sitePage(inRepo.slice('docs/'.length)))}${hash}"${attrs}>${text}</a>`;
      }
      if (inRepo.startsWith('docs/site/'))
        return `<a href="${path.posix.relative(from, inRepo.slice('docs/site/'.length))}${hash}"${attrs}>${text}</a>`;
      return `<span title="${inRepo} in the repository">${text}</span>`;
    },
  );
}

/** The pictures documents embed (`![...](chart.svg)`: docs/quality.md's chart, docs/label-app.md's screenshots) go beside their pages. */
const copyPictures = (sub: string) => {
  for (const f of readdirSync(path.join(docsDir, sub)).filter((name) => /\.(svg|png)$/.test(name)))
    copyFileSync(path.join(docsDir, sub, f), path.join(outDir, sub === 'internal' ? 'internal' : 'guides', f));
};

const documents = (sub: string) =>
  readdirSync(path.join(docsDir, sub))
    .filter((f) => f.endsWith('.md'))
    .sort()
    .map((f) => {
      const rel = path.posix.join(sub, f);
      const md = readFileSync(path.join(docsDir, rel), 'utf8');
      const title = /^#\s+(.+)$/m.exec(md)?.[1] ?? f;
      headingIds.clear();
      const body = siteLinks(marked.parse(md, { async: false }) as string, rel);
      const href = sitePage(rel);
      writeFileSync(path.join(outDir, href), page(plain(title), body, '../'));
      return { href, title };
    });
// The getting-started page first, then the others by name.
const guides = documents('').sort(
  (a, b) => Number(b.href.endsWith('/getting-started.html')) - Number(a.href.endsWith('/getting-started.html')),
);
const internal = documents('internal');
copyPictures('');
copyPictures('internal');

const list = (docs: { href: string; title: string }[]) =>
  docs.map((d) => `  <li><a href="${d.href}">${inlineHtml(d.title)}</a></li>`).join('\n');
const index = `<h1>humantask documentation</h1>
<h2>API reference</h2>
<ul>
  <li><a href="current.html">Current generation</a> (paths <code>/v1/...</code> at the server's origin)</li>
  <li><a href="legacy.html">Older generation</a> (paths <code>/v1/...</code> under <code>/legacy</code>)</li>
  <li><a href="workforce.html">Worker API</a> (paths <code>/v1/...</code> under <code>/worker</code>, for the people who do live tasks)</li>
</ul>
<h2 id="guides">Guides</h2>
<ul>
${list(guides)}
</ul>
<h2 id="internal">For contributors</h2>
<ul>
${list(internal)}
</ul>`;
writeFileSync(path.join(outDir, 'index.html'), page('humantask documentation', index, ''));
// A site already there (an earlier build, or one made meanwhile by a server started beside this one)
// is swapped out, not emptied in place.
const previous = `${siteDir}.previous-${process.pid}`;
try {
  renameSync(siteDir, previous);
} catch (err) {
  if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
}
renameSync(outDir, siteDir);
rmSync(previous, { recursive: true, force: true });
console.log(`docs site written to ${siteDir} (3 references, ${guides.length} guides, ${internal.length} internal pages, index)`);
