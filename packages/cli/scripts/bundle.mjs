// `npm run build -w @sluice/cli` (and `prepack`): the CLI as one JavaScript file, `dist/sluice.js`,
// that runs on a plain Node with nothing installed beside it. Node does not strip types inside
// node_modules, and the workspace packages the CLI imports are TypeScript sources, so everything
// (workspace packages and third-party dependencies alike) is bundled; the licences of the
// third-party code go to `dist/THIRD-PARTY-LICENSES.md`.
import { build } from 'esbuild';
import { existsSync, mkdirSync, readFileSync, readdirSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

const packageDir = resolve(dirname(fileURLToPath(import.meta.url)), '..');
const dist = join(packageDir, 'dist');
const pkg = JSON.parse(readFileSync(join(packageDir, 'package.json'), 'utf8'));
const minimumNode = /(\d+)\.(\d+)/.exec(pkg.engines.node);

rmSync(dist, { recursive: true, force: true });
mkdirSync(dist);
const { metafile } = await build({
  entryPoints: [join(packageDir, 'src/main.ts')],
  outfile: join(dist, 'sluice.js'),
  bundle: true,
  platform: 'node',
  format: 'esm',
  target: `node${minimumNode[1]}.${minimumNode[2]}`,
  // Bundled CommonJS dependencies call require() for Node's built-in modules.
  banner: {
    js: [
      '#!/usr/bin/env node',
      "import { createRequire as __createRequire } from 'node:module';",
      'const require = __createRequire(import.meta.url);',
    ].join('\n'),
  },
  metafile: true,
  logLevel: 'warning',
});

/** The folder of each third-party package the bundle took code from. */
const packageDirs = new Set();
for (const input of Object.keys(metafile.inputs)) {
  const match = /^(.*node_modules\/(?:@[^/]+\/)?[^/]+)\//.exec(input);
  if (match) packageDirs.add(resolve(match[1]));
}
const LICENSE_FILE = /^(licen[sc]e|copying)(\.(md|txt))?$/i;
const sections = [...packageDirs].sort().map((dir) => {
  const meta = JSON.parse(readFileSync(join(dir, 'package.json'), 'utf8'));
  const file = readdirSync(dir).find((name) => LICENSE_FILE.test(name));
  const text = file
    ? readFileSync(join(dir, file), 'utf8').trim()
    : `(no licence file; package.json says ${meta.license})`;
  return `## ${meta.name} ${meta.version} (${meta.license})\n\n\`\`\`\n${text}\n\`\`\``;
});
writeFileSync(
  join(dist, 'THIRD-PARTY-LICENSES.md'),
  ['# Third-party code in dist/sluice.js', `${pkg.name} ${pkg.version} bundles these packages.`, ...sections].join(
    '\n\n',
  ) + '\n',
);
const rootLicense = join(packageDir, '../../LICENSE');
if (existsSync(rootLicense)) writeFileSync(join(dist, 'LICENSE'), readFileSync(rootLicense));
process.stdout.write(`dist/sluice.js: ${packageDirs.size} third-party packages bundled\n`);
