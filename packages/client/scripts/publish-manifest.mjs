// npm publishes package.json as it is and ignores `publishConfig.exports/main/types`
// (pnpm and yarn apply them). `prepack` therefore swaps those fields in from publishConfig,
// keeping the in-repo manifest (exports → ./src/index.ts) in a backup that `postpack` restores.
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';

const manifest = new URL('../package.json', import.meta.url);
const backup = new URL('../package.json.in-repo', import.meta.url);

if (process.argv[2] === 'apply') {
  if (existsSync(backup))
    throw new Error('package.json.in-repo exists: run `node scripts/publish-manifest.mjs restore` first');
  copyFileSync(manifest, backup);
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  const { exports, main, types, ...publishConfig } = pkg.publishConfig;
  Object.assign(pkg, { exports, main, types, publishConfig });
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (process.argv[2] === 'restore') {
  if (existsSync(backup)) renameSync(backup, manifest);
} else {
  throw new Error('usage: publish-manifest.mjs apply|restore');
}
