// The browser entry's size: esbuild bundle of client/index.ts for the browser, minified, gzipped,
// against openapi-fetch alone. What the client adds must stay under 10 kB min+gzip.
import path from 'node:path';
import { gzipSync } from 'node:zlib';
import { build } from 'esbuild';
import { expect, it } from 'vitest';
import { root } from '../../support/spec.ts';

async function bundle(contents: string): Promise<{ min: number; gzip: number; text: string }> {
  const result = await build({
    stdin: { contents, resolveDir: root, sourcefile: 'entry.ts', loader: 'ts' },
    bundle: true,
    minify: true,
    format: 'esm',
    platform: 'browser',
    target: 'es2022',
    write: false,
    logLevel: 'silent',
  });
  const file = result.outputFiles[0]!;
  return { min: file.contents.length, gzip: gzipSync(file.contents, { level: 9 }).length, text: file.text };
}

it('adds less than 10 kB (min+gzip) to openapi-fetch in the browser', async () => {
  const client = await bundle(`export * from ${JSON.stringify(path.join(root, 'client', 'index.ts'))};`);
  const baseline = await bundle(`export { default } from 'openapi-fetch';`);
  const added = client.gzip - baseline.gzip;
  const kb = (n: number) => `${(n / 1024).toFixed(2)} kB`;
  console.log(
    [
      'browser bundle (esbuild, minified, gzip -9):',
      `  @humantask/client  ${kb(client.min)} min, ${kb(client.gzip)} min+gzip`,
      `  openapi-fetch      ${kb(baseline.min)} min, ${kb(baseline.gzip)} min+gzip`,
      `  added by client    ${kb(client.min - baseline.min)} min, ${kb(added)} min+gzip`,
    ].join('\n'),
  );
  expect(client.text).not.toMatch(/["']node:/);
  expect(added).toBeLessThan(10 * 1024);
});
