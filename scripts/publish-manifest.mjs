// `npm pack` / `npm publish` of a workspace package: npm packs package.json as it is (it applies no
// `publishConfig` field but its own registry settings), while in the repository a package points at
// its TypeScript sources and names workspace packages. `prepack` runs `apply` in the package's
// folder: every `publishConfig` field that is not an npm setting replaces the top-level field of
// that name (`null` removes it), the in-repo manifest kept as `package.json.in-repo`; `postpack`
// runs `restore`, which puts it back.
import { copyFileSync, existsSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';

/** `publishConfig` keys that are npm settings, left where they are. */
const NPM_SETTINGS = new Set(['access', 'tag', 'registry', 'provenance']);

const manifest = resolve('package.json');
const backup = resolve('package.json.in-repo');

if (process.argv[2] === 'apply') {
  if (existsSync(backup)) {
    throw new Error(
      'package.json.in-repo exists: run `node ../../scripts/publish-manifest.mjs restore` in the package first',
    );
  }
  const pkg = JSON.parse(readFileSync(manifest, 'utf8'));
  const publishConfig = {};
  for (const [key, value] of Object.entries(pkg.publishConfig ?? {})) {
    if (NPM_SETTINGS.has(key)) publishConfig[key] = value;
    else if (value === null) delete pkg[key];
    else pkg[key] = value;
  }
  pkg.publishConfig = publishConfig;
  copyFileSync(manifest, backup);
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
} else if (process.argv[2] === 'restore') {
  if (existsSync(backup)) renameSync(backup, manifest);
} else {
  throw new Error('usage: publish-manifest.mjs apply|restore');
}
